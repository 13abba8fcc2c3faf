//! The conversation (`timeline`): the team task, every message (virtualised: only the rows in
//! view are in the DOM, so a 10⁴-message session costs what a short one does), and below it
//! who runs, who is queued and who we wait for.

use agent_chatter::conversation::Status;
use leptos::prelude::*;

use crate::components::timeline_row::{TimelineRow, ROW_HEIGHT};
use crate::state::use_state;

/// Rows rendered beyond the visible ones, above and below, so scrolling shows no gap.
const OVERSCAN: usize = 6;
/// Viewport height assumed before the first measure.
const DEFAULT_VIEWPORT: f64 = 480.0;

#[component]
pub fn Timeline() -> impl IntoView {
    let state = use_state();
    let scroller = NodeRef::<leptos::html::Div>::new();
    let scroll_top = RwSignal::new(0.0_f64);
    let viewport = RwSignal::new(DEFAULT_VIEWPORT);
    let visible = move || {
        let len = state.message_count.get();
        let first = (scroll_top.get() / ROW_HEIGHT) as usize;
        let shown = (viewport.get() / ROW_HEIGHT).ceil() as usize;
        let start = first.saturating_sub(OVERSCAN).min(len);
        let end = (first + shown + OVERSCAN).min(len);
        start..end
    };
    let on_scroll = move |_| {
        if let Some(el) = scroller.get_untracked() {
            scroll_top.set(el.scroll_top() as f64);
            viewport.set(el.client_height() as f64);
        }
    };
    // Follow the conversation: a new message scrolls to the bottom.
    Effect::new(move |_| {
        let len = state.message_count.get();
        if let Some(el) = scroller.get() {
            let bottom = (len as f64 * ROW_HEIGHT - el.client_height() as f64).max(0.0);
            el.set_scroll_top(bottom as i32);
            scroll_top.set(bottom);
            viewport.set((el.client_height() as f64).max(1.0));
        }
    });
    let team_task = move || {
        state
            .session
            .with(|s| s.store().team_task().map(str::to_string))
    };
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
            if let Some(f) = c.in_flight() {
                parts.push(format!("running: {} ({})", name(&f.to), f.intent));
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
        <div class="timeline-head">
            <h2>"conversation"</h2>
            <span class="team-task" data-testid="team-task">
                {move || team_task().map_or_else(|| "no team task".to_string(), |t| format!("team task: {t}"))}
            </span>
        </div>
        <div class="timeline" data-testid="timeline" node_ref=scroller on:scroll=on_scroll>
            <div class="timeline-spacer" style:height=move || format!("{}px", state.message_count.get() as f64 * ROW_HEIGHT)>
                <For each=visible key=|i| *i children=move |i| view! { <TimelineRow index=i/> }/>
            </div>
        </div>
        <div class="routing-status" data-testid="routing-status">{status_line}</div>
    }
}
