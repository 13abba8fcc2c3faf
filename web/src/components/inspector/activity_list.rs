//! What the run of the delivery shown did (agents over ACP, docs/architecture.md §14d): one row per tool
//! call (`activity-row`: its title, kind, status, files and diff size), the plan, thoughts
//! (collapsed) and each approval's decision (the option chosen, and by whom).

use agent_chatter::activity::{Activity, DiffSize, ToolCall};
use std::sync::Arc;

use leptos::prelude::*;

use crate::components::keyed_list::KeyedList;
use crate::components::when::When;
use crate::host::use_host;
use crate::state::use_state;

#[component]
pub fn ActivityList() -> impl IntoView {
    let state = use_state();
    let host = use_host();
    let items = Memo::new(move |_| {
        let member = state.shown_recipient.get()?;
        let at = state.shown_at.get()?;
        let message = state
            .session
            .with(|s| s.messages().get(at).map(|m| m.id.0.clone()))?;
        let items = host.activity(&message, &member);
        (!items.is_empty()).then_some(items)
    });
    // One row per item, kept by position: an update of a running agent (most often its tool
    // call's status or title) rebuilds that item's row only, never the list, so a run's
    // update costs the same at its 5th tool call as at its 500th.
    let count = Memo::new(move |_| items.with(|i| i.as_ref().map_or(0, Vec::len)));
    let keys = Signal::derive(move || (0..count.get() as u64).collect::<Vec<_>>());
    let row = Arc::new(move |k: u64| {
        let item =
            Memo::new(move |_| items.with(|i| i.as_ref().and_then(|i| i.get(k as usize).cloned())));
        (move || item.get().and_then(item_view)).into_any()
    });
    view! {
        <When when=Memo::new(move |_| count.get() > 0)>
            <div class="activity" data-testid="activity">
                <h3 title="what the recipient's agent did answering this prompt: its tool calls, plan, thoughts and approvals">"activity"</h3>
                <ul class="activity-items"><KeyedList keys=keys row=row.clone()/></ul>
            </div>
        </When>
    }
}

/// One item's row; a context fill has none here (the member's card shows it).
fn item_view(item: Activity) -> Option<AnyView> {
    Some(match item {
        Activity::ToolCall(call) => {
            let (kind, status) = (call.kind.label(), call.status.label());
            view! {
                <li class="activity-row" data-testid="activity-row" data-kind=kind data-status=status>
                    <ToolCallLine call=call/>
                </li>
            }
            .into_any()
        }
        Activity::Plan { entries } => view! {
            <li class="activity-plan" data-testid="activity-plan">
                <span class="muted">"plan"</span>
                <ol>{entries.into_iter().map(|e| view! {
                    <li data-status=e.status.clone()>{e.content}<span class="muted">{format!(" · {}", e.status.replace('_', " "))}</span></li>
                }).collect_view()}</ol>
            </li>
        }
        .into_any(),
        Activity::Thought { text } => view! {
            <li class="activity-thought" data-testid="activity-thought">
                <details><summary>"thought"</summary><p class="thought-text">{text}</p></details>
            </li>
        }
        .into_any(),
        Activity::Decision(d) => {
            let chosen = d.option.as_ref().map_or_else(
                || "withdrawn".to_string(),
                |o| format!("“{}”", o.name),
            );
            let text = format!("{}: {chosen}, by {}", d.tool_call.title, d.by.describe());
            view! { <li class="activity-decision" data-testid="activity-decision">{text}</li> }
                .into_any()
        }
        Activity::Context { .. } => return None,
    })
}

/// A tool call's title, kind, status, files and diff size, as a row and the approval panel
/// show it.
#[component]
pub fn ToolCallLine(call: ToolCall) -> impl IntoView {
    let files = (!call.files.is_empty()).then(|| {
        view! { <span class="tool-files" data-testid="tool-files">{call.files.join(", ")}</span> }
    });
    let diff = call.diff.map(|d| {
        view! { <span class="tool-diff" data-testid="tool-diff" title="lines added and removed">{diff_words(d)}</span> }
    });
    view! {
        <span class="tool-title" data-testid="tool-title">{call.title}</span>
        " "<span class="tool-kind" data-testid="tool-kind">{call.kind.label()}</span>
        " "<span class=format!("tool-status tool-{}", call.status.label()) data-testid="tool-status">{call.status.label()}</span>
        " "{files}" "{diff}
    }
}

/// A diff's size as `+a −r`.
pub fn diff_words(d: DiffSize) -> String {
    format!("+{} −{}", d.added, d.removed)
}
