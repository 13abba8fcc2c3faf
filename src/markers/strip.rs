//! Stripping: markers replaced by one space, whitespace runs collapsed per line, prose the
//! rules leave unchanged copied a block at a time. The output stays a range of the input
//! (no copy) for as long as every piece written continues it.

use std::borrow::Cow;
use std::ops::Range;

use super::grammar::Found;
use super::scan::{
    block_events, is_ascii_whitespace, maybe_multibyte_whitespace, multibyte_whitespace_len, Lines,
    RegionMarkers, BLOCK, READ,
};
use super::{LineKind, MarkerKind};

/// The end of the run starting at `i` (a non-whitespace character) that the whitespace rules
/// leave unchanged: it stops before whitespace that is not a single one between ordinary
/// characters. Blocks ([`BLOCK`] bytes) without any event are skipped at once; from a block
/// with an event on, the bytes are read one by one (exact rules) for a block before trying
/// again.
fn unchanged_run(s: &str, mut i: usize) -> usize {
    let bytes = s.as_bytes();
    loop {
        // The byte before `i` is not whitespace here.
        let mut prev_low = false;
        while let Some(block) = bytes.get(i..i + READ).and_then(|b| b.try_into().ok()) {
            let (first, last_low) = block_events(block, prev_low, false);
            if first.is_some() {
                break;
            }
            prev_low = last_low;
            i += BLOCK;
        }
        if prev_low {
            // The last byte skipped may be a single whitespace: re-read it exactly, so a run
            // it starts with the next byte is seen.
            i -= 1;
        }
        let stop = i + BLOCK;
        while i < stop {
            let Some(&b) = bytes.get(i) else {
                return i;
            };
            if is_ascii_whitespace(b) {
                let rest = bytes.get(i + 1..).unwrap_or_default();
                match rest.first() {
                    Some(&next)
                        if !is_ascii_whitespace(next) && multibyte_whitespace_len(rest) == 0 =>
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

/// The stripped text as it is written: a range of the input while every piece written
/// continues it (prose the rules leave alone, the common case), a string of its own from the
/// first piece that does not. So a strip that changes nothing inside the text copies nothing.
/// The `\n` before a line is written with the line's first piece, so a line that turns out
/// empty (and is removed) leaves nothing behind.
struct Out<'t> {
    text: &'t str,
    written: Written,
    /// A `\n` is due before the next piece.
    line_break: bool,
}

enum Written {
    View(Range<usize>),
    Owned(String),
}

impl<'t> Out<'t> {
    fn new(text: &'t str) -> Self {
        Out {
            text,
            written: Written::View(0..0),
            line_break: false,
        }
    }

    fn is_empty(&self) -> bool {
        match &self.written {
            Written::View(range) => range.start == range.end,
            Written::Owned(s) => s.is_empty(),
        }
    }

    /// Starts a line: a `\n` goes before its first piece unless nothing was written yet.
    fn start_line(&mut self) {
        self.line_break = !self.is_empty();
    }

    /// Ends a line: an empty one keeps its `\n` only if `keep_empty`.
    fn end_line(&mut self, keep_empty: bool) {
        if keep_empty {
            self.break_if_due();
        }
        self.line_break = false;
    }

    /// Writes the `\n` due before this line's first piece.
    fn break_if_due(&mut self) {
        if self.line_break {
            self.line_break = false;
            self.write_char('\n');
        }
    }

    /// The output as a string of its own, from here on.
    fn owned(&mut self) -> &mut String {
        if let Written::View(range) = &self.written {
            let mut s = String::with_capacity(self.text.len());
            s.push_str(self.text.get(range.clone()).unwrap_or_default());
            self.written = Written::Owned(s);
        }
        match &mut self.written {
            Written::Owned(s) => s,
            Written::View(_) => unreachable!("made owned just above"),
        }
    }

    /// Writes the input's bytes `piece`.
    fn push_range(&mut self, piece: Range<usize>) {
        if piece.is_empty() {
            return;
        }
        self.break_if_due();
        match &mut self.written {
            Written::View(range) if range.start == range.end => *range = piece,
            Written::View(range) if range.end == piece.start => range.end = piece.end,
            _ => {
                let text = self.text;
                self.owned().push_str(text.get(piece).unwrap_or_default());
            }
        }
    }

    /// Writes `c`: still a view when the input goes on with that very character.
    fn push(&mut self, c: char) {
        self.break_if_due();
        self.write_char(c);
    }

    fn write_char(&mut self, c: char) {
        if let Written::View(range) = &mut self.written {
            let rest = self.text.get(range.end..).unwrap_or_default();
            if range.start != range.end && rest.starts_with(c) {
                range.end += c.len_utf8();
                return;
            }
        }
        self.owned().push(c);
    }

    /// The result with whitespace trimmed off both ends.
    fn trimmed(self) -> Cow<'t, str> {
        match self.written {
            Written::View(range) => Cow::Borrowed(self.text.get(range).unwrap_or_default().trim()),
            Written::Owned(mut s) => {
                s.truncate(s.trim_end().len());
                let lead = s.len() - s.trim_start().len();
                s.drain(..lead);
                Cow::Owned(s)
            }
        }
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

    fn flush(&mut self, out: &mut Out) {
        if self.run > 0 && (self.wrote || !self.trim_start) {
            out.push(if self.run >= 2 { ' ' } else { self.run_char });
        }
        self.run = 0;
        self.wrote = true;
    }

    /// Feeds the input's bytes `region`.
    fn feed(&mut self, out: &mut Out, region: Range<usize>) {
        // The text up to the region's end (the same offsets): no rule looks past the region.
        let s = out.text.get(..region.end).unwrap_or_default();
        let mut i = region.start;
        while i < region.end {
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
            out.push_range(begin..i);
        }
    }

    /// Ends the region keeping a pending whitespace run (more text follows on the line).
    fn finish_open(mut self, out: &mut Out) {
        if self.run > 0 {
            self.flush(out);
        }
    }
}

/// Writes the region of `text` with the markers `remove` selects replaced by one space each;
/// returns how many were removed. Every marker of the region is also added to `found`.
fn write_region<'t>(
    out: &mut Out<'t>,
    region: Range<usize>,
    collapser: &mut Collapser,
    remove: &impl Fn(MarkerKind) -> bool,
    found: &mut Option<Found<'t>>,
) -> usize {
    let mut removed = 0;
    let mut pos = region.start;
    let text = out.text;
    for span in RegionMarkers::new(text, region.clone()) {
        if let Some(found) = found {
            found.add(
                span.kind,
                text.get(span.value.clone()).unwrap_or_default().trim(),
            );
        }
        if remove(span.kind) {
            collapser.feed(out, pos..span.range.start);
            collapser.whitespace(' ');
            pos = span.range.end;
            removed += 1;
        }
    }
    collapser.feed(out, pos..region.end);
    removed
}

/// [`super::parse`] and the stored-content view in one pass.
pub(super) fn parse_and_strip_routing(text: &str) -> (super::Markers, Cow<'_, str>) {
    let mut found = Some(Found::default());
    let (view, _) = strip_lines(text, MarkerKind::is_routing, true, &mut found);
    (found.unwrap_or_default().into_markers(), view)
}

pub(super) fn strip_with(text: &str, remove: impl Fn(MarkerKind) -> bool) -> (Cow<'_, str>, usize) {
    strip_lines(text, remove, true, &mut None)
}

/// The strip, line by line; with `copy_blocks`, unchanged prose is first copied a block at a
/// time ([`Lines::skip_unchanged`]), which must not change the result (a unit test checks).
/// Every marker met is added to `found` (when given): the markers of [`super::spans`], since
/// the lines not written region by region hold none.
fn strip_lines<'t>(
    text: &'t str,
    remove: impl Fn(MarkerKind) -> bool,
    copy_blocks: bool,
    found: &mut Option<Found<'t>>,
) -> (Cow<'t, str>, usize) {
    let mut out = Out::new(text);
    let mut removed = 0;
    let mut lines = Lines::new(text);
    loop {
        let mut resume = None;
        if let Some(block) = copy_blocks.then(|| lines.skip_unchanged()).flatten() {
            out.start_line();
            if block.end > lines.pos {
                resume = Some(block.end);
            }
            out.push_range(block);
            out.end_line(false);
        }
        let Some(line) = lines.next() else {
            break;
        };
        if let Some(at) = resume {
            // The start of this text line is written already (and is not whitespace).
            let mut collapser = Collapser::resumed();
            removed += write_region(&mut out, at..line.end, &mut collapser, &remove, found);
            continue;
        }
        out.start_line();
        match line.kind {
            LineKind::Text => {
                let mut collapser = Collapser::new(true);
                removed += write_region(
                    &mut out,
                    line.start..line.end,
                    &mut collapser,
                    &remove,
                    found,
                );
            }
            LineKind::Code => out.push_range(line.start..line.end),
            LineKind::FenceOpen { code_at } => {
                let prefix = line.start..code_at;
                if RegionMarkers::new(text, prefix.clone()).next().is_some() {
                    let mut collapser = Collapser::new(true);
                    removed += write_region(&mut out, prefix, &mut collapser, &remove, found);
                    collapser.finish_open(&mut out);
                    out.push_range(code_at..line.end);
                } else {
                    out.push_range(line.start..line.end);
                }
            }
            LineKind::FenceClose { rest_at } => {
                out.push_range(line.start..rest_at);
                let mut collapser = Collapser::new(false);
                removed +=
                    write_region(&mut out, rest_at..line.end, &mut collapser, &remove, found);
            }
        }
        out.end_line(line.kind != LineKind::Text);
    }
    (out.trimmed(), removed)
}

#[cfg(test)]
mod tests {
    use super::{multibyte_whitespace_len, strip_lines, Lines, MarkerKind, RegionMarkers};
    use crate::markers::spans;
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
        // Neighbours of the multi-byte spaces, matched on all their bytes: CJK punctuation
        // and kana (E3 80/81 ..), dashes, quotes, the joiner (E2 80 ..), U+205E, U+1681,
        // U+A1, and emoji.
        "\u{3001}",
        "。",
        "レ",
        "\u{3080}",
        "\u{200D}",
        "—",
        "“",
        "\u{2027}",
        "\u{2030}",
        "\u{205E}",
        "\u{1681}",
        "\u{A1}",
        "✅",
        "👍🏽",
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
                prop_assert_eq!(
                    strip_lines(&text, remove, true, &mut None),
                    strip_lines(&text, remove, false, &mut None)
                );
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
