//! The conversation's messages (`timeline`), virtualised: only the rows in view are in the
//! DOM, so a 10⁴-message session costs what a short one does. The arithmetic (offsets, the
//! rows in view, where to scroll) is [`crate::components::virtual_list`]'s; this component keeps the
//! scroll position, measures the rendered rows after each render (and when the window's
//! width changes), and moves the focus. The list is a `listbox` of `option`s; the selected
//! one is `aria-selected`.
//!
//! Keyboard (docs/architecture.md §13): only the shown row is in the Tab order (a roving
//! tabindex; the list itself while that row is not rendered). ↑/↓ move the selection and the
//! focus, Home/End go to the first and the last message, Enter or Space selects the focused
//! row, and `g` (or `#`) focuses "jump to #n" (`jump`). A row far away is scrolled to,
//! measured, and focused once it is rendered.

use std::sync::Arc;

use leptos::prelude::*;
use wasm_bindgen::JsCast;

use crate::components::conversation::timeline_row::{TimelineRow, ROW_ESTIMATE};
use crate::components::keyed_list::KeyedList;
use crate::components::virtual_list;
use crate::erased::handler;
use crate::state::{use_state, AppState};

/// Rows rendered beyond the visible ones, above and below, so scrolling shows no gap.
const OVERSCAN: usize = 6;
/// Viewport height assumed before the first measure.
const DEFAULT_VIEWPORT: f64 = 480.0;
/// Measures after which a row being revealed is focused even if it still moves (its
/// neighbours' heights keep changing): a bound, never reached in practice.
const REVEAL_TRIES: u8 = 12;

/// The list's scroll state, shared by its handlers: every part a signal or a stored value.
#[derive(Clone, Copy)]
struct Scroll {
    scroller: NodeRef<leptos::html::Div>,
    top: RwSignal<f64>,
    viewport: RwSignal<f64>,
    /// Measured heights by message index (shorter than the conversation: the rest estimated).
    heights: RwSignal<Vec<f64>>,
    /// Each row's top, then the whole height ([`virtual_list::offsets`]).
    offsets: Memo<Vec<f64>>,
    /// Whether the view follows the conversation's end (a new message, or the user is there).
    follow: RwSignal<bool>,
    /// Bumped when the window's width changes: rows wrap anew, so they are measured again.
    width: RwSignal<i32>,
    /// Bumped to measure once more (a reveal scrolled without changing the rows in view).
    again: RwSignal<u32>,
    /// The row to bring into view, and focus when the keyboard moved the selection: kept
    /// until it is rendered where its measured neighbours put it.
    reveal: RwSignal<Option<(usize, bool)>>,
    reveal_tries: StoredValue<u8>,
    /// Whether the focus is in the list: a render that moves the focused row (the keyed rows
    /// are re-inserted when the range in view changes) drops the focus, and it is put back.
    focus_in_list: StoredValue<bool>,
}

impl Scroll {
    fn new(state: AppState) -> Scroll {
        let heights = RwSignal::new(Vec::<f64>::new());
        let offsets = Memo::new(move |_| {
            let len = state.message_count.get();
            heights.with(|h| virtual_list::offsets(h, len, ROW_ESTIMATE))
        });
        Scroll {
            scroller: NodeRef::new(),
            top: RwSignal::new(0.0),
            viewport: RwSignal::new(DEFAULT_VIEWPORT),
            heights,
            offsets,
            follow: RwSignal::new(true),
            width: RwSignal::new(0),
            again: RwSignal::new(0),
            reveal: RwSignal::new(None),
            reveal_tries: StoredValue::new(0),
            focus_in_list: StoredValue::new(false),
        }
    }

    fn measure_again(self) {
        self.again.update(|n| *n += 1);
    }

    /// Brings row `at` into view, and focuses it when `focus`.
    fn bring_into_view(self, at: usize, focus: bool) {
        self.reveal_tries.set_value(0);
        self.reveal.set(Some((at, focus)));
        self.measure_again();
    }

