//! Each CLI's stdout → text deltas and one final reply (docs/architecture.md §17). Bytes arrive in
//! arbitrary chunks: `Lines` keeps an unfinished line (and so a character split across
//! reads) until its newline. Unknown events are ignored; a line that is not JSON is kept as
//! text (used as the reply when the stream has no final text of its own).

use serde_json::Value;

use super::AgentType;

/// Splits a byte stream into complete lines (without `\n` or `\r\n`).
#[derive(Debug, Default)]
pub(crate) struct Lines {
    pending: Vec<u8>,
}

impl Lines {
    /// The complete lines in `chunk` (plus what was pending); the rest waits for more.
    /// Linear in the bytes read: what is pending holds no newline, so only the new chunk is
    /// searched, and the lines found leave the buffer in one move.
    pub(crate) fn push(&mut self, chunk: &[u8]) -> Vec<String> {
        let mut search = self.pending.len();
        self.pending.extend_from_slice(chunk);
        let mut lines = Vec::new();
        let mut start = 0;
        while let Some(i) = self.pending[search..].iter().position(|&b| b == b'\n') {
            let end = search + i;
            let line = &self.pending[start..end];
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            lines.push(String::from_utf8_lossy(line).into_owned());
            start = end + 1;
            search = start;
        }
        self.pending.drain(..start);
        lines
    }

    /// What is left at the end of the stream (a last line without a newline).
    pub(crate) fn finish(&mut self) -> Option<String> {
        (!self.pending.is_empty()).then(|| {
            let rest = std::mem::take(&mut self.pending);
            String::from_utf8_lossy(&rest).into_owned()
        })
    }
}

/// How a run ended, as far as the stream says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// The agent's final text.
    Reply(String),
    /// The agent reported a failure (its words).
    Error(String),
    /// The stream had no final text and no error.
    Nothing,
    /// The stream ended inside an event (an unfinished JSON line) with no final text: the
    /// agent was cut off.
    CutOff,
}

/// What a failure says when the stream was cut off inside an event.
pub(crate) const CUT_OFF: &str = "the agent's output ended in the middle of an event (an unfinished JSON line): it was cut off before its final text";

/// One CLI's stream, decoded line by line.
#[derive(Debug)]
pub struct Decoder {
    kind: AgentType,
    lines: Lines,
    /// Text of non-JSON lines (kept, never dropped).
    plain: String,
    /// Claude: deltas were streamed (so whole `assistant` blocks are not streamed again).
    saw_deltas: bool,
    /// Gemini: assistant text since the last tool call. Codex: the last agent message.
    /// Claude: the text streamed so far.
    current: String,
    /// Gemini: the message of the last `error` event.
    last_error: Option<String>,
    verdict: Verdict,
}

impl Decoder {
    pub fn new(kind: AgentType) -> Self {
        Decoder {
            kind,
            lines: Lines::default(),
            plain: String::new(),
            saw_deltas: false,
            current: String::new(),
            last_error: None,
            verdict: Verdict::Nothing,
        }
    }

    /// Feeds a chunk of stdout; returns the text deltas it completes.
    pub fn push(&mut self, chunk: &[u8]) -> Vec<String> {
        let lines = self.lines.push(chunk);
        lines.into_iter().filter_map(|l| self.line(&l)).collect()
    }

    /// Ends the stream: the last deltas and the verdict.
    pub fn finish(mut self) -> (Vec<String>, Verdict) {
        let rest = self.lines.finish();
        // A JSON stream cut off inside an event: the unfinished line is not the agent's text
        // (it would be routed, markers and all), and with no final event it is a failure.
        let cut_off = self.kind != AgentType::Command
            && rest.as_deref().is_some_and(|l| {
                l.trim_start().starts_with('{') && serde_json::from_str::<Value>(l).is_err()
            });
        let last = if cut_off {
            None
        } else {
            rest.and_then(|l| self.line(&l))
        };
        let verdict = match (self.kind, self.verdict) {
            (_, Verdict::Nothing) if cut_off => Verdict::CutOff,
            (AgentType::Gemini, Verdict::Nothing) if !self.current.is_empty() => {
                Verdict::Reply(std::mem::take(&mut self.current))
            }
            (AgentType::Codex, Verdict::Nothing) if !self.current.is_empty() => {
                Verdict::Reply(std::mem::take(&mut self.current))
            }
            (_, Verdict::Nothing) if !self.plain.trim().is_empty() => {
                Verdict::Reply(self.plain.trim_end().to_string())
            }
            (_, verdict) => verdict,
        };
        (last.into_iter().collect(), verdict)
    }

