//! `openai-codex`: everything inline, `[SYSTEM]` first (docs/architecture.md §19 (seed 000 §4.2)).

use super::{ExtraHeader, LineStyle, Spelling};

/// Header of the reinserted parent (bracket formats).
pub(crate) const PARENT: &str =
    "[PARENT_CONTEXT]\n(This is the message you are replying to, reinserted for context)";
/// Header of sibling answers (bracket formats).
pub(crate) const RELATED: &str =
    "[RELATED_CONTEXT]\n(Other responses to the same message - avoid repeating)";

pub(crate) const SPELLING: Spelling = Spelling {
    system: Some("[SYSTEM]"),
    team_task: "[TEAM_TASK]",
    context: "[CONTEXT]",
    line: LineStyle::FromTo,
    parent: Some(PARENT),
    related: Some(RELATED),
    message: "[MESSAGE]",
    extra: ExtraHeader::Bracket,
};
