//! Byte budget (docs/architecture.md §9): trim a [`Layout`] so that `prompt.len() +
//! system_flag.len() <= max_bytes`, always, then render it once.
//!
//! Trim order: related answers (oldest first) → compactable extra sections (highest priority
//! first) → the parent line (cut to 1 KiB) → history lines, oldest first (the pinned first
//! message last) → the parent line → the message body, cut at a character boundary with a
//! visible `…[truncated N bytes]` note → the system body, the same way → the team task →
//! non-compactable extra sections → the message as a last resort. The message is never cut
//! while a history line remains, and every cut is listed in the explain.
//!
//! Every step works on byte counts, not on rendered text: history trimming is one pass over
//! precomputed line lengths (O(window)), never one render per dropped line (the peer's loop is
//! quadratic) and never a regex over the output.

use std::borrow::Cow;

use crate::assemble::{Body, Layout, LineText, Role, Section, MESSAGE_SECTION};
use crate::explain::{BudgetStatus, SectionExplain, Truncation};
use crate::team::CompactionStrategy;
use crate::tokens::{estimate_chars_div4, TokenEstimator};

/// The parent line is cut to this many bytes before history is touched (docs/architecture.md §9).
pub(crate) const PARENT_CUT_BYTES: usize = 1024;

pub(crate) use crate::text::floor_char_boundary;

/// The visible note that ends a cut body.
pub(crate) fn truncation_note(removed: usize) -> String {
    format!("…[truncated {removed} bytes]")
}

/// Cuts `text` so that it plus its truncation note fit in `max` bytes. `None` when not even
/// the note fits.
pub(crate) fn cut_with_note(text: &str, max: usize) -> Option<String> {
    if text.len() <= max {
        return Some(text.to_string());
    }
    // The note for `text.len()` removed bytes is the longest possible, so reserving it is safe.
    let room = max.checked_sub(truncation_note(text.len()).len())?;
    let keep = floor_char_boundary(text, room);
    let mut out = String::with_capacity(max);
    out.push_str(&text[..keep]);
    out.push_str(&truncation_note(text.len() - keep));
    Some(out)
}

/// A prompt that fits, with what fitting did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Fitted {
    pub prompt: String,
    pub system_flag: Option<String>,
    pub sections: Vec<SectionExplain>,
    pub truncations: Vec<Truncation>,
    /// Positions of the messages whose history line was dropped for the budget, ascending.
    pub trimmed: Vec<usize>,
    /// Positions of the related answers dropped for the budget.
    pub dropped_related: Vec<usize>,
    /// The parent line was dropped for the budget.
    pub parent_dropped: bool,
    /// The message itself was cut to nothing: the prompt answers no message.
    pub message_dropped: bool,
    pub total_bytes: usize,
    pub total_tokens: Option<usize>,
    pub status: BudgetStatus,
}

/// Budget settings of one fit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Budget {
    pub max_bytes: usize,
    pub strategy: CompactionStrategy,
    /// The estimate reported in the explain ([`TokenEstimator::with_budget`] applies).
    pub tokens: TokenEstimator,
    /// Optional token budget: `total_tokens <= max_tokens` holds beside the byte bound.
    pub max_tokens: Option<usize>,
}

/// The highest byte count whose status is still `Ok` (just under the 75% warning line).
pub(crate) fn headroom_target(max_bytes: usize) -> usize {
    (max_bytes.saturating_mul(3)).saturating_sub(1) / 4
}

/// Trims `layout` into `budget` and renders it: `total_bytes <= max_bytes` always, and
/// `total_tokens <= max_tokens` too when a token budget is set.
///
/// The token budget reuses the byte trimmer (same order, same guarantees: characters never
/// split, the message cut last) with a tighter byte target. `chars/4` of a text is at most its
/// bytes / 4, so a byte target of `4 × max_tokens` (one token less when the Claude flag is a
/// second part, for rounding) always keeps the token bound. That bound over-trims non-ASCII
/// text, so two closer targets are tried first: the byte budget itself (the token budget may
/// not bind at all) and one scaled by the layout's own bytes-per-token.
pub(crate) fn fit(layout: Layout<'_>, budget: Budget) -> Fitted {
    let estimator = budget.tokens.with_budget(budget.max_tokens);
    let Some(max_tokens) = budget.max_tokens else {
        return fit_bytes(layout, budget, budget.max_bytes, estimator);
    };
    let has_flag = layout.system_flag.as_ref().is_some_and(Section::is_emitted);
    let safe = max_tokens
        .saturating_sub(usize::from(has_flag))
        .saturating_mul(4)
        .min(budget.max_bytes);
    let first = fit_bytes(layout.clone(), budget, budget.max_bytes, estimator);
    let tokens = first.total_tokens.unwrap_or(0);
    if tokens <= max_tokens {
        return first;
    }
    // Bytes per token of what the first fit emitted, applied to the token budget.
    let scaled = (first.total_bytes as u128 * max_tokens as u128 / tokens.max(1) as u128) as usize;
    if scaled > safe {
        let second = fit_bytes(layout.clone(), budget, scaled, estimator);
        if second.total_tokens.unwrap_or(0) <= max_tokens {
            return second;
        }
    }
    fit_bytes(layout, budget, safe, estimator)
}

