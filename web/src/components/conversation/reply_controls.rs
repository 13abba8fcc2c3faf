//! Answering for the due agent (simulation): type its reply (`agent-reply-input`,
//! `agent-reply-send`) or let the core's demo agent answer (`agent-simulate`).

use leptos::prelude::*;

use crate::erased::handler;

#[component]
pub fn ReplyControls(
    /// The reply being typed; kept while the agent is not due, emptied once a reply went in.
    draft: RwSignal<String>,
    /// Gives the typed reply as the due agent's answer; whether it went in.
    on_reply: Callback<String, bool>,
    /// Lets the core's demo agent answer.
    on_simulate: Callback<()>,
) -> impl IntoView {
    let send = move || {
        let text = draft.get_untracked();
        if on_reply.run(text) {
            draft.set(String::new());
        }
    };
    view! {
        // Ctrl/Cmd+Enter answers, as it sends in the composer.
        <textarea data-testid="agent-reply-input" rows="2" placeholder="type the agent's reply…"
            aria-label="the due agent's reply (Ctrl+Enter answers)" aria-keyshortcuts="Control+Enter"
            prop:value=move || draft.get() on:input=handler(move |ev| draft.set(event_target_value(&ev)))
            on:keydown=handler(move |ev: leptos::ev::KeyboardEvent| {
                if ev.key() == "Enter" && (ev.ctrl_key() || ev.meta_key()) {
                    ev.prevent_default();
                    if !draft.with_untracked(|r| r.trim().is_empty()) {
                        send();
                    }
                }
            })/>
        <div class="due-actions">
            // An empty reply is most likely a click too early (the composer ignores an empty
            // message the same way); an agent that says nothing is reported by the bridge,
            // not typed here.
            <button data-testid="agent-reply-send" on:click=handler(move |_| send())
                prop:disabled=move || draft.with(|r| r.trim().is_empty())
                title="type the agent's reply first">"reply"</button>
            <button data-testid="agent-simulate" on:click=handler(move |_| on_simulate.run(()))
                title="the built-in demo agent answers: a summary of what it received, then it passes the turn on">
                "simulate"
            </button>
        </div>
    }
}
