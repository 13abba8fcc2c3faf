//! The human composer (`composer-input`, `composer-send`): raw text, markers included.
//! Ctrl/Cmd+Enter sends.

use leptos::prelude::*;

use crate::host;
use crate::state::use_state;

#[component]
pub fn Composer() -> impl IntoView {
    let state = use_state();
    let text = RwSignal::new(String::new());
    // With a bridge, the text stays until the bridge has stored it: a refused message (an
    // error event) is still there to fix, not lost.
    let pending = RwSignal::new(None::<String>);
    Effect::new(move |_| {
        state.message_count.track();
        let Some(body) = pending.get_untracked() else {
            return;
        };
        let landed = state
            .session
            .with_untracked(|s| s.messages().iter().rev().take(8).any(|m| m.content == body));
        if landed {
            pending.set(None);
            if text.get_untracked() == body {
                text.set(String::new());
            }
        }
    });
    let send = move || {
        let body = text.get_untracked();
        if body.trim().is_empty() {
            return;
        }
        let bridge = state.is_bridge();
        if host::send_human(&state, body.clone()) {
            if bridge {
                pending.set(Some(body));
            } else {
                text.set(String::new());
            }
        }
    };
    view! {
        <div class="composer">
            <textarea data-testid="composer-input" rows="2"
                placeholder="a message… e.g. [FROM: kailai] Please review. [NEXT: max, sarah!P1]   (Ctrl+Enter sends)"
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
