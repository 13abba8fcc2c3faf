//! The bridge's sessions (bridge mode): which one is shown, and switching to another one
//! (`session-select`); the bridge replays it and every page follows.

use leptos::prelude::*;

use crate::bridge;
use crate::state::{use_state, Mode};

#[component]
pub fn SessionsMenu() -> impl IntoView {
    let state = use_state();
    view! {
        <Show when=move || matches!(state.mode.get(), Mode::Bridge { .. })>
            <label class="sessions">"session "
                <select data-testid="session-select" on:change=move |ev| {
                    if let Ok(id) = event_target_value(&ev).parse() {
                        bridge::open_session(id);
                    }
                }>
                    {move || state.bridge_sessions.get().into_iter().map(|s| {
                        let selected = move || state.bridge_session.get() == Some(s.id);
                        view! {
                            <option value=s.id.to_string() prop:selected=selected>
                                {format!("#{} {} ({} facts)", s.id, s.title, s.facts)}
                            </option>
                        }
                    }).collect_view()}
                </select>
            </label>
        </Show>
    }
}
