//! Each CLI's stdout → text deltas and one final reply (docs/architecture.md §17). Bytes arrive in
//! arbitrary chunks: `Lines` keeps an unfinished line (and so a character split across
//! reads) until its newline. Unknown events are ignored; a line that is not JSON is kept as
//! text (used as the reply when the stream has no final text of its own).

use serde_json::Value;

use agent_chatter::usage::Usage;

use super::AgentType;

mod claude;
mod codex;
mod gemini;

/// The longest line of a JSON stream that is read: a little above the 1 MiB message limit
/// with its JSON escaping and the event around it. A longer line is dropped as it arrives
/// (counted in [`Overlong`]), so the bridge's memory is bounded by limits, not by what an agent
/// prints. It is also the most text kept for a reply of plain text ([`Plain`]).
pub(crate) const MAX_LINE_BYTES: usize = 4 * 1024 * 1024;

/// The lines dropped for being longer than [`MAX_LINE_BYTES`], and their bytes.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Overlong {
    pub lines: u64,
    pub bytes: u64,
}

/// Splits a byte stream into complete lines (without `\n` or `\r\n`), or, for plain text,
/// into text as it comes ([`Lines::text`]).
#[derive(Debug, Default)]
pub(crate) struct Lines {
    pending: Vec<u8>,
    /// Inside a line longer than [`MAX_LINE_BYTES`]: dropped up to its newline.
    skipping: bool,
    overlong: Overlong,
}

impl Lines {
    /// The complete lines in `chunk` (plus what was pending); the rest waits for more.
    /// Linear in the bytes read: what is pending holds no newline, so only the new chunk is
    /// searched, and the lines found leave the buffer in one move. A line longer than
    /// [`MAX_LINE_BYTES`] is dropped and counted, never held whole.
    pub(crate) fn push(&mut self, mut chunk: &[u8]) -> Vec<String> {
        if self.skipping {
            let Some(i) = chunk.iter().position(|&b| b == b'\n') else {
                self.overlong.bytes += chunk.len() as u64;
                return Vec::new();
            };
            self.overlong.bytes += i as u64;
            self.skipping = false;
            chunk = &chunk[i + 1..];
        }
        let mut search = self.pending.len();
        self.pending.extend_from_slice(chunk);
        let mut lines = Vec::new();
        let mut start = 0;
        while let Some(i) = self.pending[search..].iter().position(|&b| b == b'\n') {
            let end = search + i;
            let line = &self.pending[start..end];
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            if line.len() > MAX_LINE_BYTES {
                self.overlong.lines += 1;
                self.overlong.bytes += line.len() as u64;
            } else {
                lines.push(String::from_utf8_lossy(line).into_owned());
            }
            start = end + 1;
            search = start;
        }
        self.pending.drain(..start);
        if self.pending.len() > MAX_LINE_BYTES {
            self.overlong.lines += 1;
            self.overlong.bytes += self.pending.len() as u64;
            self.pending = Vec::new();
            self.skipping = true;
        }
        lines
    }

    /// Plain text as it comes, not held back for a newline: the text in `chunk` (plus what
    /// was pending), with `\r\n` read as `\n`; a character split across reads, or a last
    /// `\r`, waits for the next chunk.
    pub(crate) fn text(&mut self, chunk: &[u8]) -> String {
        self.pending.extend_from_slice(chunk);
        let upto = self.pending.len() - unfinished(&self.pending);
        let text = String::from_utf8_lossy(&self.pending[..upto]).replace("\r\n", "\n");
        self.pending.drain(..upto);
        text
    }

    /// What is left at the end of the stream (a last line without a newline).
    pub(crate) fn finish(&mut self) -> Option<String> {
        (!self.pending.is_empty()).then(|| {
            let rest = std::mem::take(&mut self.pending);
            String::from_utf8_lossy(&rest).into_owned()
        })
    }
}

