//! The TypeScript peer's (`@testany/agent-chatter-core` 1.1.8) JS shapes, as serde types, and
//! their conversion to and from the core's types. Keeping every peer shape here keeps the
//! exported functions thin (DESIGN §12: the binding only converts).

use agent_chatter::markers::{self, DropTargets};
use agent_chatter::message::Addressee;
use serde::Serialize;

/// `MessageRouter.parseMessage(text)` of the peer, plus `isDone` (DESIGN §12).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ParseResult {
    /// `[NEXT]` names, in order.
    pub addressees: Vec<String>,
    /// The same names with their intent (`P1`, `P2`, `P3`).
    pub parsed_addressees: Vec<Addressee>,
    /// The stored-content view ([`markers::strip_routing`]).
    pub clean_content: String,
    /// `[FROM: x]`, or `null`.
    pub from_member: Option<String>,
    /// `[TEAM_TASK: x]` (last wins); `""` asks to clear the task; `null` when absent.
    pub team_task: Option<String>,
    /// `[DROP: …]` names, `["ALL"]` for `[DROP: ALL]`, empty when absent.
    pub drop_targets: Vec<String>,
    /// `[DONE]` present.
    pub is_done: bool,
}

impl ParseResult {
    /// Parses `text` with the core's marker parser.
    pub fn of(text: &str) -> Self {
        let parsed = markers::parse(text);
        ParseResult {
            addressees: parsed.next.iter().map(|a| a.name.clone()).collect(),
            parsed_addressees: parsed.next,
            clean_content: markers::strip_routing(text),
            from_member: parsed.from,
            team_task: parsed.team_task,
            drop_targets: match parsed.drop {
                None => Vec::new(),
                Some(DropTargets::All) => vec!["ALL".to_string()],
                Some(DropTargets::Members(names)) => names,
            },
            is_done: parsed.done,
        }
    }
}
