//! What this session's runs cost (`usage-total`, docs/architecture.md §14c): runs, tokens, cost
//! and time, those before a team change too, against the team's cap (`maxCostUsd`) when it
//! sets one.

use agent_chatter::usage::{Usage, Usd};
use leptos::prelude::*;

#[component]
pub fn UsageTotal(
    /// The conversation's usage and how many runs it sums.
    #[prop(into)]
    usage: Signal<(Usage, usize)>,
    /// The team's spending cap.
    #[prop(into)]
    cap: Signal<Option<Usd>>,
) -> impl IntoView {
    // Short, so the header stays one line: the runs, what they cost and the cap; the tokens
    // and time are per member and per delivery.
    let text = move || {
        let (usage, runs) = usage.get();
        let mut text = match (runs, usage.cost_usd) {
            (0, _) => "no runs yet".to_string(),
            (_, Some(cost)) => format!("{} · {}", runs_word(runs), cost.display()),
            _ if usage.is_empty() => format!("{} · no usage reported", runs_word(runs)),
            _ => format!("{} · no cost reported", runs_word(runs)),
        };
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
            title="what this session's agent runs reported (team changes included): how many and their cost here; tokens and time per member and per delivery; the team's cost cap (maxCostUsd) when it sets one">
            "usage: "{text}
        </span>
    }
}

fn runs_word(runs: usize) -> String {
    if runs == 1 {
        "1 run".to_string()
    } else {
        format!("{runs} runs")
    }
}
