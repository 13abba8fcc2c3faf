//! Routing markers inside message text (DESIGN §5, seed 004).
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
//!   `a [DONE`. The block form `[TEAM_TASK]` (no colon) is text (DESIGN §16).
//! - Fenced code blocks are text. Lines are split on `\n`. Outside a fence, a line opens one
//!   when, after leading whitespace and any leading markers, it starts with three backticks
//!   (`[NEXT: max] ```rust` routes to max and opens a fence); the rest of that line after the
//!   backticks is code. Inside a fence, a line whose whitespace-trimmed start begins with three
//!   backticks closes it: its backtick run is code, the text after it is ordinary text again
//!   (so `` ``` [NEXT: max] `` routes). An unterminated fence runs to the end of the message.
//!   Inline backticks protect nothing.
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
//! Speed: the scans read 8 bytes at a time in a `u64` (plain integer code, so wasm32 without
//! SIMD gains too); prose lines the strips leave unchanged are copied a block at a time,
//! and [`spans`] jumps from line start to the next `[` or backtick. Only bytes that may start
//! multi-byte whitespace are looked at closer, by their encoding, never by decoding `char`s.

use std::collections::BTreeSet;
use std::ops::Range;

use memchr::memchr;
use serde::{Deserialize, Serialize};

use crate::message::Addressee;
pub use crate::message::Intent;

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
    /// FROM and TEAM_TASK are kept there for history and audit (DESIGN §5).
    pub fn is_routing(self) -> bool {
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

/// Markers as borrowed slices while scanning: values are copied once at the end, and DROP
/// names are deduplicated through an ordered set (no hash seed: the core reads no random
/// source), so parsing stays linear however many markers a
/// message carries.
#[derive(Default)]
struct Found<'a> {
    from: Option<&'a str>,
    team_task: Option<&'a str>,
    next: Vec<Addressee>,
    done: bool,
    drop_all: bool,
    drop_names: Vec<&'a str>,
    drop_seen: BTreeSet<&'a str>,
}

impl<'a> Found<'a> {
    fn add(&mut self, kind: MarkerKind, value: &'a str) {
        match kind {
            MarkerKind::From => {
                if self.from.is_none() && !value.is_empty() {
                    self.from = Some(value);
                }
            }
            MarkerKind::TeamTask => self.team_task = Some(value),
            MarkerKind::Next => self.next.extend(parse_addressees(value)),
            MarkerKind::Done => self.done = true,
            MarkerKind::Drop => {
                // DROP names take NEXT's `!Pn` suffix, which means nothing here (DESIGN §5).
                let names = value.split(',').map(|item| split_intent(item.trim()).0);
                for name in names.filter(|s| !s.is_empty()) {
                    if name.eq_ignore_ascii_case("all") {
                        self.drop_all = true;
                    } else if !self.drop_all && self.drop_seen.insert(name) {
                        self.drop_names.push(name);
                    }
                }
            }
        }
    }

    fn into_markers(self) -> Markers {
        let drop = if self.drop_all {
            Some(DropTargets::All)
        } else if self.drop_names.is_empty() {
            None
        } else {
            Some(DropTargets::Members(
                self.drop_names.into_iter().map(str::to_string).collect(),
            ))
        };
        Markers {
            from: self.from.map(str::to_string),
            team_task: self.team_task.map(str::to_string),
            next: self.next,
            done: self.done,
            drop,
        }
    }
}

/// The addressees of one NEXT value: comma-separated, each trimmed, an optional trailing
/// `!P1`/`!P2`/`!P3` (case-insensitive, whitespace before `!` allowed) is the intent
/// (default P2); `!` and `P` must be adjacent (`a ! P1` is the name `a ! P1`, left for the
/// resolver to report). Empty names are skipped.
pub fn parse_addressees(value: &str) -> impl Iterator<Item = Addressee> + '_ {
    value.split(',').filter_map(|item| {
        let (name, intent) = split_intent(item.trim());
        (!name.is_empty()).then(|| Addressee {
            name: name.to_string(),
            intent,
        })
    })
}

