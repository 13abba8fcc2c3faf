//! Routing markers inside message text (docs/architecture.md §5, §19 (seed 004)).
//!
//! Members route a conversation by writing markers into their messages:
//! `[FROM: x]`, `[TEAM_TASK: x]`, `[NEXT: a, b !P1]`, `[DONE]`, `[DROP: a]` / `[DROP: ALL]`.
//! Messages are stored raw; [`parse`] reads the markers, [`strip_routing`] and [`strip_all`]
//! are views of the raw text, and [`spans`] locates markers for highlighting.
//!
//! DROP names take NEXT's `!P1|!P2|!P3` suffix, which is ignored (`[DROP: sarah!P1]` drops
//! sarah), and `ALL` anywhere in a DROP list (any case, suffix or not) means everyone.
//!
//! # Grammar
//!
//! - A marker is `[` NAME `:` VALUE `]` with NAME one of `FROM`, `TEAM_TASK`, `NEXT`, `DROP`,
//!   or exactly `[DONE]`. NAME is ASCII case-insensitive (`[next: a]`, `[Done]`). As in the
//!   seed's patterns (`\[NEXT:\s*([^\]]*)\]`), no whitespace is allowed between `[`, NAME and
//!   `:` (`[ NEXT: a]`, `[NEXT : a]`, `[DONE ]` are text); whitespace after `:` is part of the
//!   value, which is trimmed.
//! - VALUE runs to the first `]` and never contains a line break (`\n`): an unclosed `[NEXT: a`
//!   or one whose value runs onto the next line is plain text and eats nothing. VALUE may
//!   contain `[` (as in the seed), so `[NEXT: a [DONE]` is one NEXT marker whose name is
//!   `a [DONE`. The block form `[TEAM_TASK]` (no colon) is text (docs/architecture.md §16).
//! - Fenced code blocks are text. Lines are split on `\n`. Outside a fence, a line opens one
//!   when, after leading whitespace and any leading markers, it starts with three backticks
//!   (`[NEXT: max] ```rust` routes to max and opens a fence); the rest of that line after the
//!   backticks is code. Inside a fence, a line whose whitespace-trimmed start is a run of at
//!   least as many backticks as the opening run closes it (CommonMark's rule, so a fence of
//!   four can show a ```` ``` ```` example, markers and all): its backtick run is code, the
//!   text after it is ordinary text again (so `` ``` [NEXT: max] `` routes). A shorter run is
//!   code. An unterminated fence runs to the end of the message. Inline backticks protect
//!   nothing.
//!
//! # Stripping
//!
//! Both strip functions keep the line structure: a removed marker becomes one space (so
//! `see[NEXT: a]you` gives `see you` and removal can never glue text into a new marker);
//! then, per line outside fences (every such line, marker or not), runs of two or more
//! whitespace characters become one space and the line is trimmed; lines that become empty
//! are removed. A single whitespace character (a tab, U+3000) is left as written. Lines inside
//! fences, blank ones included, are copied byte for byte (a `\r` before `\n` stays there;
//! outside fences it is whitespace and trims away). A fence line without markers is copied as
//! is; on an opening line with leading markers, the part before the backticks is treated like
//! text (so `[NEXT: max]   ```rust` becomes ```` ```rust ````), and on a closing line the text
//! after the backtick run is. The whole result is then trimmed at both ends (an indented fence
//! on the first line loses its indentation, a last fenced line its trailing whitespace).
//!
//! Whitespace is Unicode White_Space (`char::is_whitespace`): U+0085, U+2028 and U+3000 are
//! whitespace (inside a line: only `\n` breaks lines), U+FEFF (zero-width no-break space) is
//! not and stays.
//!
//! These rules make both strips idempotent, make `strip_all` output free of markers, and keep
//! every line's fence role: a text line never turns into a fence line by stripping. Stripping
//! is linear, allocates once, and the output is never longer than the input.
//!
//! # Modules
//!
//! `grammar` says what a marker is at a `[` and what values mean; `scan` finds lines, fences
//! and markers fast; `strip` writes the views; [`reference`] (feature `reference`) reads the
//! same grammar plainly with `regex`, as the oracle the fuzzer and the property tests hold the
//! fast engine to (figures of the comparison in `docs/markers.md`).
//!
//! Speed: the scans read 8 bytes at a time in a `u64` (plain integer code, so wasm32 without
//! SIMD gains too); prose lines the strips leave unchanged are copied a block at a time,
//! and [`spans`] jumps from line start to the next `[` or backtick. Only bytes that may start
//! multi-byte whitespace are looked at closer, by their encoding, never by decoding `char`s.

mod grammar;
#[cfg(feature = "reference")]
pub mod reference;
mod scan;
mod strip;

use std::borrow::Cow;
use std::ops::Range;

use serde::{Deserialize, Serialize};

use crate::message::Addressee;
pub use crate::message::Intent;
pub(crate) use grammar::parse_addressees;
use grammar::Found;
use scan::{Lines, RegionMarkers};

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
    /// `[FROM: x]`, first non-empty occurrence; `None` if absent or empty.
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

