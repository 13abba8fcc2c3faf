//! What an ACP agent's `session/update`s say, in our terms (docs/architecture.md §14d): text chunks make the
//! reply, tool calls, plans and thoughts are activity, `usage_update` fills the context meter
//! and the cost. Pure: the run feeds notifications in and sends on what comes out.

use agent_chatter::activity::{
    Activity, ApprovalOption, DiffSize, OptionKind, PlanEntry, ToolCall, ToolKind, ToolStatus,
};
use agent_client_protocol::v1::schema as acp;

/// What one notification adds to the run.
#[derive(Debug, PartialEq)]
pub(crate) enum Said {
    /// A piece of the reply.
    Text(String),
    /// Something to show (and keep with the run).
    Activity(Activity),
    /// The session's cost so far, as the agent reports it (USD only).
    CostUsd(f64),
    /// Nothing we show (the user's own chunks, available commands, mode changes, …).
    Nothing,
}

/// Reads one `session/update`; `calls` holds every tool call seen in the run, so an update
/// (which carries only what changed) is shown whole.
pub(crate) fn read(update: acp::SessionUpdate, calls: &mut Vec<ToolCall>) -> Vec<Said> {
    match update {
        acp::SessionUpdate::AgentMessageChunk(chunk) => match text_of(chunk.content) {
            Some(text) => vec![Said::Text(text)],
            None => vec![Said::Nothing],
        },
        acp::SessionUpdate::AgentThoughtChunk(chunk) => match text_of(chunk.content) {
            Some(text) => vec![Said::Activity(Activity::Thought { text })],
            None => vec![Said::Nothing],
        },
        acp::SessionUpdate::ToolCall(call) => {
            let call = tool_call(&call);
            remember(calls, call.clone());
            vec![Said::Activity(Activity::ToolCall(call))]
        }
        acp::SessionUpdate::ToolCallUpdate(update) => {
            let call = updated(calls, &update);
            remember(calls, call.clone());
            vec![Said::Activity(Activity::ToolCall(call))]
        }
        acp::SessionUpdate::Plan(plan) => vec![Said::Activity(Activity::Plan {
            entries: plan
                .entries
                .into_iter()
                .map(|e| PlanEntry {
                    content: e.content,
                    status: plan_status(&e.status).to_string(),
                })
                .collect(),
        })],
        acp::SessionUpdate::UsageUpdate(usage) => {
            let mut said = vec![Said::Activity(Activity::Context {
                used: usage.used,
                size: usage.size,
            })];
            if let Some(cost) = usage
                .cost
                .filter(|c| c.currency.eq_ignore_ascii_case("USD"))
            {
                said.push(Said::CostUsd(cost.amount));
            }
            said
        }
        _ => vec![Said::Nothing],
    }
}

fn text_of(block: acp::ContentBlock) -> Option<String> {
    match block {
        acp::ContentBlock::Text(text) => Some(text.text),
        _ => None,
    }
}

fn plan_status(status: &acp::PlanEntryStatus) -> &'static str {
    match status {
        acp::PlanEntryStatus::Pending => "pending",
        acp::PlanEntryStatus::InProgress => "in_progress",
        acp::PlanEntryStatus::Completed => "completed",
        _ => "pending",
    }
}

fn remember(calls: &mut Vec<ToolCall>, call: ToolCall) {
    match calls.iter_mut().find(|c| c.id == call.id) {
        Some(known) => *known = call,
        None => calls.push(call),
    }
}

/// A tool call as the agent first announces it.
pub(crate) fn tool_call(call: &acp::ToolCall) -> ToolCall {
    let mut ours = ToolCall {
        id: call.tool_call_id.to_string(),
        title: call.title.clone(),
        kind: kind(&call.kind),
        status: status(&call.status),
        files: Vec::new(),
        diff: None,
    };
    touch(&mut ours, &call.locations, &call.content);
    ours
}

/// The tool call `update` names, with what it changes (one never seen starts from the update
/// alone: a permission request can be the first word of a call).
pub(crate) fn updated(calls: &[ToolCall], update: &acp::ToolCallUpdate) -> ToolCall {
    let id = update.tool_call_id.to_string();
    let mut call = calls
        .iter()
        .find(|c| c.id == id)
        .cloned()
        .unwrap_or_else(|| ToolCall {
            id,
            title: String::new(),
            kind: ToolKind::Other,
            status: ToolStatus::Pending,
            files: Vec::new(),
            diff: None,
        });
    let fields = &update.fields;
    if let Some(title) = &fields.title {
        call.title = title.clone();
    }
    if let Some(k) = &fields.kind {
        call.kind = kind(k);
    }
    if let Some(s) = &fields.status {
        call.status = status(s);
    }
    touch(
        &mut call,
        fields.locations.as_deref().unwrap_or_default(),
        fields.content.as_deref().unwrap_or_default(),
    );
    if call.title.is_empty() {
        call.title = call.kind.label().to_string();
    }
    call
}

