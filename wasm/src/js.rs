//! Crossing the JS boundary: one serializer, one deserializer entry point, one error conversion.
//!
//! Every exported function goes through here, so all outputs have the same shape rules and
//! every failure reaches JS as a plain `Error` carrying the core's message. Values cross the
//! boundary as JSON text in both directions (see [`to_js`] and [`from_js`] for why).

use serde::de::DeserializeOwned;
use serde::Serialize;
use wasm_bindgen::prelude::*;

/// Converts a Rust value to its JS form: serde_json text, then `JSON.parse`. The one
/// serializer of the package, so every output follows JSON's rules: maps become plain
/// objects, `None` becomes `null` (never `undefined`), integers become numbers: the same
/// values `JSON.parse` gives for the core's JSON anywhere else (files, the bridge).
///
/// Measured against serde-wasm-bindgen's `Serializer::json_compatible()` (same output) on
/// `Scenario.preview` of a 10⁴-message history: one boundary crossing instead of one per
/// field halves the mean time at window 1000 (1.7 ms → 0.95 ms) and the garbage created.
pub fn to_js<T: Serialize + ?Sized>(value: &T) -> Result<JsValue, JsError> {
    let text = serde_json::to_string(value).map_err(into_error)?;
    parse_json(&text)
}

/// `JSON.parse(text)`: the second half of [`to_js`], for JSON text written another way
/// (`agent_chatter::peer`'s JSON writer).
pub fn parse_json(text: &str) -> Result<JsValue, JsError> {
    js_sys::JSON::parse(text).map_err(|e| {
        let reason = js_sys::Error::from(e).message();
        JsError::new(&format!("cannot convert the result to JS: {reason}"))
    })
}

/// `{prompt, systemFlag, explain}` for a built prompt (`systemFlag: null` when there is none,
/// docs/architecture.md §11b). The prompt text crosses as a plain
/// string (UTF-8 decoded once), not inside JSON: no escaping in Rust and no `JSON.parse` of
/// 100 KB+ in JS, which makes a window-1000 preview about 25% faster; the explain goes through
/// [`to_js`] like every other value.
pub fn prompt_to_js(prompt: &agent_chatter::context::Prompt) -> Result<JsValue, JsError> {
    let object = js_sys::Object::new();
    let set = |key: &str, value: &JsValue| {
        js_sys::Reflect::set(&object, &JsValue::from_str(key), value)
            .map(|_| ())
            .map_err(|_| JsError::new(&format!("cannot set {key} on the result")))
    };
    set("prompt", &JsValue::from_str(&prompt.prompt))?;
    let flag = prompt
        .system_flag
        .as_deref()
        .map_or(JsValue::NULL, JsValue::from_str);
    set("systemFlag", &flag)?;
    set("explain", &to_js(&prompt.explain)?)?;
    Ok(object.into())
}

/// Converts a JS value to `T`, naming the argument and the failing path in the error
/// (`addMessage(message): speaker.type: unknown variant ...`), so a caller can fix the input.
///
/// The value crosses as JSON text (`JSON.stringify`, then serde_json): one boundary crossing
/// instead of one per field, and serde_json's messages (`invalid type: string "x", expected a
/// sequence`) instead of JS `TypeError`s from property access on the wrong kind of value.
pub fn from_js<T: DeserializeOwned>(value: JsValue, argument: &str) -> Result<T, JsError> {
    from_json_text(&stringify(&value, argument)?, argument)
}

/// Reads `T` from JSON text; errors name `argument` and the failing path in the core's words
/// (`agent_chatter::read_json`, the one way outside JSON is read with serde), cut to a
/// readable length.
pub fn from_json_text<T: DeserializeOwned>(text: &str, argument: &str) -> Result<T, JsError> {
    const MAX_ERROR: usize = 300;
    agent_chatter::read_json(text).map_err(|e| {
        let mut message = e.reason();
        if message.len() > MAX_ERROR {
            message.truncate(agent_chatter::text::floor_char_boundary(
                &message, MAX_ERROR,
            ));
            message.push('…');
        }
        match e.path() {
            Some(path) if path != "(top level)" => {
                JsError::new(&format!("{argument}: {path}: {message}"))
            }
            _ => JsError::new(&format!("{argument}: {message}")),
        }
    })
}

