//! The team in use: its members and settings (`team-editor`). Member edits rewrite the team
//! and replay the conversation ([`crate::host::edit_team`]); settings go in as a
//! `setSettings` fact.

use agent_chatter::config;
use agent_chatter::team::{Member, MemberKind, Team};
use leptos::prelude::*;

use crate::components::member_row::MemberRow;
use crate::components::settings_form::SettingsForm;
use crate::host;
use crate::state::{use_state, AppState};

#[component]
pub fn TeamEditor() -> impl IntoView {
    let state = use_state();
    let rows = move || {
        state
            .team
            .with(|t| t.as_ref().map_or(0, |t| t.members.len()))
    };
    let add = move |_| {
        edit(&state, |team| {
            let n = (team.members.len() + 1..)
                .find(|n| team.find(&format!("agent{n}")).is_none())
                .unwrap_or(0);
            let name = format!("agent{n}");
            team.members.push(Member {
                id: name.clone(),
                name: name.clone(),
                display_name: name,
                kind: MemberKind::Ai,
                agent_type: Some(agent_chatter::team::CLAUDE_CODE.to_string()),
                system_instruction: None,
                instruction_file: None,
                instruction_file_text: None,
                base_dir: None,
                window_size: None,
            });
        });
    };
    view! {
        <div class="team-editor" data-testid="team-editor">
            <h2>"team"</h2>
            <For each=move || 0..rows() key=|i| *i children=move |i| view! { <MemberRow index=i/> }/>
            <button class="add-member" on:click=add>"+ member"</button>
            <SettingsForm/>
        </div>
    }
}

/// Applies `change` to a copy of the team in use, re-reads it through the core's team reader
/// (so an invalid edit is refused naming the field) and replays the conversation with it.
/// Whether it was applied (a refusal is reported on the error banner).
pub fn edit(state: &AppState, change: impl FnOnce(&mut Team)) -> bool {
    let Some(mut team) = state.team.get_untracked() else {
        state.report("no team to edit: open a team config first");
        return false;
    };
    change(&mut team);
    let checked = serde_json::to_value(&team)
        .map_err(|e| e.to_string())
        .and_then(|v| config::team_from_value(&v).map_err(|e| e.to_string()));
    match checked {
        Ok(team) => host::edit_team(state, team),
        Err(e) => {
            state.report(format!("team not changed: {e}"));
            false
        }
    }
}
