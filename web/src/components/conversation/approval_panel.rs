//! The approvals running agents wait for (docs/architecture.md §14d, `approval`): above the conversation, so
//! it is seen without scrolling; for each, who asks, the tool call (title, kind, files, diff
//! size) and one button per option the agent offers (`approval-option`), which answers it.

use agent_chatter::activity::ApprovalRequest;
use agent_chatter::message::MemberId;
use leptos::prelude::*;

use crate::components::inspector::activity_list::ToolCallLine;
use crate::erased::handler;
use crate::host::use_host;
use crate::state::use_state;

#[component]
pub fn ApprovalPanel() -> impl IntoView {
    let host = use_host();
    let open = Memo::new(move |_| host.approvals());
    move || {
        let open = open.get();
        (!open.is_empty()).then(|| {
            view! {
                <section class="approval-panel" aria-label="approvals" role="region">
                    {open.into_iter().map(|(member, request)| view! { <Approval member=member request=request/> }).collect_view()}
                </section>
            }
        })
    }
}

#[component]
fn Approval(member: MemberId, request: ApprovalRequest) -> impl IntoView {
    let state = use_state();
    let host = use_host();
    let name = state.members.with_untracked(|ms| {
        crate::state::member(ms, &member).map_or_else(|| member.clone(), |m| m.display_name.clone())
    });
    let buttons = request
        .options
        .iter()
        .map(|o| {
            let (member, id, option) = (member.clone(), request.id.clone(), o.id.clone());
            let class = if o.kind.allows() { "approval-option allow" } else { "approval-option reject" };
            view! {
                <button class=class data-testid="approval-option" data-option=o.id.clone()
                    on:click=handler(move |_| host.answer_approval(&member, &id, &option))>{o.name.clone()}</button>
            }
        })
        .collect_view();
    view! {
        <div class="approval" data-testid="approval" data-member=member.clone() data-request=request.id.clone()>
            <p class="approval-ask"><strong>{format!("{name} needs you:")}</strong>" may it make this tool call?"</p>
            <p class="approval-call"><ToolCallLine call=request.tool_call.clone()/></p>
            <div class="approval-options">{buttons}</div>
        </div>
    }
}
