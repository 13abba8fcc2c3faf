//! The page's layout: header, team, conversation and inspector panes, side by side below.

use leptos::prelude::*;

use crate::components::{
    composer::Composer, due_agent::DueAgent, error_banner::ErrorBanner, header::Header,
    inspector::Inspector, notices::Notices, side_by_side::SideBySide, team_editor::TeamEditor,
    timeline::Timeline,
};
use crate::state::AppState;
use crate::storage::{self, Stored};
use crate::{bridge, host, share};

#[component]
pub fn App() -> impl IntoView {
    let state = AppState::new(Default::default());
    provide_context(state);
    keyboard(state);
    follow_share_links(state);
    host::save_on_leave(state);
    if let Some(token) = bridge::token_in_url() {
        // The bridge sends its session once connected.
        bridge::connect(state, token);
        return layout().into_any();
    }
    if let Some(fragment) = shared_fragment() {
        open_shared(&state, &fragment);
        return layout().into_any();
    }
    let problem = match storage::load_session() {
        Stored::Session(session) => {
            host::restore(&state, *session);
            None
        }
        Stored::Nothing => {
            host::adopt(&state, host::demo_session());
            None
        }
        Stored::Unreadable(message) => {
            host::adopt(&state, host::demo_session());
            Some(message)
        }
    };
    if let Some(message) = problem {
        state.report(message);
    }
    layout().into_any()
}

/// The URL's `#share=…` fragment, removed from the address bar (a reload then shows the
/// session, not the link again).
fn shared_fragment() -> Option<String> {
    let window = web_sys::window()?;
    let hash = window.location().hash().ok()?;
    if !hash.starts_with(share::PREFIX) {
        return None;
    }
    let path = window.location().pathname().unwrap_or_else(|_| "/".into());
    if let Ok(history) = window.history() {
        let _ = history.replace_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(&path));
    }
    Some(hash)
}

/// Opens a shared link as a `loadScenario` fact; the session in use is kept aside first. A
/// damaged link shows its error over the demo, never a blank page.
fn open_shared(state: &AppState, fragment: &str) {
    match share::decode(fragment) {
        Ok(shared) => {
            let kept = storage::set_aside_for_link();
            let mut session = agent_chatter::session::Session::new();
            match session.apply(&agent_chatter::session::Fact::LoadScenario {
                scenario: Box::new(shared.scenario),
            }) {
                Ok(()) => {
                    host::adopt(state, session);
                    state.recipient.set(shared.member);
                    if kept {
                        state.notices.update(|n| {
                            n.push(format!(
                                "opened a shared case; your previous session is kept in localStorage under {:?}",
                                storage::BEFORE_LINK_KEY
                            ))
                        });
                    }
                }
                Err(e) => {
                    host::adopt(state, host::demo_session());
                    state.report(format!("the shared link's case does not open: {e}"));
                }
            }
        }
        Err(e) => {
            host::restore_or_demo(state);
            state.report(e);
        }
    }
}

/// A share link opened in a tab that already shows the page changes only the URL's fragment
/// (no reload): open it then too.
fn follow_share_links(state: AppState) {
    let handle = window_event_listener(leptos::ev::hashchange, move |_| {
        let Some(fragment) = shared_fragment() else {
            return;
        };
        if state.is_bridge() {
            // Mirroring a bridge: the case opens as a new session of the bridge, never as a
            // local session the bridge does not hold; the token stays in the address bar.
            bridge::restore_token_in_url();
            match share::decode(&fragment) {
                Ok(shared) => bridge::open_shared(&state, shared),
                Err(e) => state.report(e),
            }
        } else {
            open_shared(&state, &fragment);
        }
    });
    // The page lives as long as the app: keep the listener.
    std::mem::forget(handle);
}

/// ↑/↓ move through messages (time travel), ←/→ through recipients, unless typing.
fn keyboard(state: AppState) {
    use wasm_bindgen::JsCast;
    let handle = window_event_listener(leptos::ev::keydown, move |e| {
        let typing = e
            .target()
            .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
            .is_some_and(|el| matches!(el.tag_name().as_str(), "INPUT" | "TEXTAREA" | "SELECT"));
        if typing || e.ctrl_key() || e.meta_key() || e.alt_key() {
            return;
        }
        let len = state.message_count.get_untracked();
        let at = state.shown_at.get_untracked();
        match e.key().as_str() {
            "ArrowUp" => {
                if let Some(at) = at {
                    state.selected.set(Some(at.saturating_sub(1)));
                }
            }
            "ArrowDown" => {
                if let Some(at) = at.filter(|&a| a + 1 < len) {
                    state.selected.set(Some(at + 1));
                }
            }
            "ArrowLeft" | "ArrowRight" => {
                let agents: Vec<String> = state.team.with_untracked(|t| {
                    t.as_ref().map_or_else(Vec::new, |t| {
                        t.members
                            .iter()
                            .filter(|m| m.is_ai())
                            .map(|m| m.id.clone())
                            .collect()
                    })
                });
                if agents.is_empty() {
                    return;
                }
                let current = state.shown_recipient.get_untracked();
                let i = agents
                    .iter()
                    .position(|a| Some(a) == current.as_ref())
                    .unwrap_or(0);
                let next = if e.key() == "ArrowRight" {
                    (i + 1) % agents.len()
                } else {
                    (i + agents.len() - 1) % agents.len()
                };
                state.recipient.set(Some(agents[next].clone()));
            }
            _ => return,
        }
        e.prevent_default();
    });
    // The page lives as long as the app: keep the listener.
    std::mem::forget(handle);
}

fn layout() -> impl IntoView {
    view! {
        <Header/>
        <ErrorBanner/>
        <main class="panes">
            <section class="pane team-pane">
                <TeamEditor/>
            </section>
            <section class="pane conversation-pane">
                <Timeline/>
                <Notices/>
                <DueAgent/>
                <Composer/>
            </section>
            <section class="pane inspector-pane">
                <Inspector/>
            </section>
        </main>
        <SideBySide/>
    }
}
