//! What this session's runs cost (`usage-total`, docs/architecture.md §14c): runs, tokens, cost
//! and time, those before a team change too, against the team's cap (`maxCostUsd`) when it
//! sets one.

use agent_chatter::usage::{runs_word, Spend, Usd};
use leptos::prelude::*;

#[component]
pub fn UsageTotal(
    /// What the conversation's runs cost.
    #[prop(into)]
    usage: Signal<Spend>,
    /// The team's spending cap.
    #[prop(into)]
    cap: Signal<Option<Usd>>,
) -> impl IntoView {
    // Short, so the header stays one line: the runs, what they cost (`≥` when some runs
    // is not known) and the cap; the tokens and time are per member and per delivery.
    let text = move || {
        let spend = usage.get();
        let cost = spend.cost().unwrap_or_else(|| {
            if spend.unpriced > 0 {
                "cost not known"
            } else {
                "no usage reported"
            }
            .to_string()
        });
        let mut text = if spend.runs == 0 {
            "no runs yet".to_string()
        } else {
            format!("{} · {cost}", runs_word(spend.runs))
        };
        if let Some(cap) = cap.get() {
            let spent = spend.usage.cost_usd.map_or(0.0, Usd::dollars);
            text.push_str(&format!(" · cap {}", cap.display_limit()));
            if spent >= cap.dollars() {
                text.push_str(" reached");
            }
        }
        text
    };
    view! {
        <span class="usage-total" data-testid="usage-total"
            title="what this session's agent runs reported (team changes included): how many and their cost (≥: the cost of some runs is not known: Codex and Gemini report none, an interrupted run none either; the cap (maxCostUsd) counts reported costs only); tokens and time per member and per delivery">
            "usage: "{text}
        </span>
    }
}
