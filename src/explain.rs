//! Why a prompt is what it is (docs/architecture.md §9): section sizes, each history message's
//! fate, cuts, and the budget status. Returned with every prompt; the page draws it.

use serde::{Deserialize, Serialize};

use crate::message::MemberId;
use crate::team::{CompactionStrategy, PromptFormat};

/// Why a deduplicated message left the context.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum DedupReason {
    /// The last context item is the current message itself.
    SameId,
    /// Same speaker id and same stripped content as the current message (AI→AI).
    SameSpeakerAndContent,
    /// The receiver's own last message in a routed delivery.
    OwnLast,
}

/// The fate of one stored message for one recipient.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "fate", rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum Fate {
    /// In the `[CONTEXT]` section.
    Included,
    /// Older than the window (or newer than the current message).
    OutsideWindow,
    /// Removed by dedup.
    Deduplicated { reason: DedupReason },
    /// Dropped to fit the budget: a history line of the window, or the `[MESSAGE]` itself when
    /// not even part of it fits (the status is then `critical`).
    TrimmedForBudget,
    /// The `[MESSAGE]` of this prompt.
    Current,
    /// Pinned first message (docs/architecture.md §19 (seed 002) pin-first policy), shown in
    /// context: out of the window, or at its start while newer window lines were trimmed for
    /// the budget. When the window reaches it and none of the window is trimmed it is
    /// `Included`, as without pin-first.
    Pinned,
    /// Shown in the parent section (`[PARENT_CONTEXT]`).
    ParentContext,
    /// Shown in the related-answers section (`[RELATED_CONTEXT]`).
    Related,
    /// In no prompt: the notice of a run the user cancelled
    /// ([`crate::session::Failure::reaches_prompts`]); windows reach back past it.
    Withheld,
}

/// One message's fate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct MessageFate {
    /// Position of the message in the conversation (0-based, the order of the messages):
    /// positions are free to report, ids would cost an allocation per history line.
    pub index: usize,
    #[serde(flatten)]
    pub fate: Fate,
}

/// Size of one emitted (or dropped) section.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct SectionExplain {
    /// `system`, `teamTask`, `context`, `parent`, `related`, `message`, or an extra section's name.
    pub name: String,
    /// Bytes it occupies in the output (header included; 0 if dropped).
    pub bytes: usize,
    /// Estimated tokens, when a token estimator is set.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub tokens: Option<usize>,
    /// True for the Claude system part, which travels as the `--append-system-prompt` flag.
    pub in_system_flag: bool,
}

/// A cut made to fit the budget.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Truncation {
    /// What was cut: a section's name (`message`, `system`, `teamTask`, an extra section's
    /// name), `parent`, or `system` for Claude's system flag.
    pub section: String,
    /// Body bytes before and after.
    pub from_bytes: usize,
    pub to_bytes: usize,
}

/// ok < 75% ≤ warning < 90% ≤ critical (docs/architecture.md §19 (seed 003)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum BudgetStatus {
    Ok,
    Warning,
    Critical,
}

impl BudgetStatus {
    /// Status of `used` bytes against `max`.
    pub fn of(used: usize, max: usize) -> Self {
        // used/max >= 0.9  ⇔ 10·used >= 9·max (integer math, no float rounding).
        let (u, m) = (used as u128, max as u128);
        if m == 0 || u * 10 >= m * 9 {
            BudgetStatus::Critical
        } else if u * 4 >= m * 3 {
            BudgetStatus::Warning
        } else {
            BudgetStatus::Ok
        }
    }
}

/// Everything that decided one prompt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Explain {
    pub recipient: MemberId,
    pub format: PromptFormat,
    pub sections: Vec<SectionExplain>,
    /// Position of the message this prompt answers (its `[MESSAGE]`); none (`null`) for the
    /// skeleton of a conversation with no message yet.
    pub current: Option<usize>,
    /// Fates of the messages the builder looked at (window, pinned, parent, siblings, current),
    /// oldest first. Every other stored message is outside the window: listing them all
    /// would make each prompt cost O(history), which §9 forbids.
    pub messages: Vec<MessageFate>,
    /// How many stored messages are not listed (all outside the window).
    pub outside_window: usize,
    /// Marker occurrences removed from the text this prompt shows.
    pub markers_stripped: usize,
    pub truncations: Vec<Truncation>,
    /// `prompt` bytes + `systemFlag` bytes (UTF-8); never above `maxBytes`.
    pub total_bytes: usize,
    pub max_bytes: usize,
    /// Estimated tokens of the whole output, when a token estimator is set.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub total_tokens: Option<usize>,
    /// The token budget, when one is set (`totalTokens <= maxTokens` then holds).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub max_tokens: Option<usize>,
    /// The fuller of the byte and token budgets decides.
    pub status: BudgetStatus,
    pub strategy: CompactionStrategy,
    /// Window size in force for this recipient.
    pub window: usize,
}

impl Explain {
    /// How the current message was cut to fit the budget: its body's bytes before the first
    /// cut and after the last (0: none of it fits), or `None` when it fits whole.
    pub fn message_cut(&self) -> Option<(usize, usize)> {
        let mut cuts = self
            .truncations
            .iter()
            .filter(|t| t.section == crate::assemble::MESSAGE_SECTION);
        let first = cuts.next()?;
        let last = cuts.next_back().unwrap_or(first);
        Some((first.from_bytes, last.to_bytes))
    }
}

/// Sections in a rendered prompt are joined by one blank line (docs/architecture.md §8).
const SECTION_SEPARATOR: usize = "\n\n".len();

/// Where one section lies in the rendered prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SectionRange<'a> {
    pub name: &'a str,
    /// Byte range in `prompt` (header included, the blank line after it excluded).
    pub range: std::ops::Range<usize>,
}

impl Explain {
    /// The byte range of each emitted section of `prompt` (the prompt this explain came
    /// with), in order, so hosts can colour the exact bytes without re-parsing headers.
    /// Sections carried in the system flag are skipped; ranges are clipped to `prompt` and to
    /// character boundaries, so a last-resort cut never yields a range that splits a character.
    pub fn section_ranges<'a>(&'a self, prompt: &str) -> Vec<SectionRange<'a>> {
        let mut ranges = Vec::with_capacity(self.sections.len());
        let mut start = 0;
        for section in self
            .sections
            .iter()
            .filter(|s| s.bytes > 0 && !s.in_system_flag)
        {
            if start >= prompt.len() || !prompt.is_char_boundary(start) {
                break;
            }
            let end = crate::text::floor_char_boundary(prompt, start + section.bytes);
            ranges.push(SectionRange {
                name: &section.name,
                range: start..end,
            });
            start = end + SECTION_SEPARATOR;
        }
        ranges
    }

    /// The fate of the message at `index`: the listed one, else outside the window.
    pub fn fate_of(&self, index: usize) -> Fate {
        self.messages
            .binary_search_by_key(&index, |m| m.index)
            .map_or(Fate::OutsideWindow, |i| self.messages[i].fate)
    }
}
