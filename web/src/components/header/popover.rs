//! How the header's menus (`<details>`: "open ▾", "save ▾") and its popovers (the share box,
//! the sessions library) close: a chosen entry, a click or a tap outside, or Escape, the focus
//! going back to the button that opened them (docs/architecture.md §13).

use leptos::prelude::*;
use wasm_bindgen::JsCast;

/// Closes the menu (`<details>`) holding the event's target (a chosen entry, a file read).
pub fn close_menu_of(el: Option<web_sys::Element>) {
    if let Some(menu) = el.and_then(|el| el.closest("details").ok().flatten()) {
        let _ = menu.remove_attribute("open");
    }
}

/// The header's menus that are open.
fn open_menus(nav: &web_sys::Element) -> Vec<web_sys::Element> {
    let mut open = Vec::new();
    let mut child = nav.first_element_child();
    while let Some(el) = child {
        child = el.next_element_sibling();
        if el.tag_name() == "DETAILS" && el.has_attribute("open") {
            open.push(el);
        }
    }
    open
}

/// A click or a tap outside an open menu closes it; Escape, wherever the focus is, closes it
/// and puts the focus back on its summary (the menu's button).
pub fn close_on_outside_or_escape(nav: NodeRef<leptos::html::Nav>) {
    let click = window_event_listener(leptos::ev::pointerdown, move |ev| {
        let Some(nav) = nav.get_untracked() else {
            return;
        };
        let target = ev.target().and_then(|t| t.dyn_into::<web_sys::Node>().ok());
        for menu in open_menus(&nav) {
            if !menu.contains(target.as_ref()) {
                let _ = menu.remove_attribute("open");
            }
        }
    });
    let escape = window_event_listener(leptos::ev::keydown, move |ev| {
        let Some(nav) = nav.get_untracked() else {
            return;
        };
        if ev.key() != "Escape" {
            return;
        }
        for menu in open_menus(&nav) {
            let _ = menu.remove_attribute("open");
            if let Some(summary) = menu
                .first_element_child()
                .and_then(|s| s.dyn_into::<web_sys::HtmlElement>().ok())
            {
                let _ = summary.focus();
            }
        }
    });
    on_cleanup(move || {
        click.remove();
        escape.remove();
    });
}

/// A popover (the share box, the sessions library) that closes as the menus do: a click or
/// a tap outside `root`, or Escape wherever the focus is, which then goes back to `toggle`.
pub fn close_popover_on_outside_or_escape(
    root: impl Fn() -> Option<web_sys::Element> + 'static,
    toggle: impl Fn() -> Option<web_sys::HtmlElement> + 'static,
    is_open: impl Fn() -> bool + Copy + 'static,
    close: impl Fn() + Copy + 'static,
) {
    let click = window_event_listener(leptos::ev::pointerdown, move |ev| {
        let target = ev.target().and_then(|t| t.dyn_into::<web_sys::Node>().ok());
        if is_open() && root().is_some_and(|r| !r.contains(target.as_ref())) {
            close();
        }
    });
    let escape = window_event_listener(leptos::ev::keydown, move |ev| {
        if ev.key() == "Escape" && is_open() {
            close();
            if let Some(toggle) = toggle() {
                let _ = toggle.focus();
            }
        }
    });
    on_cleanup(move || {
        click.remove();
        escape.remove();
    });
}
