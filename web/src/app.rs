//! The page's layout: header, team, conversation and inspector panes, side by side below.

use leptos::prelude::*;

use crate::attention::{self, Attention};
use crate::browser;
use crate::components::conversation::{
    composer::Composer, conversation_view::ConversationView, due_agent::DueAgent, notices::Notices,
    reply_controls::ReplyControls, retry_failed::RetryFailed, running_agent::RunningAgent,
    running_mark::RunningMark,
};
use crate::components::header::{
    error_banner::ErrorBanner, files_menu::FilesMenu, help::Help, notify_toggle::NotifyToggle,
    share_link::ShareLink, shared_banner::SharedBanner, usage_total::UsageTotal, Header,
};
use crate::components::inspector::{side_by_side::SideBySide, Inspector};
use crate::components::library::sessions_menu::SessionsMenu;
use crate::components::team::team_editor::TeamEditor;
use crate::host::Host;
use crate::share;
use crate::shared_case;
use crate::state::AppState;

#[component]
pub fn App() -> impl IntoView {
    let state = AppState::new(Default::default());
    provide_context(state);
    keyboard(state);
    tick(state);
    let host = Host::start(state);
    provide_context(host);
    follow_share_links(host);
    let attention = attention::follow(state);
    layout(host, state, attention)
}

/// The clock running statuses count from, once a second.
fn tick(state: AppState) {
    if let Ok(handle) = set_interval_with_handle(
        move || state.clock.set(browser::now().0),
        std::time::Duration::from_secs(1),
    ) {
        on_cleanup(move || handle.clear());
    }
}

/// A share link opened in a tab that already shows the page changes only the URL's fragment
/// (no reload): open it then too.
fn follow_share_links(host: Host) {
    let handle = window_event_listener(leptos::ev::hashchange, move |_| {
        if let Some(fragment) = share::take_from_url() {
            host.open_link(&fragment);
        }
    });
    on_cleanup(move || handle.remove());
}

/// ↑/↓ move through messages (time travel), ←/→ through recipients, unless typing.
fn keyboard(state: AppState) {
    use wasm_bindgen::JsCast;
    let handle = window_event_listener(leptos::ev::keydown, move |e| {
        let typing = e
            .target()
            .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
            .is_some_and(|el| matches!(el.tag_name().as_str(), "INPUT" | "TEXTAREA" | "SELECT"));
        // Handled already: the conversation's list moves the selection and the focus itself.
        if typing || e.default_prevented() || e.ctrl_key() || e.meta_key() || e.alt_key() {
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
    on_cleanup(move || handle.remove());
}

/// The panes. What differs with the host is composed here, once: a bridge shows the running
/// agent (its output, the verified digest, cancel); the simulation lets the user answer for
/// the due agent.
fn layout(host: Host, state: AppState, attention: Attention) -> impl IntoView {
    let due_agent = match host {
        Host::Simulation(simulation) => {
            let draft = RwSignal::new(String::new());
            let on_reply = Callback::new(move |text: String| simulation.reply_due(text));
            let on_simulate = Callback::new(move |()| {
                simulation.simulate_due();
            });
            let due_agent = view! {
                <DueAgent runs=false>
                    <ReplyControls draft=draft on_reply=on_reply on_simulate=on_simulate/>
                </DueAgent>
            };
            due_agent.into_any()
        }
        Host::Bridge(bridge) => {
            let on_cancel = Callback::new(move |()| bridge.cancel_due());
            let due_agent = view! {
                <DueAgent runs=true>
                    <RunningAgent verification=bridge.verification() output=bridge.output() cut=bridge.output_cut()
                        unavailable=Signal::derive(move || bridge.unavailable()) on_cancel=on_cancel/>
                </DueAgent>
            };
            due_agent.into_any()
        }
    };
    // Sums every run: only when the runs change, not with every fact.
    let usage = Memo::new(move |_| {
        let _ = state.runs.get();
        state.session.with_untracked(|s| s.usage(None))
    });
    let notify = attention.supported.then(|| {
        let on_change = Callback::new(move |on: bool| {
            attention.set_notify(on, move |why| state.report(why));
        });
        view! { <NotifyToggle on=attention.notify on_change=on_change/> }
    });
    view! {
        <Header connection=Signal::derive(move || host.connection_label()) connection_title=host.connection_title()>
            <UsageTotal usage=usage cap=state.cap silence=Signal::derive(move || host.usage_silence(None))/>
            {notify}
            <SessionsMenu/>
            <ShareLink/>
            <FilesMenu/>
            <Help/>
        </Header>
        <ErrorBanner/>
        <SharedBanner pending=Signal::derive(move || shared_case::pending().get())
            on_keep=Callback::new(move |()| host.keep_shared())
            on_discard=Callback::new(move |()| host.discard_shared())/>
        <main class="panes">
            <section class="pane team-pane" aria-label="team">
                <TeamEditor/>
            </section>
            <section class="pane conversation-pane" aria-label="conversation">
                <ConversationView/>
                <RunningMark/>
                <Notices/>
                <RetryFailed/>
                {due_agent}
                <Composer/>
            </section>
            <section class="pane inspector-pane" aria-label="inspector">
                <Inspector/>
            </section>
        </main>
        <SideBySide/>
    }
}
