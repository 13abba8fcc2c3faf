//! The run that ended in the message the inspector shows (docs/architecture.md §14c): what it
//! cost (`delivery-usage`), and how it ended when not plainly (`delivery-outcome`: incomplete
//! and why, or failed (cancelled, timed out: the run's own word) with the full reason, where
//! the conversation keeps a short line). And, for a prompt that was delivered, how its
//! recipient's run answered it (`answer-run`): a failed delivery shows its own failure, not
//! only the run that wrote the message it was given.

use leptos::prelude::*;

use crate::components::deliveries::{model_words, usage_words};
use crate::host::use_host;
use crate::state::use_state;

#[component]
pub fn DeliveryRun() -> impl IntoView {
    let state = use_state();
    let host = use_host();
    // The run that answered the prompt shown: its member and end time (ms), what the model
    // line asks its host for, and its line (`answer-run`). One lookup for both.
    let answer = Memo::new(move |_| {
        let at = state.shown_at.get()?;
        let member = state.shown_recipient.get()?;
        state.session.with(|s| {
            let name = s
                .team()
                .and_then(|t| t.member(&member))
                .map_or_else(|| member.clone(), |m| m.display_name.clone());
            let run = s.answer(&member, at)?;
            let how = match (&run.failed, &run.incomplete) {
                (Some(reason), _) => format!("{}: {reason}", run.outcome()),
                (None, Some(reason)) => format!("#{}, incomplete: {reason}", run.message + 1),
                (None, None) => format!("#{}", run.message + 1),
            };
            let usage = usage_words(run, host.usage_silence(Some(&member)));
            let ended = s.messages().get(run.message)?.at.0;
            let text = format!("{name}'s answer to this prompt: {how} · {usage}");
            Some((member.clone(), ended, text))
        })
    });
    let model = move || {
        let (to, at) = answer.with(|a| a.as_ref().map(|(to, at, _)| (to.clone(), *at)))?;
        Some(model_words(host, &to, host.run_details(&to, at).as_ref()))
    };
    let run = Memo::new(move |_| {
        let at = state.shown_at.get()?;
        state.session.with(|s| {
            let run = s.run_at(at)?;
            // A member who left the team is still named (`memberLeft`).
            let name = s.display_name(&run.to).unwrap_or(&run.to).to_string();
            let usage = usage_words(run, host.usage_silence(Some(&run.to)));
            let outcome = match (&run.failed, &run.incomplete) {
                (Some(reason), _) => Some(("failed", format!("{}: {reason}", run.outcome()))),
                (None, Some(reason)) => Some(("incomplete", format!("incomplete: {reason}"))),
                (None, None) => None,
            };
            Some((at, name, usage, outcome))
        })
    });
    // Three parts apart: a selection rebuilds only the part it changed.
    let produced = move || {
        run.get().map(|(at, name, usage, outcome)| {
            view! {
                <div class="delivery-run">
                    <span class="muted">{format!("{name}'s run that ended in #{}: ", at + 1)}</span>
                    <span data-testid="delivery-usage">{usage}</span>
                    {outcome.map(|(class, text)| view! {
                        <p class=format!("delivery-outcome {class}") data-testid="delivery-outcome">{text}</p>
                    })}
                </div>
            }
        })
    };
    let answered = move || {
        answer.get().map(
            |(_, _, text)| view! { <p class="delivery-run" data-testid="answer-run">{text}</p> },
        )
    };
    let model = move || {
        model().map(|m| view! { <p class="delivery-run" data-testid="answer-model">{m}</p> })
    };
    (produced, answered, model)
}