/// How many bytes at the end of `bytes` wait for more: a last `\r` (a `\n` may follow), or
/// the start of a UTF-8 character that is not complete yet.
fn unfinished(bytes: &[u8]) -> usize {
    if bytes.last() == Some(&b'\r') {
        return 1;
    }
    for back in 1..=bytes.len().min(3) {
        let b = bytes[bytes.len() - back];
        if b & 0xC0 == 0x80 {
            continue; // a continuation byte: its start is further back
        }
        let needs = match b {
            0xC0..=0xDF => 2,
            0xE0..=0xEF => 3,
            0xF0..=0xF7 => 4,
            _ => 1,
        };
        return if needs > back { back } else { 0 };
    }
    0
}

/// The text kept as a plain reply (a `Command`'s output, the lines of a JSON stream that are
/// not JSON): at most [`MAX_LINE_BYTES`], above the message limit already, and how many bytes
/// more there were.
#[derive(Debug, Default)]
struct Plain {
    text: String,
    dropped: u64,
}

impl Plain {
    fn push_str(&mut self, s: &str) {
        let room = MAX_LINE_BYTES.saturating_sub(self.text.len());
        let end = agent_chatter::text::floor_char_boundary(s, room.min(s.len()));
        self.text.push_str(&s[..end]);
        self.dropped += (s.len() - end) as u64;
    }
}

impl std::ops::Deref for Plain {
    type Target = str;
    fn deref(&self) -> &str {
        &self.text
    }
}

/// The failure of a reply of `bytes` bytes, above the core's message limit.
pub(crate) fn above_the_limit(bytes: u64) -> String {
    format!(
        "reply of {bytes} bytes is above the {} byte message limit",
        agent_chatter::message::MAX_MESSAGE_BYTES
    )
}

impl Decoder {
    /// The lines dropped so far for being longer than [`MAX_LINE_BYTES`].
    pub(crate) fn overlong(&self) -> Overlong {
        self.lines.overlong
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
    /// A reply of plain text above the message limit (the reason says how big).
    TooLarge(String),
    /// Text the agent said, with the reason it may be cut short (docs/architecture.md §14c):
    /// Gemini's loop detector, a turn or budget limit, a stream cut off after some text.
    Incomplete { text: String, reason: String },
}

/// A retry the CLI reported while it runs (Claude `system/api_retry`, Codex
/// `Reconnecting… n/m`): shown live, never stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Retry {
    pub attempt: u32,
    /// How many attempts it makes at most, when it says.
    pub max: Option<u32>,
    /// Why, in the CLI's words (`HTTP 500: Internal server error`).
    pub reason: String,
}

/// Why a reply is marked incomplete when the stream was cut off after some text.
pub(crate) const CUT_OFF_AFTER_TEXT: &str =
    "the agent's output ended in the middle of an event, before its final text: this is what it had said";

/// What a failure says when the stream was cut off inside an event.
pub(crate) const CUT_OFF: &str = "the agent's output ended in the middle of an event (an unfinished JSON line): it was cut off before its final text";

/// One CLI's stream, decoded line by line.
#[derive(Debug)]
pub struct Decoder {
    kind: AgentType,
    lines: Lines,
    /// Text of non-JSON lines, or a `Command`'s output (kept up to [`MAX_LINE_BYTES`]).
    plain: Plain,
    /// Claude: deltas were streamed (so whole `assistant` blocks are not streamed again).
    saw_deltas: bool,
    /// Gemini: assistant text since the last tool call. Codex: the last agent message.
    /// Claude: the text streamed so far.
    current: String,
    /// Gemini: the message of the last `error` event.
    last_error: Option<String>,
    verdict: Verdict,
    /// What the run cost, from the CLI's final event(s).
    usage: Usage,
    /// Retries reported and not yet taken.
    retries: Vec<Retry>,
    /// Streamed text not kept in `current` (beyond [`MAX_LINE_BYTES`]): memory follows the
    /// limits, not the agent's output.
    current_dropped: u64,
    /// The CLI's final event arrived (see [`Decoder::ended`]).
    ended: bool,
    /// The model the CLI said answers (Claude's `system/init`, Gemini's `init`).
    model: Option<String>,
}

