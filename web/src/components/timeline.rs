//! The conversation (`timeline`): the team task, every message (virtualised: only the rows in
//! view are in the DOM, so a 10⁴-message session costs what a short one does), and below it
//! who runs, who is queued and who we wait for.
//!
//! Rows show their whole text, so they differ in height: each row is placed at the sum of the
//! heights before it, a row not yet seen counting as [`ROW_ESTIMATE`]; every rendered row is
//! measured after each render (and when the window's width changes), and the offsets follow.
//! The list is a `listbox` of `option`s; the selected one is `aria-selected`.
//!
//! Keyboard (docs/architecture.md §13): only the shown row is in the Tab order (a roving
//! tabindex; the list itself while that row is not rendered). In the list, ↑/↓ move the
//! selection and the focus, Home/End go to the first and the last message, Enter or Space
//! selects the focused row, and `g` (or `#`) opens "jump to #n" (`jump-to`), where a number
//! and Enter select that message. A row far away is scrolled to, measured, and focused once
//! it is rendered. "continue from #n" (`fork-shown`) forks at the shown message: the rows'
//! own "continue from here" is for a pointer, as an option holds no control.

use std::sync::Arc;

use agent_chatter::conversation::Status;
use leptos::prelude::*;
use wasm_bindgen::JsCast;

use crate::components::keyed_list::KeyedList;
use crate::components::timeline_row::{TimelineRow, ROW_ESTIMATE};
use crate::erased::handler;
use crate::host::use_host;
use crate::state::use_state;

/// Rows rendered beyond the visible ones, above and below, so scrolling shows no gap.
const OVERSCAN: usize = 6;
/// Viewport height assumed before the first measure.
const DEFAULT_VIEWPORT: f64 = 480.0;
/// Measures after which a row being revealed is focused even if it still moves (its
/// neighbours' heights keep changing): a bound, never reached in practice.
const REVEAL_TRIES: u8 = 12;

