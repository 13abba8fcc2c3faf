//! The wasm half of `parseMessage`, `stripAll`, `stripRouting` (docs/architecture.md §5, §12);
//! their JS half (`wasm/npm/markers.js`) hands the text in through the [`inbox`](crate::inbox) and
//! makes the result.
//!
//! A stripped text is very often a piece of the input (prose without markers inside it): the
//! core then returns it borrowed, and only its position crosses back — its start and how much
//! follows it, in UTF-16 units, read with `viewStart()`/`viewTail()` — for JS to slice the string
//! it already has. Both are counted over the (short) trimmed ends, never over the whole text.
//! Otherwise the text is handed back ([`hand_back`]: a string when ASCII, else UTF-16 in the
//! outbox). Every rule stays in the core's `markers` module.

use std::borrow::Cow;
use std::cell::Cell;

use agent_chatter::markers::{self, DropTargets};
use agent_chatter::text::{holds_replacement_char, range_within};
use wasm_bindgen::prelude::*;

use crate::inbox::{clear_outbox, hand_back, with_text};

thread_local! {
    /// The last view's position in its input, in UTF-16 units: (start, units after its end),
    /// and whether its input holds U+FFFD (see [`view_may_hold_lone_surrogates`]).
    static VIEW: Cell<(usize, usize, bool)> = const { Cell::new((0, 0, false)) };
}

/// `None` when `out` is a piece of `input` (its position is then in [`VIEW`]), else the text.
fn view_of(input: &str, out: Cow<'_, str>) -> Option<String> {
    clear_outbox();
    if let Cow::Borrowed(piece) = &out {
        if let Some(range) = range_within(input, piece) {
            let (before, after) = (&input[..range.start], &input[range.end..]);
            let replaced = holds_replacement_char(input);
            VIEW.set((utf16_len(before), utf16_len(after), replaced));
            return None;
        }
    }
    Some(out.into_owned())
}

/// UTF-16 length of `s`: one unit per character, two for those above U+FFFF.
fn utf16_len(s: &str) -> usize {
    // Every byte that is not a continuation byte starts a character; a 4-byte one is two units.
    s.bytes()
        .map(|b| usize::from((b & 0xC0) != 0x80) + usize::from(b >= 0xF0))
        .sum()
}

/// Where the last view returned as `undefined` starts in its input (UTF-16 units).
#[wasm_bindgen(js_name = viewStart)]
pub fn view_start() -> usize {
    VIEW.get().0
}

/// How many UTF-16 units of its input follow the last view returned as `undefined`.
#[wasm_bindgen(js_name = viewTail)]
pub fn view_tail() -> usize {
    VIEW.get().1
}

/// Whether the input of the last view holds U+FFFD, so its JS string may have held lone
/// surrogates (`encodeInto` writes each as U+FFFD): only then must JS repair its slice, which
/// costs a pass over it.
#[wasm_bindgen(js_name = viewMayHoldLoneSurrogates)]
pub fn view_may_hold_lone_surrogates() -> bool {
    VIEW.get().2
}

/// The agent view (FROM, TEAM_TASK, NEXT, DONE, DROP removed) of the `len` bytes in the inbox:
/// the text, or `undefined` when it is a piece of the input (see [`view_start`]) or was handed
/// back in the outbox ([`hand_back`]).
#[wasm_bindgen(js_name = stripAllView)]
pub fn strip_all_view(len: usize) -> Result<Option<String>, JsError> {
    with_text(len, "stripAll(text)", |text| {
        view_of(text, markers::strip_all(text)).and_then(hand_back)
    })
}

/// The stored-content view (NEXT, DONE, DROP removed): as [`strip_all_view`].
#[wasm_bindgen(js_name = stripRoutingView)]
pub fn strip_routing_view(len: usize) -> Result<Option<String>, JsError> {
    with_text(len, "stripRouting(text)", |text| {
        view_of(text, markers::strip_routing(text)).and_then(hand_back)
    })
}

/// The markers of the `len` bytes in the inbox, packed in one string so the result crosses
/// once (each small string or array crossing on its own cost more than the parse): lines of
/// flags (`v`: cleanContent is a view, see [`view_start`]; `f`, `t`: fromMember, teamTask
/// present; `d`: isDone), addressees (comma-separated: names never hold a comma), their
/// intents (one digit each), fromMember, teamTask, dropTargets (comma-separated), then
/// cleanContent unless it is a view. Values never hold a line break (markers end at one).
/// `undefined` when the packed string was handed back in the outbox ([`hand_back`]).
#[wasm_bindgen(js_name = parseMessagePacked)]
pub fn parse_message_packed(len: usize) -> Result<Option<String>, JsError> {
    with_text(len, "parseMessage(text)", |text| hand_back(packed(text)))
}

fn packed(text: &str) -> String {
    let (parsed, clean) = markers::parse_and_strip_routing(text);
    let clean = view_of(text, clean);
    // Room for the clean text and the short lines before it: one allocation, no regrowth.
    let mut out = String::with_capacity(clean.as_deref().map_or(0, str::len) + 64);
    for (flag, on) in [
        ('v', clean.is_none()),
        ('f', parsed.from.is_some()),
        ('t', parsed.team_task.is_some()),
        ('d', parsed.done),
    ] {
        if on {
            out.push(flag);
        }
    }
    out.push('\n');
    push_list(&mut out, parsed.next.iter().map(|a| a.name.as_str()));
    for a in &parsed.next {
        out.push_str(&a.intent.as_str()[1..]);
    }
    out.push('\n');
    for value in [&parsed.from, &parsed.team_task] {
        out.push_str(value.as_deref().unwrap_or_default());
        out.push('\n');
    }
    match &parsed.drop {
        None => push_list(&mut out, std::iter::empty()),
        Some(DropTargets::All) => push_list(&mut out, std::iter::once("ALL")),
        Some(DropTargets::Members(names)) => push_list(&mut out, names.iter().map(String::as_str)),
    }
    out.push_str(clean.as_deref().unwrap_or_default());
    out
}

/// `names` comma-separated, then a line break.
fn push_list<'a>(out: &mut String, names: impl Iterator<Item = &'a str>) {
    for (i, name) in names.enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(name);
    }
    out.push('\n');
}

#[cfg(test)]
mod tests {
    use super::utf16_len;

    #[test]
    fn utf16_length_counts_surrogate_pairs_twice() {
        for s in ["", "abc", "é", "日本", "👋", "a👋é日"] {
            assert_eq!(utf16_len(s), s.encode_utf16().count(), "{s}");
        }
    }
}
