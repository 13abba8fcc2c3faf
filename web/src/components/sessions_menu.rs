//! The bridge's sessions (bridge mode): which one is shown, and switching to another one
//! (`session-select`); the bridge replays it and every page follows.

use leptos::prelude::*;

use crate::bridge;
use crate::state::{use_state, Mode};

#[component]
pub fn SessionsMenu() -> impl IntoView {
    let state = use_state();
    // Bumped when a switch is called off, so the select shows the session still open.
    let kept = RwSignal::new(0u32);
    view! {
        <Show when=move || matches!(state.mode.get(), Mode::Bridge { .. })>
            <label class="sessions">"session "
                <select data-testid="session-select" on:change=move |ev| {
                    if let Ok(id) = event_target_value(&ev).parse() {
                        if bridge::may_leave_session(&state) {
                            bridge::open_session(id);
                        } else {
                            kept.update(|n| *n += 1);
                        }
                    }
                }>
                    {move || state.bridge_sessions.get().into_iter().map(|s| {
                        let selected = move || {
                            kept.track();
                            state.bridge_session.get() == Some(s.id)
                        };
                        // The open session's count is the page's own (the list is as of when
                        // it was asked for).
                        let facts = move || {
                            if state.bridge_session.get() == Some(s.id) {
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
        </Show>
    }
}