    fn to_bottom(self) {
        let Some(el) = self.scroller.get_untracked() else {
            return;
        };
        let total = self.offsets.with_untracked(|o| virtual_list::total(o));
        let bottom = (total - el.client_height() as f64).max(0.0);
        el.set_scroll_top(bottom.ceil() as i32);
        // The spacer's height follows `offsets` only a render later, and a scroll past its
        // old height stops short of the end. The position reached is kept, so its scroll
        // event is not read as the user scrolling up (no longer following), and the end is
        // scrolled to again once the spacer has grown.
        let reached = el.scroll_top() as f64;
        if (self.top.get_untracked() - reached).abs() > 0.5 {
            self.top.set(reached);
        }
        if reached + 1.0 < bottom && (el.scroll_height() as f64) < total {
            self.measure_again();
        }
        let height = (el.client_height() as f64).max(1.0);
        if self.viewport.get_untracked() != height {
            self.viewport.set(height);
        }
    }

    /// Measures the rendered rows; a change moves the rows after them (and keeps the end in
    /// view when following).
    fn measure(self, state: AppState) {
        let Some(el) = self.scroller.get_untracked() else {
            return;
        };
        self.record_heights(&el);
        if self.focus_in_list.get_value() && self.reveal.with_untracked(Option::is_none) {
            let lost = document()
                .active_element()
                .is_none_or(|a| a.tag_name() == "BODY");
            if let (true, Some(at)) = (lost, state.shown_at.get_untracked()) {
                focus_row(&el, at);
            }
        }
        if let Some((at, focus)) = self.reveal.get_untracked() {
            self.follow.set(false);
            return self.reveal_step(&el, at, focus);
        }
        if self.follow.get_untracked() {
            self.to_bottom();
        }
    }

    fn record_heights(self, el: &web_sys::HtmlDivElement) {
        // The spacer's children are the rows.
        let mut row = el
            .first_element_child()
            .and_then(|spacer| spacer.first_element_child());
        let mut changed = Vec::new();
        self.heights.with_untracked(|h| {
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
                if virtual_list::moved(h.get(index).copied(), height, ROW_ESTIMATE) {
                    changed.push((index, height));
                }
            }
        });
        if !changed.is_empty() {
            self.heights
                .update(|h| virtual_list::record(h, &changed, ROW_ESTIMATE));
        }
    }

    /// One step of bringing row `at` into view: scroll (and measure again) while it is
    /// outside the view, then focus it once rendered (when `focus`).
    fn reveal_step(self, el: &web_sys::HtmlDivElement, at: usize, focus: bool) {
        let (view_top, height) = (el.scroll_top() as f64, el.client_height() as f64);
        let target = self
            .offsets
            .with_untracked(|o| virtual_list::reveal_scroll(o, at, view_top, height));
        let tries = self.reveal_tries.get_value();
        if let Some(target) = target.filter(|_| tries < REVEAL_TRIES) {
            self.reveal_tries.set_value(tries + 1);
            el.set_scroll_top(target.round() as i32);
            self.top.set(el.scroll_top() as f64);
            return self.measure_again();
        }
        if row_at(el, at).is_some() {
            if focus {
                focus_row(el, at);
            }
            self.reveal.set(None);
        } else if tries < REVEAL_TRIES {
            self.reveal_tries.set_value(tries + 1);
            self.measure_again();
        } else {
            self.reveal.set(None);
        }
    }

    fn on_scroll(self) {
        if let Some(el) = self.scroller.get_untracked() {
            let top = el.scroll_top() as f64;
            let up = top < self.top.get_untracked() - 1.0;
            self.top.set(top);
            self.viewport.set(el.client_height() as f64);
            // Following until the user scrolls up; again once back at the end.
            let at_end = top + el.client_height() as f64 >= el.scroll_height() as f64 - 2.0;
            self.follow
                .set(at_end || (self.follow.get_untracked() && !up));
        }
    }

    /// Whether `target` is inside the list.
    fn holds(self, target: Option<web_sys::EventTarget>) -> bool {
        let node = target.and_then(|t| t.dyn_into::<web_sys::Node>().ok());
        self.scroller
            .get_untracked()
            .is_some_and(|el| node.is_some_and(|n| el.contains(Some(&n))))
    }
}

