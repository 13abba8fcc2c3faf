//! Scanning: lines classified by the fence rules and the markers of each line's marker region,
//! found fast (memchr jumps and word-at-a-time tests) with the grammar's [`probe`].

use std::ops::Range;

use memchr::memchr;

use super::grammar::{probe, Probe, FENCE};
use super::{LineKind, MarkerSpan};

/// The markers inside one region of one line.
pub(super) struct RegionMarkers<'a> {
    bytes: &'a [u8],
    pos: usize,
    limit: usize,
}

impl<'a> RegionMarkers<'a> {
    pub(super) fn new(text: &'a str, region: Range<usize>) -> Self {
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

pub(super) const fn is_ascii_whitespace(b: u8) -> bool {
    b == b' ' || (b >= b'\t' && b <= b'\r')
}

/// The first position at or after `from` (below `limit`) that is not whitespace.
pub(super) fn skip_whitespace(text: &str, from: usize, limit: usize) -> usize {
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

#[derive(Debug, Clone, Copy)]
pub(super) struct Line {
    pub(super) start: usize,
    /// Exclusive, before the `\n`.
    pub(super) end: usize,
    pub(super) kind: LineKind,
}

impl Line {
    /// The byte range where markers count.
    pub(super) fn marker_region(&self) -> Range<usize> {
        match self.kind {
            LineKind::Text => self.start..self.end,
            LineKind::FenceOpen { code_at } => self.start..code_at,
            LineKind::Code => self.end..self.end,
            LineKind::FenceClose { rest_at } => rest_at..self.end,
        }
    }
}

/// The lines of a text, classified by the fence rules of the module doc.
pub(super) struct Lines<'a> {
    text: &'a str,
    pub(super) pos: usize,
    /// The backtick count of the open fence's run, or 0 outside a fence: a fence closes only
    /// with a run at least as long (CommonMark's rule), so a ```` fence can show ``` examples.
    fence: usize,
    finished: bool,
    /// Set by [`Lines::skip_unchanged`]: the line at `pos` has no `\n` before this offset.
    no_newline_before: usize,
}

impl<'a> Lines<'a> {
    pub(super) fn new(text: &'a str) -> Self {
        Lines {
            text,
            pos: 0,
            fence: 0,
            finished: false,
            no_newline_before: 0,
        }
    }

    /// Skips, outside a fence, the lines before the next `[` or backtick: they hold no marker
    /// and open no fence. With neither left, no marker is left: the lines end. For [`super::spans`]
    /// only (the skipped lines are not returned).
    pub(super) fn skip_markerless(&mut self) {
        if self.fence != 0 || self.finished {
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
    pub(super) fn skip_unchanged(&mut self) -> Option<Range<usize>> {
        if self.fence != 0 || self.finished {
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
        let kind = if self.fence != 0 {
            let first = skip_whitespace(self.text, start, end);
            let run = backtick_run(bytes.get(first..end).unwrap_or_default());
            if run >= self.fence {
                self.fence = 0;
                LineKind::FenceClose {
                    rest_at: first + run,
                }
            } else {
                LineKind::Code
            }
        } else if let Some(code_at) = self.fence_open(start, end) {
            self.fence = backtick_run(bytes.get(code_at..end).unwrap_or_default());
            LineKind::FenceOpen { code_at }
        } else {
            LineKind::Text
        };
        Some(Line { start, end, kind })
    }
}

/// The number of backticks `bytes` starts with.
fn backtick_run(bytes: &[u8]) -> usize {
    bytes.iter().take_while(|&&b| b == b'`').count()
}

/// The byte length of the multi-byte whitespace character (Unicode White_Space beyond ASCII:
/// U+0085, U+00A0, U+1680, U+2000–U+200A, U+2028, U+2029, U+202F, U+205F, U+3000) that
/// `bytes` starts with, or 0. Matching the encoded bytes avoids decoding a `char` for every
/// non-ASCII character; a unit test checks it against `char::is_whitespace` for every char.
pub(super) fn multibyte_whitespace_len(bytes: &[u8]) -> usize {
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
pub(super) const fn maybe_multibyte_whitespace(b: u8) -> bool {
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

/// Bytes of `x` equal to `b`.
const fn eq(x: u64, b: u8) -> u64 {
    zero_bytes(x ^ splat(b))
}

/// Bytes that may end an unchanged run in the little-endian word `x`: the second of two
/// adjacent bytes at or below `' '` (every ASCII whitespace byte is; `prev` is the same mask
/// for the byte before the word, in the lowest byte) and starts of multi-byte whitespace,
/// matched exactly on the lead byte and the two after it (`x1`, `x2`: the words one and two
/// bytes further), so CJK punctuation, kana, dashes, curly quotes and emoji, which share
/// lead bytes with those spaces, never stop a scan. Returns (events, mask of bytes at or
/// below `' '`).
#[cfg_attr(
    all(target_arch = "wasm32", target_feature = "simd128"),
    allow(dead_code)
)]
const fn word_events(x: u64, x1: u64, x2: u64, prev: u64) -> (u64, u64) {
    let low = bytes_below(x, 0x21);
    let pairs = low & ((low << 8) | prev);
    // U+2000–U+200A, U+2028, U+2029, U+202F after E2 80; bytes_below needs a clear top bit.
    let general = bytes_below(x2 ^ splat(0x80), 0x0B) | eq(x2, 0xA8) | eq(x2, 0xA9) | eq(x2, 0xAF);
    let spaces = (eq(x, 0xC2) & (eq(x1, 0x85) | eq(x1, 0xA0)))
        | (eq(x, 0xE1) & eq(x1, 0x9A) & eq(x2, 0x80))
        | (eq(x, 0xE2) & ((eq(x1, 0x80) & general) | (eq(x1, 0x81) & eq(x2, 0x9F))))
        | (eq(x, 0xE3) & eq(x1, 0x80) & eq(x2, 0x80));
    (pairs | spaces, low)
}

/// Bytes the fast scans judge at a time: a `u64` word, or a 128-bit vector on wasm with SIMD.
pub(super) const BLOCK: usize = if cfg!(all(target_arch = "wasm32", target_feature = "simd128")) {
    16
} else {
    8
};

/// Bytes a block's test reads: the block and the two bytes after it (the rest of a
/// multi-byte space that starts in its last bytes).
pub(super) const READ: usize = BLOCK + 2;

/// The events of the first [`BLOCK`] bytes of `block` (see [`word_events`]; with `brackets`,
/// `[` and backticks too): the index of the first, if any, and whether the block's last byte
/// is at or below `' '` (the `prev_low` of the next block).
#[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
#[inline(always)]
pub(super) fn block_events(
    block: &[u8; READ],
    prev_low: bool,
    brackets: bool,
) -> (Option<usize>, bool) {
    // Destructured, not sliced: at opt-level "z" a slice copy may stay a call per word.
    let [a, b, c, d, e, f, g, h, i, j] = *block;
    let x = u64::from_le_bytes([a, b, c, d, e, f, g, h]);
    let x1 = u64::from_le_bytes([b, c, d, e, f, g, h, i]);
    let x2 = u64::from_le_bytes([c, d, e, f, g, h, i, j]);
    let (mut events, low) = word_events(x, x1, x2, if prev_low { 0x80 } else { 0 });
    if brackets {
        events |= eq(x, b'[') | eq(x, b'`');
    }
    let first = (events != 0).then_some((events.trailing_zeros() / 8) as usize);
    (first, low >> 63 != 0)
}

/// [`block_events`] on 16 bytes in a wasm SIMD vector: the same tests, one lane per byte.
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
#[inline(always)]
pub(super) fn block_events(
    block: &[u8; READ],
    prev_low: bool,
    brackets: bool,
) -> (Option<usize>, bool) {
    use core::arch::wasm32::{
        i8x16_shuffle, u64x2, u8x16_bitmask, u8x16_eq, u8x16_ge, u8x16_le, u8x16_splat, v128,
        v128_and, v128_or,
    };
    let [b0, b1, b2, b3, b4, b5, b6, b7, b8, b9, b10, b11, b12, b13, b14, b15, b16, b17] = *block;
    let x = u64x2(
        u64::from_le_bytes([b0, b1, b2, b3, b4, b5, b6, b7]),
        u64::from_le_bytes([b8, b9, b10, b11, b12, b13, b14, b15]),
    );
    #[inline(always)]
    fn eq(v: v128, b: u8) -> v128 {
        u8x16_eq(v, u8x16_splat(b))
    }
    let low = u32::from(u8x16_bitmask(u8x16_le(x, u8x16_splat(b' '))));
    let pairs = low & ((low << 1) | u32::from(prev_low));
    let mut special = if brackets {
        v128_or(eq(x, b'['), eq(x, b'`'))
    } else {
        u8x16_splat(0)
    };
    // Lead bytes of the multi-byte spaces (C2, E1–E3: E0 too, one test); only a block that
    // has one pays for the exact match of the bytes after it, as in `word_events`.
    let leads = v128_or(eq(x, 0xC2), eq(v128_and(x, u8x16_splat(0xFC)), 0xE0));
    if u8x16_bitmask(leads) != 0 {
        // The block one and two bytes on: shuffles of it and the two bytes after it.
        let y = u64x2(u64::from(u16::from_le_bytes([b16, b17])), 0);
        let x1 = i8x16_shuffle::<1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16>(x, y);
        let x2 = i8x16_shuffle::<2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17>(x, y);
        let general = v128_or(
            v128_and(
                u8x16_ge(x2, u8x16_splat(0x80)),
                u8x16_le(x2, u8x16_splat(0x8A)),
            ),
            v128_or(v128_or(eq(x2, 0xA8), eq(x2, 0xA9)), eq(x2, 0xAF)),
        );
        let e2 = v128_or(
            v128_and(eq(x1, 0x80), general),
            v128_and(eq(x1, 0x81), eq(x2, 0x9F)),
        );
        let spaces = v128_or(
            v128_or(
                v128_and(eq(x, 0xC2), v128_or(eq(x1, 0x85), eq(x1, 0xA0))),
                v128_and(eq(x, 0xE1), v128_and(eq(x1, 0x9A), eq(x2, 0x80))),
            ),
            v128_or(
                v128_and(eq(x, 0xE2), e2),
                v128_and(eq(x, 0xE3), v128_and(eq(x1, 0x80), eq(x2, 0x80))),
            ),
        );
        special = v128_or(special, spaces);
    }
    let events = pairs | u32::from(u8x16_bitmask(special));
    let first = (events != 0).then_some(events.trailing_zeros() as usize);
    (first, low & 0x8000 != 0)
}

/// The first byte at or after `start` that may change the line it is on (see
/// [`Lines::skip_unchanged`]): a `[`, a backtick, a possible start of multi-byte whitespace,
/// or the second of two adjacent bytes at or below `' '` (so a `\n` next to whitespace or to
/// another `\n`). Returns `bytes.len()` or the start of the last partial read when there is
/// none (the tail counts as an event; it may be inside a char). Conservative: the caller
/// trusts only what comes before it.
fn first_line_event(bytes: &[u8], start: usize) -> usize {
    let mut i = start;
    let mut prev_low = false;
    while let Some(block) = bytes.get(i..i + READ).and_then(|b| b.try_into().ok()) {
        let (first, last_low) = block_events(block, prev_low, true);
        if let Some(at) = first {
            return i + at;
        }
        prev_low = last_low;
        i += BLOCK;
    }
    i
}