fn split_intent(item: &str) -> (&str, Intent) {
    let bytes = item.as_bytes();
    if let [.., b'!', p, digit] = bytes {
        if p.eq_ignore_ascii_case(&b'p') {
            let intent = match digit {
                b'1' => Some(Intent::P1),
                b'2' => Some(Intent::P2),
                b'3' => Some(Intent::P3),
                _ => None,
            };
            if let (Some(intent), Some(name)) = (intent, item.get(..bytes.len() - 3)) {
                return (name.trim_end(), intent);
            }
        }
    }
    (item, Intent::P2)
}

/// The stored-content view: removes NEXT, DONE, DROP; keeps FROM and TEAM_TASK.
pub fn strip_routing(text: &str) -> String {
    strip_with(text, MarkerKind::is_routing).0
}

/// The agent view: removes FROM, TEAM_TASK, NEXT, DONE, DROP.
pub fn strip_all(text: &str) -> String {
    strip_all_counted(text).0
}

/// [`strip_all`] plus the number of markers it removed (for the prompt explain).
pub fn strip_all_counted(text: &str) -> (String, usize) {
    strip_with(text, |_| true)
}

/// [`strip_routing`] plus the number of markers it removed.
pub fn strip_routing_counted(text: &str) -> (String, usize) {
    strip_with(text, MarkerKind::is_routing)
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

/// Fuzzy identifier form (DESIGN §5): lowercase, without whitespace (any Unicode
/// White_Space, not only spaces), `-` and `_`, so `Max-Smith`, `max_smith` and `MAX SMITH`
/// name the same member.
pub fn normalize_identifier(s: &str) -> String {
    s.chars()
        .filter(|c| !matches!(c, '-' | '_') && !c.is_whitespace())
        .flat_map(char::to_lowercase)
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Scanning

const FENCE: &[u8] = b"```";

/// Named markers that take a value, with the bytes that follow `[`.
const VALUED: [(&[u8], MarkerKind); 4] = [
    (b"FROM:", MarkerKind::From),
    (b"TEAM_TASK:", MarkerKind::TeamTask),
    (b"NEXT:", MarkerKind::Next),
    (b"DROP:", MarkerKind::Drop),
];

enum Probe {
    Marker(MarkerSpan),
    /// Not a marker at this `[`; scanning may continue after it.
    Text,
    /// A marker name with no `]` before the limit: no marker can follow in this region.
    Unclosed,
}

fn starts_with_ignore_case(hay: &[u8], needle: &[u8]) -> bool {
    hay.len() >= needle.len() && hay[..needle.len()].eq_ignore_ascii_case(needle)
}

/// Probes for a marker whose `[` is at `at`, never looking at or past `limit` (the line end).
fn probe(bytes: &[u8], at: usize, limit: usize) -> Probe {
    let Some(after) = bytes.get(at + 1..limit) else {
        return Probe::Text;
    };
    if starts_with_ignore_case(after, b"DONE]") {
        return Probe::Marker(MarkerSpan {
            range: at..at + 6,
            value: at + 5..at + 5,
            kind: MarkerKind::Done,
        });
    }
    // Most `[` in text start no marker: look only at the names with that first letter.
    let first = after.first().map(u8::to_ascii_uppercase);
    for (name, kind) in VALUED {
        if name.first() == first.as_ref() && starts_with_ignore_case(after, name) {
            let value_start = at + 1 + name.len();
            let rest = bytes.get(value_start..limit).unwrap_or_default();
            return match memchr(b']', rest) {
                Some(len) => Probe::Marker(MarkerSpan {
                    range: at..value_start + len + 1,
                    value: value_start..value_start + len,
                    kind,
                }),
                None => Probe::Unclosed,
            };
        }
    }
    Probe::Text
}

/// The markers inside one region of one line.
struct RegionMarkers<'a> {
    bytes: &'a [u8],
    pos: usize,
    limit: usize,
}

impl<'a> RegionMarkers<'a> {
    fn new(text: &'a str, region: Range<usize>) -> Self {
        RegionMarkers {
            bytes: text.as_bytes(),
            pos: region.start,
            limit: region.end,
        }
    }
}

impl Iterator for RegionMarkers<'_> {
    type Item = MarkerSpan;

    fn next(&mut self) -> Option<MarkerSpan> {
        while self.pos < self.limit {
            let window = self.bytes.get(self.pos..self.limit)?;
            let at = self.pos + memchr(b'[', window)?;
            match probe(self.bytes, at, self.limit) {
                Probe::Marker(span) => {
                    self.pos = span.range.end;
                    return Some(span);
                }
                Probe::Text => self.pos = at + 1,
                Probe::Unclosed => self.pos = self.limit,
            }
        }
        None
    }
}