/// A count or size argument: a non-negative integer, or `None` for `undefined`/`null`.
/// `NaN`, infinities, negative and fractional numbers are refused by name, in the same words
/// as the JS half's checks (`wasm/npm/context-manager.js`) and the core's readers.
pub fn whole_number(value: &JsValue, argument: &str) -> Result<Option<usize>, JsError> {
    if value.is_undefined() || value.is_null() {
        return Ok(None);
    }
    let found = match value.as_f64() {
        Some(n) if n.is_finite() && n >= 0.0 && n.fract() == 0.0 && n <= usize::MAX as f64 => {
            // Checked just above: whole, non-negative and in range.
            return Ok(Some(n as usize));
        }
        Some(n) if n.is_finite() && n >= 0.0 && n.fract() == 0.0 => {
            return Err(JsError::new(&format!(
                "{argument}: {} is too large (at most {})",
                number_text(n),
                usize::MAX
            )));
        }
        Some(n) => number_text(n),
        None => kind_of(value),
    };
    Err(JsError::new(&format!(
        "{argument}: expected a non-negative integer, found {found}"
    )))
}

/// A number as JS writes it (`NaN`, `-Infinity`, `1.5`, `1e+21`): the way the caller wrote
/// it, and JS's formatter rather than Rust's float printer, which would add ~10 KB to the wasm.
fn number_text(n: f64) -> String {
    js_sys::Number::from(n)
        .to_string_with_radix(10)
        .map(String::from)
        .unwrap_or_else(|_| "a number".to_owned())
}

/// The one error conversion: JS receives an `Error` whose message is the error's `Display`.
pub fn into_error(e: impl std::fmt::Display) -> JsError {
    JsError::new(&e.to_string())
}

/// The JSON text of a JS argument that is either JSON text already or a plain object (team
/// configs, snapshots). Objects go through `JSON.stringify`, so `Date`s become ISO strings and
/// integers stay integers, and the core's own JSON readers (with their field-path errors) do
/// the validation.
pub fn json_text(value: &JsValue, argument: &str) -> Result<String, JsError> {
    if let Some(text) = value.dyn_ref::<js_sys::JsString>() {
        // JSON text from `JSON.stringify` writes a lone surrogate as a `\ud800` escape, which
        // serde_json refuses: it becomes U+FFFD, as in every other string argument.
        let text = rust_string(text);
        return Ok(match replace_lone_surrogates(&text) {
            std::borrow::Cow::Borrowed(_) => text,
            std::borrow::Cow::Owned(replaced) => replaced,
        });
    }
    if value.is_undefined() || value.is_null() {
        return Err(JsError::new(&format!(
            "{argument}: expected an object or JSON text, found {}",
            if value.is_null() { "null" } else { "undefined" }
        )));
    }
    stringify(value, argument)
}

/// `JSON.stringify(value)`, with an error naming `argument` for `undefined`, cycles, BigInts.
fn stringify(value: &JsValue, argument: &str) -> Result<String, JsError> {
    let text = js_sys::JSON::stringify(value).map_err(|e| {
        let reason = js_sys::Error::from(e).message();
        JsError::new(&format!("{argument}: not serializable as JSON: {reason}"))
    })?;
    let text = text
        .dyn_ref::<js_sys::JsString>()
        .map(rust_string)
        .ok_or_else(|| JsError::new(&format!("{argument}: expected a value, found undefined")))?;
    Ok(match replace_lone_surrogates(&text) {
        std::borrow::Cow::Borrowed(_) => text,
        std::borrow::Cow::Owned(replaced) => replaced,
    })
}

#[wasm_bindgen]
extern "C" {
    /// The host's `TextEncoder` (Node ≥ 11, every browser).
    type TextEncoder;
    #[wasm_bindgen(catch, constructor)]
    fn new() -> Result<TextEncoder, JsValue>;
    #[wasm_bindgen(method)]
    fn encode(this: &TextEncoder, text: &js_sys::JsString) -> js_sys::Uint8Array;
}

