//! Reading JSON by hand, keeping the path of every value so an error can say where it is
//! (`messages[3].speaker.id: missing`). Shared by the config, snapshot and scenario loaders.
//!
//! Paths are built on the stack and rendered only when an error is raised, so a valid
//! document costs no allocation for them.

use std::fmt;

use serde_json::{Map, Value};

use thiserror::Error;

pub(crate) mod fields;
pub mod objects;
mod serde_terms;

/// How an error lists the names a value may take: `"a", "b" or "c"` (each quoted as a JSON
/// string), as in `kind: expected "human" or "ai", found "robot"`.
pub fn choices<'a>(names: impl IntoIterator<Item = &'a str>) -> String {
    let names: Vec<String> = names.into_iter().map(|name| format!("{name:?}")).collect();
    match names.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => names.concat(),
    }
}

/// Text that is not JSON at all. Line and column are 1-based, as editors show them.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("invalid JSON at line {line}, column {column}: {reason}")]
pub struct JsonSyntaxError {
    pub line: usize,
    pub column: usize,
    /// serde_json's description, without its own position suffix.
    pub reason: String,
}

impl From<serde_json::Error> for JsonSyntaxError {
    fn from(e: serde_json::Error) -> Self {
        let full = e.to_string();
        // serde_json appends " at line L column C"; we print the position ourselves.
        let reason = match full.rfind(" at line ") {
            Some(i) => &full[..i],
            None => &full,
        };
        JsonSyntaxError {
            line: e.line(),
            column: e.column(),
            reason: syntax_words(reason),
        }
    }
}

/// serde_json's syntax messages in a user's words: what the text lacks or holds, not the
/// parser's state ("EOF while parsing a list" is "the text ends inside an array"). A message
/// serde_json may add later passes as it is.
fn syntax_words(reason: &str) -> String {
    let inside =
        |what: &str| format!("the text ends inside {what} (something is cut off or not closed)");
    let words = match reason {
        "EOF while parsing a list" => return inside("an array"),
        "EOF while parsing an object" => return inside("an object"),
        "EOF while parsing a string" => return inside("a string"),
        "EOF while parsing a value" => "the text ends where a value should be",
        "expected value" => "expected a JSON value here",
        "expected ident" => {
            "expected a JSON value here (true, false and null are lowercase; text needs double \
             quotes)"
        }
        "expected `:`" => "expected a colon (:) after the key",
        "expected `,` or `]`" => "expected a comma or ] (the end of the array)",
        "expected `,` or `}`" => "expected a comma or } (the end of the object)",
        "key must be a string" => "an object key must be text in double quotes",
        "trailing comma" => "a comma before the closing bracket (JSON allows no trailing comma)",
        "trailing characters" => "unexpected text after the JSON value",
        "invalid escape" => {
            "invalid escape in a string (after \\ come only \", \\, /, b, f, n, r, t or uXXXX)"
        }
        "unexpected end of hex escape" => "a \\u escape needs four hexadecimal digits",
        "invalid unicode code point" | "lone leading surrogate in hex escape" => {
            "a \\u escape that is not a Unicode character"
        }
        "control character (\\u0000-\\u001F) found while parsing a string" => {
            "a control character (a raw line break or tab) inside a string: write it as \\n or \\t"
        }
        "recursion limit exceeded" => "nested too deeply (more than 128 levels)",
        other => other,
    };
    words.to_string()
}

/// A JSON value that is missing, of the wrong type, or out of range. `path` is the JSON path
/// of the value (`team.members[2].agentType`, `messages[0].content`).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum FieldError {
    #[error("{path}: missing")]
    Missing { path: String },
    #[error("{path}: expected {expected}, found {found}")]
    WrongType {
        path: String,
        expected: &'static str,
        found: String,
    },
    #[error("{path}: {reason}")]
    Invalid { path: String, reason: String },
}

impl FieldError {
    /// The JSON path the error is about.
    pub fn path(&self) -> &str {
        match self {
            FieldError::Missing { path }
            | FieldError::WrongType { path, .. }
            | FieldError::Invalid { path, .. } => path,
        }
    }
}

/// A JSON path: `team.members[2].agentType`. Rendered as `(top level)` for the root.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Path<'a> {
    Root,
    Key(&'a Path<'a>, &'a str),
    Index(&'a Path<'a>, usize),
}

impl<'a> Path<'a> {
    pub(crate) fn key<'b>(&'b self, key: &'b str) -> Path<'b> {
        Path::Key(self, key)
    }