const fn is_ascii_whitespace(b: u8) -> bool {
    b == b' ' || (b >= b'\t' && b <= b'\r')
}

/// The first position at or after `from` (below `limit`) that is not whitespace.
fn skip_whitespace(text: &str, from: usize, limit: usize) -> usize {
    let bytes = text.as_bytes();
    let mut i = from;
    while i < limit {
        let b = bytes[i];
        if b < 0x80 {
            if !is_ascii_whitespace(b) {
                return i;
            }
            i += 1;
        } else {
            match text.get(i..limit).and_then(|s| s.chars().next()) {
                Some(c) if c.is_whitespace() => i += c.len_utf8(),
                _ => return i,
            }
        }
    }
    limit
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

#[derive(Debug, Clone, Copy)]
struct Line {
    start: usize,
    /// Exclusive, before the `\n`.
    end: usize,
    kind: LineKind,
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

impl Line {
    /// The byte range where markers count.
    fn marker_region(&self) -> Range<usize> {
        match self.kind {
            LineKind::Text => self.start..self.end,
            LineKind::FenceOpen { code_at } => self.start..code_at,
            LineKind::Code => self.end..self.end,
            LineKind::FenceClose { rest_at } => rest_at..self.end,
        }
    }
}

/// The lines of a text, classified by the fence rules of the module doc.
struct Lines<'a> {
    text: &'a str,
    pos: usize,
    in_fence: bool,
    finished: bool,
    /// Set by [`Lines::skip_unchanged`]: the line at `pos` has no `\n` before this offset.
    no_newline_before: usize,
}

impl<'a> Lines<'a> {
    fn new(text: &'a str) -> Self {
        Lines {
            text,
            pos: 0,
            in_fence: false,
            finished: false,
            no_newline_before: 0,
        }
    }

    /// Skips, outside a fence, the lines before the next `[` or backtick: they hold no marker
    /// and open no fence. With neither left, no marker is left: the lines end. For [`spans`]
    /// only (the skipped lines are not returned).
    fn skip_markerless(&mut self) {
        if self.in_fence || self.finished {
            return;
        }
        let bytes = self.text.as_bytes();
        let start = self.pos;
        let rest = bytes.get(start..).unwrap_or_default();
        let Some(len) = memchr::memchr2(b'[', b'`', rest) else {
            self.finished = true;
            return;
        };
        let at = start + len;
        if let Some(before) = memchr::memrchr(b'\n', rest.get(..len).unwrap_or_default()) {
            self.pos = start + before + 1;
        }
        self.no_newline_before = at;
    }

    /// Skips, outside a fence, the text from the current position on that both strips copy
    /// unchanged, so prose is copied a block at a time instead of line by line. Returns its
    /// byte range, which ends either after whole lines (before their last `\n`; the next line
    /// is read normally) or inside a line; in that case the position moves back to that
    /// line's start and the range ends at a char boundary after a non-whitespace character:
    /// the caller treats the line as text and resumes its strip there.
    ///
    /// Copied lines are text lines (no `[`, so no marker, and no backtick, so no fence) that
    /// neither start nor end with whitespace, hold no whitespace pair and no multi-byte
    /// whitespace, and are not empty: the strips leave them as they are.
    fn skip_unchanged(&mut self) -> Option<Range<usize>> {
        if self.in_fence || self.finished {
            return None;
        }
        let bytes = self.text.as_bytes();
        let start = self.pos;
        let first = *bytes.get(start)?;
        if first <= b' ' || maybe_multibyte_whitespace(first) {
            // Leading whitespace (or an empty line) is not copied as is.
            return None;
        }
        let event = first_line_event(bytes, start);
        let line_start = match memchr::memrchr(b'\n', bytes.get(start..event)?) {
            Some(len) => start + len + 1,
            None => start,
        };
        self.no_newline_before = event;
        // The event's line: its bytes before the event hold no `[`, backtick or whitespace
        // pair, so all but a last single whitespace byte are unchanged text.
        let mut end = event;
        while !self.text.is_char_boundary(end) {
            end -= 1;
        }
        if end > line_start && bytes.get(end - 1).is_some_and(|&b| b <= b' ') {
            end -= 1;
        }
        self.pos = line_start;
        if end > line_start {
            Some(start..end)
        } else if line_start > start {
            Some(start..line_start - 1)
        } else {
            None
        }
    }

    /// Where the code starts if the line `start..end` (outside a fence) opens a fence.
    fn fence_open(&self, start: usize, end: usize) -> Option<usize> {
        let bytes = self.text.as_bytes();
        let mut i = skip_whitespace(self.text, start, end);
        loop {
            let rest = bytes.get(i..end)?;
            if rest.starts_with(FENCE) {
                return Some(i);
            }
            if rest.first() != Some(&b'[') {
                return None;
            }
            match probe(bytes, i, end) {
                Probe::Marker(span) => i = skip_whitespace(self.text, span.range.end, end),
                Probe::Text | Probe::Unclosed => return None,
            }
        }
    }
}

impl Iterator for Lines<'_> {
    type Item = Line;

    fn next(&mut self) -> Option<Line> {
        if self.finished {
            return None;
        }
        let bytes = self.text.as_bytes();
        let start = self.pos;
        let from = start.max(self.no_newline_before);
        let end = match memchr(b'\n', bytes.get(from..).unwrap_or_default()) {
            Some(len) => {
                self.pos = from + len + 1;
                from + len
            }
            None => {
                self.finished = true;
                bytes.len()
            }
        };
        let kind = if self.in_fence {
            let first = skip_whitespace(self.text, start, end);
            let rest = bytes.get(first..end).unwrap_or_default();
            if rest.starts_with(FENCE) {
                self.in_fence = false;
                let run = rest.iter().take_while(|&&b| b == b'`').count();
                LineKind::FenceClose {
                    rest_at: first + run,
                }
            } else {
                LineKind::Code
            }
        } else if let Some(code_at) = self.fence_open(start, end) {
            self.in_fence = true;
            LineKind::FenceOpen { code_at }
        } else {
            LineKind::Text
        };
        Some(Line { start, end, kind })
    }
}