/// A JS string as UTF-8, lone surrogates replaced by U+FFFD (as wasm-bindgen's own conversion
/// does). A long text (a snapshot, a session) goes through the host's native
/// `TextEncoder` and one copy into wasm memory: wasm-bindgen's conversion copies ASCII one
/// character at a time in JS, which took ~20 ms for a 4 MB snapshot.
fn rust_string(text: &js_sys::JsString) -> String {
    const NATIVE_FROM: u32 = 16 * 1024;
    if text.length() >= NATIVE_FROM {
        if let Ok(encoder) = TextEncoder::new() {
            if let Ok(s) = String::from_utf8(encoder.encode(text).to_vec()) {
                return s;
            }
        }
    }
    String::from(text)
}

/// JS strings may hold lone UTF-16 surrogates, which no Rust string (and no valid JSON text for
/// serde_json) can. `JSON.stringify` writes each as a `\ud800`–`\udfff` escape, so those escapes
/// become `\ufffd`: the same U+FFFD replacement wasm-bindgen's string conversion makes for
/// string arguments. A high escape followed by a low one is a pair (`\ud83d\ude00`, 😀, as
/// Python's `json.dumps` writes it) and stays: the same file gives the same bytes everywhere.
pub fn replace_lone_surrogates(json: &str) -> std::borrow::Cow<'_, str> {
    if !json.contains("\\ud") && !json.contains("\\uD") {
        return std::borrow::Cow::Borrowed(json);
    }
    let bytes = json.as_bytes();
    let mut out = String::with_capacity(json.len());
    let mut copied = 0;
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'\\' {
            i += 1;
            continue;
        }
        match surrogate_escape_at(bytes, i) {
            // A high surrogate then a low one: a pair, kept.
            Some(0xd800..=0xdbff)
                if surrogate_escape_at(bytes, i + 6).is_some_and(|low| low >= 0xdc00) =>
            {
                i += 12;
            }
            Some(_) => {
                out.push_str(&json[copied..i]);
                out.push_str("\\ufffd");
                i += 6;
                copied = i;
            }
            // Any other escape is two characters (`\\`, `\"`, `\n`, …) or `\u` plus four hex
            // digits; skipping the character after the backslash keeps `\\ud800` (an escaped
            // backslash) intact.
            None => i += 2,
        }
    }
    out.push_str(&json[copied..]);
    std::borrow::Cow::Owned(out)
}

/// The UTF-16 surrogate written as an escape (`\u` and four hex digits) at `at`
/// (`0xd800..=0xdfff`), if any.
fn surrogate_escape_at(bytes: &[u8], at: usize) -> Option<u16> {
    let escape = bytes.get(at..at + 6)?;
    if escape[0] != b'\\' || escape[1] != b'u' {
        return None;
    }
    let hex = std::str::from_utf8(&escape[2..]).ok()?;
    let unit = u16::from_str_radix(hex, 16).ok()?;
    (0xd800..=0xdfff).contains(&unit).then_some(unit)
}

/// Milliseconds of a JS time value: a `Date`, a number of ms, or a date string `Date` can
/// parse. `None` for `undefined`/`null`. Only times a `Date` can hold (1970 to the year
/// 275760, ±8.64e15 ms) are taken: a larger number would be stored, then refused by the
/// session reader on resume.
pub fn millis(value: &JsValue, argument: &str) -> Result<Option<u64>, JsError> {
    /// The latest time a JS `Date` can hold, in ms.
    const MAX_DATE_MS: f64 = 8.64e15;
    if value.is_undefined() || value.is_null() {
        return Ok(None);
    }
    let (ms, found) = if let Some(date) = value.dyn_ref::<js_sys::Date>() {
        (date.get_time(), "an invalid Date".to_owned())
    } else if let Some(n) = value.as_f64() {
        (n, number_text(n))
    } else if let Some(s) = value.as_string() {
        (js_sys::Date::parse(&s), string_text(&s))
    } else {
        (f64::NAN, kind_of(value))
    };
    // Whole milliseconds, as a session file holds them (`1.5` is refused, not cut to 1: the
    // same number in a session fact would be refused on resume). A `Date` holds whole ms.
    if ms.is_finite() && (0.0..=MAX_DATE_MS).contains(&ms) && ms.fract() == 0.0 {
        Ok(Some(ms as u64))
    } else {
        Err(JsError::new(&format!(
            "{argument}: expected a Date, whole milliseconds since 1970 (at most 8.64e15) or a \
             date string, found {found}"
        )))
    }
}

