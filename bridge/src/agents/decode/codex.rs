//! Codex's `exec --json` (docs/architecture.md §17): the last `agent_message` item is the
//! reply, `turn.completed` carries usage, `turn.failed` a failure, and `error` lines of the
//! form `Reconnecting… n/m` are retries.

use serde_json::Value;

use agent_chatter::usage::Usage;

use super::{Decoder, Retry, Verdict};

impl Decoder {
    pub(super) fn codex(&mut self, event: &Value) -> Option<String> {
        match event.get("type").and_then(Value::as_str)? {
            "item.completed" => {
                let item = event.get("item")?;
                if item.get("type").and_then(Value::as_str) != Some("agent_message") {
                    return None;
                }
                let text = item.get("text").and_then(Value::as_str)?.to_string();
                self.current = text.clone();
                Some(text)
            }
            "turn.completed" => {
                self.ended = true;
                if let Some(u) = event.get("usage") {
                    let n = |key: &str| u.get(key).and_then(Value::as_u64);
                    self.usage.add(&Usage {
                        input_tokens: n("input_tokens"),
                        output_tokens: n("output_tokens"),
                        cached_tokens: n("cached_input_tokens"),
                        ..Usage::default()
                    });
                }
                self.verdict = Verdict::Reply(std::mem::take(&mut self.current));
                None
            }
            // Transient: `Reconnecting... 2/5 (stream disconnected …)`; a turn may still
            // complete after it.
            "error" => {
                let message = event.get("message").and_then(Value::as_str)?;
                if let Some(retry) = codex_retry(message) {
                    self.retries.push(retry);
                }
                None
            }
            "turn.failed" => {
                self.ended = true;
                let message = event
                    .get("error")
                    .and_then(|e| e.get("message"))
                    .and_then(Value::as_str)
                    .unwrap_or("codex reported a failed turn");
                self.verdict = Verdict::Error(message.to_string());
                None
            }
            _ => None,
        }
    }
}

/// Codex's retry notice (`Reconnecting... 2/5 (stream disconnected before completion)`), if
/// `message` is one.
pub(super) fn codex_retry(message: &str) -> Option<Retry> {
    let rest = message.strip_prefix("Reconnecting")?;
    let rest = rest.trim_start_matches(['.', '…']).trim_start();
    let (counts, why) = rest.split_once(' ').unwrap_or((rest, ""));
    let (attempt, max) = counts.split_once('/')?;
    let why = why
        .trim()
        .trim_start_matches('(')
        .trim_end_matches(')')
        .trim();
    Some(Retry {
        attempt: attempt.parse().ok()?,
        max: max.parse().ok(),
        reason: if why.is_empty() {
            "reconnecting".to_string()
        } else {
            why.to_string()
        },
    })
}