impl Decoder {
    pub fn new(kind: AgentType) -> Self {
        Decoder {
            kind,
            lines: Lines::default(),
            plain: Plain::default(),
            saw_deltas: false,
            current: String::new(),
            last_error: None,
            verdict: Verdict::Nothing,
            usage: Usage::default(),
            retries: Vec::new(),
            current_dropped: 0,
            ended: false,
            model: None,
        }
    }

    /// Whether the CLI's final event has arrived (Claude and Gemini `result`, Codex
    /// `turn.completed` or `turn.failed`): the reply is whole, and nothing the agent prints
    /// after it changes the verdict. A `Command`'s plain text has no final event: it ends when
    /// its output is closed.
    pub fn ended(&self) -> bool {
        self.ended
    }

    /// Adds streamed text to what stands as the reply, up to [`MAX_LINE_BYTES`]; the rest is
    /// counted, and such a reply is one above the message limit.
    fn keep(&mut self, text: &str) {
        let room = MAX_LINE_BYTES.saturating_sub(self.current.len());
        if text.len() <= room {
            self.current.push_str(text);
        } else {
            let end = agent_chatter::text::floor_char_boundary(text, room);
            self.current.push_str(&text[..end]);
            self.current_dropped += (text.len() - end) as u64;
        }
    }

    /// The retries the CLI reported since the last call.
    pub fn take_retries(&mut self) -> Vec<Retry> {
        std::mem::take(&mut self.retries)
    }

    /// What the run cost so far, as the CLI reported it (figures it did not report absent).
    pub fn usage(&self) -> Usage {
        self.usage
    }

    /// The model the CLI said answers, when its stream named one.
    pub fn model(&self) -> Option<String> {
        self.model.clone()
    }

