//! `claude-code`: the system part is not in the prompt; it travels as the
//! `--append-system-prompt` flag (docs/architecture.md §19 (seed 000 §4.2)). The peer also inlines
//! `[SYSTEM]`, so Claude reads its instructions twice and they count twice against the budget; we
//! follow the seed.

use super::{ExtraHeader, LineStyle, Spelling};

pub(crate) const SPELLING: Spelling = Spelling {
    system: None,
    team_task: "[TEAM_TASK]",
    context: "[CONTEXT]",
    line: LineStyle::FromTo,
    parent: Some(super::codex::PARENT),
    related: Some(super::codex::RELATED),
    message: "[MESSAGE]",
    extra: ExtraHeader::Bracket,
};
