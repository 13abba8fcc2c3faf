//! What this session's runs cost (`usage-total`, docs/architecture.md §14c): runs and cost,
//! those before a team change too, against the team's cap ("max cost $") when it sets one. A
//! button: it opens the cost view ([`crate::components::cost::CostView`]), per member and per
//! model, with the cap's field.

use agent_chatter::usage::{runs_word, CapStanding, Silence, Spend};
use leptos::prelude::*;

use crate::components::cost::CostView;
use crate::components::header::popover::close_popover_on_outside_or_escape;
use crate::components::when::When;
use crate::erased::handler;

#[component]
pub fn UsageTotal(
    /// What the conversation's runs cost.
    #[prop(into)]
    usage: Signal<Spend>,
    /// Where the runs stand against the team's spending cap (`None`: no cap).
    #[prop(into)]
    cap: Signal<Option<CapStanding>>,
    /// Why runs report no usage, as the host knows it (the simulator has none to report).
    #[prop(into)]
    silence: Signal<Silence>,
) -> impl IntoView {
    // Short, so the header stays one line: the runs, what they cost (`≥` when some runs
    // is not known) and the cap; the rest is in the cost view.
    let text = move || {
        let spend = usage.get();
        let mut text = if spend.runs == 0 {
            "no runs yet".to_string()
        } else {
            format!(
                "{} · {}",
                runs_word(spend.runs),
                spend.cost_or(silence.get())
            )
        };
        if let Some(standing) = cap.get() {
            text.push_str(&format!(" · cap {}", standing.cap.display_limit()));
            if standing.reached() {
                text.push_str(" reached");
            }
        }
        text
    };
    let open = RwSignal::new(false);
    let root = NodeRef::<leptos::html::Div>::new();
    let toggle = NodeRef::<leptos::html::Button>::new();
    close_popover_on_outside_or_escape(
        move || root.get_untracked().map(Into::into),
        move || toggle.get_untracked().map(Into::into),
        move || open.get_untracked(),
        move || open.set(false),
    );
    let on_close = Callback::new(move |()| {
        open.set(false);
        if let Some(t) = toggle.get_untracked() {
            let _ = t.focus();
        }
    });
    view! {
        <div class="usage" node_ref=root>
            <button class="usage-total" data-testid="usage-total" node_ref=toggle
                aria-expanded=move || open.get().to_string()
                title="what this session's agent runs cost (team changes included), against the cap (max cost $): open the cost view, per member and per model (≥: the cost of some runs is not known, so the total is at least this)"
                on:click=handler(move |_| open.update(|o| *o = !*o))>
                "usage: "{text}
            </button>
            <When when=Memo::new(move |_| open.get())>
                <CostView usage=usage cap=cap silence=silence on_close=on_close/>
            </When>
        </div>
    }
}