/// The byte trimmer: fits `layout` into `target` bytes (`target <= budget.max_bytes`).
fn fit_bytes(
    layout: Layout<'_>,
    budget: Budget,
    target: usize,
    estimator: TokenEstimator,
) -> Fitted {
    // Sections with content before trimming are reported, even when trimmed away.
    let had_content: Vec<bool> = layout
        .system_flag
        .iter()
        .chain(layout.sections.iter())
        .map(Section::is_emitted)
        .collect();
    let mut f = Fitter {
        layout,
        truncations: Vec::new(),
        trimmed: Vec::new(),
        dropped_related: Vec::new(),
        parent_dropped: false,
    };

    if budget.strategy == CompactionStrategy::Proactive
        && BudgetStatus::of(f.layout.total_len(), target) >= BudgetStatus::Warning
    {
        f.compact(headroom_target(target));
    }
    f.compact(target);
    f.last_resort(target);

    let Fitter {
        layout,
        truncations,
        mut trimmed,
        dropped_related,
        parent_dropped,
    } = f;
    trimmed.sort_unstable();
    let prompt = layout.render_prompt();
    let system_flag = layout.render_flag();
    let total_bytes = prompt.len() + system_flag.as_ref().map_or(0, String::len);
    debug_assert!(total_bytes <= target);

    let tokens_of = |s: &Section| match estimator {
        TokenEstimator::None => None,
        TokenEstimator::CharsDiv4 => Some(if s.is_emitted() {
            estimate_chars_div4(&s.render())
        } else {
            0
        }),
    };
    let in_flag = layout.system_flag.is_some();
    let sections = layout
        .system_flag
        .iter()
        .map(|s| (s, true))
        .chain(layout.sections.iter().map(|s| (s, false)))
        .zip(had_content)
        .filter(|(_, had)| *had)
        .map(|((s, flag), _)| SectionExplain {
            name: s.name.to_string(),
            bytes: s.len(),
            tokens: tokens_of(s),
            in_system_flag: flag && in_flag,
        })
        .collect();
    let total_tokens = match estimator {
        TokenEstimator::None => None,
        TokenEstimator::CharsDiv4 => Some(
            estimate_chars_div4(&prompt) + system_flag.as_deref().map_or(0, estimate_chars_div4),
        ),
    };
    let token_status = match (total_tokens, budget.max_tokens) {
        (Some(used), Some(max)) => BudgetStatus::of(used, max),
        _ => BudgetStatus::Ok,
    };
    // A cut message, system part or team task is never "ok", however little of the budget
    // the rest uses: the agent does not get what it was asked, or the instructions it works
    // under (with no message yet, a cut system part is the whole story).
    let message_dropped = truncations
        .iter()
        .any(|t| t.section == MESSAGE_SECTION && t.to_bytes == 0);
    let essential_cut = truncations
        .iter()
        .any(|t| matches!(t.section.as_str(), MESSAGE_SECTION | "system" | "teamTask"));
    let cut_status = if essential_cut {
        BudgetStatus::Critical
    } else {
        BudgetStatus::Ok
    };
    Fitted {
        prompt,
        system_flag,
        sections,
        truncations,
        trimmed,
        dropped_related,
        parent_dropped,
        message_dropped,
        total_bytes,
        total_tokens,
        status: BudgetStatus::of(total_bytes, budget.max_bytes)
            .max(token_status)
            .max(cut_status),
    }
}

/// What a cut may do when not even the truncation note fits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cut {
    KeepNote,
    MayDrop,
}

struct Fitter<'a> {
    layout: Layout<'a>,
    truncations: Vec<Truncation>,
    trimmed: Vec<usize>,
    dropped_related: Vec<usize>,
    parent_dropped: bool,
}

