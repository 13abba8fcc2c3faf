//! A small JSON text writer for long lists of messages in the peer's shape (the npm
//! binding's `readSnapshot`): writing the text directly (whole unescaped runs copied at once,
//! one buffer sized up front) takes a fraction of the time serde_json's generic writer needs in
//! the size-optimized wasm, where its per-token calls are not inlined.

use std::fmt::Write as _;

/// JSON text under construction. Callers write keys and punctuation with [`JsonWriter::raw`]
/// and values with [`JsonWriter::string`] / [`JsonWriter::number`].
#[derive(Debug, Default)]
pub(crate) struct JsonWriter {
    out: String,
}

impl JsonWriter {
    /// A writer whose buffer holds `capacity` bytes before it grows.
    pub(crate) fn with_capacity(capacity: usize) -> Self {
        JsonWriter {
            out: String::with_capacity(capacity),
        }
    }

    /// Appends `text` as is: punctuation and literal keys, which need no escaping.
    pub(crate) fn raw(&mut self, text: &str) {
        self.out.push_str(text);
    }

    /// Appends `value` as a JSON string. Runs without `"`, `\` or control characters are
    /// copied whole; those three are escaped as RFC 8259 requires.
    pub(crate) fn string(&mut self, value: &str) {
        self.out.push('"');
        let mut start = 0;
        for (i, b) in value.bytes().enumerate() {
            let escape = match b {
                b'"' => "\\\"",
                b'\\' => "\\\\",
                b'\n' => "\\n",
                b'\r' => "\\r",
                b'\t' => "\\t",
                0x00..=0x1f => "",
                _ => continue,
            };
            // `i` is at an ASCII byte, hence at a character boundary.
            self.out.push_str(value.get(start..i).unwrap_or_default());
            if escape.is_empty() {
                // Writing to a String cannot fail.
                let _ = write!(self.out, "\\u{:04x}", b);
            } else {
                self.out.push_str(escape);
            }
            start = i + 1;
        }
        self.out.push_str(value.get(start..).unwrap_or_default());
        self.out.push('"');
    }

    /// Appends an optional string: the string, or `null`.
    #[cfg(test)]
    pub(crate) fn opt_string(&mut self, value: Option<&str>) {
        match value {
            Some(v) => self.string(v),
            None => self.raw("null"),
        }
    }

    /// Appends a non-negative integer.
    pub(crate) fn number(&mut self, value: u64) {
        // Writing to a String cannot fail.
        let _ = write!(self.out, "{value}");
    }

    /// The text written so far.
    pub(crate) fn finish(self) -> String {
        self.out
    }
}

#[cfg(test)]
mod tests {
    use super::JsonWriter;

    #[test]
    fn strings_parse_back_to_themselves() {
        let cases = [
            "",
            "plain",
            "quote \" and backslash \\ inside",
            "lines\nand\ttabs\r",
            "\u{0}\u{1}\u{8}\u{c}\u{1f} controls",
            "é 👋 [NEXT: max]",
            "\"",
            "ends with \\",
        ];
        for case in cases {
            let mut w = JsonWriter::default();
            w.string(case);
            let text = w.finish();
            let back: String = serde_json::from_str(&text).expect("valid JSON");
            assert_eq!(back, case, "{text}");
        }
    }

    #[test]
    fn numbers_and_null_are_json_literals() {
        let mut w = JsonWriter::default();
        w.raw("[");
        w.number(0);
        w.raw(",");
        w.number(u64::MAX);
        w.raw(",");
        w.opt_string(None);
        w.raw("]");
        let v: serde_json::Value = serde_json::from_str(&w.finish()).expect("valid JSON");
        assert_eq!(v, serde_json::json!([0, u64::MAX, null]));
    }
}
