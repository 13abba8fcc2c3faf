//! Title, team name, connection status and the files menu.

use leptos::prelude::*;

use crate::components::files_menu::FilesMenu;
use crate::components::sessions_menu::SessionsMenu;
use crate::components::share_link::ShareLink;
use crate::state::{use_state, Mode};

#[component]
pub fn Header() -> impl IntoView {
    let state = use_state();
    let team_name = move || {
        state.team.with(|t| {
            t.as_ref()
                .map(|t| t.name.clone())
                .unwrap_or_else(|| "no team".into())
        })
    };
    view! {
        <header class="top">
            <h1>"agent-chatter"</h1>
            <span class="team-name">{team_name}</span>
            <span class="connection" data-testid="connection-status" title=move || match state.mode.get() {
                Mode::Simulation => "No bridge: the page is its own host and agents are answered by you or the simulator. \
                    To mirror a bridge, open the address `agent-chatter serve` printed (it ends in #token=…)",
                Mode::Bridge { .. } => "Mirroring the bridge's session: it runs the agents and keeps the log",
            }>
                {move || match state.mode.get() {
                    Mode::Simulation => "● simulation",
                    Mode::Bridge { connected: true } => "● bridge",
                    Mode::Bridge { connected: false } => "○ bridge (disconnected)",
                }}
            </span>
            <SessionsMenu/>
            <ShareLink/>
            <FilesMenu/>
        </header>
    }
}
