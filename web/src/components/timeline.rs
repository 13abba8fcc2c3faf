//! The conversation (`timeline`): the team task, every message (virtualised: only the rows in
//! view are in the DOM, so a 10⁴-message session costs what a short one does), and below it
//! who runs, who is queued and who we wait for.
//!
//! Rows show their whole text, so they differ in height: each row is placed at the sum of the
//! heights before it, a row not yet seen counting as [`ROW_ESTIMATE`]; every rendered row is
//! measured after each render (and when the window's width changes), and the offsets follow.
//! The list is a `listbox` of `option`s; the selected one is `aria-selected`.

use agent_chatter::conversation::Status;
use leptos::prelude::*;

use wasm_bindgen::JsCast;

use crate::components::timeline_row::{TimelineRow, ROW_ESTIMATE};
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
    // Measured heights by message index (shorter than the conversation: the rest estimated).
    let heights = RwSignal::new(Vec::<f64>::new());
    // Whether the view follows the conversation's end (a new message, or the user is there).
    let follow = RwSignal::new(true);
    // Bumped when the window's width changes: rows wrap anew, so they are measured again.
    let width = RwSignal::new(0_i32);
    let offsets = Memo::new(move |_| {
        let len = state.message_count.get();
        heights.with(|h| {
            let mut offsets = Vec::with_capacity(len + 1);
            let mut y = 0.0;
            offsets.push(y);
            for i in 0..len {
                y += h.get(i).copied().unwrap_or(ROW_ESTIMATE);
                offsets.push(y);
            }
            offsets
        })
    });
    let visible = Memo::new(move |_| {
        let top = scroll_top.get();
        let bottom = top + viewport.get();
        offsets.with(|o| {
            let len = o.len().saturating_sub(1);
            // The first row whose bottom is below the top of the view, the last whose top is
            // above its bottom.
            let first = o.partition_point(|&y| y <= top).saturating_sub(1).min(len);
            let last = o.partition_point(|&y| y < bottom).min(len);
            first.saturating_sub(OVERSCAN)..(last + OVERSCAN).min(len)
        })
    });
    let to_bottom = move || {
        if let Some(el) = scroller.get_untracked() {
            let total = offsets.with_untracked(|o| o.last().copied().unwrap_or(0.0));
            let bottom = (total - el.client_height() as f64).max(0.0);
            el.set_scroll_top(bottom.ceil() as i32);
            // Set only when changed: a set re-renders the rows, which are measured again.
            if (scroll_top.get_untracked() - bottom).abs() > 0.5 {
                scroll_top.set(bottom);
            }
            let height = (el.client_height() as f64).max(1.0);
            if viewport.get_untracked() != height {
                viewport.set(height);
            }
        }
    };
    // Measures the rendered rows; a change moves the rows after them (and keeps the end in
    // view when following).
    let measure = move || {
        let Some(el) = scroller.get_untracked() else {
            return;
        };
        // The spacer's children are the rows.
        let mut row = el
            .first_element_child()
            .and_then(|spacer| spacer.first_element_child());
        let mut changed = Vec::new();
        heights.with_untracked(|h| {
            while let Some(el) = row.take() {
                row = el.next_element_sibling();
                let Some(index) = el
                    .get_attribute("data-index")
                    .and_then(|v| v.parse::<usize>().ok())
                else {
                    continue;
                };
                let Ok(el) = el.dyn_into::<web_sys::HtmlElement>() else {
                    continue;
                };
                let height = el.offset_height() as f64;
                let known = h.get(index).copied().unwrap_or(ROW_ESTIMATE);
                if height > 0.0 && (height - known).abs() > 0.5 {
                    changed.push((index, height));
                }
            }
        });
        if !changed.is_empty() {
            heights.update(|h| {
                for (index, height) in changed {
                    if h.len() <= index {
                        h.resize(index + 1, ROW_ESTIMATE);
                    }
                    h[index] = height;
                }
            });
        }
        if follow.get_untracked() {
            to_bottom();
        }
    };
    // After every render of the rows (what is in view, a new width): measure.
    Effect::new(move |_| {
        visible.track();
        width.track();
        request_animation_frame(measure);
    });
    let resize = window_event_listener(leptos::ev::resize, move |_| {
        if let Some(w) = web_sys::window().and_then(|w| w.inner_width().ok()?.as_f64()) {
            width.set(w as i32);
        }
        if let Some(el) = scroller.get_untracked() {
            viewport.set((el.client_height() as f64).max(1.0));
        }
    });
    on_cleanup(move || resize.remove());
    let on_scroll = move |_| {
        if let Some(el) = scroller.get_untracked() {
            let top = el.scroll_top() as f64;
            let up = top < scroll_top.get_untracked() - 1.0;
            scroll_top.set(top);
            viewport.set(el.client_height() as f64);
            // Following until the user scrolls up; again once back at the end.
            let at_end = top + el.client_height() as f64 >= el.scroll_height() as f64 - 2.0;
            follow.set(at_end || (follow.get_untracked() && !up));
        }
    };
    // Follow the conversation: a new message scrolls to the bottom. Another conversation
    // (fewer messages, or another first one) forgets the heights measured.
    let first_id = Memo::new(move |_| {
        state
            .session
            .with(|s| s.messages().first().map(|m| m.id.0.clone()))
    });
    Effect::new(move |previous: Option<(usize, Option<String>)>| {
        let len = state.message_count.get();
        let first = first_id.get();
        // Once the timeline is in the page, too.
        let _ = scroller.get();
        if let Some((before, first_before)) = &previous {
            if len < *before || first != *first_before {
                heights.set(Vec::new());
            }
        }
        // After the rows and the spacer are in the page (a render later).
        follow.set(true);
        request_animation_frame(to_bottom);
        (len, first)
    });
    // The selected message in view (↑/↓ move the selection): scrolled to when outside it.
    Effect::new(move |_| {
        let Some(at) = state.selected.get() else {
            return;
        };
        let Some(el) = scroller.get_untracked() else {
            return;
        };
        let (top, bottom) = offsets.with_untracked(|o| {
            let top = o.get(at).copied().unwrap_or(0.0);
            (top, o.get(at + 1).copied().unwrap_or(top))
        });
        let (view_top, height) = (el.scroll_top() as f64, el.client_height() as f64);
        let target = if top < view_top {
            top
        } else if bottom > view_top + height {
            (bottom - height).min(top)
        } else {
            return;
        };
        follow.set(false);
        el.set_scroll_top(target as i32);
        scroll_top.set(target);
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
        <div class="timeline" data-testid="timeline" node_ref=scroller on:scroll=on_scroll
            role=move || (state.message_count.get() > 0).then_some("listbox")
            aria-label="conversation: select a message to see what each agent received at that point">
            <div class="timeline-spacer" style:height=move || format!("{}px", offsets.with(|o| o.last().copied().unwrap_or(0.0)))>
                <For each=move || visible.get() key=|i| *i children=move |i| {
                    let top = Signal::derive(move || offsets.with(|o| o.get(i).copied().unwrap_or(0.0)));
                    view! { <TimelineRow index=i top=top/> }
                }/>
            </div>
        </div>
        <div class="routing-status" data-testid="routing-status"
            title="who runs next; P1 = urgent (runs first), P2 = normal, P3 = later">{status_line}</div>
    }
}
