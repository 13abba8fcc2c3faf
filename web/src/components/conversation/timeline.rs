//! The conversation pane: its head (`timeline_head`: "jump to #n", "continue from #n", the
//! team task), the team's messages (`MessageList`, virtualised) and below them who runs, who
//! is queued and who we wait for (`routing_status`).

use leptos::prelude::*;

use crate::components::conversation::message_list::MessageList;
use crate::components::conversation::routing_status::routing_status;
use crate::components::conversation::timeline_head::timeline_head;
use crate::host::use_host;
use crate::state::use_state;

#[component]
pub fn Timeline() -> impl IntoView {
    let state = use_state();
    let host = use_host();
    let jump = NodeRef::<leptos::html::Input>::new();
    // Whether the next selection came from the keyboard in the list (focus follows it).
    let focus_next = StoredValue::new(false);
    let on_select = Callback::new(move |at: usize| {
        focus_next.set_value(true);
        state.selected.set(Some(at));
    });
    let agents_run = host.runs_agents();
    view! {
        {timeline_head(jump, on_select)}
        <MessageList jump=jump focus_next=focus_next on_select=on_select/>
        {routing_status(agents_run)}
    }
}