/// The rendered row of message `at`.
fn row_at(list: &web_sys::HtmlDivElement, at: usize) -> Option<web_sys::Element> {
    list.query_selector(&format!("[data-index=\"{at}\"]"))
        .ok()
        .flatten()
}

fn focus_row(list: &web_sys::HtmlDivElement, at: usize) {
    if let Some(Ok(row)) = row_at(list, at).map(|r| r.dyn_into::<web_sys::HtmlElement>()) {
        let _ = row.focus();
    }
}

/// The message a key moves the selection to, from `at` in a conversation whose last message
/// is `last`.
fn key_target(key: &str, at: usize, last: usize) -> Option<usize> {
    match key {
        "ArrowUp" => Some(at.saturating_sub(1)),
        "ArrowDown" => Some((at + 1).min(last)),
        "Home" => Some(0),
        "End" => Some(last),
        _ => None,
    }
}

#[component]
pub fn MessageList(
    /// The "jump to #n" box, which `g` (or `#`) focuses.
    jump: NodeRef<leptos::html::Input>,
    /// Set when the keyboard in the list moves the selection, so the focus follows it.
    focus_next: StoredValue<bool>,
    /// Selects a message from the keyboard.
    on_select: Callback<usize>,
) -> impl IntoView {
    let state = use_state();
    let scroll = Scroll::new(state);
    let visible = Memo::new(move |_| {
        let (top, viewport) = (scroll.top.get(), scroll.viewport.get());
        scroll
            .offsets
            .with(|o| virtual_list::visible(o, top, viewport, OVERSCAN))
    });
    // After every render of the rows (what is in view, a new width): measure.
    crate::erased::effect(move || {
        visible.track();
        scroll.width.track();
        scroll.again.track();
        request_animation_frame(move || scroll.measure(state));
    });
    let resize = window_event_listener(leptos::ev::resize, move |_| {
        if let Some(w) = web_sys::window().and_then(|w| w.inner_width().ok()?.as_f64()) {
            scroll.width.set(w as i32);
        }
        if let Some(el) = scroll.scroller.get_untracked() {
            scroll.viewport.set((el.client_height() as f64).max(1.0));
        }
    });
    on_cleanup(move || resize.remove());
    follow_the_conversation(state, scroll);
    // The selected message in view (↑/↓ move the selection): scrolled to when outside it,
    // and focused when the keyboard moved the selection in the list.
    crate::erased::effect(move || {
        let Some(at) = state.selected.get() else {
            return;
        };
        let focus = focus_next.get_value();
        focus_next.set_value(false);
        scroll.bring_into_view(at, focus);
    });
    let on_keydown = move |ev: leptos::ev::KeyboardEvent| {
        if ev.ctrl_key() || ev.meta_key() || ev.alt_key() {
            return;
        }
        let Some(last) = state.message_count.get_untracked().checked_sub(1) else {
            return;
        };
        let at = state.shown_at.get_untracked().unwrap_or(last);
        let key = ev.key();
        if key == "g" || key == "#" {
            ev.prevent_default();
            if let Some(input) = jump.get_untracked() {
                let _ = input.focus();
            }
        } else if let Some(to) = key_target(&key, at, last) {
            // Handled here: the page's own ↑/↓ (app.rs) leave it alone.
            ev.prevent_default();
            on_select.run(to);
        }
    };
    // The list itself takes the focus only while the shown row is not rendered: it hands
    // the focus on to that row once it is. No message: no list to reach.
    let list_tabindex = move || {
        let shown = state.shown_at.get()?;
        let rendered = visible.with(|v| v.contains(&shown));
        Some(if rendered { "-1" } else { "0" })
    };
    let on_list_focus = move |ev: leptos::ev::FocusEvent| {
        let on_list = ev
            .target()
            .zip(scroll.scroller.get_untracked())
            .is_some_and(|(t, el)| {
                let el: &web_sys::EventTarget = el.as_ref();
                &t == el
            });
        if let (true, Some(at)) = (on_list, state.shown_at.get_untracked()) {
            scroll.bring_into_view(at, true);
        }
    };
    let on_focusout = move |ev: leptos::ev::FocusEvent| {
        // To somewhere else on the page (Tab, a click): the list lets the focus go.
        let to = ev.related_target();
        if to.is_some() && !scroll.holds(to) {
            scroll.focus_in_list.set_value(false);
        }
    };
    let pointer = window_event_listener(leptos::ev::pointerdown, move |ev| {
        if !scroll.holds(ev.target()) {
            scroll.focus_in_list.set_value(false);
        }
    });
    on_cleanup(move || pointer.remove());
    let (scroller, offsets) = (scroll.scroller, scroll.offsets);
    view! {
        <div class="timeline" data-testid="timeline" node_ref=scroller on:scroll=handler(move |_| scroll.on_scroll())
            role=move || (state.message_count.get() > 0).then_some("listbox")
            tabindex=list_tabindex on:keydown=handler(on_keydown) on:focus=handler(on_list_focus)
            on:focusin=handler(move |_| scroll.focus_in_list.set_value(true)) on:focusout=handler(on_focusout)
            aria-label=move || (state.message_count.get() > 0)
                .then_some("conversation: select a message to see what each agent received at that point")>
            <div class="timeline-spacer" style:height=move || format!("{}px", offsets.with(|o| virtual_list::total(o)))>
                <KeyedList keys=Signal::derive(move || visible.get().map(|i| i as u64).collect())
                    row=Arc::new(move |i| {
                        let i = i as usize;
                        let top = Signal::derive(move || offsets.with(|o| o.get(i).copied().unwrap_or(0.0)));
                        view! { <TimelineRow index=i top=top/> }.into_any()
                    })/>
            </div>
        </div>
    }
}

