//! The marker grammar read plainly: one line at a time, markers found by a `regex` pattern,
//! fences tracked by their opening run's length, whitespace runs collapsed character by character. Written for clarity,
//! not speed, from the module doc of [`crate::markers`] alone (no code shared with the fast
//! engine), so the two can be held to each other: the `markers` fuzz target and a property
//! test require the same output from both on every input, and the `parse` bench times both
//! (the card's trial of `regex` for this job; figures in `docs/markers.md`).
//!
//! Behind the `reference` feature (it pulls in `regex`, which the product does not need).
//!
//! One trap the plain reading must avoid: marker names are ASCII case-insensitive, while a
//! Unicode `(?i)` pattern would also accept `[TEAM_TAſK: x]` (U+017F folds to `s`) and the
//! Kelvin sign for `K`; the names are matched with `(?i-u:…)`.

use std::sync::OnceLock;

use regex::Regex;

use super::{DropTargets, LineKind, LineSpan, MarkerKind, MarkerSpan, Markers};
use crate::message::{Addressee, Intent};

/// One marker: `[NAME:VALUE]` with VALUE up to the first `]`, or `[DONE]`.
const MARKER: &str = r"\[(?:(?i-u:(FROM|TEAM_TASK|NEXT|DROP)):([^\]]*)\]|(?i-u:DONE)\])";

fn pattern(cell: &'static OnceLock<Regex>, source: impl FnOnce() -> String) -> &'static Regex {
    cell.get_or_init(|| Regex::new(&source()).expect("the reference patterns are valid"))
}

fn marker() -> &'static Regex {
    static CELL: OnceLock<Regex> = OnceLock::new();
    pattern(&CELL, || MARKER.to_string())
}

/// A line that opens a fence: whitespace and markers, then a run of three or more backticks
/// (`run`).
fn fence_open() -> &'static Regex {
    static CELL: OnceLock<Regex> = OnceLock::new();
    pattern(&CELL, || format!(r"^\s*(?:{MARKER}\s*)*(?P<run>```+)"))
}

/// A line that may close a fence: whitespace, then a run of three or more backticks (`run`);
/// it closes one whose opening run is no longer.
fn fence_close() -> &'static Regex {
    static CELL: OnceLock<Regex> = OnceLock::new();
    pattern(&CELL, || r"^\s*(?P<run>```+)".to_string())
}

/// Runs of two or more whitespace characters become one space; a single one stays as written.
fn collapse_whitespace(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut run: Vec<char> = Vec::new();
    let flush = |out: &mut String, run: &mut Vec<char>| {
        match run.as_slice() {
            [] => {}
            [single] => out.push(*single),
            _ => out.push(' '),
        }
        run.clear();
    };
    for c in s.chars() {
        if c.is_whitespace() {
            run.push(c);
        } else {
            flush(&mut out, &mut run);
            out.push(c);
        }
    }
    flush(&mut out, &mut run);
    out
}

/// Every line (split on `\n`) with its fence role.
pub fn line_spans(text: &str) -> Vec<LineSpan> {
    // The backtick count of the open fence's run; 0 outside a fence.
    let mut fence = 0;
    let mut start = 0;
    let mut lines = Vec::new();
    for line in text.split('\n') {
        // Every fence line holds three backticks; skipping the patterns on other lines only
        // saves time.
        let kind = if !line.contains("```") {
            if fence != 0 {
                LineKind::Code
            } else {
                LineKind::Text
            }
        } else if fence != 0 {
            match fence_close().captures(line).and_then(|c| c.name("run")) {
                Some(run) if run.len() >= fence => {
                    fence = 0;
                    LineKind::FenceClose {
                        rest_at: start + run.end(),
                    }
                }
                _ => LineKind::Code,
            }
        } else {
            match fence_open().captures(line).and_then(|c| c.name("run")) {
                Some(run) => {
                    fence = run.len();
                    LineKind::FenceOpen {
                        code_at: start + run.start(),
                    }
                }
                None => LineKind::Text,
            }
        };
        lines.push(LineSpan {
            range: start..start + line.len(),
            kind,
        });
        start += line.len() + 1;
    }
    lines
}

/// The part of a line where markers count.
fn marker_region(line: &LineSpan) -> std::ops::Range<usize> {
    match line.kind {
        LineKind::Text => line.range.clone(),
        LineKind::FenceOpen { code_at } => line.range.start..code_at,
        LineKind::Code => line.range.end..line.range.end,
        LineKind::FenceClose { rest_at } => rest_at..line.range.end,
    }
}

fn kind_of(name: &str) -> MarkerKind {
    match name.to_ascii_uppercase().as_str() {
        "FROM" => MarkerKind::From,
        "TEAM_TASK" => MarkerKind::TeamTask,
        "NEXT" => MarkerKind::Next,
        _ => MarkerKind::Drop,
    }
}

