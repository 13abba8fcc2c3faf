//! "share" (`share-link`): the scenario of the current view (the messages up to the shown
//! one, the team and settings in force, the recipient) as a link; see [`crate::share`].

use agent_chatter::scenario::Scenario;
use leptos::prelude::*;

use crate::browser;
use crate::share;
use crate::state::use_state;

fn select_all(ev: leptos::ev::FocusEvent) {
    event_target::<web_sys::HtmlInputElement>(&ev).select();
}

#[component]
pub fn ShareLink() -> impl IntoView {
    let state = use_state();
    let url = RwSignal::new(None::<String>);
    // When the link opens another prompt than the one shown (a delivery built with earlier
    // settings, a what-if, a routed parent), the box says so rather than let it pass.
    let differs = RwSignal::new(None::<String>);
    let make = move |_| {
        let member = state.shown_recipient.get_untracked();
        let scenario = state.session.with_untracked(|s| {
            let mut team = s.team()?.clone();
            let at = state.shown_at.get_untracked();
            // A delivered prompt travels with the settings it was built with.
            if let Some(settings) = at
                .zip(member.as_deref())
                .and_then(|(at, m)| s.settings_delivered(m, at))
            {
                team.settings = settings;
            }
            let len = at.map_or(0, |at| at + 1);
            let messages = &s.messages()[..len];
            Some(Scenario::from_history(
                team,
                messages,
                s.team_task_after(len),
            ))
        });
        let Some(scenario) = scenario else {
            return state.report("load a team first: there is nothing to share");
        };
        let shown = state.preview.with_untracked(|p| match p {
            Some(Ok(p)) => Some((p.sha256_hex(), p.explain.total_bytes)),
            _ => None,
        });
        let opened = member
            .as_deref()
            .and_then(|m| agent_chatter::scenario::preview(&scenario, m).ok())
            .map(|p| (p.sha256_hex(), p.explain.total_bytes));
        differs.set(match (shown, opened, member.as_deref()) {
            (Some((a, shown)), Some((b, opened)), Some(m)) if a != b => Some(format!(
                "this link opens {m}'s prompt as the case builds it ({opened} B), not the {shown} B shown: it carries the history, the team and the settings of the delivery shown (or those in force now), not a what-if"
            )),
            _ => None,
        });
        match share::encode(&scenario, member.as_deref()) {
            Ok(fragment) => {
                let Some(location) = web_sys::window().map(|w| w.location()) else {
                    return;
                };
                let base = location.href().unwrap_or_default();
                let base = base.split('#').next().unwrap_or_default().to_string();
                let link = format!("{base}{fragment}");
                browser::copy(link.clone(), |_| {});
                url.set(Some(link));
            }
            Err(e) => {
                url.set(None);
                state.report(e);
            }
        }
    };
    view! {
        <button data-testid="share-link" on:click=make title="a link that opens this view's prompts anywhere (the case travels in the link, not to a server)">"share"</button>
        <Show when=move || url.with(Option::is_some)>
            <span class="share-box">
                <label class="visually-hidden" for="share-url">"share link (copied to the clipboard)"</label>
                <input id="share-url" data-testid="share-url" readonly prop:value=move || url.get().unwrap_or_default()
                    title="share link (copied to the clipboard)" on:focus=select_all/>
                <button on:click=move |_| url.set(None) aria-label="close the share link" title="close the share link">"×"</button>
                {move || differs.get().map(|text| view! { <span class="share-note" data-testid="share-note">{text}</span> })}
            </span>
        </Show>
    }
}
