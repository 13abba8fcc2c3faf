//! Claude Code's `--output-format stream-json` (docs/architecture.md §17): text deltas, whole
//! assistant blocks when no delta came, `system/api_retry`, and the `result` with its verdict
//! and usage. A subagent's lines are not the parent's reply.

use serde_json::Value;

use agent_chatter::usage::{Usage, Usd};

use super::{Decoder, Retry, Verdict};

impl Decoder {
    pub(super) fn claude(&mut self, event: &Value) -> Option<String> {
        let str_at = |v: &Value, path: &[&str]| {
            path.iter()
                .try_fold(v, |v, k| v.get(k))
                .and_then(Value::as_str)
                .map(str::to_string)
        };
        // Subagents' lines are not the parent's reply.
        if event
            .get("parent_tool_use_id")
            .is_some_and(|p| !p.is_null())
        {
            return None;
        }
        match event.get("type").and_then(Value::as_str)? {
            "stream_event" => {
                let e = event.get("event")?;
                if str_at(e, &["type"]).as_deref() == Some("content_block_delta")
                    && str_at(e, &["delta", "type"]).as_deref() == Some("text_delta")
                {
                    self.saw_deltas = true;
                    let text = str_at(e, &["delta", "text"])?;
                    // Kept: the reply, should the final event carry no text of its own.
                    self.keep(&text);
                    return Some(text);
                }
                None
            }
            "assistant" if !self.saw_deltas => {
                let blocks = event.get("message")?.get("content")?.as_array()?;
                let text: String = blocks
                    .iter()
                    .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
                    .filter_map(|b| b.get("text").and_then(Value::as_str))
                    .collect();
                (!text.is_empty()).then_some(text)
            }
            "system" if str_at(event, &["subtype"]).as_deref() == Some("api_retry") => {
                let number = |key: &str| {
                    event
                        .get(key)
                        .and_then(Value::as_u64)
                        .and_then(|n| u32::try_from(n).ok())
                };
                let status = event.get("error_status").and_then(Value::as_u64);
                let error = event.get("error").map(|e| match e.as_str() {
                    Some(s) => s.to_string(),
                    None => e.to_string(),
                });
                let reason = match (status, error) {
                    (Some(s), Some(e)) => format!("HTTP {s}: {e}"),
                    (Some(s), None) => format!("HTTP {s}"),
                    (None, Some(e)) => e,
                    (None, None) => "the API call failed".to_string(),
                };
                self.retries.push(Retry {
                    attempt: number("attempt").unwrap_or(1),
                    max: number("max_retries"),
                    reason,
                });
                None
            }
            // The model that answers, as the CLI starts (`system/init`).
            "system" if str_at(event, &["subtype"]).as_deref() == Some("init") => {
                self.model = str_at(event, &["model"]).filter(|m| !m.is_empty());
                None
            }
            "result" => {
                self.ended = true;
                self.usage.add(&claude_usage(event));
                // A result without a `result` field stands on the streamed text (never an
                // empty reply that drops what the agent said, routing included).
                let text = str_at(event, &["result"]);
                let streamed = std::mem::take(&mut self.current);
                // A limit reached (turns, budget) after the agent said something: what it
                // said stands, marked incomplete.
                let subtype = str_at(event, &["subtype"]).unwrap_or_default();
                if matches!(subtype.as_str(), "error_max_turns" | "error_max_budget_usd")
                    && !streamed.trim().is_empty()
                {
                    let limit = if subtype == "error_max_turns" {
                        "it reached its maximum number of turns"
                    } else {
                        "it reached its spending limit"
                    };
                    self.verdict = Verdict::Incomplete {
                        text: streamed,
                        reason: format!("{limit} ({subtype})"),
                    };
                    return None;
                }
                let is_error = event
                    .get("is_error")
                    .and_then(Value::as_bool)
                    .unwrap_or(false)
                    || str_at(event, &["subtype"]).is_some_and(|s| s.starts_with("error"));
                self.verdict = if is_error {
                    let errors = event
                        .get("errors")
                        .and_then(Value::as_array)
                        .map(|e| {
                            e.iter()
                                .filter_map(Value::as_str)
                                .collect::<Vec<_>>()
                                .join("; ")
                        })
                        .unwrap_or_default();
                    match text {
                        Some(text) if !text.is_empty() => Verdict::Error(text),
                        _ => Verdict::Error(errors),
                    }
                } else {
                    match text {
                        Some(text) => Verdict::Reply(text),
                        None if !streamed.is_empty() => Verdict::Reply(streamed),
                        None => Verdict::Nothing,
                    }
                };
                None
            }
            _ => None,
        }
    }
}

/// Claude's `result` usage: per model (`modelUsage`, the figures its SDK says to account
/// with) when given, else the main loop's `usage`; `total_cost_usd`; `duration_ms`. Input
/// counts the cached tokens too (Anthropic reports them apart from `input_tokens`).
fn claude_usage(result: &Value) -> Usage {
    let n = |v: &Value, key: &str| v.get(key).and_then(Value::as_u64);
    let mut usage = Usage::default();
    let per_model = result.get("modelUsage").and_then(Value::as_object);
    match per_model {
        Some(models) if !models.is_empty() => {
            for m in models.values() {
                let cached = n(m, "cacheReadInputTokens");
                let input = [
                    n(m, "inputTokens"),
                    cached,
                    n(m, "cacheCreationInputTokens"),
                ];
                usage.add(&Usage {
                    input_tokens: input.iter().flatten().copied().reduce(|a, b| a + b),
                    output_tokens: n(m, "outputTokens"),
                    cached_tokens: cached,
                    ..Usage::default()
                });
            }
        }
        _ => {
            if let Some(u) = result.get("usage") {
                let cached = n(u, "cache_read_input_tokens");
                let input = [
                    n(u, "input_tokens"),
                    cached,
                    n(u, "cache_creation_input_tokens"),
                ];
                usage.input_tokens = input.iter().flatten().copied().reduce(|a, b| a + b);
                usage.output_tokens = n(u, "output_tokens");
                usage.cached_tokens = cached;
            }
        }
    }
    usage.cost_usd = result
        .get("total_cost_usd")
        .and_then(Value::as_f64)
        .and_then(Usd::new);
    usage.duration_ms = n(result, "duration_ms");
    usage
}