/// The markers of `text[region]`, with offsets into `text`.
fn region_spans(text: &str, region: std::ops::Range<usize>) -> Vec<MarkerSpan> {
    let base = region.start;
    if !text[region.clone()].contains('[') {
        return Vec::new();
    }
    marker()
        .captures_iter(&text[region])
        .map(|caps| {
            let whole = caps.get(0).expect("group 0 is the match");
            let range = base + whole.start()..base + whole.end();
            match (caps.get(1), caps.get(2)) {
                (Some(name), Some(value)) => MarkerSpan {
                    range,
                    value: base + value.start()..base + value.end(),
                    kind: kind_of(name.as_str()),
                },
                _ => MarkerSpan {
                    value: range.end - 1..range.end - 1,
                    range,
                    kind: MarkerKind::Done,
                },
            }
        })
        .collect()
}

/// Every marker outside fenced code, in order.
pub fn spans(text: &str) -> Vec<MarkerSpan> {
    line_spans(text)
        .iter()
        .flat_map(|line| region_spans(text, marker_region(line)))
        .collect()
}

/// `name!P1` → (`name`, P1); whitespace before `!` is dropped; no suffix means P2.
fn split_intent(item: &str) -> (&str, Intent) {
    for (suffix, intent) in [("1", Intent::P1), ("2", Intent::P2), ("3", Intent::P3)] {
        for p in ["!P", "!p"] {
            if let Some(name) = item.strip_suffix(suffix).and_then(|s| s.strip_suffix(p)) {
                return (name.trim_end(), intent);
            }
        }
    }
    (item, Intent::P2)
}

/// The meaning of the markers of `text`.
pub fn parse(text: &str) -> Markers {
    let mut markers = Markers::default();
    let mut drop_names: Vec<String> = Vec::new();
    let mut drop_all = false;
    for span in spans(text) {
        let value = text[span.value].trim();
        match span.kind {
            MarkerKind::From if markers.from.is_none() && !value.is_empty() => {
                markers.from = Some(value.to_string());
            }
            MarkerKind::From => {}
            MarkerKind::TeamTask => markers.team_task = Some(value.to_string()),
            MarkerKind::Done => markers.done = true,
            MarkerKind::Next => {
                for item in value.split(',') {
                    let (name, intent) = split_intent(item.trim());
                    if !name.is_empty() {
                        markers.next.push(Addressee {
                            name: name.to_string(),
                            intent,
                        });
                    }
                }
            }
            MarkerKind::Drop => {
                for item in value.split(',') {
                    let name = split_intent(item.trim()).0;
                    if name.eq_ignore_ascii_case("all") {
                        drop_all = true;
                    } else if !name.is_empty() && !drop_names.iter().any(|n| n == name) {
                        drop_names.push(name.to_string());
                    }
                }
            }
        }
    }
    markers.drop = if drop_all {
        Some(DropTargets::All)
    } else if drop_names.is_empty() {
        None
    } else {
        Some(DropTargets::Members(drop_names))
    };
    markers
}

/// `text[region]` with the selected markers replaced by one space each, whitespace runs of
/// two or more collapsed to one space.
fn strip_region(
    text: &str,
    region: std::ops::Range<usize>,
    remove: fn(MarkerKind) -> bool,
    removed: &mut usize,
) -> String {
    let mut replaced = String::new();
    let mut pos = region.start;
    for span in region_spans(text, region.clone()) {
        if remove(span.kind) {
            replaced.push_str(&text[pos..span.range.start]);
            replaced.push(' ');
            pos = span.range.end;
            *removed += 1;
        }
    }
    replaced.push_str(&text[pos..region.end]);
    collapse_whitespace(&replaced)
}

/// The strip of the module doc; returns the text and the number of markers removed.
fn strip(text: &str, remove: fn(MarkerKind) -> bool) -> (String, usize) {
    let mut removed = 0;
    let mut lines: Vec<String> = Vec::new();
    for line in line_spans(text) {
        let (start, end) = (line.range.start, line.range.end);
        match line.kind {
            LineKind::Text => {
                let stripped = strip_region(text, start..end, remove, &mut removed);
                if !stripped.trim().is_empty() {
                    lines.push(stripped.trim().to_string());
                }
            }
            LineKind::Code => lines.push(text[start..end].to_string()),
            LineKind::FenceOpen { code_at } => {
                if region_spans(text, start..code_at).is_empty() {
                    lines.push(text[start..end].to_string());
                } else {
                    let prefix = strip_region(text, start..code_at, remove, &mut removed);
                    lines.push(format!("{}{}", prefix.trim_start(), &text[code_at..end]));
                }
            }
            LineKind::FenceClose { rest_at } => {
                let rest = strip_region(text, rest_at..end, remove, &mut removed);
                lines.push(format!("{}{}", &text[start..rest_at], rest.trim_end()));
            }
        }
    }
    (lines.join("\n").trim().to_string(), removed)
}

/// The agent view (every marker removed).
pub fn strip_all_counted(text: &str) -> (String, usize) {
    strip(text, |_| true)
}

/// The stored-content view (NEXT, DONE, DROP removed).
pub fn strip_routing_counted(text: &str) -> (String, usize) {
    strip(text, MarkerKind::is_routing)
}