// ---------------------------------------------------------------------------------------------
// Stripping

/// The byte length of the multi-byte whitespace character (Unicode White_Space beyond ASCII:
/// U+0085, U+00A0, U+1680, U+2000–U+200A, U+2028, U+2029, U+202F, U+205F, U+3000) that
/// `bytes` starts with, or 0. Matching the encoded bytes avoids decoding a `char` for every
/// non-ASCII character; a unit test checks it against `char::is_whitespace` for every char.
fn multibyte_whitespace_len(bytes: &[u8]) -> usize {
    match bytes {
        [0xC2, 0x85 | 0xA0, ..] => 2,
        [0xE1, 0x9A, 0x80, ..]
        | [0xE2, 0x80, 0x80..=0x8A | 0xA8 | 0xA9 | 0xAF, ..]
        | [0xE2, 0x81, 0x9F, ..]
        | [0xE3, 0x80, 0x80, ..] => 3,
        _ => 0,
    }
}

/// True for a byte that may start a multi-byte whitespace character (see
/// [`multibyte_whitespace_len`]); every other non-ASCII byte starts or continues a non-space.
const fn maybe_multibyte_whitespace(b: u8) -> bool {
    b == 0xC2 || (b >= 0xE1 && b <= 0xE3)
}

// Word-at-a-time (SWAR) tests on 8 bytes in a `u64`: each returns the high bit of every byte
// that passes. They are exact per byte (no carry crosses a byte), so they work as well on
// wasm32 without SIMD as natively.
const LOW7: u64 = u64::from_ne_bytes([0x7F; 8]);
const HIGH: u64 = u64::from_ne_bytes([0x80; 8]);

