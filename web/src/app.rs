//! The page's layout: header, team, conversation and inspector panes, side by side below.

use leptos::prelude::*;

use crate::components::{
    composer::Composer, due_agent::DueAgent, error_banner::ErrorBanner, header::Header,
    inspector::Inspector, notices::Notices, side_by_side::SideBySide, team_editor::TeamEditor,
    timeline::Timeline,
};
use crate::host;
use crate::state::AppState;
use crate::storage::{self, Stored};

#[component]
pub fn App() -> impl IntoView {
    let state = AppState::new(Default::default());
    provide_context(state);
    let (session, problem) = match storage::load_session() {
        Stored::Session(session) => (*session, None),
        Stored::Nothing => (host::demo_session(), None),
        Stored::Unreadable(message) => (host::demo_session(), Some(message)),
    };
    host::adopt(&state, session);
    if let Some(message) = problem {
        state.report(message);
    }

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
