//! Routing markers inside message text (DESIGN §5, seed 004).
//!
//! INTERFACE FILE: the implementation is being written; signatures are the contract.

use serde::{Deserialize, Serialize};

use crate::message::Addressee;

/// The urgency of a `[NEXT: a !P1]` addressee; default P2.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize,
)]
pub enum Intent {
    P1,
    #[default]
    P2,
    P3,
}

/// What `[DROP: …]` asks to remove from the routing queue.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum DropTargets {
    /// `[DROP: ALL]`
    All,
    /// `[DROP: a, b]` (names as written, trimmed, empty ones skipped)
    Members(Vec<String>),
}

/// Everything the markers of one message say.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Markers {
    /// `[FROM: x]`, first occurrence; `None` if absent or empty.
    pub from: Option<String>,
    /// `[TEAM_TASK: x]`, last occurrence; `Some("")` means "clear the team task".
    pub team_task: Option<String>,
    /// `[NEXT: …]` addressees, all occurrences in order.
    pub next: Vec<Addressee>,
    /// `[DONE]` present.
    pub done: bool,
    /// `[DROP: …]`, merged over occurrences; `None` if absent or empty.
    pub drop: Option<DropTargets>,
}

/// Parses every marker of `text` (markers inside fenced code blocks are text).
pub fn parse(text: &str) -> Markers {
    let _ = text;
    Markers::default()
}

/// The stored-content view: removes NEXT, DONE, DROP; keeps FROM and TEAM_TASK.
pub fn strip_routing(text: &str) -> String {
    text.to_string()
}

/// The agent view: removes FROM, TEAM_TASK, NEXT, DONE, DROP.
pub fn strip_all(text: &str) -> String {
    text.to_string()
}

/// Fuzzy identifier form: lowercase, without spaces, `-` and `_`.
pub fn normalize_identifier(s: &str) -> String {
    s.chars()
        .filter(|c| !matches!(c, ' ' | '-' | '_') && !c.is_whitespace())
        .flat_map(char::to_lowercase)
        .collect()
}

/// [`strip_all`] plus how many markers it removed.
pub fn strip_all_counted(text: &str) -> (String, usize) {
    (strip_all(text), 0)
}