    /// Feeds a chunk of stdout; returns the text deltas it completes.
    pub fn push(&mut self, chunk: &[u8]) -> Vec<String> {
        if self.kind == AgentType::Command {
            // Plain text streams as it comes, with no newline to wait for.
            let text = self.lines.text(chunk);
            return self.line(&text).into_iter().collect();
        }
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
            // Cut off after saying something: what it said stands, marked.
            (AgentType::Claude | AgentType::Gemini, Verdict::Nothing)
                if cut_off && !self.current.trim().is_empty() =>
            {
                Verdict::Incomplete {
                    text: std::mem::take(&mut self.current),
                    reason: CUT_OFF_AFTER_TEXT.to_string(),
                }
            }
            (_, Verdict::Nothing) if cut_off => Verdict::CutOff,
            (AgentType::Gemini, Verdict::Nothing) if !self.current.is_empty() => {
                Verdict::Reply(std::mem::take(&mut self.current))
            }
            (AgentType::Codex, Verdict::Nothing) if !self.current.is_empty() => {
                Verdict::Reply(std::mem::take(&mut self.current))
            }
            (_, Verdict::Nothing) if self.plain.dropped > 0 => Verdict::TooLarge(above_the_limit(
                self.plain.len() as u64 + self.plain.dropped,
            )),
            (_, Verdict::Nothing) if !self.plain.trim().is_empty() => {
                Verdict::Reply(self.plain.trim_end().to_string())
            }
            (_, verdict) => verdict,
        };
        // Streamed text beyond what is kept: whatever stands as the reply is not all of it.
        let verdict = match verdict {
            Verdict::Reply(text) | Verdict::Incomplete { text, .. } if self.current_dropped > 0 => {
                Verdict::TooLarge(above_the_limit(text.len() as u64 + self.current_dropped))
            }
            verdict => verdict,
        };
        (last.into_iter().collect(), verdict)
    }

    fn line(&mut self, line: &str) -> Option<String> {
        if self.kind == AgentType::Command {
            // Text as it came (see `push`), not a line.
            self.plain.push_str(line);
            return (!line.is_empty()).then(|| line.to_string());
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_chatter::usage::Usd;

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
    fn the_final_event_of_each_cli_ends_the_stream_and_nothing_before_it_does() {
        // (format, the stream before its final event, the final event)
        let cases = [
            (
                AgentType::Claude,
                r#"{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hi"}},"parent_tool_use_id":null}"#,
                r#"{"type":"result","subtype":"success","is_error":false,"result":"hi"}"#,
            ),
            (
                AgentType::Claude,
                // A subagent's result is not the run's.
                r#"{"type":"result","subtype":"success","result":"sub","parent_tool_use_id":"t1"}"#,
                r#"{"type":"result","subtype":"error_during_execution","is_error":true}"#,
            ),
            (
                AgentType::Codex,
                r#"{"type":"item.completed","item":{"type":"agent_message","text":"hi"}}"#,
                r#"{"type":"turn.completed","usage":{"input_tokens":1}}"#,
            ),
            (
                AgentType::Codex,
                r#"{"type":"error","message":"Reconnecting... 1/5"}"#,
                r#"{"type":"turn.failed","error":{"message":"quota"}}"#,
            ),
            (
                AgentType::Gemini,
                r#"{"type":"message","role":"assistant","content":"hi"}"#,
                r#"{"type":"result","status":"success","stats":{}}"#,
            ),
            (
                AgentType::Gemini,
                r#"{"type":"error","message":"Loop detected"}"#,
                r#"{"type":"result","status":"error"}"#,
            ),
        ];
        for (kind, before, last) in cases {
            let mut d = Decoder::new(kind);
            d.push(format!("{before}\n").as_bytes());
            assert!(!d.ended(), "{kind:?}: {before}");
            d.push(format!("{last}\n").as_bytes());
            assert!(d.ended(), "{kind:?}: {last}");
        }
        // Plain text has no final event.
        let mut d = Decoder::new(AgentType::Command);
        d.push(b"all of it\n");
        assert!(!d.ended());
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
    fn the_model_named_at_start_is_kept() {
        let mut claude = Decoder::new(AgentType::Claude);
        claude.push(b"{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":\"s\",\"model\":\"claude-e2e-1\"}\n");
        assert_eq!(claude.model().as_deref(), Some("claude-e2e-1"));
        let mut gemini = Decoder::new(AgentType::Gemini);
        gemini.push(b"{\"type\":\"init\",\"session_id\":\"s\",\"model\":\"gemini-2\"}\n");
        assert_eq!(gemini.model().as_deref(), Some("gemini-2"));
        assert_eq!(Decoder::new(AgentType::Codex).model(), None);
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
        // As it comes, with no newline to wait for; `\r\n` is one break even split apart.
        for size in [1, 2, 3, 4096] {
            let (deltas, verdict) = decode(AgentType::Command, "one ✓\r\ntwo 🦀", size);
            assert_eq!(deltas, "one ✓\ntwo 🦀", "{size}");
            assert_eq!(verdict, Verdict::Reply("one ✓\ntwo 🦀".into()));
        }
        let mut d = Decoder::new(AgentType::Command);
        assert_eq!(d.push(b"no newline yet"), ["no newline yet"]);
    }

    #[test]
    fn a_plain_reply_is_kept_up_to_the_line_bound_and_its_size_told() {
        let mut d = Decoder::new(AgentType::Command);
        let chunk = "é".repeat(32 * 1024);
        let mut streamed = 0;
        for _ in 0..100 {
            streamed += d.push(chunk.as_bytes()).concat().len();
        }
        assert_eq!(streamed, 100 * chunk.len(), "all of it streams");
        assert!(d.plain.len() <= MAX_LINE_BYTES);
        let (_, verdict) = d.finish();
        assert_eq!(
            verdict,
            Verdict::TooLarge(format!(
                "reply of {} bytes is above the 1048576 byte message limit",
                100 * chunk.len()
            ))
        );
    }

    #[test]
    fn a_line_longer_than_the_bound_is_dropped_and_counted_never_held() {
        let mut lines = Lines::default();
        let mut out = Vec::new();
        out.extend(lines.push(b"first\nsecond "));
        for _ in 0..100 {
            out.extend(lines.push(&[b'x'; 64 * 1024]));
            assert!(lines.pending.len() <= MAX_LINE_BYTES + 64 * 1024);
        }
        out.extend(lines.push(b"end\nthird\n"));
        assert_eq!(out, ["first", "third"]);
        assert_eq!(
            lines.overlong,
            Overlong {
                lines: 1,
                bytes: 7 + 100 * 64 * 1024 + 3
            }
        );
        // A long line whole in one chunk is dropped too.
        let mut long = vec![b'y'; MAX_LINE_BYTES + 1];
        long.extend_from_slice(b"\nlast");
        assert!(lines.push(&long).is_empty());
        assert_eq!(lines.overlong.lines, 2);
        assert_eq!(lines.finish().as_deref(), Some("last"));
        // In a JSON stream, the outcome still stands on the lines kept.
        let mut d = Decoder::new(AgentType::Codex);
        d.push(format!("{{\"type\":\"item.completed\",\"item\":{{\"type\":\"agent_message\",\"text\":\"{}\"}}}}\n", "z".repeat(MAX_LINE_BYTES)).as_bytes());
        d.push(b"{\"type\":\"item.completed\",\"item\":{\"type\":\"agent_message\",\"text\":\"short\"}}\n");
        d.push(b"{\"type\":\"turn.completed\"}\n");
        assert_eq!(d.overlong().lines, 1);
        assert_eq!(d.finish().1, Verdict::Reply("short".into()));
    }

    #[test]
    fn a_split_character_or_carriage_return_waits_for_the_next_chunk() {
        assert_eq!(unfinished(b"abc"), 0);
        assert_eq!(unfinished(b"ab\r"), 1);
        assert_eq!(unfinished("é".as_bytes()), 0);
        assert_eq!(unfinished(&"€".as_bytes()[..2]), 2);
        assert_eq!(unfinished(&"🦀".as_bytes()[..3]), 3);
        assert_eq!(unfinished(&"🦀".as_bytes()[..1]), 1);
        assert_eq!(unfinished(b"\xff"), 0);
    }

    /// Decodes `stream` whole, returning the decoder's usage and retries with the verdict.
    fn decode_all(kind: AgentType, stream: &str) -> (Verdict, Usage, Vec<Retry>) {
        let mut d = Decoder::new(kind);
        let mut retries = Vec::new();
        for chunk in stream.as_bytes().chunks(5) {
            d.push(chunk);
            retries.extend(d.take_retries());
        }
        let usage = d.usage();
        let (_, verdict) = d.finish();
        (verdict, usage, retries)
    }

    #[test]
    fn each_clis_final_event_gives_its_usage() {
        let claude = r#"{"type":"result","subtype":"success","is_error":false,"result":"hi","duration_ms":5400,"total_cost_usd":0.0031,"usage":{"input_tokens":3,"cache_read_input_tokens":1000,"cache_creation_input_tokens":200,"output_tokens":80},"modelUsage":{"claude-a":{"inputTokens":3,"outputTokens":70,"cacheReadInputTokens":1000,"cacheCreationInputTokens":200,"costUSD":0.003},"claude-b":{"inputTokens":10,"outputTokens":10}}}
"#;
        let (verdict, usage, _) = decode_all(AgentType::Claude, claude);
        assert_eq!(verdict, Verdict::Reply("hi".into()));
        assert_eq!(
            usage,
            Usage {
                input_tokens: Some(1213),
                output_tokens: Some(80),
                cached_tokens: Some(1000),
                cost_usd: Usd::new(0.0031),
                duration_ms: Some(5400),
            }
        );
        let codex = r#"{"type":"item.completed","item":{"id":"i","type":"agent_message","text":"ok"}}
{"type":"turn.completed","usage":{"input_tokens":40,"cached_input_tokens":32,"cache_write_input_tokens":0,"output_tokens":10,"reasoning_output_tokens":0}}
"#;
        let (_, usage, _) = decode_all(AgentType::Codex, codex);
        assert_eq!(
            (
                usage.input_tokens,
                usage.output_tokens,
                usage.cached_tokens,
                usage.cost_usd
            ),
            (Some(40), Some(10), Some(32), None)
        );
        let gemini = r#"{"type":"message","role":"assistant","content":"ok","delta":true}
{"type":"result","status":"success","stats":{"total_tokens":75,"input_tokens":60,"output_tokens":15,"cached":20,"input":40,"duration_ms":257,"tool_calls":0}}
"#;
        let (_, usage, _) = decode_all(AgentType::Gemini, gemini);
        assert_eq!(
            (
                usage.input_tokens,
                usage.output_tokens,
                usage.cached_tokens,
                usage.duration_ms
            ),
            (Some(60), Some(15), Some(20), Some(257))
        );
    }

    #[test]
    fn retries_are_reported_as_they_happen() {
        let claude = r#"{"type":"system","subtype":"api_retry","attempt":2,"max_retries":10,"retry_delay_ms":1200,"error_status":500,"error":"server_error"}
"#;
        let (_, _, retries) = decode_all(AgentType::Claude, claude);
        assert_eq!(
            retries,
            [Retry {
                attempt: 2,
                max: Some(10),
                reason: "HTTP 500: server_error".into()
            }]
        );
        let codex = r#"{"type":"error","message":"Reconnecting... 2/5 (stream disconnected before completion)"}
{"type":"error","message":"something else"}
"#;
        let (_, _, retries) = decode_all(AgentType::Codex, codex);
        assert_eq!(
            retries,
            [Retry {
                attempt: 2,
                max: Some(5),
                reason: "stream disconnected before completion".into()
            }]
        );
    }

    #[test]
    fn an_early_stop_with_text_is_an_incomplete_reply_and_without_text_a_failure() {
        let loop_after_text = r#"{"type":"message","role":"assistant","content":"Working on it and the ans","delta":true}
{"type":"error","severity":"warning","message":"Loop detected, stopping execution"}
{"type":"result","status":"success","stats":{}}
"#;
        assert_eq!(
            decode_all(AgentType::Gemini, loop_after_text).0,
            Verdict::Incomplete {
                text: "Working on it and the ans".into(),
                reason: "Loop detected, stopping execution".into()
            }
        );
        let loop_with_nothing = r#"{"type":"error","severity":"warning","message":"Loop detected, stopping execution"}
{"type":"result","status":"success","stats":{}}
"#;
        assert_eq!(
            decode_all(AgentType::Gemini, loop_with_nothing).0,
            Verdict::Error("Loop detected, stopping execution".into())
        );
        let delta = r#"{"type":"stream_event","event":{"type":"content_block_delta","delta":{"type":"text_delta","text":"Half an answer"}}}"#;
        let max_turns = format!(
            "{delta}\n{}\n",
            r#"{"type":"result","subtype":"error_max_turns","is_error":true,"errors":["max turns"]}"#
        );
        assert_eq!(
            decode_all(AgentType::Claude, &max_turns).0,
            Verdict::Incomplete {
                text: "Half an answer".into(),
                reason: "it reached its maximum number of turns (error_max_turns)".into()
            }
        );
        let cut = format!("{delta}\n{{\"type\":\"assistant\",\"message\":{{\"content\":[");
        assert_eq!(
            decode_all(AgentType::Claude, &cut).0,
            Verdict::Incomplete {
                text: "Half an answer".into(),
                reason: CUT_OFF_AFTER_TEXT.into()
            }
        );
    }

    #[test]
    fn streamed_text_is_kept_only_up_to_the_bound_and_such_a_reply_is_too_large() {
        let mut d = Decoder::new(AgentType::Gemini);
        let delta = format!(
            "{{\"type\":\"message\",\"role\":\"assistant\",\"content\":\"{}\",\"delta\":true}}\n",
            "x".repeat(1 << 20)
        );
        for _ in 0..6 {
            d.push(delta.as_bytes());
        }
        assert!(d.current.len() <= MAX_LINE_BYTES);
        d.push(b"{\"type\":\"result\",\"status\":\"success\",\"stats\":{}}\n");
        let (_, verdict) = d.finish();
        assert_eq!(verdict, Verdict::TooLarge(above_the_limit(6 << 20)));
    }
}
