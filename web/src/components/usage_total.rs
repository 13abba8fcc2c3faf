//! What this conversation's runs cost (`usage-total`, docs/architecture.md §14c): runs, tokens,
//! cost and time since the team was set, against the team's cap (`maxCostUsd`) when it sets one.

use agent_chatter::usage::{Usage, Usd};
use leptos::prelude::*;

use crate::status::usage_words;

#[component]
pub fn UsageTotal(
    /// The conversation's usage and how many runs it sums.
    #[prop(into)]
    usage: Signal<(Usage, usize)>,
    /// The team's spending cap.
    #[prop(into)]
    cap: Signal<Option<Usd>>,
) -> impl IntoView {
    let text = move || {
        let (usage, runs) = usage.get();
        let mut text = usage_words(&usage, runs).unwrap_or_else(|| "no runs yet".into());
        if let Some(cap) = cap.get() {
            let spent = usage.cost_usd.map_or(0.0, Usd::dollars);
            text.push_str(&format!(" · cap {}", cap.display()));
            if spent >= cap.dollars() {
                text.push_str(" reached");
            }
        }
        text
    };
    view! {
        <span class="usage-total" data-testid="usage-total"
            title="what this conversation's agent runs reported (since the team was set): runs, tokens in (cached) and out, cost, time; and the team's cost cap (maxCostUsd) when it sets one">
            "usage: "{text}
        </span>
    }
}
