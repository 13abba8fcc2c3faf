//! What one member is doing (`member-status`): idle, running for how long (ticking), retrying
//! n/m and why, failed and why, or waiting for this human (docs/architecture.md §14c).

use leptos::prelude::*;

use crate::status::MemberStatus;

#[component]
pub fn MemberStatusView(
    /// The member's status.
    #[prop(into)]
    status: Signal<MemberStatus>,
    /// The wall clock (ms), ticking: a running member's time counts up with it.
    #[prop(into)]
    clock: Signal<u64>,
) -> impl IntoView {
    let words = move || {
        let status = status.get();
        // Only a running member reads the clock, so idle rows do not re-render each second.
        let now = match status {
            MemberStatus::Running { .. } => clock.get(),
            _ => 0,
        };
        status.words(now)
    };
    view! {
        {move || {
            let (class, text, title) = words();
            view! {
                <div class=format!("member-status status-{class}") data-testid="member-status"
                    data-status=class title=title>{text}</div>
            }
        }}
    }
}
