//! Open any of our files (`import-file`: session, team config ours or the peer's) and save the
//! session, its scenario, a snapshot and the team (ours and the peer's cli-config); download
//! the transcript (`agent_chatter::transcript`) as Markdown or HTML; in the header's "open ▾"
//! (`open-menu`, with "open a shared link") and "save ▾" (`save-menu`) menus.

use agent_chatter::peer::cli_config;
use agent_chatter::transcript::{self, Format};
use leptos::prelude::*;
use leptos::task::spawn_local;
use wasm_bindgen::JsCast;

use crate::browser;
use crate::components::header::popover::{close_menu_of, close_on_outside_or_escape};
use crate::components::header::share_link::OpenLink;
use crate::erased::handler;
use crate::files;
use crate::host::use_host;
use crate::state::{use_state, AppState};

const JSON: &str = "application/json";

fn close_menu(ev: leptos::ev::MouseEvent) {
    close_menu_of(ev.target().and_then(|t| t.dyn_into().ok()));
}

#[component]
pub fn FilesMenu() -> impl IntoView {
    let state = use_state();
    let host = use_host();
    let input = NodeRef::<leptos::html::Input>::new();
    let nav = NodeRef::<leptos::html::Nav>::new();
    close_on_outside_or_escape(nav);
    let on_open = move |_| {
        let Some(input) = input.get_untracked() else {
            return;
        };
        spawn_local(async move {
            match browser::read_chosen_file(&input).await {
                None => {}
                Some(Err(e)) => state.report(e),
                Some(Ok((name, text))) => {
                    close_menu_of(Some(input.into()));
                    // What opened is said by the host once done (`happened`).
                    host.open_file(&name, &text);
                }
            }
        });
    };
    let save = move |what: &'static str| {
        move |_| {
            if let Err(e) = save_file(&state, what) {
                state.report(e);
            }
        }
    };
    let transcript = move |format: Format| {
        move |_| {
            if let Err(e) = save_transcript(&state, format) {
                state.report(e);
            }
        }
    };
    // Two menus (docs/architecture.md §13): "open ▾" and "save ▾", each a `<details>` whose
    // summary is the button (Enter/Space toggle it); Escape or a click outside closes, a
    // chosen entry too. One
    // `name` makes them exclusive: opening one closes the other.
    view! {
        <nav class="files" node_ref=nav>
            <details class="menu" name="files-menu">
                <summary data-testid="open-menu" title="open a file, or a link someone shared">"open ▾"</summary>
                <div class="menu-list" role="group" aria-label="open a file">
                    <label class="button" title="a session file, a scenario, a snapshot (read with the team in use), or a team config (ours or the peer's cli-config 1.1/1.2)">
                        "open a file…"
                        <input type="file" accept=".json,application/json" data-testid="import-file"
                            node_ref=input on:change=handler(on_open)/>
                    </label>
                    <OpenLink/>
                </div>
            </details>
            <details class="menu" name="files-menu">
                <summary data-testid="save-menu" title="download the session, its scenario, a snapshot, the team or the transcript">"save ▾"</summary>
                <div class="menu-list" on:click=handler(close_menu)>
                    <span class="group" role="group" aria-label="save a file (downloads)">
                        <button data-testid="export-session" on:click=handler(save("session"))
                            title=format!("download this conversation as a session file ({}): open it here later to go on", agent_chatter::session::SESSION_FORMAT)>"⬇ save session"</button>
                        <button data-testid="export-scenario" on:click=handler(save("scenario"))
                            title="download a scenario file: the team and messages, to preview the same prompts anywhere (npm, the CLI)">"⬇ scenario file"</button>
                        <button data-testid="export-snapshot" on:click=handler(save("snapshot"))
                            title="download a snapshot file: the messages and team task only">"⬇ snapshot file"</button>
                        <button data-testid="export-team" on:click=handler(save("team"))
                            title="download the team config (members and settings)">"⬇ team file"</button>
                        <button data-testid="export-peer-team" on:click=handler(save("cli-config"))
                            title="download the team as the TypeScript agent-chatter's cli-config">"⬇ cli-config file"</button>
                    </span>
                    <span class="group" role="group" aria-label="export the transcript (downloads)">
                        <button data-testid="export-transcript-md" on:click=handler(transcript(Format::Markdown))
                            title="download the transcript as Markdown: who said what to whom, how each run ended, and every delivered prompt">"⬇ transcript.md"</button>
                        <button data-testid="export-transcript-html" on:click=handler(transcript(Format::Html))
                            title="download the transcript as one self-contained HTML page (each delivered prompt a collapsible block)">"⬇ transcript.html"</button>
                    </span>
                </div>
            </details>
            <button data-testid="new-session" on:click=handler(move |_| host.start_over())
                title="start over: the demo conversation (simulation), or a new session with the same team (bridge)">
                {host.start_over_label()}
            </button>
        </nav>
    }
}

fn save_file(state: &AppState, what: &str) -> Result<(), String> {
    let team = state.team.get_untracked();
    let text = state
        .session
        .with_untracked(|s| -> Result<String, String> {
            let no_team = || "load a team first: there is nothing to save".to_string();
            // Compact, then laid out (`files::pretty`): one serializer per type in the wasm.
            let json = match what {
                "session" => return Ok(s.export()),
                "scenario" => serde_json::to_string(&s.to_scenario().ok_or_else(no_team)?),
                "snapshot" => serde_json::to_string(&s.snapshot(browser::now())),
                "team" => serde_json::to_string(s.team().ok_or_else(no_team)?),
                _ => serde_json::to_string(&cli_config::to_peer_config(
                    s.team().ok_or_else(no_team)?,
                )),
            };
            json.map(|json| files::pretty(&json))
                .map_err(|e| format!("could not write the {what}: {e}"))
        })?;
    browser::download(&files::file_name(team.as_deref(), what), JSON, &text)
}

/// Downloads the session's transcript in `format`, stamped now.
fn save_transcript(state: &AppState, format: Format) -> Result<(), String> {
    let team = state.team.get_untracked();
    // The page offers Markdown and HTML only: calling their renderers (not `Format::render`)
    // keeps the JSON transcript's code out of the page's wasm (docs/architecture.md §13).
    let at = Some(browser::now());
    let text = state.session.with_untracked(|s| match format {
        Format::Html => transcript::html(s, at),
        _ => transcript::markdown(s, at),
    });
    let name = files::file_name(team.as_deref(), "transcript");
    let stem = name.strip_suffix(".json").unwrap_or(&name);
    browser::download(
        &format!("{stem}.{}", format.extension()),
        format.media_type(),
        &text,
    )
}
