//! Route context (DESIGN §7.4): the parent that fell out of the window, and sibling answers to
//! the same parent (policy `parent` only).

/// At most this many sibling answers are shown.
pub const MAX_RELATED: usize = 5;
/// Each sibling answer is capped at this many characters.
pub const RELATED_CHARS: usize = 200;

/// A sibling answer as shown in related context: fenced code blocks replaced by
/// `[code block omitted]`, then capped at [`RELATED_CHARS`] characters (an `…` marks the cut).
/// The agent needs the gist to avoid repeating it, not the code.
pub fn summarize_related(stripped: &str) -> String {
    let mut out = String::with_capacity(stripped.len().min(RELATED_CHARS * 4));
    let mut in_fence = false;
    for line in stripped.lines() {
        let is_fence = line.trim_start().starts_with("```");
        if is_fence {
            if !in_fence {
                if !out.is_empty() {
                    out.push('\n');
                }
                out.push_str("[code block omitted]");
            }
            in_fence = !in_fence;
            continue;
        }
        if in_fence {
            continue;
        }
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(line);
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
