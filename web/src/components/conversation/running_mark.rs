//! Where the running agent's reply will come, at the end of the timeline (`running-mark`): a
//! ring turning a quarter a second with its clock, who, and for how long (m:ss, on the clock
//! `member-status` reads).

use leptos::prelude::*;

use crate::host::use_host;
use crate::state::use_state;
use crate::status::{clock, ring_turn};

#[component]
pub fn RunningMark() -> impl IntoView {
    let state = use_state();
    let host = use_host();
    let running = Memo::new(move |_| {
        state.session.with(|s| {
            let to = s.conversation().in_flight()?.to.clone();
            let name = s
                .team()
                .and_then(|t| t.member(&to))
                .map_or_else(|| to.clone(), |m| m.display_name.clone());
            Some((to, name))
        })
    });
    move || {
        running.get().map(|(to, name)| {
            // A bridge away: nothing is shown as running (docs/architecture.md §13).
            if host.unavailable().is_some() {
                return view! {
                    <div class="running-mark" data-testid="running-mark" role="status">
                        <span>{format!("{name} was running when the bridge disconnected: what became of the run is known once it is back")}</span>
                    </div>
                }
                .into_any();
            }
            let doing = if host.runs_agents() {
                "is running: its reply comes here"
            } else {
                "is due: answer for it below, or let the simulator answer"
            };
            let ran = Memo::new(move |_| host.running_for(&to));
            let elapsed = move || ran.get().map(clock).unwrap_or_default();
            let turn = move || ring_turn(ran.get().unwrap_or_default());
            view! {
                <div class="running-mark" data-testid="running-mark" role="status">
                    <span class="spinner" data-turn=turn aria-hidden="true"></span>
                    <span>{format!("{name} {doing}")}</span>
                    <span class="elapsed" data-testid="running-elapsed">{elapsed}</span>
                </div>
            }
            .into_any()
        })
    }
}
