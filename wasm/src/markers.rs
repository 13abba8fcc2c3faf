//! The wasm half of `parseMessage`, `stripAll`, `stripRouting` (DESIGN §5, §12); their JS half
//! (`wasm/npm/markers.js`) hands the text in and makes the result.
//!
//! A stripped text is very often the input itself, trimmed (prose without markers): then only
//! its position crosses back, in UTF-16 units, and JS slices the
//! string it already has — no second copy of a long text is decoded. Otherwise the text
//! crosses as a string. Every rule stays in the core's `markers` module.

use agent_chatter::markers::{self, DropTargets};
use js_sys::Array;
use wasm_bindgen::prelude::*;

/// The text the JS half encoded with the host's `TextEncoder` (always valid UTF-8: lone
/// surrogates become U+FFFD), copied once into wasm memory.
fn text_of<'a>(utf8: &'a [u8], argument: &str) -> Result<&'a str, JsError> {
    std::str::from_utf8(utf8).map_err(|e| JsError::new(&format!("{argument}: not UTF-8: {e}")))
}

/// `[start, end]` (UTF-16 units) when `out` is the input with only whitespace trimmed off its
/// ends (the common case of prose: one comparison, no search), else `out`.
fn view_of(input: &str, out: String) -> JsValue {
    let at = input.len() - input.trim_start().len();
    if input.as_bytes().get(at..at + out.len()) == Some(out.as_bytes()) {
        let start = utf16_len(&input[..at]);
        let end = start + utf16_len(&out);
        return Array::of2(
            &JsValue::from_f64(start as f64),
            &JsValue::from_f64(end as f64),
        )
        .into();
    }
    JsValue::from_str(&out)
}

/// UTF-16 length of `s`: one unit per character, two for those above U+FFFF.
fn utf16_len(s: &str) -> usize {
    // Every byte that is not a continuation byte starts a character; a 4-byte one is two units.
    s.bytes()
        .map(|b| usize::from((b & 0xC0) != 0x80) + usize::from(b >= 0xF0))
        .sum()
}

/// The agent view of the UTF-8 text (FROM, TEAM_TASK, NEXT, DONE, DROP removed): `[start,
/// end]` of the input or the text.
#[wasm_bindgen(js_name = stripAllView, unchecked_return_type = "[number, number] | string")]
pub fn strip_all_view(utf8: &[u8]) -> Result<JsValue, JsError> {
    let text = text_of(utf8, "stripAll(text)")?;
    Ok(view_of(text, markers::strip_all(text)))
}

/// The stored-content view of `text` (NEXT, DONE, DROP removed): as [`strip_all_view`].
#[wasm_bindgen(js_name = stripRoutingView, unchecked_return_type = "[number, number] | string")]
pub fn strip_routing_view(utf8: &[u8]) -> Result<JsValue, JsError> {
    let text = text_of(utf8, "stripRouting(text)")?;
    Ok(view_of(text, markers::strip_routing(text)))
}

/// The markers of `text` as `[cleanContent view, addressees, intents, fromMember,
/// teamTask, dropTargets, isDone]` (arrays of strings; `null` for absent values): the JS half
/// makes the peer's `parseMessage` result from it, with no JSON in between.
#[wasm_bindgen(js_name = parseMessageParts, unchecked_return_type = "unknown[]")]
pub fn parse_message_parts(utf8: &[u8]) -> Result<JsValue, JsError> {
    let text = text_of(utf8, "parseMessage(text)")?;
    let parsed = markers::parse(text);
    let clean = view_of(text, markers::strip_routing(text));
    let names = Array::new();
    let intents = Array::new();
    for a in &parsed.next {
        names.push(&JsValue::from_str(&a.name));
        intents.push(&JsValue::from_str(a.intent.as_str()));
    }
    let optional = |s: Option<&str>| s.map_or(JsValue::NULL, JsValue::from_str);
    let drops = Array::new();
    match &parsed.drop {
        None => {}
        Some(DropTargets::All) => {
            drops.push(&JsValue::from_str("ALL"));
        }
        Some(DropTargets::Members(names)) => {
            for name in names {
                drops.push(&JsValue::from_str(name));
            }
        }
    }
    let parts = Array::new();
    for part in [
        clean,
        names.into(),
        intents.into(),
        optional(parsed.from.as_deref()),
        optional(parsed.team_task.as_deref()),
        drops.into(),
        JsValue::from_bool(parsed.done),
    ] {
        parts.push(&part);
    }
    Ok(parts.into())
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