impl Markers {
    /// True when the markers say nothing (no marker, or only empty ones like `[NEXT:]`).
    pub fn is_empty(&self) -> bool {
        *self == Markers::default()
    }
}

/// The kind of a marker found in text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum MarkerKind {
    From,
    TeamTask,
    Next,
    Done,
    Drop,
}

impl MarkerKind {
    /// Routing markers (NEXT, DONE, DROP) are removed even from the stored-content view;
    /// FROM and TEAM_TASK are kept there for history and audit (docs/architecture.md §5).
    pub(crate) fn is_routing(self) -> bool {
        matches!(self, MarkerKind::Next | MarkerKind::Done | MarkerKind::Drop)
    }

    /// The marker name as written in canonical form (`"TEAM_TASK"`).
    pub fn name(self) -> &'static str {
        match self {
            MarkerKind::From => "FROM",
            MarkerKind::TeamTask => "TEAM_TASK",
            MarkerKind::Next => "NEXT",
            MarkerKind::Done => "DONE",
            MarkerKind::Drop => "DROP",
        }
    }
}

/// Where one marker sits in the raw text (byte offsets), for highlighting.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct MarkerSpan {
    /// The whole marker, `[` to `]` inclusive.
    pub range: Range<usize>,
    /// The value between `:` and `]`, untrimmed (empty for `[DONE]`).
    pub value: Range<usize>,
    pub kind: MarkerKind,
}

/// How a line of a message is read by the fence rules of the module doc. Offsets are byte
/// offsets into the whole text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum LineKind {
    /// Ordinary text outside fences: markers anywhere, whitespace normalised by the strips.
    Text,
    /// Opens a fence: markers before `code_at` (only whitespace and markers there), code from
    /// `code_at` (the backticks) on.
    FenceOpen { code_at: usize },
    /// Inside a fence: no markers, copied verbatim.
    Code,
    /// Closes a fence: indentation and backtick run before `rest_at` are code, text after it.
    FenceClose { rest_at: usize },
}

/// One line of a message (without its `\n`) and how the fence rules read it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct LineSpan {
    pub range: Range<usize>,
    pub kind: LineKind,
}

/// Every line of `text` (split on `\n`) with its fence classification, so a viewer can show
/// code blocks the way the parser reads them.
pub fn line_spans(text: &str) -> impl Iterator<Item = LineSpan> + '_ {
    Lines::new(text).map(|line| LineSpan {
        range: line.start..line.end,
        kind: line.kind,
    })
}

/// Parses every marker of `text` (markers inside fenced code blocks are text).
///
/// FROM: the first non-empty value wins (`[FROM:]` does nothing). TEAM_TASK: the last one
/// wins, an empty one clears. NEXT: all addressees in order. DROP: merged, `ALL` absorbs names.
pub fn parse(text: &str) -> Markers {
    let mut found = Found::default();
    for span in spans(text) {
        found.add(span.kind, text.get(span.value).unwrap_or_default().trim());
    }
    found.into_markers()
}

/// [`parse`] and [`strip_routing`] of `text` in one pass (what a router reads of a message).
pub fn parse_and_strip_routing(text: &str) -> (Markers, Cow<'_, str>) {
    strip::parse_and_strip_routing(text)
}

/// The stored-content view: removes NEXT, DONE, DROP; keeps FROM and TEAM_TASK.
///
/// Borrowed when the view is a piece of `text` (prose without markers inside it): no copy.
pub fn strip_routing(text: &str) -> Cow<'_, str> {
    strip::strip_with(text, MarkerKind::is_routing).0
}

/// The agent view: removes FROM, TEAM_TASK, NEXT, DONE, DROP.
///
/// Borrowed when the view is a piece of `text` (prose without markers inside it): no copy.
pub fn strip_all(text: &str) -> Cow<'_, str> {
    strip_all_counted(text).0
}

/// [`strip_all`] plus the number of markers it removed (for the prompt explain).
pub fn strip_all_counted(text: &str) -> (Cow<'_, str>, usize) {
    strip::strip_with(text, |_| true)
}

/// [`strip_routing`] plus the number of markers it removed.
pub fn strip_routing_counted(text: &str) -> (Cow<'_, str>, usize) {
    strip::strip_with(text, MarkerKind::is_routing)
}

/// Every marker of `text` outside fenced code, in order, as byte ranges of the raw text.
pub fn spans(text: &str) -> impl Iterator<Item = MarkerSpan> + '_ {
    let mut lines = Lines::new(text);
    let mut region = RegionMarkers::new(text, 0..0);
    std::iter::from_fn(move || loop {
        if let Some(span) = region.next() {
            return Some(span);
        }
        lines.skip_markerless();
        region = RegionMarkers::new(text, lines.next()?.marker_region());
    })
}

/// Fuzzy identifier form (docs/architecture.md §5): lowercase, without whitespace (any Unicode
/// White_Space, not only spaces), `-` and `_`, so `Max-Smith`, `max_smith` and `MAX SMITH`
/// name the same member.
pub(crate) fn normalize_identifier(s: &str) -> String {
    s.chars()
        .filter(|c| !matches!(c, '-' | '_') && !c.is_whitespace())
        .flat_map(char::to_lowercase)
        .collect()
}
