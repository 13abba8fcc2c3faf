//! What the page is, for a newcomer (`help-toggle` opens `help`; so does `?` when not typing):
//! the loop, the markers and their priorities, the fates of history messages, the skeleton,
//! and simulation vs bridge, in a few plain lines (docs/architecture.md §13).

use leptos::prelude::*;

use crate::components::when::When;
use crate::erased::handler;

#[component]
pub fn Help() -> impl IntoView {
    let open = RwSignal::new(false);
    let handle = window_event_listener(leptos::ev::keydown, move |e| {
        use wasm_bindgen::JsCast;
        let typing = e
            .target()
            .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
            .is_some_and(|el| matches!(el.tag_name().as_str(), "INPUT" | "TEXTAREA" | "SELECT"));
        match e.key().as_str() {
            "?" if !typing && !e.ctrl_key() && !e.meta_key() && !e.alt_key() => {
                open.update(|o| *o = !*o);
                e.prevent_default();
            }
            "Escape" if open.get_untracked() => open.set(false),
            _ => {}
        }
    });
    on_cleanup(move || handle.remove());
    view! {
        <button class="help-toggle" data-testid="help-toggle" aria-expanded=move || open.get().to_string()
            title="what this page is and what its words mean (?)" on:click=handler(move |_| open.update(|o| *o = !*o))>
            "? help"
        </button>
        <When when=Memo::new(move |_| open.get())>
            <section class="help" role="dialog" aria-label="help" data-testid="help">
                <button class="dismiss" on:click=handler(move |_| open.set(false))>"close"</button>
                <h2>"What this is"</h2>
                <p>"A team of people and AI agents talk in one conversation. Every agent gets its "
                   "own prompt built from it; this page shows "<b>"exactly"</b>" what each one is told, and why."</p>
                <h2>"The loop"</h2>
                <p>"You write a message. Markers in it route it: "<code>"[NEXT: max]"</code>" hands the turn "
                   "to Max, who gets a prompt (the inspector shows it byte for byte) and replies; the reply's "
                   "own markers route on. "<code>"[TEAM_TASK: …]"</code>" sets the goal every prompt repeats, "
                   <code>"[DONE]"</code>" ends the round, "<code>"[FROM: name]"</code>" says which person is writing."</p>
                <h2>"Priorities"</h2>
                <p><code>"[NEXT: max !P1]"</code>": "<b>"P1"</b>" = urgent, runs first; "<b>"P2"</b>
                   " = normal (the default); "<b>"P3"</b>" = later, after the others. The queue under "
                   "the conversation lists who is next and at which priority."</p>
                <h2>"Fates: what happened to each earlier message in a prompt"</h2>
                <ul>
                    <li><b>"in the context"</b>": among the recent messages the agent sees."</li>
                    <li><b>"deduplicated"</b>": the same text is already in the prompt, so left out."</li>
                    <li><b>"trimmed to fit the budget"</b>": left out so the prompt stays under its size limit."</li>
                    <li><b>"pinned first message"</b>": the conversation's first message, always kept."</li>
                    <li><b>"outside the window"</b>": older than the last few messages the agent is shown."</li>
                </ul>
                <h2>"Skeleton"</h2>
                <p>"Before any message, the inspector shows the skeleton: the prompt an agent starts from "
                   "(its instructions and the team task), before any conversation is added."</p>
                <h2>"Simulation or bridge"</h2>
                <p><b>"Simulation"</b>" (no setup): nothing runs; you type an agent's reply or let the "
                   "built-in simulator answer, marked “(simulated)”. "<b>"Bridge"</b>": "
                   <code>"agent-chatter serve"</code>" runs the real agent CLIs on your machine and this "
                   "page mirrors it."</p>
                <p class="muted">"Keys: ↑/↓ move through messages, ←/→ through agents, ? opens this help."</p>
            </section>
        </When>
    }
}
