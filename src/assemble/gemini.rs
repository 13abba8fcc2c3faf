//! `google-gemini`: plain headings, no brackets, history without addressees
//! (docs/architecture.md §19 (seed 000 §4.2)).

use super::{ExtraHeader, LineStyle, Spelling};

pub(crate) const SPELLING: Spelling = Spelling {
    system: Some("Instructions:"),
    team_task: "Team Task:",
    context: "Conversation so far:",
    line: LineStyle::DashFrom,
    parent: Some("Original message (reinserted for context):"),
    related: Some("Related responses (avoid repeating):"),
    message: "Last message:",
    extra: ExtraHeader::Colon,
};
