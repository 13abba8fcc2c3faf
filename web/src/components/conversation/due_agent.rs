//! The agent that is due (`due-agent`): who, with what intent and how big a prompt (the
//! inspector shows it), and what the user can do meanwhile (given by the host's layout).

use leptos::prelude::*;

use crate::components::when::When;
use crate::host::use_host;
use crate::state::use_state;

#[component]
pub fn DueAgent(
    /// The agent runs on its own (a bridge runs it): the title says it is running and was
    /// given its prompt, rather than due and waiting for the answer typed here.
    runs: bool,
    /// What the user can do while it is due: answer for it (simulation), or watch its output
    /// and cancel it (bridge).
    children: ChildrenFn,
) -> impl IntoView {
    let state = use_state();
    let host = use_host();
    let due = move || {
        state.due.with(|d| {
            d.as_ref().map(|d| {
                let name = state.members.with(|members| {
                    crate::state::member(members, &d.to)
                        .map_or(d.to.clone(), |m| m.display_name.clone())
                });
                // What it is given, as the inspector shows it: the prompt, and a system flag
                // only for the agents that take one (Claude's `--append-system-prompt`).
                let given = match &d.prompt.system_flag {
                    Some(flag) => format!(
                        "a {}-byte prompt and a {}-byte system flag",
                        d.prompt.prompt.len(),
                        flag.len()
                    ),
                    None => format!("a {}-byte prompt", d.prompt.prompt.len()),
                };
                let shows = if d.prompt.system_flag.is_some() {
                    "shows them"
                } else {
                    "shows it"
                };
                (name, d.intent, given, shows)
            })
        })
    };
    view! {
        <When when=Memo::new(move |_| state.due.with(Option::is_some))>
            <div class="due-agent" data-testid="due-agent">
                <div class="due-title">
                    {move || due().map(|(name, intent, given, shows)| if runs && host.unavailable().is_some() {
                        format!("{name} was running ({intent}) when the bridge disconnected: it was given {given}; what became of the run is known once the bridge is back")
                    } else if runs {
                        // The running mark above says it runs, with its clock: this says
                        // only what it was given ("is running" twice read as two runs).
                        format!("Given to {name} ({intent}): {given} (the inspector {shows} with {name} selected at the message it answers)")
                    } else {
                        format!("{name} is due ({intent}): it gets {given} (the inspector {shows} with {name} selected at the message it answers)")
                    })}
                </div>
                {children()}
            </div>
        </When>
    }
}
