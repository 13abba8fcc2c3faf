//! Below the conversation (`routing-status`): who runs (or is due, in simulation), who is
//! queued (next first) and who we wait for, from the core's conversation.

use agent_chatter::conversation::Status;
use leptos::prelude::*;

use crate::state::use_state;

/// The routing status line; `agents_run`: whether the host runs the agents (a bridge), so the
/// agent in flight is "running" rather than "due".
pub fn routing_status(agents_run: bool) -> impl IntoView {
    let state = use_state();
    let status_line = move || {
        state.session.with(|s| {
            let c = s.conversation();
            let name = |id: &str| {
                s.team()
                    .and_then(|t| t.member(id))
                    .map_or(id.to_string(), |m| m.display_name.clone())
            };
            // Next first: the order they run in unless the coming message routes further.
            let queue: Vec<String> = c
                .pending_in_run_order()
                .into_iter()
                .map(|q| format!("{} {}", name(&q.to), q.intent))
                .collect();
            let mut parts = Vec::new();
            // In simulation nothing runs until the user answers or lets the simulator:
            // the agent is due, as the mark beside says.
            if let Some(f) = c.in_flight() {
                let state = if agents_run { "running" } else { "due" };
                parts.push(format!("{state}: {} ({})", name(&f.to), f.intent));
            }
            if !queue.is_empty() {
                parts.push(format!("queue (next first): {}", queue.join(" · ")));
            }
            match c.status() {
                Status::AwaitingHuman => parts.push(format!(
                    "waiting for: {}",
                    c.waiting_for().map_or("a human".to_string(), name)
                )),
                Status::Completed => {
                    parts.push("done: a human message reopens the conversation".to_string())
                }
                Status::Idle => parts.push("no message yet: say something below".to_string()),
                Status::Running => {}
            }
            parts.join("   ")
        })
    };
    view! {
        <div class="routing-status" data-testid="routing-status"
            title="who runs next; P1 = urgent (runs first), P2 = normal, P3 = later">{status_line}</div>
    }
}
