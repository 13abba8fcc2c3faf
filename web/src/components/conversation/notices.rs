//! What the conversation reported: unresolved names, runaway bound, [DONE]…

use leptos::prelude::*;

use crate::state::use_state;

/// How many notices stay on screen (the newest).
const SHOWN: usize = 4;

#[component]
pub fn Notices() -> impl IntoView {
    let state = use_state();
    let shown = move || {
        state.notices.with(|n| {
            n.iter()
                .rev()
                .take(SHOWN)
                .rev()
                .cloned()
                .collect::<Vec<_>>()
        })
    };
    view! {
        <ul class="notices" data-testid="notices">
            {move || shown().into_iter().map(|n| view! { <li class="notice">{n}</li> }).collect_view()}
        </ul>
    }
}