    pub(crate) fn index(&self, i: usize) -> Path<'_> {
        Path::Index(self, i)
    }

    fn write(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Path::Root => Ok(()),
            Path::Key(Path::Root, k) => f.write_str(k),
            Path::Key(parent, k) => {
                parent.write(f)?;
                write!(f, ".{k}")
            }
            Path::Index(parent, i) => {
                parent.write(f)?;
                write!(f, "[{i}]")
            }
        }
    }

    pub(crate) fn missing(&self) -> FieldError {
        FieldError::Missing {
            path: self.to_string(),
        }
    }

    pub(crate) fn wrong_type(&self, expected: &'static str, found: &Value) -> FieldError {
        FieldError::WrongType {
            path: self.to_string(),
            expected,
            found: describe(found),
        }
    }

    pub(crate) fn invalid(&self, reason: impl Into<String>) -> FieldError {
        FieldError::Invalid {
            path: self.to_string(),
            reason: reason.into(),
        }
    }
}

impl fmt::Display for Path<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Path::Root => f.write_str("(top level)"),
            _ => self.write(f),
        }
    }
}

/// Parses text as JSON; the error names line and column.
pub(crate) fn parse(text: &str) -> Result<Value, JsonSyntaxError> {
    serde_json::from_str(without_bom(text)).map_err(JsonSyntaxError::from)
}

/// `text` without a leading byte order mark. Editors on Windows write one, and JSON readers
/// may ignore it (RFC 8259 §8.1); every reader of a user's JSON text starts here, so a file
/// saved that way is read, not refused at "line 1, column 1".
pub(crate) fn without_bom(text: &str) -> &str {
    text.strip_prefix('\u{feff}').unwrap_or(text)
}

/// How a value is described in "found …": short, and never the whole of a large string.
pub(crate) fn describe(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(b) => format!("{b}"),
        Value::Number(n) => format!("{n}"),
        Value::String(s) if s.len() <= 40 => format!("the string {s:?}"),
        Value::String(_) => "a string".into(),
        Value::Array(_) => "an array".into(),
        Value::Object(_) => "an object".into(),
    }
}

/// A JSON object together with its path.
#[derive(Clone, Copy)]
pub(crate) struct Obj<'v, 'p> {
    pub(crate) map: &'v Map<String, Value>,
    pub(crate) path: Path<'p>,
}

impl Obj<'_, '_> {
    /// Refuses a key that is one of `known` written another way (`windowsize`, `window_size`,
    /// `Window-Size` for `windowSize`) or misspelt by one letter (`permisionMode`,
    /// `systemInstructions`; keys of five letters or more, so a short key of the user's own
    /// such as `mode` stays theirs): the format ignores unknown keys, so such a typo would
    /// otherwise leave the setting at its default without a word. Other keys stay ignored.
    pub(crate) fn refuse_near_misses(&self, known: &[&str]) -> Result<(), FieldError> {
        let folded = |key: &str| -> String {
            key.chars()
                .filter(|c| !matches!(c, '_' | '-' | ' '))
                .flat_map(char::to_lowercase)
                .collect()
        };
        for key in self.map.keys() {
            if known.contains(&key.as_str()) {
                continue;
            }
            let key_folded = folded(key);
            let near = |k: &&&str| {
                let k = folded(k);
                k == key_folded
                    || (key_folded.chars().count() >= 5
                        && crate::text::within_one_edit(&k, &key_folded))
            };
            if let Some(meant) = known.iter().find(near) {
                return Err(self
                    .path
                    .key(key)
                    .invalid(format!("not a key here; did you mean \"{meant}\"?")));
            }
        }
        Ok(())
    }
}

impl Obj<'_, '_> {
    /// Refuses every key not in `known`, naming it and the keys meant: for small objects of
    /// our own whose every key matters (an extra section), where an ignored typo would
    /// silently drop what the user wrote.
    pub(crate) fn refuse_unknown(&self, known: &[&str]) -> Result<(), FieldError> {
        match self.map.keys().find(|k| !known.contains(&k.as_str())) {
            Some(key) => Err(self.path.key(key).invalid(format!(
                "not a key here (expected {})",
                choices(known.iter().copied())
            ))),
            None => Ok(()),
        }
    }
}

/// `v` as an object, or an error naming `path`.
pub(crate) fn object<'v, 'p>(v: &'v Value, path: Path<'p>) -> Result<Obj<'v, 'p>, FieldError> {
    match v {
        Value::Object(map) => Ok(Obj { map, path }),
        other => Err(path.wrong_type("an object", other)),
    }
}

