//! The human composer (`composer-input`, `composer-send`): raw text, markers included.
//! Ctrl/Cmd+Enter sends.

use leptos::prelude::*;

use crate::host::{use_host, Ticket};

#[component]
pub fn Composer() -> impl IntoView {
    let host = use_host();
    let text = RwSignal::new(String::new());
    // The text stays until the host has stored the message (a bridge stores it later): a
    // refused message (an error event) is still there to fix, not lost. The message is known
    // by its ticket, never by its text, so an earlier message with the same text is not
    // taken for it.
    let pending = RwSignal::new(None::<(Ticket, String)>);
    let stored = move |body: &str| {
        pending.set(None);
        if text.get_untracked() == body {
            text.set(String::new());
        }
    };
    Effect::new(move |_| {
        let Some((ticket, body)) = pending.get() else {
            return;
        };
        if host.is_stored(ticket) {
            stored(&body);
        }
    });
    // Off, with the reason, while nothing can be sent (a bridge that is away).
    let unavailable = move || host.unavailable();
    let send = move || {
        if untrack(unavailable).is_some() {
            return;
        }
        let body = text.get_untracked();
        if body.trim().is_empty() {
            return;
        }
        let Some(ticket) = host.send_human(body.clone()) else {
            return;
        };
        if untrack(|| host.is_stored(ticket)) {
            stored(&body);
        } else {
            pending.set(Some((ticket, body)));
        }
    };
    view! {
        <div class="composer">
            <textarea data-testid="composer-input" rows="2"
                prop:disabled=move || unavailable().is_some()
                title=move || unavailable().unwrap_or_default()
                placeholder=move || unavailable().unwrap_or("a message… e.g. [FROM: kailai] Please review. [NEXT: max, sarah!P1]   (Ctrl+Enter sends)")
                prop:value=move || text.get()
                on:input=move |ev| text.set(event_target_value(&ev))
                on:keydown=move |ev: leptos::ev::KeyboardEvent| {
                    if ev.key() == "Enter" && (ev.ctrl_key() || ev.meta_key()) {
                        ev.prevent_default();
                        send();
                    }
                }/>
            <button data-testid="composer-send" on:click=move |_| send()
                prop:disabled=move || unavailable().is_some()
                title=move || unavailable().unwrap_or_default()>"send"</button>
        </div>
    }
}
