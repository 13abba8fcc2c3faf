//! The human composer (`composer-input`, `composer-send`): raw text, markers included.
//! Ctrl/Cmd+Enter sends. While typing, a `[NEXT]` name that is no member is warned of under
//! it (`composer-hint`), with the member it most likely meant; a click puts that name in.
//! While a bridge is away, what is typed stays and "send" waits for it (`composer-queued`:
//! "will send when reconnected"); it goes once the bridge is back. Once the runs have reached
//! the team's cost cap, it says that no agent is given a message until the cap is raised
//! (`composer-capped`).

use agent_chatter::markers::{self, MarkerKind};
use leptos::prelude::*;

use crate::components::when::When;
use crate::erased::handler;
use crate::host::{use_host, Host, Ticket};
use crate::state::{use_state, AppState};

#[component]
pub fn Composer() -> impl IntoView {
    let host = use_host();
    let state = use_state();
    let text = session_draft(host);
    let unknown = unknown_addressees(state, text);
    let Sending { send, queued } = sending(host, text, unknown);
    // Why nothing can be sent now (a bridge that is away): typing goes on, and a send waits.
    let unavailable = move || host.unavailable();
    let example = example(state);
    view! {
        <div class="composer">
            // A short placeholder, whole on a phone's two lines; Ctrl+Enter is in the label.
            <textarea data-testid="composer-input" id="composer-input" rows="2"
                aria-label="message (markers included; Ctrl+Enter sends)" aria-keyshortcuts="Control+Enter"
                title=move || unavailable().unwrap_or_default()
                placeholder=move || unavailable().map_or_else(|| example.get(), str::to_string)
                prop:value=move || text.get()
                on:input=handler(move |ev| text.set(event_target_value(&ev)))
                on:keydown=handler(move |ev: leptos::ev::KeyboardEvent| {
                    if ev.key() == "Enter" && (ev.ctrl_key() || ev.meta_key()) {
                        ev.prevent_default();
                        send();
                    }
                })/>
            <button data-testid="composer-send" on:click=handler(move |_| send())
                title=move || unavailable().map(|_| "sends once the bridge is back").unwrap_or_default()>"send"</button>
        </div>
        <When when=Memo::new(move |_| queued.get() && unavailable().is_some())>
            <div class="composer-hint" role="status" data-testid="composer-queued">
                "will send when reconnected: the bridge is away; this message is kept here and goes once it is back"
            </div>
        </When>
        {addressee_hint(text, unknown)}
        // A message still goes in once the cap is reached, but no agent is given it (the
        // conversation's rule): said before a send.
        {move || state.cap_reached().map(|cap| view! {
            <div class="composer-hint" role="status" data-testid="composer-capped">
                {format!("cost cap reached (max cost {cap}): what you send goes in, but no agent is given it until the cap is raised (the header's usage opens it)")}
            </div>
        })}
    }
}

/// What is typed, kept per session: it survives a reload, and another session shown shows its
/// own draft, so a message is never sent to a conversation it was not written for
/// (docs/architecture.md §13). What is typed before a bridge has brought the page its first
/// session was written for that session: it stays (and a send waiting for it goes).
fn session_draft(host: Host) -> RwSignal<String> {
    let session = host.shown_session();
    let drafts = host.drafts();
    let text = RwSignal::new(String::new());
    // The session whose draft the text is (`None` before a bridge brought one).
    let drafted = std::cell::Cell::new(None::<i64>);
    crate::erased::effect(move || {
        let shown = session.get();
        let first = drafted.replace(shown).is_none() && shown.is_some();
        if first && text.with_untracked(|t| !t.is_empty()) {
            text.with_untracked(|t| crate::storage::set_draft(drafts, shown, t));
        } else {
            text.set(crate::storage::draft(drafts, shown));
        }
    });
    crate::erased::effect(move || {
        text.with(|t| crate::storage::set_draft(drafts, session.get_untracked(), t))
    });
    text
}

/// The `[NEXT]` names in `text` that are no member of the team, each with (the member's
/// name, display name) it most likely meant.
fn unknown_addressees(state: AppState, text: RwSignal<String>) -> Memo<Vec<UnknownName>> {
    Memo::new(move |_| {
        text.with(|text| {
            state.team.with(|team| {
                let Some(team) = team else { return Vec::new() };
                team.unknown_addressees(text)
                    .into_iter()
                    .map(|(name, m)| (name, m.map(|m| (m.name.clone(), m.display_name.clone()))))
                    .collect::<Vec<_>>()
            })
        })
    })
}

