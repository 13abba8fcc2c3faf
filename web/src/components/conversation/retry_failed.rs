//! A failed agent can be run again (`retry`): for each AI member whose last run failed (or was
//! cancelled, or timed out: said in the words the deliveries list uses, docs/architecture.md
//! §14c), with nothing running or queued for it, a button applies a `retry` fact
//! (docs/architecture.md §6b), so its failed delivery runs again, answering the same message,
//! in every host. Once the runs reached the team's cost cap, a retry would only be dropped with
//! the cap's notice: the line says so in place of the button.

use agent_chatter::session::Fact;
use leptos::prelude::*;

use crate::browser;
use crate::components::when::When;
use crate::erased::handler;
use crate::host::use_host;
use crate::state::use_state;

#[component]
pub fn RetryFailed() -> impl IntoView {
    let state = use_state();
    let host = use_host();
    // (id, display name, what happened to its run, why)
    let failed = Memo::new(move |_| {
        state.session.with(|s| {
            let Some(team) = s.team() else {
                return Vec::new();
            };
            team.members
                .iter()
                .filter(|m| m.is_ai() && s.can_retry(&m.id))
                .map(|m| {
                    let run = s.runs().iter().rev().find(|r| r.to == m.id);
                    let verb = run.and_then(|r| r.failed_verb()).unwrap_or("failed");
                    let why = run.and_then(|r| r.failed.clone()).unwrap_or_default();
                    (m.id.clone(), m.display_name.clone(), verb, why)
                })
                .collect::<Vec<_>>()
        })
    });
    let capped = Memo::new(move |_| state.cap_reached());
    view! {
        <When when=Memo::new(move |_| failed.with(|f| !f.is_empty()))>
            <ul class="retry-failed">
                {move || failed.get().into_iter().map(|(id, name, verb, why)| {
                    let action = match capped.get() {
                        Some(limit) => view! {
                            <span data-testid="retry-capped">{format!(
                                "To run it again, raise the cost cap (max cost {limit}, reached) in the header's usage."
                            )}</span>
                        }.into_any(),
                        None => {
                            let name = name.clone();
                            let retry = move |_| {
                                host.apply(Fact::Retry { to: id.clone(), at: browser::now() });
                            };
                            view! {
                                <button data-testid="retry" data-member=name.clone() on:click=handler(retry)>
                                    {format!("retry {name}")}
                                </button>
                                " (runs the same delivery again)"
                            }.into_any()
                        }
                    };
                    view! {
                        <li data-testid="retry-line" title=format!("why it {verb}: {why}")>
                            {format!("{name}'s last run {verb}. ")}
                            {action}
                        </li>
                    }
                }).collect_view()}
            </ul>
        </When>
    }
}