/// `v` as an array, or an error naming `path`.
pub(crate) fn array<'v>(v: &'v Value, path: &Path<'_>) -> Result<&'v [Value], FieldError> {
    match v {
        Value::Array(items) => Ok(items),
        other => Err(path.wrong_type("an array", other)),
    }
}

/// `v` as a string, or an error naming `path`.
pub(crate) fn string<'v>(v: &'v Value, path: &Path<'_>) -> Result<&'v str, FieldError> {
    match v {
        Value::String(s) => Ok(s),
        other => Err(path.wrong_type("a string", other)),
    }
}

/// `v` as a non-negative integer, or an error naming `path`.
pub(crate) fn unsigned(v: &Value, path: &Path<'_>) -> Result<u64, FieldError> {
    v.as_u64()
        .ok_or_else(|| path.wrong_type("a non-negative integer", v))
}

/// `v` as a boolean, or an error naming `path`.
pub(crate) fn boolean(v: &Value, path: &Path<'_>) -> Result<bool, FieldError> {
    v.as_bool()
        .ok_or_else(|| path.wrong_type("true or false", v))
}

/// The value `found` names among `choices`, or `path: expected "a", "b" or "c", found "x"`.
pub(crate) fn one_of<T: Copy>(
    found: &str,
    choices: &[(&str, T)],
    path: &Path<'_>,
) -> Result<T, FieldError> {
    match choices.iter().find(|(name, _)| *name == found) {
        Some(&(_, value)) => Ok(value),
        None => Err(not_one_of(
            found,
            choices.iter().map(|(name, _)| *name),
            path,
        )),
    }
}

/// The error for a string that is none of `names`: `path: expected "a", "b" or "c", found "x"`.
pub(crate) fn not_one_of<'a>(
    found: &str,
    names: impl Iterator<Item = &'a str>,
    path: &Path<'_>,
) -> FieldError {
    let expected = choices(names);
    path.invalid(format!("expected {expected}, found {found:?}"))
}

impl<'v, 'p> Obj<'v, 'p> {
    /// The value of `key`; `null` counts as absent (JSON writers often emit it for "unset").
    pub(crate) fn get(&self, key: &str) -> Option<&'v Value> {
        self.map.get(key).filter(|v| !v.is_null())
    }

    pub(crate) fn required(&self, key: &str) -> Result<&'v Value, FieldError> {
        self.get(key).ok_or_else(|| self.path.key(key).missing())
    }

    pub(crate) fn str(&self, key: &str) -> Result<&'v str, FieldError> {
        string(self.required(key)?, &self.path.key(key))
    }

    pub(crate) fn opt_str(&self, key: &str) -> Result<Option<&'v str>, FieldError> {
        self.get(key)
            .map(|v| string(v, &self.path.key(key)))
            .transpose()
    }

    pub(crate) fn opt_u64(&self, key: &str) -> Result<Option<u64>, FieldError> {
        self.get(key)
            .map(|v| unsigned(v, &self.path.key(key)))
            .transpose()
    }

    pub(crate) fn opt_usize(&self, key: &str) -> Result<Option<usize>, FieldError> {
        let path = self.path.key(key);
        self.opt_u64(key)?
            .map(|n| usize::try_from(n).map_err(|_| path.invalid(format!("{n} is too large"))))
            .transpose()
    }

    pub(crate) fn opt_bool(&self, key: &str) -> Result<Option<bool>, FieldError> {
        self.get(key)
            .map(|v| boolean(v, &self.path.key(key)))
            .transpose()
    }

    /// A required string that must not be empty after trimming.
    pub(crate) fn non_empty_str(&self, key: &str) -> Result<&'v str, FieldError> {
        let s = self.str(key)?;
        if s.trim().is_empty() {
            return Err(self.path.key(key).invalid("empty"));
        }
        Ok(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_syntax_error_reads_in_plain_words() {
        let cases = [
            ("nope", "expected a JSON value here (true, false and null are lowercase; text needs double quotes)"),
            ("{\"a\" 1}", "expected a colon (:) after the key"),
            ("[1 2]", "expected a comma or ] (the end of the array)"),
            ("{\"a\": 1 \"b\": 2}", "expected a comma or } (the end of the object)"),
            ("{a: 1}", "an object key must be text in double quotes"),
            ("[1,]", "a comma before the closing bracket (JSON allows no trailing comma)"),
            ("{} x", "unexpected text after the JSON value"),
            ("\"\\q\"", "invalid escape in a string (after \\ come only \", \\, /, b, f, n, r, t or uXXXX)"),
            ("\"a\nb\"", "a control character (a raw line break or tab) inside a string: write it as \\n or \\t"),
            (&"[".repeat(200), "nested too deeply (more than 128 levels)"),
        ];
        for (text, words) in cases {
            let e: JsonSyntaxError = serde_json::from_str::<serde_json::Value>(text)
                .unwrap_err()
                .into();
            assert_eq!(e.reason, words, "{text:?}");
        }
    }

    #[test]
    fn paths_render_like_javascript_accessors() {
        let root = Path::Root;
        let messages = root.key("messages");
        let third = messages.index(3);
        let speaker = third.key("speaker");
        assert_eq!(speaker.key("id").to_string(), "messages[3].speaker.id");
        assert_eq!(root.to_string(), "(top level)");
        assert_eq!(root.index(0).to_string(), "[0]");
    }

    #[test]
    fn a_choice_that_is_none_of_the_names_lists_them() {
        let path = Path::Root.key("kind");
        let choices = [("human", 1), ("ai", 2), ("system", 3)];
        assert_eq!(one_of("ai", &choices, &path), Ok(2));
        assert_eq!(
            one_of("robot", &choices, &path).unwrap_err().to_string(),
            "kind: expected \"human\", \"ai\" or \"system\", found \"robot\""
        );
        assert_eq!(
            one_of("x", &choices[..2], &path).unwrap_err().to_string(),
            "kind: expected \"human\" or \"ai\", found \"x\""
        );
    }
}