/// Follows the conversation: a new message scrolls to the bottom. Another conversation
/// (fewer messages, or another first one) forgets the heights measured.
fn follow_the_conversation(state: AppState, scroll: Scroll) {
    let first_id = Memo::new(move |_| {
        state
            .session
            .with(|s| s.messages().first().map(|m| m.id.0.clone()))
    });
    Effect::new(move |previous: Option<(usize, Option<String>)>| {
        let len = state.message_count.get();
        let first = first_id.get();
        // Once the timeline is in the page, too.
        let _ = scroll.scroller.get();
        if let Some((before, first_before)) = &previous {
            if len < *before || first != *first_before {
                scroll.heights.set(Vec::new());
            }
        }
        // After the rows and the spacer are in the page (a render later).
        scroll.follow.set(true);
        request_animation_frame(move || scroll.to_bottom());
        (len, first)
    });
}

#[cfg(test)]
mod tests {
    use super::key_target;

    #[test]
    fn arrows_move_one_message_and_stop_at_the_ends() {
        assert_eq!(key_target("ArrowUp", 3, 9), Some(2));
        assert_eq!(key_target("ArrowUp", 0, 9), Some(0));
        assert_eq!(key_target("ArrowDown", 3, 9), Some(4));
        assert_eq!(key_target("ArrowDown", 9, 9), Some(9));
    }

    #[test]
    fn home_and_end_go_to_the_first_and_the_last_message() {
        assert_eq!(key_target("Home", 5, 9), Some(0));
        assert_eq!(key_target("End", 5, 9), Some(9));
        assert_eq!(key_target("x", 5, 9), None);
    }
}
