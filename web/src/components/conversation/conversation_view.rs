//! The conversation pane's two views of one conversation (docs/architecture.md §13): the
//! messages (`timeline`) or the deliveries (`deliveries`), one message handed to one agent per
//! row; a tab switches between them, and the inspector beside shows what a row selects.

use leptos::prelude::*;

use crate::components::conversation::approval_panel::ApprovalPanel;
use crate::components::conversation::timeline::Timeline;
use crate::components::deliveries::Deliveries;
use crate::components::when::When;
use crate::erased::handler;

#[component]
pub fn ConversationView() -> impl IntoView {
    let deliveries = RwSignal::new(false);
    let tab = move |on: bool| {
        move || {
            if deliveries.get() == on {
                "tab on"
            } else {
                "tab"
            }
        }
    };
    view! {
        <ApprovalPanel/>
        <div class="conversation-tabs" role="tablist">
            <button role="tab" data-testid="messages-tab" class=tab(false)
                aria-selected=move || (!deliveries.get()).to_string()
                on:click=handler(move |_| deliveries.set(false))>"messages"</button>
            <button role="tab" data-testid="deliveries-tab" class=tab(true)
                aria-selected=move || deliveries.get().to_string()
                on:click=handler(move |_| deliveries.set(true))>"deliveries"</button>
        </div>
        <When when=Memo::new(move |_| deliveries.get()) fallback=|| view! { <Timeline/> }>
            <Deliveries/>
        </When>
    }
}
