//! The agent a bridge runs: whether the bridge sent exactly the prompt the page previews
//! (`verified-badge`), the end of what the agent streams (`agent-output`: its last MiB, with
//! `agent-output-cut` saying so once earlier output was dropped), and cancel (`agent-cancel`).

use leptos::prelude::*;

use crate::erased::handler;
use crate::host::Verification;
use crate::output::cut_note;

#[component]
pub fn RunningAgent(
    /// The bridge's announcement of this delivery, checked against the page's preview.
    #[prop(into)]
    verification: Signal<Option<Verification>>,
    /// The end of the agent's streamed output (its last MiB).
    #[prop(into)]
    output: Signal<String>,
    /// How many bytes of output came before it and were dropped.
    #[prop(into)]
    cut: Signal<u64>,
    /// Why nothing can be asked of the bridge now (it is away): cancel waits for it.
    #[prop(into)]
    unavailable: Signal<Option<&'static str>>,
    /// Stops the agent (its delivery becomes a failed fact).
    on_cancel: Callback<()>,
) -> impl IntoView {
    view! {
        {move || verification.get().map(|v| {
            let (class, text) = if v.verified() {
                ("verified", format!("✓ verified: the bridge sent exactly this prompt (sha256 {}…)", &v.sent[..12.min(v.sent.len())]))
            } else {
                ("mismatch", format!("✗ MISMATCH: the bridge sent sha256 {}…, this page previews {}", &v.sent[..12.min(v.sent.len())], v.previewed.as_deref().map_or("nothing", |p| &p[..12.min(p.len())])))
            };
            view! { <div class=format!("verified-badge {class}") data-testid="verified-badge">{text}</div> }
        })}
        {move || cut_note(cut.get()).map(|note| view! {
            <p class="agent-output-cut" data-testid="agent-output-cut">{note}</p>
        })}
        <pre class="agent-output" data-testid="agent-output">{move || output.get()}</pre>
        <button data-testid="agent-cancel" disabled=move || unavailable.get().is_some()
            title=move || unavailable.get() on:click=handler(move |_| on_cancel.run(()))>"cancel"</button>
    }
}