impl Fitter<'_> {
    fn over(&self, target: usize) -> usize {
        self.layout.total_len().saturating_sub(target)
    }

    fn index_of(&self, pred: impl Fn(&Role) -> bool) -> Option<usize> {
        self.layout.sections.iter().position(|s| pred(&s.role))
    }

    /// The steps that trade context for room, used by both strategies.
    fn compact(&mut self, target: usize) {
        if self.over(target) == 0 {
            return;
        }
        self.trim_related(target);
        let mut extras: Vec<(usize, i32)> = self
            .layout
            .sections
            .iter()
            .enumerate()
            .filter_map(|(i, s)| match s.role {
                Role::Extra {
                    compactable: true,
                    priority,
                } => Some((i, priority)),
                _ => None,
            })
            .collect();
        extras.sort_unstable_by_key(|&(i, p)| (std::cmp::Reverse(p), i));
        for (i, _) in extras {
            self.cut_section(Some(i), target, Cut::MayDrop);
        }
        if self.over(target) > 0 {
            self.cut_parent();
        }
        self.trim_history(target);
    }

    /// Steps that cut what the agent needs most; only ever against the hard budget.
    fn last_resort(&mut self, target: usize) {
        if self.over(target) > 0 {
            self.drop_parent();
        }
        let message = self.index_of(|r| *r == Role::Message);
        self.cut_section(message, target, Cut::KeepNote);
        self.cut_flag(target);
        let system = self.index_of(|r| *r == Role::System);
        self.cut_section(system, target, Cut::MayDrop);
        let task = self.index_of(|r| *r == Role::TeamTask);
        self.cut_section(task, target, Cut::MayDrop);
        let fixed: Vec<usize> = (0..self.layout.sections.len())
            .filter(|&i| {
                matches!(
                    self.layout.sections[i].role,
                    Role::Extra {
                        compactable: false,
                        ..
                    }
                )
            })
            .collect();
        for i in fixed {
            self.cut_section(Some(i), target, Cut::MayDrop);
        }
        self.cut_section(message, target, Cut::MayDrop);
    }

    fn trim_related(&mut self, target: usize) {
        let Some(i) = self.index_of(|r| *r == Role::Related) else {
            return;
        };
        while self.over(target) > 0 {
            let Body::Lines { lines, len } = &mut self.layout.sections[i].body else {
                return;
            };
            // Listed newest first: the oldest is last.
            let Some(line) = lines.pop() else { return };
            *len = len.saturating_sub(line.len + usize::from(!lines.is_empty()));
            self.dropped_related.extend(line.index);
        }
    }

    fn cut_parent(&mut self) {
        let Some(i) = self.index_of(|r| *r == Role::Parent) else {
            return;
        };
        let Body::Lines { lines, len } = &mut self.layout.sections[i].body else {
            return;
        };
        let Some(line) = lines.first_mut() else {
            return;
        };
        if line.len > PARENT_CUT_BYTES {
            if let Some(cut) = cut_with_note(&line.render(), PARENT_CUT_BYTES) {
                self.truncations.push(Truncation {
                    section: "parent".into(),
                    from_bytes: line.len,
                    to_bytes: cut.len(),
                });
                *len = *len - line.len + cut.len();
                line.len = cut.len();
                line.text = LineText::Raw(Cow::Owned(cut));
            }
        }
    }

    fn drop_parent(&mut self) {
        let Some(i) = self.index_of(|r| *r == Role::Parent) else {
            return;
        };
        let Body::Lines { lines, len } = &mut self.layout.sections[i].body else {
            return;
        };
        if !lines.is_empty() {
            lines.clear();
            *len = 0;
            self.parent_dropped = true;
        }
    }

    /// Drops the fewest oldest history lines that make the layout fit, in one pass over the
    /// cached line lengths. With pin-first, see [`Self::trim_pinned_history`].
    fn trim_history(&mut self, target: usize) {
        let over = self.over(target);
        if over == 0 {
            return;
        }
        let Some(i) = self.index_of(|r| *r == Role::Context) else {
            return;
        };
        let others_emitted = self
            .layout
            .sections
            .iter()
            .enumerate()
            .filter(|(j, s)| *j != i && s.is_emitted())
            .count();
        let separator = if others_emitted > 0 { 2 } else { 0 };
        let section = &mut self.layout.sections[i];
        let header = section.header.len();
        let section_len = section.len();
        let Body::Lines { lines, len } = &mut section.body else {
            return;
        };
        if lines.first().is_some_and(|l| l.pinned) {
            return self.trim_pinned_history(i, over);
        }
        let n = lines.len();
        let mut body = *len;
        let mut remaining = n;
        let mut drop = 0;
        while drop < n {
            body -= lines[drop].len + usize::from(remaining > 1);
            remaining -= 1;
            drop += 1;
            let now = if remaining == 0 {
                0
            } else {
                header + usize::from(header > 0) + body
            };
            let saved = section_len - now + if remaining == 0 { separator } else { 0 };
            if saved >= over {
                break;
            }
        }
        self.trimmed
            .extend(lines.drain(..drop).filter_map(|l| l.index));
        *len = body;
    }

    /// History trimming under pin-first: window lines go first, oldest first, and each one
    /// dropped joins the omitted count, so the `[N earlier messages omitted]` line always says
    /// how many messages lie between the pinned one and the first shown (a marker appears
    /// when the first window line goes). The pinned line and its marker go last, together:
    /// the pinned message alone would read as if nothing came between it and `[MESSAGE]`.
    fn trim_pinned_history(&mut self, i: usize, over: usize) {
        let omitted = self.layout.omitted;
        let section = &mut self.layout.sections[i];
        let header = section.header.len();
        let head = header + usize::from(header > 0);
        let section_len = section.len();
        let Body::Lines { lines, len } = &mut section.body else {
            return;
        };
        let pinned = lines.iter().take_while(|l| l.pinned).count();
        let pinned_len = lines[0].len;
        let marker_len = |n: usize| {
            if n == 0 {
                0
            } else {
                1 + crate::assemble::omitted_line(n).len()
            }
        };
        // Bytes of the window lines kept, each with the newline before it.
        let mut window: usize = lines[pinned..].iter().map(|l| l.len + 1).sum();
        let window_lines = lines.len() - pinned;
        let fits = (0..=window_lines).find(|&d| {
            if d > 0 {
                window -= lines[pinned + d - 1].len + 1;
            }
            let now = head + pinned_len + marker_len(omitted + d) + window;
            section_len.saturating_sub(now) >= over
        });
        match fits {
            Some(dropped) => {
                let first_kept = pinned + dropped;
                self.trimmed
                    .extend(lines[pinned..first_kept].iter().filter_map(|l| l.index));
                let count = omitted + dropped;
                let kept: Vec<_> = lines.drain(first_kept..).collect();
                lines.truncate(1);
                if count > 0 {
                    lines.push(crate::assemble::Line::omitted_marker(count));
                }
                lines.extend(kept);
                *len = lines.iter().map(|l| l.len).sum::<usize>() + lines.len() - 1;
                self.layout.omitted = count;
            }
            None => {
                self.trimmed.extend(lines.drain(..).filter_map(|l| l.index));
                *len = 0;
                self.layout.omitted = 0;
            }
        }
    }

    /// Cuts a text section to fit, ending it with a note. When not even the note fits, the
    /// body becomes the note alone (`Cut::KeepNote`, so the cut stays visible) or is dropped
    /// (`Cut::MayDrop`).
    fn cut_section(&mut self, index: Option<usize>, target: usize, mode: Cut) {
        let Some(i) = index else { return };
        let over = self.over(target);
        if over == 0 {
            return;
        }
        let section = &mut self.layout.sections[i];
        if let Some(to_bytes) = cut_text(&mut section.body, over, mode) {
            self.truncations.push(Truncation {
                section: section.name.to_string(),
                from_bytes: to_bytes.0,
                to_bytes: to_bytes.1,
            });
        }
    }

    /// The Claude flag is cut like the system section.
    fn cut_flag(&mut self, target: usize) {
        let over = self.over(target);
        let Some(section) = self.layout.system_flag.as_mut() else {
            return;
        };
        if over == 0 {
            return;
        }
        if let Some((from, to)) = cut_text(&mut section.body, over, Cut::MayDrop) {
            self.truncations.push(Truncation {
                section: "system".into(),
                from_bytes: from,
                to_bytes: to,
            });
        }
    }
}

/// Shrinks a text body by at least `over` bytes (see [`Cut`]); returns the body's length
/// before and after, or `None` when nothing was cut.
fn cut_text(body: &mut Body<'_>, over: usize, mode: Cut) -> Option<(usize, usize)> {
    let Body::Text(text) = body else { return None };
    let from = text.len();
    if from == 0 || over == 0 {
        return None;
    }
    let cut = from
        .checked_sub(over)
        .and_then(|room| cut_with_note(text, room));
    let new = match (cut, mode) {
        (Some(cut), _) if !cut.is_empty() => cut,
        (_, Cut::MayDrop) => String::new(),
        (_, Cut::KeepNote) => {
            let note = truncation_note(from);
            if note.len() >= from {
                return None;
            }
            note
        }
    };
    *text = Cow::Owned(new);
    Some((from, text.len()))
}