const fn splat(b: u8) -> u64 {
    u64::from_ne_bytes([b; 8])
}

/// Bytes of `x` below `n` (`1 <= n <= 0x80`).
const fn bytes_below(x: u64, n: u8) -> u64 {
    !(((x & LOW7) + splat(0x80 - n)) | x) & HIGH
}

/// Bytes of `x` equal to zero.
const fn zero_bytes(x: u64) -> u64 {
    bytes_below(x, 1)
}

/// Bytes that may end an unchanged run in the little-endian word `x`: the second of two
/// adjacent bytes at or below `' '` (every ASCII whitespace byte is; `prev` is the same mask
/// for the byte before the word, in the lowest byte) and possible starts of multi-byte
/// whitespace (0xC2 and, a superset of 0xE1–0xE3, 0xE0–0xE3). Returns (events, mask of
/// bytes at or below `' '`).
const fn word_events(x: u64, prev: u64) -> (u64, u64) {
    let low = bytes_below(x, 0x21);
    let pairs = low & ((low << 8) | prev);
    let maybe = zero_bytes(x ^ splat(0xC2)) | zero_bytes((x ^ splat(0xE0)) & splat(0xFC));
    (pairs | maybe, low)
}

/// The first byte at or after `start` that may change the line it is on (see
/// [`Lines::skip_unchanged`]): a `[`, a backtick, a possible start of multi-byte whitespace,
/// or the second of two adjacent bytes at or below `' '` (so a `\n` next to whitespace or to
/// another `\n`). Returns `bytes.len()` or the start of the last partial word when there is
/// none (the tail counts as an event; it may be inside a char). Conservative: the caller
/// trusts only what comes before it.
fn first_line_event(bytes: &[u8], start: usize) -> usize {
    let mut i = start;
    let mut prev = 0;
    while let Some(word) = bytes.get(i..i + 8).and_then(|w| w.try_into().ok()) {
        let x = u64::from_le_bytes(word);
        let (events, low) = word_events(x, prev);
        let events = events | zero_bytes(x ^ splat(b'[')) | zero_bytes(x ^ splat(b'`'));
        if events != 0 {
            return i + (events.trailing_zeros() / 8) as usize;
        }
        prev = low >> 56;
        i += 8;
    }
    i
}

/// The end of the run starting at `i` (a non-whitespace character) that the whitespace rules
/// leave unchanged: it stops before whitespace that is not a single one between ordinary
/// characters. Words of 8 bytes without any event are skipped at once; from a word with an
/// event on, the bytes are read one by one (exact rules) for a word before trying again.
fn unchanged_run(s: &str, mut i: usize) -> usize {
    let bytes = s.as_bytes();
    loop {
        // The byte before `i` is not whitespace here.
        let mut prev = 0;
        while let Some(word) = bytes.get(i..i + 8).and_then(|w| w.try_into().ok()) {
            let (events, low) = word_events(u64::from_le_bytes(word), prev);
            if events != 0 {
                break;
            }
            prev = low >> 56;
            i += 8;
        }
        if prev != 0 {
            // The last byte skipped may be a single whitespace: re-read it exactly, so a run
            // it starts with the next byte is seen.
            i -= 1;
        }
        let stop = i + 8;
        while i < stop {
            let Some(&b) = bytes.get(i) else {
                return i;
            };
            if is_ascii_whitespace(b) {
                match bytes.get(i + 1) {
                    Some(&next)
                        if !is_ascii_whitespace(next) && !maybe_multibyte_whitespace(next) =>
                    {
                        i += 2
                    }
                    _ => return i,
                }
            } else if maybe_multibyte_whitespace(b)
                && multibyte_whitespace_len(bytes.get(i..).unwrap_or_default()) > 0
            {
                return i;
            } else {
                // ASCII, a lead byte of a non-space, or a continuation byte.
                i += 1;
            }
        }
    }
}

