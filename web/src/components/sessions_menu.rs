//! The bridge's sessions: which one is shown, and switching to another one
//! (`session-select`); the bridge replays it and every page follows.

use agent_chatter::protocol::SessionInfo;
use leptos::prelude::*;

use crate::state::use_state;

#[component]
pub fn SessionsMenu(
    /// The sessions the bridge's database holds, as of when they were last asked for.
    #[prop(into)]
    sessions: Signal<Vec<SessionInfo>>,
    /// The session shown.
    #[prop(into)]
    shown: Signal<Option<i64>>,
    /// Switches to a session; false when the switch was called off (the select then shows
    /// the session still open).
    on_choose: Callback<i64, bool>,
) -> impl IntoView {
    let state = use_state();
    // Bumped when a switch is called off, so the select shows the session still open.
    let kept = RwSignal::new(0u32);
    view! {
        <label class="sessions">"session "
            <select data-testid="session-select" on:change=move |ev| {
                if let Ok(id) = event_target_value(&ev).parse() {
                    if !on_choose.run(id) {
                        kept.update(|n| *n += 1);
                    }
                }
            }>
                {move || sessions.get().into_iter().map(|s| {
                    let selected = move || {
                        kept.track();
                        shown.get() == Some(s.id)
                    };
                    // The open session's count is the page's own (the list is as of when
                    // it was asked for).
                    let facts = move || {
                        if shown.get() == Some(s.id) {
                            state.session.with(|session| session.facts().len() as i64)
                        } else {
                            s.facts
                        }
                    };
                    let title = s.title.clone();
                    view! {
                        <option value=s.id.to_string() prop:selected=selected>
                            {move || {
                                let n = facts();
                                format!("#{} {} ({n} fact{})", s.id, title, if n == 1 { "" } else { "s" })
                            }}
                        </option>
                    }
                }).collect_view()}
            </select>
        </label>
    }
}
