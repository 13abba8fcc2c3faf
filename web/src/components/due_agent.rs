//! The agent that is due (simulation): its prompt is in the inspector; the user types its
//! reply (`agent-reply-input`, `agent-reply-send`) or lets the core's demo agent answer.

use leptos::prelude::*;

use crate::host;
use crate::state::{use_state, Mode};

#[component]
pub fn DueAgent() -> impl IntoView {
    let state = use_state();
    let reply = RwSignal::new(String::new());
    let due = move || {
        state.due.with(|d| {
            d.as_ref().map(|d| {
                let name = state.team.with(|t| {
                    t.as_ref()
                        .and_then(|t| t.member(&d.to))
                        .map_or(d.to.clone(), |m| m.display_name.clone())
                });
                (name, d.intent, d.prompt.explain.total_bytes)
            })
        })
    };
    let send = move |_| {
        let text = reply.get_untracked();
        if host::reply_due(&state, text) {
            reply.set(String::new());
        }
    };
    view! {
        <Show when=move || state.due.with(Option::is_some)>
            <div class="due-agent" data-testid="due-agent">
                <div class="due-title">
                    {move || due().map(|(name, intent, bytes)| if matches!(state.mode.get(), Mode::Bridge { .. }) {
                        format!("{name} is running ({intent}): it was given a {bytes}-byte prompt (the inspector shows it with {name} selected at the message it answers)")
                    } else {
                        format!("{name} is due ({intent}): it gets a {bytes}-byte prompt (the inspector shows it with {name} selected at the message it answers)")
                    })}
                </div>
                <Show when=move || !matches!(state.mode.get(), Mode::Bridge { .. })>
                    <textarea data-testid="agent-reply-input" rows="2" placeholder="type the agent's reply…"
                        prop:value=move || reply.get() on:input=move |ev| reply.set(event_target_value(&ev))/>
                    <div class="due-actions">
                        // An empty reply is most likely a click too early (the composer ignores
                        // an empty message the same way); an agent that says nothing is
                        // reported by the bridge, not typed here.
                        <button data-testid="agent-reply-send" on:click=send
                            prop:disabled=move || reply.with(|r| r.trim().is_empty())
                            title="type the agent's reply first">"reply"</button>
                        <button data-testid="agent-simulate" on:click=move |_| { host::simulate_due(&state); }
                            title="the built-in demo agent answers: a summary of what it received, then it passes the turn on">
                            "simulate"
                        </button>
                    </div>
                </Show>
                <Show when=move || matches!(state.mode.get(), Mode::Bridge { .. })>
                    {move || state.verification.get().map(|v| {
                        let (class, text) = if v.verified() {
                            ("verified", format!("✓ verified: the bridge sent exactly this prompt (sha256 {}…)", &v.sent[..12.min(v.sent.len())]))
                        } else {
                            ("mismatch", format!("✗ MISMATCH: the bridge sent sha256 {}…, this page previews {}", &v.sent[..12.min(v.sent.len())], v.previewed.as_deref().map_or("nothing", |p| &p[..12.min(p.len())])))
                        };
                        view! { <div class=format!("verified-badge {class}") data-testid="verified-badge">{text}</div> }
                    })}
                    <pre class="agent-output" data-testid="agent-output">{move || state.output.get()}</pre>
                    <button data-testid="agent-cancel" on:click=move |_| {
                        if let Some(to) = state.due.with_untracked(|d| d.as_ref().map(|d| d.to.clone())) {
                            crate::bridge::cancel(&to);
                        }
                    }>"cancel"</button>
                </Show>
            </div>
        </Show>
    }
}
