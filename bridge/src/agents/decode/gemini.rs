//! Gemini CLI's `--output-format stream-json` (docs/architecture.md §17): assistant text since
//! the last tool call is the reply; an `error` event before a successful `result` (the loop
//! detector) marks it incomplete.

use serde_json::Value;

use agent_chatter::usage::Usage;

use super::{Decoder, Verdict};

impl Decoder {
    pub(super) fn gemini(&mut self, event: &Value) -> Option<String> {
        match event.get("type").and_then(Value::as_str)? {
            "message" if event.get("role").and_then(Value::as_str) == Some("assistant") => {
                let text = event.get("content").and_then(Value::as_str)?.to_string();
                self.keep(&text);
                Some(text)
            }
            // The model that answers, as the CLI starts.
            "init" => {
                self.model = event
                    .get("model")
                    .and_then(Value::as_str)
                    .filter(|m| !m.is_empty())
                    .map(str::to_string);
                None
            }
            "tool_use" | "tool_result" => {
                self.current.clear();
                self.current_dropped = 0;
                None
            }
            // Non-fatal on its own; remembered, since a failed result may carry no message of
            // its own (an empty model response: `error`, then `result` with no `error`).
            "error" => {
                if let Some(message) = event.get("message").and_then(Value::as_str) {
                    self.last_error = Some(message.to_string());
                }
                None
            }
            "result" => {
                self.ended = true;
                if let Some(stats) = event.get("stats") {
                    let n = |key: &str| stats.get(key).and_then(Value::as_u64);
                    self.usage.add(&Usage {
                        input_tokens: n("input_tokens"),
                        output_tokens: n("output_tokens"),
                        cached_tokens: n("cached"),
                        duration_ms: n("duration_ms"),
                        ..Usage::default()
                    });
                }
                self.verdict = if event.get("status").and_then(Value::as_str) == Some("error") {
                    let message = event
                        .get("error")
                        .and_then(|e| e.get("message"))
                        .and_then(Value::as_str)
                        .map(str::to_string)
                        .or_else(|| self.last_error.take())
                        .unwrap_or_else(|| {
                            "gemini reported an error without a message".to_string()
                        });
                    Verdict::Error(message)
                } else {
                    // A success after an `error` event (the loop detector: "Loop detected,
                    // stopping execution") stopped the agent early: its text may be cut
                    // mid-word, its markers lost. Said so, never passed off as whole.
                    let text = std::mem::take(&mut self.current);
                    match self.last_error.take() {
                        Some(reason) if text.trim().is_empty() => Verdict::Error(reason),
                        Some(reason) => Verdict::Incomplete { text, reason },
                        None => Verdict::Reply(text),
                    }
                };
                None
            }
            _ => None,
        }
    }
}