/// The whitespace character starting at byte `i`, if any.
fn whitespace_at(s: &str, i: usize) -> Option<char> {
    let bytes = s.as_bytes();
    let b = *bytes.get(i)?;
    if is_ascii_whitespace(b) {
        Some(char::from(b))
    } else if maybe_multibyte_whitespace(b) && multibyte_whitespace_len(bytes.get(i..)?) > 0 {
        s.get(i..)?.chars().next()
    } else {
        None
    }
}

/// Writes one region of a line with whitespace runs of two or more collapsed to one space.
struct Collapser {
    /// Whitespace characters seen and not yet written.
    run: usize,
    /// The first character of that run (written as is when the run is one character long).
    run_char: char,
    /// Leading whitespace is dropped until something is written.
    trim_start: bool,
    wrote: bool,
}

impl Collapser {
    fn new(trim_start: bool) -> Self {
        Collapser {
            run: 0,
            run_char: ' ',
            trim_start,
            wrote: false,
        }
    }

    /// A collapser for the rest of a line whose start is written already.
    fn resumed() -> Self {
        Collapser {
            wrote: true,
            ..Collapser::new(true)
        }
    }

    fn whitespace(&mut self, c: char) {
        if self.run == 0 {
            self.run_char = c;
        }
        self.run += 1;
    }

    fn flush(&mut self, out: &mut String) {
        if self.run > 0 && (self.wrote || !self.trim_start) {
            out.push(if self.run >= 2 { ' ' } else { self.run_char });
        }
        self.run = 0;
        self.wrote = true;
    }

    fn feed(&mut self, out: &mut String, s: &str) {
        let bytes = s.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            if let Some(c) = whitespace_at(s, i) {
                self.whitespace(c);
                i += c.len_utf8();
                continue;
            }
            // A chunk that needs no change: ordinary characters and single whitespace
            // characters between them (a run of one is written as is).
            let begin = i;
            i = unchanged_run(s, i);
            self.flush(out);
            out.push_str(s.get(begin..i).unwrap_or_default());
        }
    }

    /// Ends the region keeping a pending whitespace run (more text follows on the line).
    fn finish_open(mut self, out: &mut String) {
        if self.run > 0 {
            self.flush(out);
        }
    }
}

/// Writes the region of `text` with the markers `remove` selects replaced by one space each;
/// returns how many were removed.
fn write_region(
    out: &mut String,
    text: &str,
    region: Range<usize>,
    collapser: &mut Collapser,
    remove: &impl Fn(MarkerKind) -> bool,
) -> usize {
    let mut removed = 0;
    let mut pos = region.start;
    for span in RegionMarkers::new(text, region.clone()) {
        if remove(span.kind) {
            collapser.feed(out, text.get(pos..span.range.start).unwrap_or_default());
            collapser.whitespace(' ');
            pos = span.range.end;
            removed += 1;
        }
    }
    collapser.feed(out, text.get(pos..region.end).unwrap_or_default());
    removed
}

fn strip_with(text: &str, remove: impl Fn(MarkerKind) -> bool) -> (String, usize) {
    strip_lines(text, remove, true)
}

