//! The page's layout: header, team, conversation and inspector panes, side by side below.

use leptos::prelude::*;

use crate::components::{
    composer::Composer, due_agent::DueAgent, error_banner::ErrorBanner, header::Header,
    inspector::Inspector, notices::Notices, side_by_side::SideBySide, team_editor::TeamEditor,
    timeline::Timeline,
};
use crate::state::AppState;
use crate::storage::{self, Stored};
use crate::{bridge, host};

#[component]
pub fn App() -> impl IntoView {
    let state = AppState::new(Default::default());
    provide_context(state);
    if let Some(token) = bridge::token_in_url() {
        // The bridge sends its session once connected.
        bridge::connect(state, token);
        return layout().into_any();
    }
    let (session, problem) = match storage::load_session() {
        Stored::Session(session) => (*session, None),
        Stored::Nothing => (host::demo_session(), None),
        Stored::Unreadable(message) => (host::demo_session(), Some(message)),
    };
    host::adopt(&state, session);
    if let Some(message) = problem {
        state.report(message);
    }
    layout().into_any()
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
