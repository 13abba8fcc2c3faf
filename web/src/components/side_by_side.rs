//! Every AI member's prompt for the same message, in columns (`side-by-side`), with bytes and
//! status; click a column to inspect it.

use leptos::prelude::*;

use crate::components::section_bars::{status_class, status_label};
use crate::state::use_state;

#[component]
pub fn SideBySide() -> impl IntoView {
    let state = use_state();
    view! {
        <section class="side-by-side" data-testid="side-by-side" aria-label="side by side">
            <h2>"side by side"
                <span class="at">{move || state.shown_at.get().map_or(" · skeleton".to_string(), |a| format!(" · at #{}", a + 1))}</span>
            </h2>
            <div class="columns">
                {move || state.side_by_side.get().into_iter().map(|c| {
                    let member = c.member.clone();
                    let whatif = if c.whatif { " · what-if" } else { "" };
                    let (head, body, class) = match &c.prompt {
                        Ok(p) => (
                            format!("{} · {} · {} / {} B · {}{whatif}", c.display_name, c.agent_type, p.explain.total_bytes, p.explain.max_bytes, status_label(p.explain.status)),
                            crate::components::diff_view::handed_text(p),
                            status_class(p.explain.status),
                        ),
                        Err(e) => (c.display_name.clone(), e.clone(), "status-critical"),
                    };
                    view! {
                        <div class=format!("column {class}") data-testid="side-column" data-member=c.member.clone()
                            on:click=move |_| state.recipient.set(Some(member.clone()))>
                            <div class="column-head">{head}</div>
                            <pre class="column-prompt" tabindex="0">{body}</pre>
                        </div>
                    }
                }).collect_view()}
            </div>
        </section>
    }
}