/// Adds the files `locations` and `content`'s diffs name, and the size of those diffs.
fn touch(
    call: &mut ToolCall,
    locations: &[acp::ToolCallLocation],
    content: &[acp::ToolCallContent],
) {
    let mut add_file = |path: &std::path::Path| {
        let path = path.display().to_string();
        if !call.files.contains(&path) {
            call.files.push(path);
        }
    };
    for location in locations {
        add_file(&location.path);
    }
    let mut diff: Option<DiffSize> = None;
    for item in content {
        if let acp::ToolCallContent::Diff(d) = item {
            add_file(&d.path);
            let size = DiffSize::between(d.old_text.as_deref(), &d.new_text);
            let sum = diff.get_or_insert_with(DiffSize::default);
            sum.added += size.added;
            sum.removed += size.removed;
        }
    }
    if diff.is_some() {
        call.diff = diff;
    }
}

fn kind(kind: &acp::ToolKind) -> ToolKind {
    match kind {
        acp::ToolKind::Read => ToolKind::Read,
        acp::ToolKind::Edit => ToolKind::Edit,
        acp::ToolKind::Delete => ToolKind::Delete,
        acp::ToolKind::Move => ToolKind::Move,
        acp::ToolKind::Search => ToolKind::Search,
        acp::ToolKind::Execute => ToolKind::Execute,
        acp::ToolKind::Think => ToolKind::Think,
        acp::ToolKind::Fetch => ToolKind::Fetch,
        acp::ToolKind::SwitchMode => ToolKind::SwitchMode,
        _ => ToolKind::Other,
    }
}

fn status(status: &acp::ToolCallStatus) -> ToolStatus {
    match status {
        acp::ToolCallStatus::Pending => ToolStatus::Pending,
        acp::ToolCallStatus::InProgress => ToolStatus::InProgress,
        acp::ToolCallStatus::Completed => ToolStatus::Completed,
        acp::ToolCallStatus::Failed => ToolStatus::Failed,
        _ => ToolStatus::Pending,
    }
}

/// The agent's options for a permission request, in our terms.
pub(crate) fn options(options: &[acp::PermissionOption]) -> Vec<ApprovalOption> {
    options
        .iter()
        .map(|o| ApprovalOption {
            id: o.option_id.to_string(),
            name: o.name.clone(),
            kind: match o.kind {
                acp::PermissionOptionKind::AllowOnce => OptionKind::AllowOnce,
                acp::PermissionOptionKind::AllowAlways => OptionKind::AllowAlways,
                acp::PermissionOptionKind::RejectOnce => OptionKind::RejectOnce,
                _ => OptionKind::RejectAlways,
            },
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn update(json: serde_json::Value) -> acp::SessionUpdate {
        serde_json::from_value(json).expect("a session update")
    }

    #[test]
    fn a_tool_call_and_its_updates_are_shown_whole_with_files_and_diff_size() {
        let mut calls = Vec::new();
        let first = read(
            update(json!({"sessionUpdate": "tool_call", "toolCallId": "t1",
                "title": "Write hello.txt", "kind": "edit", "status": "pending",
                "content": [{"type": "diff", "path": "/w/hello.txt", "oldText": null,
                             "newText": "a\nb\n"}]})),
            &mut calls,
        );
        let expected = ToolCall {
            id: "t1".into(),
            title: "Write hello.txt".into(),
            kind: ToolKind::Edit,
            status: ToolStatus::Pending,
            files: vec!["/w/hello.txt".into()],
            diff: Some(DiffSize {
                added: 2,
                removed: 0,
            }),
        };
        assert_eq!(
            first,
            vec![Said::Activity(Activity::ToolCall(expected.clone()))]
        );
        let done = read(
            update(
                json!({"sessionUpdate": "tool_call_update", "toolCallId": "t1",
                "status": "completed"}),
            ),
            &mut calls,
        );
        let expected = ToolCall {
            status: ToolStatus::Completed,
            ..expected
        };
        assert_eq!(done, vec![Said::Activity(Activity::ToolCall(expected))]);
        assert_eq!(calls.len(), 1);
    }

    #[test]
    fn text_chunks_are_the_reply_and_thoughts_are_activity() {
        let mut calls = Vec::new();
        let said = read(
            update(json!({"sessionUpdate": "agent_message_chunk",
                "content": {"type": "text", "text": "hé"}})),
            &mut calls,
        );
        assert_eq!(said, vec![Said::Text("hé".into())]);
        let said = read(
            update(json!({"sessionUpdate": "agent_thought_chunk",
                "content": {"type": "text", "text": "hmm"}})),
            &mut calls,
        );
        assert_eq!(
            said,
            vec![Said::Activity(Activity::Thought { text: "hmm".into() })]
        );
    }

    #[test]
    fn a_usage_update_fills_the_context_meter_and_gives_a_usd_cost() {
        let mut calls = Vec::new();
        let said = read(
            update(
                json!({"sessionUpdate": "usage_update", "used": 1200, "size": 200000,
                "cost": {"amount": 0.25, "currency": "USD"}}),
            ),
            &mut calls,
        );
        assert_eq!(
            said,
            vec![
                Said::Activity(Activity::Context {
                    used: 1200,
                    size: 200_000
                }),
                Said::CostUsd(0.25)
            ]
        );
    }
}