    fn line(&mut self, line: &str) -> Option<String> {
        if self.kind == AgentType::Command {
            let text = format!("{line}\n");
            self.plain.push_str(&text);
            return Some(text);
        }
        if line.trim().is_empty() {
            return None;
        }
        let Ok(event) = serde_json::from_str::<Value>(line) else {
            let text = format!("{line}\n");
            self.plain.push_str(&text);
            return Some(text);
        };
        match self.kind {
            AgentType::Claude => self.claude(&event),
            AgentType::Codex => self.codex(&event),
            AgentType::Gemini => self.gemini(&event),
            AgentType::Command => None,
        }
    }

    fn claude(&mut self, event: &Value) -> Option<String> {
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
                    self.current.push_str(&text);
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
            "result" => {
                // A result without a `result` field stands on the streamed text (never an
                // empty reply that drops what the agent said, routing included).
                let text = str_at(event, &["result"]);
                let streamed = std::mem::take(&mut self.current);
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

    fn codex(&mut self, event: &Value) -> Option<String> {
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
                self.verdict = Verdict::Reply(std::mem::take(&mut self.current));
                None
            }
            "turn.failed" => {
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

    fn gemini(&mut self, event: &Value) -> Option<String> {
        match event.get("type").and_then(Value::as_str)? {
            "message" if event.get("role").and_then(Value::as_str) == Some("assistant") => {
                let text = event.get("content").and_then(Value::as_str)?.to_string();
                self.current.push_str(&text);
                Some(text)
            }
            "tool_use" | "tool_result" => {
                self.current.clear();
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
                    Verdict::Reply(std::mem::take(&mut self.current))
                };
                None
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds `stream` in chunks of `size` bytes (splitting characters and lines anywhere).
    fn decode(kind: AgentType, stream: &str, size: usize) -> (String, Verdict) {
        let mut d = Decoder::new(kind);
        let mut deltas = String::new();
        for chunk in stream.as_bytes().chunks(size) {
            deltas.extend(d.push(chunk));
        }
        let (last, verdict) = d.finish();
        deltas.extend(last);
        (deltas, verdict)
    }

    #[test]
    fn a_claude_result_without_text_stands_on_the_streamed_text() {
        let delta = |t: &str| {
            format!(
                "{{\"type\":\"stream_event\",\"event\":{{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{{\"type\":\"text_delta\",\"text\":\"{t}\"}}}},\"parent_tool_use_id\":null}}\n"
            )
        };
        let stream = format!(
            "{}{}{{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false}}\n",
            delta("I streamed a real answer "),
            delta("[NEXT: sarah]")
        );
        let (_, verdict) = decode(AgentType::Claude, &stream, 64);
        assert_eq!(
            verdict,
            Verdict::Reply("I streamed a real answer [NEXT: sarah]".into())
        );
        // With its own text, the result's text is the reply.
        let stream = format!(
            "{}{{\"type\":\"result\",\"result\":\"final\"}}\n",
            delta("draft")
        );
        assert_eq!(
            decode(AgentType::Claude, &stream, 64).1,
            Verdict::Reply("final".into())
        );
    }

    #[test]
    fn a_stream_cut_off_inside_an_event_is_a_failure_not_a_reply() {
        let stream = "{\"type\":\"system\",\"subtype\":\"init\"}\n{\"type\":\"result\",\"subtype\":\"success\",\"result\":\"Partial [NEXT: sarah] then mo";
        for size in [1, 7, 4096] {
            let (deltas, verdict) = decode(AgentType::Claude, stream, size);
            assert_eq!(deltas, "", "{size}");
            assert_eq!(verdict, Verdict::CutOff, "{size}");
        }
        // A plain last line without a newline is still text.
        let (_, verdict) = decode(AgentType::Claude, "WARNING: not JSON", 3);
        assert_eq!(verdict, Verdict::Reply("WARNING: not JSON".into()));
    }

    #[test]
    fn lines_split_anywhere_come_out_whole_and_crlf_is_one_break() {
        let mut lines = Lines::default();
        let text = format!("{}\r\nb\n\nc", "a".repeat(100_000));
        let mut out = Vec::new();
        for chunk in text.as_bytes().chunks(16 * 1024) {
            out.extend(lines.push(chunk));
        }
        assert_eq!(out, ["a".repeat(100_000), "b".into(), String::new()]);
        assert_eq!(lines.finish().as_deref(), Some("c"));
    }

    const CLAUDE: &str = r#"{"type":"system","subtype":"init","session_id":"s"}
{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hé"}},"parent_tool_use_id":null}
{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"llo 界"}},"parent_tool_use_id":null}
{"type":"assistant","message":{"content":[{"type":"text","text":"Héllo 界"}]},"parent_tool_use_id":null}
{"type":"result","subtype":"success","is_error":false,"result":"Héllo 界"}
"#;

    #[test]
    fn claude_streams_deltas_once_and_takes_the_final_text_from_result() {
        for size in [1, 2, 3, 7, 4096] {
            let (deltas, verdict) = decode(AgentType::Claude, CLAUDE, size);
            assert_eq!(deltas, "Héllo 界", "chunk size {size}");
            assert_eq!(verdict, Verdict::Reply("Héllo 界".into()));
        }
    }

    #[test]
    fn claude_success_with_is_error_is_a_failure() {
        let stream = r#"{"type":"assistant","message":{"content":[{"type":"text","text":"API Error: 500"}]},"error":"server_error"}
{"type":"result","subtype":"success","is_error":true,"result":"API Error: 500 boom"}"#;
        let (_, verdict) = decode(AgentType::Claude, stream, 5);
        assert_eq!(verdict, Verdict::Error("API Error: 500 boom".into()));
    }

    #[test]
    fn codex_final_text_is_the_last_agent_message() {
        let stream = r#"{"type":"thread.started","thread_id":"t"}
{"type":"item.completed","item":{"id":"item_0","type":"agent_message","text":"Let me check."}}
{"type":"item.completed","item":{"id":"item_1","type":"command_execution","command":"x"}}
{"type":"item.completed","item":{"id":"item_2","type":"agent_message","text":"Done: ✓"}}
{"type":"turn.completed","usage":{}}
"#;
        let (deltas, verdict) = decode(AgentType::Codex, stream, 3);
        assert_eq!(deltas, "Let me check.Done: ✓");
        assert_eq!(verdict, Verdict::Reply("Done: ✓".into()));
        let failed = r#"{"type":"turn.failed","error":{"message":"quota"}}"#;
        assert_eq!(
            decode(AgentType::Codex, failed, 4).1,
            Verdict::Error("quota".into())
        );
    }

    #[test]
    fn a_gemini_failure_without_a_message_says_what_its_error_event_said() {
        let stream = "{\"type\":\"error\",\"severity\":\"error\",\"message\":\"empty model response\"}\n{\"type\":\"result\",\"status\":\"error\",\"stats\":{}}\n";
        let (_, verdict) = decode(AgentType::Gemini, stream, 5);
        assert_eq!(verdict, Verdict::Error("empty model response".into()));
    }

    #[test]
    fn gemini_rebuilds_the_final_text_after_the_last_tool_call() {
        let stream = r#"{"type":"init","session_id":"s","model":"auto"}
{"type":"message","role":"user","content":"prompt"}
{"type":"message","role":"assistant","content":"Let me check.","delta":true}
{"type":"tool_use","tool_name":"x","tool_id":"1","parameters":{}}
{"type":"tool_result","tool_id":"1","status":"success","output":"hi"}
{"type":"message","role":"assistant","content":"Hello","delta":true}
{"type":"message","role":"assistant","content":" wörld","delta":true}
{"type":"result","status":"success","stats":{}}
"#;
        let (deltas, verdict) = decode(AgentType::Gemini, stream, 2);
        assert_eq!(deltas, "Let me check.Hello wörld");
        assert_eq!(verdict, Verdict::Reply("Hello wörld".into()));
        let error =
            r#"{"type":"result","status":"error","error":{"type":"x","message":"bad key"}}"#;
        assert_eq!(
            decode(AgentType::Gemini, error, 9).1,
            Verdict::Error("bad key".into())
        );
    }

    #[test]
    fn garbage_lines_are_kept_as_text_and_unknown_events_ignored() {
        let stream = "not json at all\n{\"type\":\"mystery\"}\n\n";
        let (deltas, verdict) = decode(AgentType::Claude, stream, 4);
        assert_eq!(deltas, "not json at all\n");
        assert_eq!(verdict, Verdict::Reply("not json at all".into()));
    }

    #[test]
    fn a_plain_command_streams_its_output_and_replies_with_all_of_it() {
        let (deltas, verdict) = decode(AgentType::Command, "one ✓\ntwo", 1);
        assert_eq!(deltas, "one ✓\ntwo\n");
        assert_eq!(verdict, Verdict::Reply("one ✓\ntwo".into()));
    }
}