/// Now, in milliseconds since 1970: the host's clock (the core reads none,
/// docs/architecture.md §2).
pub fn now() -> u64 {
    // Date.now() is a non-negative integer number of ms.
    js_sys::Date::now() as u64
}

/// Replaces the `timestamp` field of `object` with a `Date` of `ms` (the peer's messages
/// carry `Date`s); `key` is the JS string `"timestamp"`, converted once for a whole list.
pub fn set_date_at(object: &JsValue, key: &JsValue, ms: u64) -> Result<(), JsError> {
    let date = js_sys::Date::new(&JsValue::from_f64(ms as f64));
    js_sys::Reflect::set(object, key, &date)
        .map(|_| ())
        .map_err(|_| JsError::new("cannot set timestamp on the output object"))
}

/// A string argument. Exports take `JsString` and check here, because wasm-bindgen's own
/// `&str` conversion does not check the type: a number passed from JS would make it read
/// outside its memory (a trap, after which the instance is not safe to use).
pub fn string_arg(value: &js_sys::JsString, argument: &str) -> Result<String, JsError> {
    if value.is_string() {
        return Ok(rust_string(value));
    }
    value.as_string().ok_or_else(|| {
        JsError::new(&format!(
            "{argument}: expected a string, found {}",
            kind_of(value)
        ))
    })
}

/// What a wrong argument is, in the words every "found …" of the package uses (the core's
/// readers' and the JS half's `describe` in `guard.js`): the value itself when short (`5`,
/// `NaN`, `true`, `null`, `undefined`, `the string "x"`), else its kind (`a string`, `an
/// array`, `an object`, `a function`).
pub fn kind_of(value: &JsValue) -> String {
    if value.is_null() {
        "null".to_owned()
    } else if value.is_undefined() {
        "undefined".to_owned()
    } else if let Some(n) = value.as_f64() {
        number_text(n)
    } else if let Some(b) = value.as_bool() {
        b.to_string()
    } else if let Some(s) = value.as_string() {
        string_text(&s)
    } else if js_sys::Array::is_array(value) {
        "an array".to_owned()
    } else if value.is_function() {
        "a function".to_owned()
    } else if value.is_object() {
        "an object".to_owned()
    } else {
        format!("a {}", value.js_typeof().as_string().unwrap_or_default())
    }
}

/// A found string as the core's readers show it: quoted when short, else `a string`.
fn string_text(s: &str) -> String {
    if s.chars().count() <= 40 {
        format!("the string {s:?}")
    } else {
        "a string".to_owned()
    }
}

/// An optional string argument (`undefined` and `null` mean absent).
pub fn optional_string_arg(
    value: Option<js_sys::JsString>,
    argument: &str,
) -> Result<Option<String>, JsError> {
    match value {
        None => Ok(None),
        Some(v) if v.is_undefined() || v.is_null() => Ok(None),
        Some(v) => string_arg(&v, argument).map(Some),
    }
}

#[cfg(test)]
mod tests {
    use super::replace_lone_surrogates;

    #[test]
    fn lone_surrogate_escapes_become_the_replacement_character() {
        let cases = [
            (r#""a\ud800b""#, r#""a\ufffdb""#),
            (r#""\uDFFF""#, r#""\ufffd""#),
            (r#""\ud83d\ud83d""#, r#""\ufffd\ufffd""#),
            (r#""\ud83d\ude00 ok""#, r#""\ud83d\ude00 ok""#),
            (r#""\uD83D\uDE00\ude00""#, r#""\uD83D\uDE00\ufffd""#),
            (r#""\ude00\ud83d""#, r#""\ufffd\ufffd""#),
            (r#""plain \u00e9 \n""#, r#""plain \u00e9 \n""#),
            (r#""\\ud800""#, r#""\\ud800""#),
            (r#""\\\ud800""#, r#""\\\ufffd""#),
            (r#""\ud7ff \ue000""#, r#""\ud7ff \ue000""#),
            ("\"👋 é\"", "\"👋 é\""),
        ];
        for (input, expected) in cases {
            assert_eq!(replace_lone_surrogates(input), expected, "{input}");
            let parsed: String =
                serde_json::from_str(&replace_lone_surrogates(input)).expect("valid JSON");
            assert!(!parsed.is_empty());
        }
    }
}
