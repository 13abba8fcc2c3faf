//! The agent's stdio as the SDK's line transport, with one check of ours on the way in: a line
//! that is not a JSON object (an agent printing its log on stdout, a crash dump) is left out
//! and remembered, so a run that then breaks says what the agent printed, and a line longer
//! than [`MAX_FRAME_BYTES`] ends the connection naming its size instead of filling memory.

use std::sync::{Arc, Mutex};

use agent_client_protocol::Lines;
use futures_util::{Sink, Stream};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{ChildStdin, ChildStdout};

/// The longest line (one JSON-RPC message) read from an agent: 64 MiB.
pub(super) const MAX_FRAME_BYTES: usize = 64 << 20;
/// How much of a malformed line is kept to be named.
const SHOWN_BYTES: usize = 120;

/// The first line the agent printed that is not a JSON-RPC message, cut short.
#[derive(Clone, Default)]
pub(super) struct Malformed(Arc<Mutex<Option<String>>>);

impl Malformed {
    fn note(&self, line: &str) {
        let mut first = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if first.is_none() {
            let end = agent_chatter::text::floor_char_boundary(line, SHOWN_BYTES);
            let cut = if end < line.len() { "…" } else { "" };
            *first = Some(format!("{}{cut}", &line[..end]));
        }
    }

    pub(super) fn first(&self) -> Option<String> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

/// The transport over the agent's `stdin` and `stdout`.
pub(super) fn transport(
    stdin: ChildStdin,
    stdout: ChildStdout,
    malformed: Malformed,
) -> Lines<
    impl Sink<String, Error = std::io::Error> + Send + 'static,
    impl Stream<Item = std::io::Result<String>> + Send + 'static,
> {
    let outgoing = futures_util::sink::unfold(stdin, |mut stdin, line: String| async move {
        stdin.write_all(line.as_bytes()).await?;
        stdin.write_all(b"\n").await?;
        stdin.flush().await?;
        Ok::<_, std::io::Error>(stdin)
    });
    let reader = BufReader::new(stdout);
    let incoming = futures_util::stream::unfold(
        (reader, malformed, Vec::new()),
        |(mut reader, malformed, mut buf)| async move {
            loop {
                buf.clear();
                let read = (&mut reader)
                    .take(MAX_FRAME_BYTES as u64 + 1)
                    .read_until(b'\n', &mut buf)
                    .await;
                match read {
                    Ok(0) => return None,
                    Err(e) => return Some((Err(e), (reader, malformed, buf))),
                    Ok(_) if buf.len() > MAX_FRAME_BYTES => {
                        let e = std::io::Error::other(format!(
                            "it sent a message over {} MiB",
                            MAX_FRAME_BYTES >> 20
                        ));
                        return Some((Err(e), (reader, malformed, buf)));
                    }
                    Ok(_) => {}
                }
                let line = String::from_utf8_lossy(&buf);
                let line = line.trim_end_matches(['\n', '\r']);
                if line.trim().is_empty() {
                    continue;
                }
                if line.trim_start().starts_with('{')
                    && serde_json::from_str::<serde::de::IgnoredAny>(line).is_ok()
                {
                    let line = line.to_string();
                    return Some((Ok(line), (reader, malformed, buf)));
                }
                malformed.note(line);
            }
        },
    );
    Lines::new(outgoing, incoming)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_malformed_line_is_kept_cut_at_a_character() {
        let malformed = Malformed::default();
        malformed.note(&"é".repeat(100));
        malformed.note("second");
        let first = malformed.first().unwrap();
        assert!(
            first.ends_with('…') && first.len() <= SHOWN_BYTES + 3,
            "{first}"
        );
    }
}