/// Reads `T` from JSON `text` with serde, for inputs whose shape a derive states (the
/// binding's peer shapes, the bridge's agents file). A syntax error is a [`JsonSyntaxError`];
/// any other names the JSON path and says what is wrong in the core's words
/// (`agents.max.command: expected a string, found 5`), as the hand-written readers do, so
/// every outside input reports errors one way (docs/architecture.md §11).
pub fn from_text<T: serde::de::DeserializeOwned>(text: &str) -> Result<T, ReadError> {
    let de = &mut serde_json::Deserializer::from_str(without_bom(text));
    serde_path_to_error::deserialize(de).map_err(|e| {
        let mut path = e.path().to_string();
        let inner = e.into_inner();
        if inner.is_syntax() || inner.is_eof() {
            return ReadError::Syntax(JsonSyntaxError::from(inner));
        }
        // The position is in text the caller may never have seen (the binding makes it).
        let position = format!(" at line {} column {}", inner.line(), inner.column());
        let message = inner.to_string();
        let message = message.strip_suffix(&position).unwrap_or(&message);
        let reason = serde_terms::translate(message, &mut path);
        let path = if path == "." {
            Path::Root.to_string()
        } else {
            path
        };
        ReadError::Field(FieldError::Invalid { path, reason })
    })
}

/// Why [`from_text`] refused its input.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ReadError {
    #[error(transparent)]
    Syntax(#[from] JsonSyntaxError),
    #[error(transparent)]
    Field(#[from] FieldError),
}

impl ReadError {
    /// The JSON path the error is about, or `None` for a syntax error.
    pub fn path(&self) -> Option<&str> {
        match self {
            ReadError::Syntax(_) => None,
            ReadError::Field(e) => Some(e.path()),
        }
    }

    /// What is wrong, without the path.
    pub fn reason(&self) -> String {
        match self {
            ReadError::Syntax(e) => e.to_string(),
            ReadError::Field(FieldError::Invalid { reason, .. }) => reason.clone(),
            ReadError::Field(e) => {
                let text = e.to_string();
                text.strip_prefix(&format!("{}: ", e.path()))
                    .unwrap_or(&text)
                    .to_string()
            }
        }
    }
}

/// `value` with every object's keys in sorted order, whatever order its map keeps: a build
/// that turns on serde_json's `preserve_order` (the bridge's ACP SDK does, workspace-wide)
/// still writes the same bytes as the page and the expected files.
pub fn sorted_keys(value: Value) -> Value {
    match value {
        Value::Object(map) => {
            let sorted: std::collections::BTreeMap<String, Value> =
                map.into_iter().map(|(k, v)| (k, sorted_keys(v))).collect();
            Value::Object(sorted.into_iter().collect())
        }
        Value::Array(items) => Value::Array(items.into_iter().map(sorted_keys).collect()),
        other => other,
    }
}
