//! Fallback for any other agent type: bodies without headers, `from: content` history lines,
//! no route sections (docs/architecture.md §19 (seed 000 §6.1) PlainTextAssembler).

use super::{ExtraHeader, LineStyle, Spelling};

pub(crate) const SPELLING: Spelling = Spelling {
    system: Some(""),
    team_task: "",
    context: "",
    line: LineStyle::From,
    parent: None,
    related: None,
    message: "",
    extra: ExtraHeader::None,
};
