//! Route context (docs/architecture.md §7.4): the parent that fell out of the window, and sibling
//! answers to the same parent (policy `parent` only).

use crate::markers::{self, LineKind};

/// At most this many sibling answers are shown.
pub(crate) const MAX_RELATED: usize = 5;
/// Each sibling answer is capped at this many characters.
pub(crate) const RELATED_CHARS: usize = 200;

/// A sibling answer as shown in related context: fenced code blocks replaced by
/// `[code block omitted]`, then capped at [`RELATED_CHARS`] characters (an `…` marks the cut).
/// The agent needs the gist to avoid repeating it, not the code. Fences are read by the
/// marker parser's own rules ([`markers::line_spans`]), so what counts as code here is what
/// counts as code for routing (text after a closing run stays).
pub(crate) fn summarize_related(stripped: &str) -> String {
    let mut out = String::with_capacity(stripped.len().min(RELATED_CHARS * 4));
    let mut push_line = |line: &str| {
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(line);
    };
    for line in markers::line_spans(stripped) {
        let text = |range: std::ops::Range<usize>| stripped.get(range).unwrap_or_default().trim();
        match line.kind {
            LineKind::Text => push_line(text(line.range)),
            LineKind::FenceOpen { code_at } => {
                let before = text(line.range.start..code_at);
                if !before.is_empty() {
                    push_line(before);
                }
                push_line("[code block omitted]");
            }
            LineKind::Code => {}
            LineKind::FenceClose { rest_at } => {
                let rest = text(rest_at..line.range.end);
                if !rest.is_empty() {
                    push_line(rest);
                }
            }
        }
    }
    match out.char_indices().nth(RELATED_CHARS) {
        Some((cut, _)) => {
            out.truncate(cut);
            out.push('…');
            out
        }
        None => out,
    }
}
