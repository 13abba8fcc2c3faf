//! How a bridge answers a team member (`agent-status`): it runs its agent (the command),
//! the simulator answers it (chosen, or its program not installed), or it cannot run, saying
//! why (docs/architecture.md §14c).

use agent_chatter::protocol::AgentReport;
use leptos::prelude::*;

#[component]
pub fn AgentStatus(
    /// How the bridge answers the member (`None` in simulation, or before the bridge says).
    #[prop(into)]
    report: Signal<Option<AgentReport>>,
) -> impl IntoView {
    move || {
        let (class, text, title) = status_words(report.get()?);
        Some(view! { <div class=class data-testid="agent-status" title=title>{text}</div> })
    }
}

/// The status's class, its words and its title (the command, or why it cannot run).
fn status_words(report: AgentReport) -> (&'static str, String, String) {
    let AgentReport {
        runs,
        simulated,
        command,
        problem,
        ..
    } = report;
    match (runs, simulated, command, problem) {
        (true, _, command, _) => {
            let command = command.unwrap_or_default();
            ("agent-status runs", format!("runs: {command}"), command)
        }
        // Chosen in the team (agentType "simulated") or by --simulate.
        (false, true, None, _) => (
            "agent-status simulated",
            "simulated (chosen)".to_string(),
            "the built-in simulator answers this member".to_string(),
        ),
        (false, true, Some(command), _) => {
            let program = command.split(' ').next().unwrap_or("").to_string();
            (
                "agent-status simulated",
                format!("simulated ({program} is not installed)"),
                command,
            )
        }
        (false, false, command, problem) => {
            let why = problem.unwrap_or_else(|| "no command".to_string());
            (
                "agent-status cannot-run",
                format!("cannot run: {why}"),
                command.unwrap_or(why),
            )
        }
    }
}
