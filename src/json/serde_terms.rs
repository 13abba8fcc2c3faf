//! serde's error messages in the core's words, for the inputs read with serde rather than by a
//! hand-written reader (the binding's peer shapes, the bridge's agents file): `expected …,
//! found …`, `missing`, `expected "a", "b" or "c", found "x"`, as the core's own readers say
//! them, so every outside input reports errors one way (docs/architecture.md §11).
//! Without it a JS user reads Rust: ``invalid type: integer `5`, expected usize``,
//! ``missing field `id` ``, `struct AssemblerInput`.

use super::choices;

/// `message` (serde_json's, its text position already cut) in the core's words. `path` (the
/// serde_path_to_error path, `.` for the top) gains the field a missing-field or unknown-field
/// message names, so the path points at it as the core's paths do.
pub(crate) fn translate(message: &str, path: &mut String) -> String {
    if let Some(field) = between(message, "missing field `", "`") {
        push_key(path, field);
        return "missing".into();
    }
    let mismatch = message
        .strip_prefix("invalid type: ")
        .or_else(|| message.strip_prefix("invalid value: "));
    if let Some((found, expected)) = mismatch.and_then(|rest| rest.rsplit_once(", expected ")) {
        return format!(
            "expected {}, found {}",
            rust_words(expected),
            found_words(found)
        );
    }
    if let Some((variant, names)) = message
        .strip_prefix("unknown variant `")
        .and_then(|rest| rest.split_once("`, expected "))
    {
        return format!("expected {}, found {variant:?}", choices(quoted(names)));
    }
    if let Some((field, names)) = message
        .strip_prefix("unknown field `")
        .and_then(|rest| rest.split_once("`, expected "))
    {
        push_key(path, field);
        return format!("not a key here (expected {})", choices(quoted(names)));
    }
    rust_words(message)
}

/// Serde's description of what it expected, Rust types said as JSON kinds.
fn rust_words(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("struct ") {
        out.push_str(&rest[..at]);
        let after = &rest[at + "struct ".len()..];
        let name_len = after
            .find(|c: char| !c.is_alphanumeric() && c != '_')
            .unwrap_or(after.len());
        out.push_str("an object");
        rest = &after[name_len..];
    }
    out.push_str(rest);
    for (rust, user) in [
        ("usize", "a non-negative integer"),
        ("u64", "a non-negative integer"),
        ("u32", "a non-negative integer"),
        ("a sequence", "an array"),
        ("a map", "an object"),
        ("a boolean", "true or false"),
    ] {
        out = out.replace(rust, user);
    }
    out
}

/// Serde's description of the value it found (`integer `5``, `string "x"`, `map`), said as
/// the core's readers describe a found value (`5`, `the string "x"`, `an object`).
fn found_words(found: &str) -> String {
    const SHORT_STRING: usize = 40;
    let literal = ["integer `", "floating point `", "boolean `"]
        .iter()
        .find_map(|prefix| found.strip_prefix(prefix)?.strip_suffix('`'));
    if let Some(literal) = literal {
        return literal.to_owned();
    }
    if let Some(quoted) = found.strip_prefix("string ") {
        // Quoted and escaped by serde as Rust's `{:?}` does, as the core quotes it.
        return if quoted.len() <= SHORT_STRING + 2 {
            format!("the string {quoted}")
        } else {
            "a string".into()
        };
    }
    match found {
        "null" | "unit value" => "null".into(),
        "map" => "an object".into(),
        "sequence" => "an array".into(),
        other => other.into(),
    }
}

/// The names in backticks of serde's "one of `a`, `b`" and "`a` or `b`" lists.
fn quoted(list: &str) -> impl Iterator<Item = &str> {
    list.split('`').skip(1).step_by(2)
}

fn between<'a>(text: &'a str, before: &str, after: &str) -> Option<&'a str> {
    text.strip_prefix(before)?.strip_suffix(after)
}

fn push_key(path: &mut String, key: &str) {
    // serde_path_to_error's path already ends at an unknown key (it was being read).
    if path == key || path.ends_with(&format!(".{key}")) {
        return;
    }
    if path == "." {
        path.clear();
    } else {
        path.push('.');
    }
    path.push_str(key);
}

#[cfg(test)]
mod tests {
    use super::translate;

    #[test]
    fn serde_messages_read_as_the_core_writes_them() {
        let cases = [
            ("speaker", "missing field `id`", "speaker.id", "missing"),
            (".", "missing field `speaker`", "speaker", "missing"),
            (
                "content",
                "invalid type: integer `5`, expected a string",
                "content",
                "expected a string, found 5",
            ),
            (
                "maxBytes",
                "invalid value: integer `-1`, expected usize",
                "maxBytes",
                "expected a non-negative integer, found -1",
            ),
            (
                "maxBytes",
                "invalid type: floating point `1.5`, expected usize",
                "maxBytes",
                "expected a non-negative integer, found 1.5",
            ),
            (
                "contextMessages",
                "invalid type: map, expected a sequence",
                "contextMessages",
                "expected an array, found an object",
            ),
            (
                ".",
                "invalid type: null, expected struct AssemblerInput",
                ".",
                "expected an object, found null",
            ),
            (
                "from",
                r#"invalid type: string "a, expected b", expected a boolean"#,
                "from",
                r#"expected true or false, found the string "a, expected b""#,
            ),
            (
                "speaker.type",
                "unknown variant `robot`, expected one of `human`, `ai`, `system`",
                "speaker.type",
                r#"expected "human", "ai" or "system", found "robot""#,
            ),
            (
                "kind",
                "unknown variant `x`, expected `human` or `ai`",
                "kind",
                r#"expected "human" or "ai", found "x""#,
            ),
            (
                ".",
                "unknown field `window`, expected one of `windowSize`, `maxBytes`",
                "window",
                r#"not a key here (expected "windowSize" or "maxBytes")"#,
            ),
            (
                "x",
                "invalid length 3, expected a tuple of size 2",
                "x",
                "invalid length 3, expected a tuple of size 2",
            ),
        ];
        for (path, message, want_path, want) in cases {
            let mut path = path.to_owned();
            assert_eq!(translate(message, &mut path), want, "{message}");
            assert_eq!(path, want_path, "{message}");
        }
    }

    #[test]
    fn a_long_string_is_not_quoted_whole() {
        let long = "x".repeat(60);
        let mut path = "content".to_owned();
        let message = format!("invalid type: string {long:?}, expected an integer");
        assert_eq!(
            translate(&message, &mut path),
            "expected an integer, found a string"
        );
    }
}