/// The strip, line by line; with `copy_blocks`, unchanged prose is first copied a block at a
/// time ([`Lines::skip_unchanged`]), which must not change the result (a unit test checks).
fn strip_lines(
    text: &str,
    remove: impl Fn(MarkerKind) -> bool,
    copy_blocks: bool,
) -> (String, usize) {
    let mut out = String::with_capacity(text.len());
    let mut removed = 0;
    let mut lines = Lines::new(text);
    loop {
        let mut resume = None;
        if let Some(block) = copy_blocks.then(|| lines.skip_unchanged()).flatten() {
            if !out.is_empty() {
                out.push('\n');
            }
            if block.end > lines.pos {
                resume = Some(block.end);
            }
            out.push_str(text.get(block).unwrap_or_default());
        }
        let Some(line) = lines.next() else {
            break;
        };
        if let Some(at) = resume {
            // The start of this text line is written already (and is not whitespace).
            let mut collapser = Collapser::resumed();
            removed += write_region(&mut out, text, at..line.end, &mut collapser, &remove);
            continue;
        }
        let mark = out.len();
        if mark > 0 {
            out.push('\n');
        }
        let body = out.len();
        let verbatim = |out: &mut String, range: Range<usize>| {
            out.push_str(text.get(range).unwrap_or_default());
        };
        match line.kind {
            LineKind::Text => {
                let mut collapser = Collapser::new(true);
                removed += write_region(
                    &mut out,
                    text,
                    line.start..line.end,
                    &mut collapser,
                    &remove,
                );
            }
            LineKind::Code => verbatim(&mut out, line.start..line.end),
            LineKind::FenceOpen { code_at } => {
                let prefix = line.start..code_at;
                if RegionMarkers::new(text, prefix.clone()).next().is_some() {
                    let mut collapser = Collapser::new(true);
                    removed += write_region(&mut out, text, prefix, &mut collapser, &remove);
                    collapser.finish_open(&mut out);
                    verbatim(&mut out, code_at..line.end);
                } else {
                    verbatim(&mut out, line.start..line.end);
                }
            }
            LineKind::FenceClose { rest_at } => {
                verbatim(&mut out, line.start..rest_at);
                let mut collapser = Collapser::new(false);
                removed += write_region(&mut out, text, rest_at..line.end, &mut collapser, &remove);
            }
        }
        if out.len() == body && line.kind == LineKind::Text {
            out.truncate(mark);
        }
    }
    let end = out.trim_end().len();
    out.truncate(end);
    let lead = out.len() - out.trim_start().len();
    if lead > 0 {
        out.drain(..lead);
    }
    (out, removed)
}

#[cfg(test)]
mod tests {
    use super::{multibyte_whitespace_len, spans, strip_lines, Lines, MarkerKind, RegionMarkers};
    use proptest::prelude::*;

    /// Pieces around the fast paths' edges: whitespace pairs across `\n`, bytes the word
    /// tests flag that are no whitespace (controls, U+0800–U+0FFF, U+200B, U+180E), every
    /// multi-byte whitespace, markers, brackets and backticks at line starts.
    const PIECES: &[&str] = &[
        "word",
        "longer words here",
        "é",
        "日本",
        "\u{900}",
        "\u{200B}",
        "\u{180E}",
        "\u{FEFF}",
        "\u{1}",
        "\u{1F}",
        "\u{7F}",
        " ",
        " ",
        "  ",
        "\t",
        "\r",
        "\x0b",
        "\x0c",
        "\u{85}",
        "\u{A0}",
        "\u{1680}",
        "\u{2000}",
        "\u{200A}",
        "\u{2028}",
        "\u{2029}",
        "\u{202F}",
        "\u{205F}",
        "\u{3000}",
        "\n",
        "\n",
        "\r\n",
        "[",
        "]",
        "`",
        "```",
        "[NEXT: a]",
        "[DONE]",
        "[FROM: b]",
        "[NEXT: c",
    ];

    fn text() -> impl Strategy<Value = String> {
        proptest::collection::vec(proptest::sample::select(PIECES), 0..120)
            .prop_map(|pieces| pieces.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4000))]

        #[test]
        fn block_copy_fast_path_changes_no_output(text in text()) {
            for remove in [(|_| true) as fn(MarkerKind) -> bool, MarkerKind::is_routing] {
                prop_assert_eq!(strip_lines(&text, remove, true), strip_lines(&text, remove, false));
            }
        }

        #[test]
        fn skipping_markerless_lines_finds_the_same_spans(text in text()) {
            let every_line: Vec<_> = Lines::new(&text)
                .flat_map(|line| RegionMarkers::new(&text, line.marker_region()))
                .collect();
            prop_assert_eq!(spans(&text).collect::<Vec<_>>(), every_line);
        }
    }

    #[test]
    fn multibyte_whitespace_matches_char_is_whitespace_for_every_char() {
        for c in (0x80..=u32::from(char::MAX)).filter_map(char::from_u32) {
            let mut buf = [0; 4];
            let encoded = c.encode_utf8(&mut buf).as_bytes();
            let expected = if c.is_whitespace() { c.len_utf8() } else { 0 };
            assert_eq!(multibyte_whitespace_len(encoded), expected, "{c:?}");
        }
    }
}
