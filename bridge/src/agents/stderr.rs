//! An agent's stderr: read to its end while it runs, its end kept, and the line that says why
//! a run failed.

use tokio::io::AsyncReadExt;

/// The stderr kept: its end, where the reason for a failure is.
const STDERR_TAIL: usize = 64 * 1024;

/// Reads stderr to its end — an agent writing more than a pipe holds must never block, or die
/// of a closed pipe — keeping its last [`STDERR_TAIL`] bytes in `kept` as it goes (so a reader
/// stopped early still leaves what it read).
pub(crate) async fn stderr_tail(
    stderr: Option<tokio::process::ChildStderr>,
    kept: std::sync::Arc<std::sync::Mutex<Vec<u8>>>,
) {
    let Some(mut stderr) = stderr else { return };
    let mut buf = vec![0u8; 16 * 1024];
    while let Ok(n) = stderr.read(&mut buf).await {
        if n == 0 {
            break;
        }
        let Ok(mut tail) = kept.lock() else { return };
        tail.extend_from_slice(&buf[..n]);
        if tail.len() > STDERR_TAIL {
            let extra = tail.len() - STDERR_TAIL;
            tail.drain(..extra);
        }
    }
}

/// The line of stderr that says why: among its last lines (stack frames such as `at f (x.js:1)`
/// and a runtime's version footer such as Node's `Node.js v20.20.2` left out), the last that
/// starts like an error (`Error: …`, `TypeError …`, `error: …`), else the last one.
pub(crate) fn stderr_summary(stderr: &str) -> String {
    let lines: Vec<&str> = stderr
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("at ") && !l.starts_with("Node.js v"))
        .collect();
    let recent = &lines[lines.len().saturating_sub(12)..];
    let names_an_error = |l: &&&str| {
        let head = l.split([':', ' ']).next().unwrap_or_default();
        head.ends_with("Error") || head.eq_ignore_ascii_case("error") || head.ends_with("Exception")
    };
    recent
        .iter()
        .rev()
        .find(names_an_error)
        .or(recent.last())
        .map_or_else(String::new, |l| (*l).to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stderr_line_chosen_names_the_error_not_a_stack_frame() {
        let node = "node:events:497\n      throw er; // Unhandled 'error' event\n      ^\n\n\
                    Error: connect ECONNREFUSED 127.0.0.1:443\n    at TCPConnectWrap.afterConnect (node:net:1555:16)\n\
                    Emitted 'error' event on Socket instance at:\n    at emitErrorNT (node:internal/streams/destroy:169:8)\n\
                    at emitErrorCloseNT (node:internal/streams/destroy:128:3) {\n  errno: -111,\n  code: 'ECONNREFUSED',\n}\n\nNode.js v20.20.2\n";
        assert_eq!(
            stderr_summary(node),
            "Error: connect ECONNREFUSED 127.0.0.1:443"
        );
        let python = "Traceback (most recent call last):\n  File \"x.py\", line 1\nRuntimeError: 401 Unauthorized\n";
        assert_eq!(stderr_summary(python), "RuntimeError: 401 Unauthorized");
        assert_eq!(stderr_summary("plain last words\n"), "plain last words");
    }
}