#[component]
pub fn Timeline() -> impl IntoView {
    let state = use_state();
    let host = use_host();
    let scroller = NodeRef::<leptos::html::Div>::new();
    let scroll_top = RwSignal::new(0.0_f64);
    let viewport = RwSignal::new(DEFAULT_VIEWPORT);
    // Measured heights by message index (shorter than the conversation: the rest estimated).
    let heights = RwSignal::new(Vec::<f64>::new());
    // Whether the view follows the conversation's end (a new message, or the user is there).
    let follow = RwSignal::new(true);
    // Bumped when the window's width changes: rows wrap anew, so they are measured again.
    let width = RwSignal::new(0_i32);
    // Bumped to measure once more (a reveal scrolled without changing the rows in view).
    let again = RwSignal::new(0_u32);
    // The row to bring into view, and focus when the keyboard moved the selection: kept
    // until it is rendered where its measured neighbours put it.
    let reveal = RwSignal::new(None::<(usize, bool)>);
    let reveal_tries = StoredValue::new(0_u8);
    // Whether the next selection came from the keyboard in the list (focus follows it).
    let focus_next = StoredValue::new(false);
    // Whether the focus is in the list: a render that moves the focused row (the keyed rows
    // are re-inserted when the range in view changes) drops the focus, and it is put back.
    let focus_in_list = StoredValue::new(false);
    let jump = NodeRef::<leptos::html::Input>::new();
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
            // The spacer's height follows `offsets` only a render later, and a scroll past
            // its old height stops short of the end. The position reached is kept, so its
            // scroll event is not read as the user scrolling up (no longer following), and
            // the end is scrolled to again once the spacer has grown.
            let reached = el.scroll_top() as f64;
            if (scroll_top.get_untracked() - reached).abs() > 0.5 {
                scroll_top.set(reached);
            }
            if reached + 1.0 < bottom && (el.scroll_height() as f64) < total {
                again.update(|n| *n += 1);
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
        if focus_in_list.get_value() && reveal.with_untracked(Option::is_none) {
            let lost = document()
                .active_element()
                .is_none_or(|a| a.tag_name() == "BODY");
            let shown = state.shown_at.get_untracked();
            let row = shown.and_then(|at| {
                el.query_selector(&format!("[data-index=\"{at}\"]"))
                    .ok()
                    .flatten()
            });
            if let (true, Some(row)) = (lost, row) {
                if let Ok(row) = row.dyn_into::<web_sys::HtmlElement>() {
                    let _ = row.focus();
                }
            }
        }
        if let Some((at, focus)) = reveal.get_untracked() {
            follow.set(false);
            let (top, bottom) = offsets.with_untracked(|o| {
                let top = o.get(at).copied().unwrap_or(0.0);
                (top, o.get(at + 1).copied().unwrap_or(top))
            });
            let (view_top, height) = (el.scroll_top() as f64, el.client_height() as f64);
            let target = if top < view_top - 1.0 {
                Some(top)
            } else if bottom > view_top + height + 1.0 {
                Some((bottom - height).min(top))
            } else {
                None
            };
            let tries = reveal_tries.get_value();
            if let Some(target) = target.filter(|_| tries < REVEAL_TRIES) {
                reveal_tries.set_value(tries + 1);
                el.set_scroll_top(target.round() as i32);
                scroll_top.set(el.scroll_top() as f64);
                again.update(|n| *n += 1);
                return;
            }
            let row = el
                .query_selector(&format!("[data-index=\"{at}\"]"))
                .ok()
                .flatten();
            if let Some(row) = row {
                if focus {
                    if let Ok(row) = row.dyn_into::<web_sys::HtmlElement>() {
                        let _ = row.focus();
                    }
                }
                reveal.set(None);
            } else if tries < REVEAL_TRIES {
                reveal_tries.set_value(tries + 1);
                again.update(|n| *n += 1);
            } else {
                reveal.set(None);
            }
            return;
        }
        if follow.get_untracked() {
            to_bottom();
        }
    };
    // After every render of the rows (what is in view, a new width): measure.
    crate::erased::effect(move || {
        visible.track();
        width.track();
        again.track();
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
    // The selected message in view (↑/↓ move the selection): scrolled to when outside it,
    // and focused when the keyboard moved the selection in the list.
    crate::erased::effect(move || {
        let Some(at) = state.selected.get() else {
            return;
        };
        let focus = focus_next.get_value();
        focus_next.set_value(false);
        reveal_tries.set_value(0);
        reveal.set(Some((at, focus)));
        again.update(|n| *n += 1);
    });
    // The row in the Tab order: the one shown (selected, else the latest).
    let active = move || state.shown_at.get();
    let select_from_keyboard = move |at: usize| {
        focus_next.set_value(true);
        state.selected.set(Some(at));
    };
    let on_keydown = move |ev: leptos::ev::KeyboardEvent| {
        if ev.ctrl_key() || ev.meta_key() || ev.alt_key() {
            return;
        }
        let len = state.message_count.get_untracked();
        let Some(last) = len.checked_sub(1) else {
            return;
        };
        let at = state.shown_at.get_untracked().unwrap_or(last);
        let to = match ev.key().as_str() {
            "ArrowUp" => at.saturating_sub(1),
            "ArrowDown" => (at + 1).min(last),
            "Home" => 0,
            "End" => last,
            "g" | "#" => {
                ev.prevent_default();
                if let Some(input) = jump.get_untracked() {
                    let _ = input.focus();
                }
                return;
            }
            _ => return,
        };
        // Handled here: the page's own ↑/↓ (app.rs) leave it alone.
        ev.prevent_default();
        select_from_keyboard(to);
    };
    // The list itself takes the focus only while the shown row is not rendered: it hands
    // the focus on to that row once it is.
    let list_tabindex = move || {
        // No message: no list to reach.
        let shown = active()?;
        let rendered = visible.with(|v| v.contains(&shown));
        Some(if rendered { "-1" } else { "0" })
    };
    let on_list_focus = move |ev: leptos::ev::FocusEvent| {
        let on_list = ev
            .target()
            .zip(scroller.get_untracked())
            .is_some_and(|(t, el)| {
                let el: &web_sys::EventTarget = el.as_ref();
                &t == el
            });
        if let (true, Some(at)) = (on_list, state.shown_at.get_untracked()) {
            reveal_tries.set_value(0);
            reveal.set(Some((at, true)));
            again.update(|n| *n += 1);
        }
    };
    let inside = move |target: Option<web_sys::EventTarget>| {
        let node = target.and_then(|t| t.dyn_into::<web_sys::Node>().ok());
        scroller
            .get_untracked()
            .is_some_and(|el| node.is_some_and(|n| el.contains(Some(&n))))
    };
    let on_focusout = move |ev: leptos::ev::FocusEvent| {
        // To somewhere else on the page (Tab, a click): the list lets the focus go.
        let to = ev.related_target();
        if to.is_some() && !inside(to) {
            focus_in_list.set_value(false);
        }
    };
    let pointer = window_event_listener(leptos::ev::pointerdown, move |ev| {
        if !inside(ev.target()) {
            focus_in_list.set_value(false);
        }
    });
    on_cleanup(move || pointer.remove());
    let on_jump = move |ev: leptos::ev::KeyboardEvent| {
        let Some(input) = jump.get_untracked() else {
            return;
        };
        match ev.key().as_str() {
            "Enter" => {
                ev.prevent_default();
                let typed = input.value();
                let len = state.message_count.get_untracked();
                match jump_target(&typed, len) {
                    Ok(at) => {
                        input.set_value("");
                        state.error.set(None);
                        select_from_keyboard(at);
                    }
                    Err(why) => state.report(why),
                }
            }
            "Escape" => {
                ev.prevent_default();
                input.set_value("");
                if let Some(at) = state.shown_at.get_untracked() {
                    select_from_keyboard(at);
                }
            }
            _ => {}
        }
    };
    let team_task = move || {
        state
            .session
            .with(|s| s.store().team_task().map(str::to_string))
    };
    let agents_run = host.runs_agents();
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
            // In simulation nothing runs until the user answers or lets the simulator:
            // the agent is due, as the mark beside says.
            if let Some(f) = c.in_flight() {
                let state = if agents_run { "running" } else { "due" };
                parts.push(format!("{state}: {} ({})", name(&f.to), f.intent));
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
            <span class="jump">
                <label class="visually-hidden" for="jump-to">"jump to message number (g in the conversation)"</label>
                <input id="jump-to" data-testid="jump-to" type="text" inputmode="numeric" size="4"
                    placeholder="#n" title="jump to message #n: type its number and Enter (g in the conversation)"
                    node_ref=jump on:keydown=handler(on_jump)/>
            </span>
            // The rows' "continue from here" for the keyboard: the shown message.
            {move || state.shown_at.get().map(|at| view! {
                <button class="fork-shown" data-testid="fork-shown" on:click=handler(move |_| host.fork(at))
                    title="continue from here: a new session whose log ends at this message (this session stays as it is)">
                    {format!("continue from #{}", at + 1)}
                </button>
            })}
            <span class="team-task" data-testid="team-task">
                {move || team_task().map_or_else(|| "no team task".to_string(), |t| format!("team task: {t}"))}
            </span>
        </div>
        <div class="timeline" data-testid="timeline" node_ref=scroller on:scroll=handler(on_scroll)
            role=move || (state.message_count.get() > 0).then_some("listbox")
            tabindex=list_tabindex on:keydown=handler(on_keydown) on:focus=handler(on_list_focus)
            on:focusin=handler(move |_| focus_in_list.set_value(true)) on:focusout=handler(on_focusout)
            aria-label=move || (state.message_count.get() > 0)
                .then_some("conversation: select a message to see what each agent received at that point")>
            <div class="timeline-spacer" style:height=move || format!("{}px", offsets.with(|o| o.last().copied().unwrap_or(0.0)))>
                <KeyedList keys=Signal::derive(move || visible.get().map(|i| i as u64).collect())
                    row=Arc::new(move |i| {
                        let i = i as usize;
                        let top = Signal::derive(move || offsets.with(|o| o.get(i).copied().unwrap_or(0.0)));
                        view! { <TimelineRow index=i top=top/> }.into_any()
                    })/>
            </div>
        </div>
        <div class="routing-status" data-testid="routing-status"
            title="who runs next; P1 = urgent (runs first), P2 = normal, P3 = later">{status_line}</div>
    }
}

/// The message index that "jump to" text names: `12` or `#12`, from 1 to `len`.
fn jump_target(typed: &str, len: usize) -> Result<usize, String> {
    let number = typed.trim().trim_start_matches('#').trim();
    let range = match len {
        0 => return Err("jump to: the conversation has no message yet".to_string()),
        1 => "#1, the only message".to_string(),
        _ => format!("a number from 1 to {len}"),
    };
    match number.parse::<usize>() {
        Ok(n) if (1..=len).contains(&n) => Ok(n - 1),
        Ok(n) => Err(format!(
            "jump to #{n}: there is no such message; type {range}"
        )),
        Err(_) => Err(format!(
            "jump to {:?}: not a message number; type {range}",
            typed.trim()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::jump_target;

    #[test]
    fn a_number_with_or_without_its_hash_names_that_message() {
        assert_eq!(jump_target("12", 500), Ok(11));
        assert_eq!(jump_target(" #500 ", 500), Ok(499));
        assert_eq!(jump_target("#1", 500), Ok(0));
    }

    #[test]
    fn a_number_outside_the_conversation_is_refused_saying_the_range() {
        assert_eq!(
            jump_target("#501", 500),
            Err("jump to #501: there is no such message; type a number from 1 to 500".into())
        );
        assert_eq!(
            jump_target("0", 3),
            Err("jump to #0: there is no such message; type a number from 1 to 3".into())
        );
    }

    #[test]
    fn text_that_is_no_number_is_refused_quoting_it() {
        assert_eq!(
            jump_target("twelve", 2),
            Err("jump to \"twelve\": not a message number; type a number from 1 to 2".into())
        );
        assert_eq!(
            jump_target("", 0),
            Err("jump to: the conversation has no message yet".into())
        );
    }
}
