//! The human composer (`composer-input`, `composer-send`): raw text, markers included.
//! Ctrl/Cmd+Enter sends.

use leptos::prelude::*;

use crate::host;
use crate::state::use_state;

#[component]
pub fn Composer() -> impl IntoView {
    let state = use_state();
    let text = RwSignal::new(String::new());
    let send = move || {
        let body = text.get_untracked();
        if body.trim().is_empty() {
            return;
        }
        if host::send_human(&state, body) {
            text.set(String::new());
        }
    };
    view! {
        <div class="composer">
            <textarea data-testid="composer-input" rows="2"
                placeholder="a message… e.g. [FROM: kailai] Please review. [NEXT: max, sarah!P1]"
                prop:value=move || text.get()
                on:input=move |ev| text.set(event_target_value(&ev))
                on:keydown=move |ev: leptos::ev::KeyboardEvent| {
                    if ev.key() == "Enter" && (ev.ctrl_key() || ev.meta_key()) {
                        ev.prevent_default();
                        send();
                    }
                }/>
            <button data-testid="composer-send" on:click=move |_| send()>"send"</button>
        </div>
    }
}
