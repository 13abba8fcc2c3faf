//! Title, team name, connection status and the files menu.

use leptos::prelude::*;

use crate::components::files_menu::FilesMenu;
use crate::state::use_state;

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
            <span class="connection" data-testid="connection-status"
                title="No bridge: the page is its own host and agents are answered by you or the simulator">
                "● simulation"
            </span>
            <FilesMenu/>
        </header>
    }
}