/// The composer's send, and whether a send waits for the bridge to come back.
struct Sending<F> {
    send: F,
    /// "send" pressed while the bridge was away: the text goes once it is back.
    queued: RwSignal<bool>,
}

/// Sending `text`: asked first when a `[NEXT]` name is no member; kept and sent once back
/// when the bridge is away; emptied only once the host stored the message.
fn sending(
    host: Host,
    text: RwSignal<String>,
    unknown: Memo<Vec<UnknownName>>,
) -> Sending<impl Fn() + Copy + 'static> {
    let deliver = delivery(host, text);
    let queued = RwSignal::new(false);
    let send = move || {
        let body = text.get_untracked();
        if body.trim().is_empty() {
            return;
        }
        // A mistyped name would reach no one, and a message once sent stays in the log:
        // asked first, whether the send came from the button or the keyboard.
        let question = unknown.with_untracked(|u| send_anyway(u));
        if question.is_some_and(|q| !crate::browser::confirm(&q)) {
            return;
        }
        if untrack(|| host.unavailable()).is_some() {
            queued.set(true);
            return;
        }
        deliver(body);
    };
    // Back: the waiting text goes (as it is now; emptied meanwhile, nothing goes).
    crate::erased::effect(move || {
        if !queued.get() || host.unavailable().is_some() {
            return;
        }
        queued.set(false);
        let body = text.get_untracked();
        if !body.trim().is_empty() {
            untrack(|| deliver(body));
        }
    });
    Sending { send, queued }
}

/// Hands a message to the host. The text stays until the host has stored the message (a
/// bridge stores it later): a refused message (an error event) is still there to fix, not
/// lost. The message is known by its ticket, never by its text, so an earlier message with
/// the same text is not taken for it.
fn delivery(host: Host, text: RwSignal<String>) -> impl Fn(String) + Copy + 'static {
    let session = host.shown_session();
    let drafts = host.drafts();
    let pending = RwSignal::new(None::<(Ticket, String)>);
    let stored = move |body: &str| {
        pending.set(None);
        if text.get_untracked() == body {
            text.set(String::new());
        }
    };
    crate::erased::effect(move || {
        let Some((ticket, body)) = pending.get() else {
            return;
        };
        if host.is_stored(ticket) {
            stored(&body);
        }
    });
    move |body: String| {
        let Some(ticket) = host.send_human(body.clone()) else {
            return;
        };
        // Sent: no longer a draft to bring back after a reload, even before the host has
        // stored it (a reload then would offer the same message twice).
        crate::storage::set_draft(drafts, untrack(|| session.get()), "");
        if untrack(|| host.is_stored(ticket)) {
            stored(&body);
        } else {
            pending.set(Some((ticket, body)));
        }
    }
}

/// The placeholder's example, addressed to this team's own AI members (the first two).
fn example(state: AppState) -> Memo<String> {
    Memo::new(move |_| {
        state.team.with(|team| {
            let names: Vec<&str> = team
                .iter()
                .flat_map(|t| t.members.iter())
                .filter(|m| m.is_ai())
                .map(|m| m.name.as_str())
                .take(2)
                .collect();
            placeholder(&names)
        })
    })
}

/// The warning under the composer (`composer-hint`) for each `[NEXT]` name that is no
/// member, with a button that puts in the member it most likely meant.
fn addressee_hint(text: RwSignal<String>, unknown: Memo<Vec<UnknownName>>) -> impl IntoView {
    view! {
        <When when=Memo::new(move |_| unknown.with(|u| !u.is_empty()))>
            <div class="composer-hint" role="status" data-testid="composer-hint">
                {move || unknown.get().into_iter().map(|(name, meant)| {
                    let said = format!("no member '{name}' in [NEXT]");
                    match meant {
                        Some((member, display)) => {
                            let fix = move |_| text.update(|t| *t = rename_addressee(t, &name, &member));
                            view! {
                                <span>{said}" — did you mean "
                                    <button class="link" data-testid="composer-hint-fix" on:click=handler(fix)
                                        title="put this name in the message">{display}</button>"?"</span>
                            }.into_any()
                        }
                        None => view! {
                            <span>{said}": it would reach no one. Names are in the team pane."</span>
                        }.into_any(),
                    }
                }).collect_view()}
            </div>
        </When>
    }
}

