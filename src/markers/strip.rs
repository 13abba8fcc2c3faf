//! Stripping: markers replaced by one space, whitespace runs collapsed per line, prose the
//! rules leave unchanged copied a block at a time.

use std::ops::Range;

use super::scan::{
    is_ascii_whitespace, maybe_multibyte_whitespace, multibyte_whitespace_len, word_events, Lines,
    RegionMarkers,
};
use super::{LineKind, MarkerKind};

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

pub(super) fn strip_with(text: &str, remove: impl Fn(MarkerKind) -> bool) -> (String, usize) {
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
