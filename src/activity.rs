//! What an agent does while it runs (docs/architecture.md §14d): its tool calls, its plan, its thoughts, its
//! view of its context window, and the approvals it asked for. Activity is shown to the human
//! (page, chat, transcript) and stored with its run, outside the fact log: it never reaches
//! another agent's prompt, so nothing here is read by the context manager.

use serde::{Deserialize, Serialize};

use crate::message::Millis;

/// One item of a run's activity, as the page lists it. A tool call is sent whole each time it
/// changes (the page replaces the row with its id), so a late page needs only the last state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(
    tag = "type",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum Activity {
    /// A tool call's latest state.
    ToolCall(ToolCall),
    /// The agent's plan, whole (each update replaces the one before).
    Plan { entries: Vec<PlanEntry> },
    /// A piece of the agent's reasoning, shown collapsed.
    Thought { text: String },
    /// The agent's own view of its context window: `used` of `size` tokens.
    Context { used: u64, size: u64 },
    /// An approval the agent asked for, and how it was settled.
    Decision(Decision),
}

/// What a tool call does, as the agent labels it (ACP's `ToolKind`); an approval policy reads
/// it (`reads` allows read, search and fetch; `edits` also edit, delete and move).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum ToolKind {
    Read,
    Edit,
    Delete,
    Move,
    Search,
    Execute,
    Think,
    Fetch,
    SwitchMode,
    Other,
}

impl ToolKind {
    /// The word the page and the transcript show.
    pub fn label(self) -> &'static str {
        match self {
            ToolKind::Read => "read",
            ToolKind::Edit => "edit",
            ToolKind::Delete => "delete",
            ToolKind::Move => "move",
            ToolKind::Search => "search",
            ToolKind::Execute => "command",
            ToolKind::Think => "think",
            ToolKind::Fetch => "fetch",
            ToolKind::SwitchMode => "mode",
            ToolKind::Other => "tool",
        }
    }
}

/// Where a tool call is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum ToolStatus {
    Pending,
    InProgress,
    Completed,
    Failed,
}

impl ToolStatus {
    pub fn label(self) -> &'static str {
        match self {
            ToolStatus::Pending => "pending",
            ToolStatus::InProgress => "running",
            ToolStatus::Completed => "done",
            ToolStatus::Failed => "failed",
        }
    }
}

/// One tool call, as far as it is known.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolCall {
    /// The agent's id for it, unique within the run.
    pub id: String,
    pub title: String,
    pub kind: ToolKind,
    pub status: ToolStatus,
    /// The files it reads or changes, as the agent names them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<String>,
    /// The size of the change it makes, when it carries a diff.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diff: Option<DiffSize>,
}

/// Lines a diff adds and removes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DiffSize {
    pub added: u64,
    pub removed: u64,
}

impl DiffSize {
    /// The size of the change from `old` (none: a new file) to `new`, by lines: the lines of
    /// each that the other does not hold at the same place after their common start and end.
    pub fn between(old: Option<&str>, new: &str) -> DiffSize {
        let old: Vec<&str> = old.map_or_else(Vec::new, |o| o.lines().collect());
        let new: Vec<&str> = new.lines().collect();
        let start = old.iter().zip(&new).take_while(|(a, b)| a == b).count();
        let end = old[start..]
            .iter()
            .rev()
            .zip(new[start..].iter().rev())
            .take_while(|(a, b)| a == b)
            .count();
        DiffSize {
            added: (new.len() - start - end) as u64,
            removed: (old.len() - start - end) as u64,
        }
    }
}

/// One step of the agent's plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PlanEntry {
    pub content: String,
    /// `pending`, `in_progress` or `completed`, as the agent says.
    pub status: String,
}

/// What the agent may be answered, as it offers it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ApprovalOption {
    pub id: String,
    pub name: String,
    pub kind: OptionKind,
}

/// Whether an option allows or rejects, once or always.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum OptionKind {
    AllowOnce,
    AllowAlways,
    RejectOnce,
    RejectAlways,
}

impl OptionKind {
    pub fn allows(self) -> bool {
        matches!(self, OptionKind::AllowOnce | OptionKind::AllowAlways)
    }
}

/// A question from a running agent: may it make this tool call?
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ApprovalRequest {
    /// The bridge's id for the question, unique within the session (`max-3`).
    pub id: String,
    pub tool_call: ToolCall,
    pub options: Vec<ApprovalOption>,
    /// When it is answered with the reject option if no one answers it.
    pub deadline: Millis,
}

impl ApprovalRequest {
    /// The option a rule or a timeout picks: the first of `kinds` the agent offers.
    pub fn first_of(&self, kinds: &[OptionKind]) -> Option<&ApprovalOption> {
        kinds
            .iter()
            .find_map(|kind| self.options.iter().find(|o| o.kind == *kind))
    }
}