/// The composer's example, addressed to `names` (the team's first AI members): with none,
/// what a message is without an addressee.
fn placeholder(names: &[&str]) -> String {
    if names.is_empty() {
        return "a message… (add an AI member in the team pane to address it with [NEXT: name])"
            .to_string();
    }
    format!(
        "a message… e.g. Please review. [NEXT: {}]",
        names.join(", ")
    )
}

/// A name in `[NEXT]` that is no member, with the member it most likely meant (its name and
/// display name).
type UnknownName = (String, Option<(String, String)>);

/// Names in `[NEXT]` that are no member (see [`UnknownName`]).
type Unknown = [UnknownName];

/// The question asked before a message whose `[NEXT]` names `unknown` is sent; `None` when
/// every name is a member.
fn send_anyway(unknown: &Unknown) -> Option<String> {
    if unknown.is_empty() {
        return None;
    }
    let names: Vec<String> = unknown
        .iter()
        .map(|(name, meant)| match meant {
            Some((_, display)) => format!("'{name}' (did you mean {display}?)"),
            None => format!("'{name}'"),
        })
        .collect();
    let (are, them) = if names.len() == 1 {
        ("is no member", "it")
    } else {
        ("are no members", "them")
    };
    Some(format!(
        "Send anyway? {} in [NEXT] {are}: the message would not reach {them}.",
        names.join(", ")
    ))
}

/// `text` with `name` replaced by `member` wherever it is an addressee of a `[NEXT]` marker
/// (a whole name between `:`/`,` and `,`/`!`/`]`), nowhere else.
fn rename_addressee(text: &str, name: &str, member: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    for span in markers::spans(text).filter(|s| s.kind == MarkerKind::Next) {
        let value = &text[span.value.clone()];
        let mut start = 0;
        for part in value.split(',') {
            let trimmed = part.trim_start();
            let lead = part.len() - trimmed.len();
            let end = trimmed.find('!').unwrap_or(trimmed.len());
            if trimmed[..end].trim_end() == name {
                let at = span.value.start + start + lead;
                out.push_str(&text[copied..at]);
                out.push_str(member);
                copied = at + name.len();
            }
            start += part.len() + 1;
        }
    }
    out.push_str(&text[copied..]);
    out
}

#[cfg(test)]
mod tests {
    use super::{placeholder, rename_addressee, send_anyway};

    #[test]
    fn the_example_is_addressed_to_the_teams_own_members() {
        assert_eq!(
            placeholder(&["bob", "ana"]),
            "a message… e.g. Please review. [NEXT: bob, ana]"
        );
        assert!(placeholder(&[]).contains("add an AI member"));
    }

    #[test]
    fn the_mistyped_addressee_is_replaced_keeping_its_priority() {
        assert_eq!(
            rename_addressee("Go [NEXT: max, sarha !P1] sarha", "sarha", "sarah"),
            "Go [NEXT: max, sarah !P1] sarha"
        );
    }

    #[test]
    fn a_name_that_only_contains_the_typo_is_left_alone() {
        assert_eq!(
            rename_addressee("[NEXT: maxi, max] [NEXT:max]", "max", "carol"),
            "[NEXT: maxi, carol] [NEXT:carol]"
        );
    }

    #[test]
    fn a_message_to_names_that_are_no_members_asks_first_naming_them() {
        assert_eq!(send_anyway(&[]), None);
        let meant = Some(("max".to_string(), "Max".to_string()));
        assert_eq!(
            send_anyway(&[("mx".to_string(), meant)]).as_deref(),
            Some("Send anyway? 'mx' (did you mean Max?) in [NEXT] is no member: the message would not reach it.")
        );
        assert_eq!(
            send_anyway(&[("a".to_string(), None), ("b".to_string(), None)]).as_deref(),
            Some(
                "Send anyway? 'a', 'b' in [NEXT] are no members: the message would not reach them."
            )
        );
    }
}
