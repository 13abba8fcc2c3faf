//! When the user is needed (docs/architecture.md §14c, *Status*): the tab's title says so when
//! a human's turn comes or an agent fails (`● Your turn — agent-chatter`), until the user acts
//! on the page (a click, a key); and, if the user opted in, a browser notification says the
//! same while the tab is hidden. The permission is asked only when the user turns it on.

use leptos::prelude::*;

use crate::browser;
use crate::state::AppState;
use crate::status;
use crate::storage;

/// The tab's title when nothing needs the user (index.html's).
pub const TITLE: &str = "agent-chatter · prompt inspector";

/// What the tab's title starts with while a running agent waits for an approval.
pub const NEEDS_YOU: &str = "(needs you) ";

/// The user's choice to be notified; `Copy`.
#[derive(Clone, Copy)]
pub struct Attention {
    /// Notifications are on (the user asked, and the browser allowed them).
    pub notify: RwSignal<bool>,
    /// This browser has notifications at all.
    pub supported: bool,
}

impl Attention {
    /// Turns notifications on (asking the browser's permission, on this click) or off; `on_refused`
    /// hears why they stay off.
    pub fn set_notify(&self, on: bool, on_refused: impl FnOnce(String) + 'static) {
        let notify = self.notify;
        if !on {
            notify.set(false);
            storage::set_notify_wanted(false);
            return;
        }
        browser::ask_for_notifications(move |granted| {
            notify.set(granted);
            storage::set_notify_wanted(granted);
            if !granted {
                on_refused(
                    "notifications stay off: the browser did not allow them for this page (allow \
                     them in its site settings, then turn them on again)"
                        .to_string(),
                );
            }
        });
    }
}

/// Follows the session for what needs the user: the title, the notification, and the user's
/// acts that make it old news.
pub fn follow(state: AppState) -> Attention {
    let supported = browser::notifications_supported();
    let attention = Attention {
        notify: RwSignal::new(
            supported && storage::notify_wanted() && browser::notifications_granted(),
        ),
        supported,
    };
    let news = Memo::new(move |_| {
        let seen = state.seen.get();
        state
            .session
            .with(status::attention)
            .filter(|(facts, _)| *facts > seen)
    });
    // The approvals running agents wait for (docs/architecture.md §14d): the title says so while any is
    // open, and each is notified once when the browser allows notifications (never asked
    // here: only the header's toggle asks).
    let host = crate::host::use_host();
    let asking = Memo::new(move |_| host.approvals());
    crate::erased::effect(move || {
        let title = match news.get() {
            Some((_, text)) => format!("{text} — agent-chatter"),
            None => TITLE.to_string(),
        };
        let title = if asking.with(Vec::is_empty) {
            title
        } else {
            format!("{NEEDS_YOU}{title}")
        };
        browser::set_title(&title);
    });
    let asked = StoredValue::new(std::collections::BTreeSet::<String>::new());
    crate::erased::effect(move || {
        asking.with(|open| {
            for (member, request) in open {
                if asked.with_value(|a| a.contains(&request.id)) {
                    continue;
                }
                asked.update_value(|a| {
                    a.insert(request.id.clone());
                });
                let name = state.members.with_untracked(|ms| {
                    crate::state::member(ms, member)
                        .map_or_else(|| member.clone(), |m| m.display_name.clone())
                });
                browser::notify(
                    &format!("{name} needs you — agent-chatter"),
                    &format!("may it: {}?", request.tool_call.title),
                );
            }
        });
    });
    // Each piece of news is notified once, and only while the tab is hidden.
    let notified = StoredValue::new(0usize);
    crate::erased::effect(move || {
        let Some((facts, text)) = news.get() else {
            return;
        };
        if facts <= notified.get_value() {
            return;
        }
        notified.set_value(facts);
        if attention.notify.get_untracked() && browser::hidden() {
            let team = state
                .team
                .with_untracked(|t| t.as_ref().map(|t| t.name.clone()))
                .unwrap_or_default();
            browser::notify(&format!("{text} — agent-chatter"), &team);
        }
    });
    let acted = move || {
        let facts = state.session.with_untracked(|s| s.facts().len());
        if state.seen.get_untracked() != facts {
            state.seen.set(facts);
        }
    };
    let pointer = window_event_listener(leptos::ev::pointerdown, move |_| acted());
    let key = window_event_listener(leptos::ev::keydown, move |_| acted());
    on_cleanup(move || {
        pointer.remove();
        key.remove();
    });
    attention
}