/// Who or what settled an approval.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(
    tag = "kind",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum DecidedBy {
    /// A person, at the page or in the terminal chat (`where`).
    Person { r#where: String },
    /// The member's approval policy from the machine's agents file (`approve: reads`).
    Rule { rule: String },
    /// No one answered within the member's `approvalTimeoutMs`: the reject option.
    Timeout,
    /// The run ended (cancelled, timed out, failed) while the question was open.
    RunEnded,
}

impl DecidedBy {
    /// In the user's words, for the page, the chat and the transcript.
    pub fn describe(&self) -> String {
        match self {
            DecidedBy::Person { r#where } => format!("you, in the {where}"),
            DecidedBy::Rule { rule } => format!("the rule {rule}"),
            DecidedBy::Timeout => "no one answered in time".to_string(),
            DecidedBy::RunEnded => "the run ended first".to_string(),
        }
    }
}

/// How one approval was settled, kept with its run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Decision {
    pub request: String,
    pub tool_call: ToolCall,
    /// The option chosen (its id and name); `None` when the question was withdrawn.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub option: Option<ApprovalOption>,
    pub by: DecidedBy,
    pub at: Millis,
}

/// The activity of one finished (or running) delivery, keyed as its digest is: the message it
/// showed as `[MESSAGE]` and its recipient.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunActivity {
    pub message: String,
    pub to: String,
    pub items: Vec<Activity>,
}

/// A run's activity as it grows: tool calls merged by id in the order first seen, thoughts
/// joined, the last plan and context fill; so 1 000 updates of one tool call keep one row.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ActivityLog {
    items: Vec<Activity>,
}

/// The most thought text kept per run (the rest is cut: it is shown collapsed).
const MAX_THOUGHT_BYTES: usize = 64 * 1024;

impl ActivityLog {
    /// Adds `item`: a tool call replaces the row with its id, a thought extends the last
    /// thought, a plan or a context fill replaces the one before.
    pub fn push(&mut self, item: Activity) {
        match item {
            Activity::ToolCall(call) => {
                let row = self
                    .items
                    .iter_mut()
                    .find(|i| matches!(i, Activity::ToolCall(c) if c.id == call.id));
                match row {
                    Some(row) => *row = Activity::ToolCall(call),
                    None => self.items.push(Activity::ToolCall(call)),
                }
            }
            Activity::Thought { text } => match self.items.last_mut() {
                Some(Activity::Thought { text: last }) => {
                    if last.len() < MAX_THOUGHT_BYTES {
                        last.push_str(&text);
                        let end = crate::text::floor_char_boundary(last, MAX_THOUGHT_BYTES);
                        last.truncate(end);
                    }
                }
                _ => self.items.push(Activity::Thought { text }),
            },
            Activity::Plan { entries } => {
                self.items.retain(|i| !matches!(i, Activity::Plan { .. }));
                self.items.push(Activity::Plan { entries });
            }
            Activity::Context { used, size } => {
                self.items
                    .retain(|i| !matches!(i, Activity::Context { .. }));
                self.items.push(Activity::Context { used, size });
            }
            decision @ Activity::Decision(_) => self.items.push(decision),
        }
    }

    pub fn items(&self) -> &[Activity] {
        &self.items
    }

    pub fn into_items(self) -> Vec<Activity> {
        self.items
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// The tool call with `id`, if seen.
    pub fn tool_call(&self, id: &str) -> Option<&ToolCall> {
        self.items.iter().find_map(|i| match i {
            Activity::ToolCall(c) if c.id == id => Some(c),
            _ => None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(id: &str, status: ToolStatus) -> Activity {
        Activity::ToolCall(ToolCall {
            id: id.into(),
            title: format!("Read {id}"),
            kind: ToolKind::Read,
            status,
            files: vec![],
            diff: None,
        })
    }

    #[test]
    fn a_thousand_updates_of_one_tool_call_keep_one_row_in_its_latest_state() {
        let mut log = ActivityLog::default();
        log.push(call("t1", ToolStatus::Pending));
        for _ in 0..1000 {
            log.push(call("t1", ToolStatus::InProgress));
        }
        log.push(call("t2", ToolStatus::Pending));
        log.push(call("t1", ToolStatus::Completed));
        assert_eq!(
            log.items(),
            &[
                call("t1", ToolStatus::Completed),
                call("t2", ToolStatus::Pending)
            ]
        );
    }

    #[test]
    fn thoughts_join_plans_and_context_fills_replace() {
        let mut log = ActivityLog::default();
        log.push(Activity::Thought { text: "a".into() });
        log.push(Activity::Thought { text: "b".into() });
        log.push(Activity::Context { used: 1, size: 10 });
        log.push(Activity::Context { used: 5, size: 10 });
        log.push(Activity::Plan { entries: vec![] });
        log.push(Activity::Plan {
            entries: vec![PlanEntry {
                content: "x".into(),
                status: "pending".into(),
            }],
        });
        assert_eq!(log.items().len(), 3);
        assert_eq!(log.items()[0], Activity::Thought { text: "ab".into() });
        assert_eq!(log.items()[1], Activity::Context { used: 5, size: 10 });
    }

    #[test]
    fn a_diffs_size_counts_the_lines_between_the_common_start_and_end() {
        let table = [
            (None, "a\nb\n", (2, 0)),
            (Some("a\nb\nc"), "a\nX\nc", (1, 1)),
            (Some("a\nb\nc"), "a\nb\nc\nd", (1, 0)),
            (Some("a\nb\nc"), "c", (0, 2)),
            (Some("same"), "same", (0, 0)),
        ];
        for (old, new, (added, removed)) in table {
            assert_eq!(
                DiffSize::between(old, new),
                DiffSize { added, removed },
                "{old:?} → {new:?}"
            );
        }
    }

    #[test]
    fn activity_is_json_with_a_type_tag() {
        let json = serde_json::to_string(&call("t1", ToolStatus::InProgress)).unwrap();
        assert_eq!(
            json,
            r#"{"type":"toolCall","id":"t1","title":"Read t1","kind":"read","status":"inProgress"}"#
        );
    }
}
