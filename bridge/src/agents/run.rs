//! Running one delivery: spawn the command in its own process group, write the prompt to
//! stdin and close it, stream stdout through the decoder, and end with the reply or a failure.
//! A timeout or a cancel kills the whole group (agents start helpers of their own), and so does
//! dropping the run: when the bridge stops (`/exit`, Ctrl-C, SIGTERM), its runtime drops every
//! run in progress, and no agent or helper of one outlives it.

use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::process::Command;
use tokio::sync::{mpsc, oneshot};

use super::decode::{Decoder, Verdict, CUT_OFF};
use super::process::{self, GroupGuard};
use super::{AgentCommand, AgentType};

/// The reason recorded when a run is cancelled (`cancel{to}`, `/cancel`).
pub(crate) const CANCELLED: &str = "cancelled by the user: the agent was stopped";

/// The longest one command-line argument may be on Linux (`MAX_ARG_STRLEN`, 32 pages, less
/// the closing NUL). Claude's system part is an argument, so a longer one cannot be passed.
pub(crate) const MAX_ARGUMENT_BYTES: usize = 32 * 4096 - 1;

/// Why a delivery cannot be handed to `command` at all, if it cannot: a system flag longer
/// than one argument may be. Checked before anything is announced or spawned.
pub(crate) fn unsendable(command: &AgentCommand, system_flag: Option<&str>) -> Option<String> {
    let flag = system_flag?;
    (flag.len() > MAX_ARGUMENT_BYTES).then(|| {
        format!(
            "the system part is {} bytes, and it goes to {} as one command-line argument, which \
             holds at most {MAX_ARGUMENT_BYTES} bytes: shorten the member's system instruction or \
             instruction file (the CLI reads CLAUDE.md by itself)",
            flag.len(),
            command.command
        )
    })
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// The agent's final text, exactly.
    Replied(String),
    /// Why it failed, in the user's terms.
    Failed(String),
}

/// What one run needs.
pub(crate) struct Job<'a> {
    pub command: &'a AgentCommand,
    pub agent_type: AgentType,
    pub prompt: &'a str,
    /// Claude's system part, passed as `--append-system-prompt`.
    pub system_flag: Option<&'a str>,
    pub timeout: Duration,
}

/// Runs `job`; each text delta goes to `deltas` as it is decoded; `cancel` firing kills it.
/// Also returns the whole stdout, so a reply too big for the conversation is never lost.
pub(crate) async fn run(
    job: Job<'_>,
    deltas: mpsc::UnboundedSender<String>,
    cancel: oneshot::Receiver<()>,
) -> (Outcome, Vec<u8>) {
    if let Some(reason) = unsendable(job.command, job.system_flag) {
        return (Outcome::Failed(reason), Vec::new());
    }
    let mut cmd = Command::new(&job.command.command);
    cmd.args(&job.command.args);
    if let Some(flag) = job.system_flag {
        cmd.arg("--append-system-prompt").arg(flag);
    }
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    process::own_group(&mut cmd);
    let mut child = match cmd.spawn() {
        Ok(child) => child,
        Err(e) => {
            return (
                Outcome::Failed(format!("could not start {}: {e}", job.command.command)),
                Vec::new(),
            )
        }
    };
    let pid = child.id();
    let mut group = GroupGuard(pid);
    let mut stdin = child.stdin.take();
    let mut stdout = child.stdout.take();
    let stderr = child.stderr.take();
    let prompt = job.prompt.as_bytes().to_vec();
    // Write the prompt concurrently with reading, so a large prompt cannot deadlock on a
    // full pipe; then close stdin (the CLIs read until EOF).
    let writer = tokio::spawn(async move {
        if let Some(mut stdin) = stdin.take() {
            let _ = stdin.write_all(&prompt).await;
            let _ = stdin.shutdown().await;
        }
    });
    let stderr_kept = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let mut stderr_reader = tokio::spawn(stderr_tail(stderr, stderr_kept.clone()));

    let mut decoder = Decoder::new(job.command.output.unwrap_or(job.agent_type));
    let mut all = Vec::new();
    let mut stdout_done = false;
    let reading = async {
        let mut buf = vec![0u8; 16 * 1024];
        if let Some(out) = stdout.as_mut() {
            loop {
                match out.read(&mut buf).await {
                    Ok(0) | Err(_) => break,
                    Ok(n) => {
                        if all.len() < MAX_KEPT_OUTPUT {
                            all.extend_from_slice(&buf[..n]);
                        }
                        for delta in decoder.push(&buf[..n]) {
                            let _ = deltas.send(delta);
                        }
                    }
                }
            }
        }
        stdout_done = true;
    };
    // The run ends when the agent has exited and its output is read. Helpers it leaves behind
    // holding a pipe, or an agent that closed its output but keeps running, are not waited for
    // beyond a short grace: the timeout and a cancel hold over all of it.
    let ended = tokio::select! {
        ended = async {
            tokio::pin!(reading);
            tokio::select! {
                () = &mut reading => match tokio::time::timeout(AFTER_EXIT, child.wait()).await {
                    Ok(status) => Ended::Exited(status),
                    Err(_) => Ended::KeptRunning,
                },
                status = child.wait() => {
                    let _ = tokio::time::timeout(AFTER_EXIT, &mut reading).await;
                    Ended::Exited(status)
                }
            }
        } => Ok(ended),
        () = tokio::time::sleep(job.timeout) => Err(format!("no reply within {}: the agent was stopped", human(job.timeout))),
        _ = cancel => Err(CANCELLED.to_string()),
    };
    let status = match ended {
        Err(reason) => {
            drop(group); // kills the group
            let _ = child.wait().await;
            writer.abort();
            stderr_reader.abort();
            return (Outcome::Failed(cap(reason)), all);
        }
        Ok(Ended::KeptRunning) => {
            // Its output is closed and read: what it said stands; the process is stopped.
            group.kill();
            let _ = child.wait().await;
            None
        }
        Ok(Ended::Exited(status)) => Some(status),
    };
    // Helpers still holding stdout or stderr are stopped with the agent's group, and what the
    // agent itself wrote is kept. A holder outside the group (`setsid`) is not waited for:
    // after one more grace its pipe is left behind.
    let stderr_done = tokio::time::timeout(AFTER_EXIT, &mut stderr_reader)
        .await
        .is_ok();
    if !stdout_done || !stderr_done {
        group.kill();
        if !stderr_done
            && tokio::time::timeout(AFTER_EXIT, &mut stderr_reader)
                .await
                .is_err()
        {
            stderr_reader.abort();
        }
    }
    let stderr = {
        let kept = stderr_kept.lock().map(|k| k.clone()).unwrap_or_default();
        String::from_utf8_lossy(&kept).into_owned()
    };
    // Ended on its own: nothing more to kill (and its pid may be reused from here on).
    group.0 = None;
    writer.abort();
    let (last, verdict) = decoder.finish();
    for delta in last {
        let _ = deltas.send(delta);
    }
    let said_on_stderr = stderr_summary(&stderr);
    let outcome = match (status, verdict) {
        (None, Verdict::Reply(text)) => Outcome::Replied(text),
        (None, Verdict::Error(message)) => Outcome::Failed(message),
        (None, Verdict::CutOff) => Outcome::Failed(CUT_OFF.to_string()),
        (None, Verdict::Nothing) => Outcome::Failed(
            "the agent closed its output without a reply and did not exit: it was stopped"
                .to_string(),
        ),
        (Some(Ok(s)), Verdict::Reply(text)) if s.success() => Outcome::Replied(text),
        (Some(Ok(s)), Verdict::Error(message)) if s.success() => Outcome::Failed(message),
        (Some(Ok(s)), Verdict::CutOff) if s.success() => Outcome::Failed(CUT_OFF.to_string()),
        (Some(Ok(s)), Verdict::Nothing) if s.success() => {
            Outcome::Failed("the agent ended without a reply".to_string())
        }
        (Some(Ok(s)), verdict) => {
            // The agent's own error first, then what stderr says (a crash cuts the stream
            // off, and stderr says why better than the cut does).
            let said = match verdict {
                Verdict::Error(m) => m,
                _ if !said_on_stderr.is_empty() => said_on_stderr,
                Verdict::CutOff => CUT_OFF.to_string(),
                _ => "no message".to_string(),
            };
            let code = s
                .code()
                .map_or_else(|| "a signal".to_string(), |c| format!("code {c}"));
            Outcome::Failed(format!(
                "{} exited with {code}: {said}",
                job.command.command
            ))
        }
        (Some(Err(e)), _) => {
            Outcome::Failed(format!("could not wait for {}: {e}", job.command.command))
        }
    };
    let outcome = match outcome {
        Outcome::Failed(reason) => Outcome::Failed(cap(reason)),
        replied => replied,
    };
    (outcome, all)
}

/// How long an agent gets, after it exited, to have its output read (and after closing its
/// output, to exit) before whatever holds the pipes is stopped.
const AFTER_EXIT: Duration = Duration::from_millis(500);
/// The stdout kept for a reply too big for the conversation or a failed run (stored whole up
/// to this; an output this long or longer was cut here).
pub(crate) const MAX_KEPT_OUTPUT: usize = 64 * 1024 * 1024;
/// The stderr kept: its end, where the reason for a failure is.
const STDERR_TAIL: usize = 64 * 1024;
/// The longest failure reason recorded (an agent's own error text can be megabytes).
const MAX_REASON: usize = 4 * 1024;

/// How the agent's process ended.
enum Ended {
    Exited(std::io::Result<std::process::ExitStatus>),
    /// It closed its output but did not exit.
    KeptRunning,
}

/// Reads stderr to its end — an agent writing more than a pipe holds must never block, or die
/// of a closed pipe — keeping its last [`STDERR_TAIL`] bytes in `kept` as it goes (so a reader
/// stopped early still leaves what it read).
async fn stderr_tail(
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
fn stderr_summary(stderr: &str) -> String {
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

/// A failure reason of at most [`MAX_REASON`] bytes, cut at a character boundary.
fn cap(reason: String) -> String {
    if reason.len() <= MAX_REASON {
        return reason;
    }
    let end = agent_chatter::text::floor_char_boundary(&reason, MAX_REASON);
    format!("{} … ({} more bytes)", &reason[..end], reason.len() - end)
}

/// `300 ms`, `1.5 s`, `30 s`, `30 min`: exact, so a timeout set to 1500 ms never reads `1 s`.
fn human(d: Duration) -> String {
    let ms = d.as_millis();
    match (ms / 1000, ms % 1000) {
        (0, _) => format!("{ms} ms"),
        (s, 0) if s % 60 == 0 => format!("{} min", s / 60),
        (s, 0) => format!("{s} s"),
        (s, rest) => format!("{}.{} s", s, format!("{rest:03}").trim_end_matches('0')),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str) -> AgentCommand {
        AgentCommand {
            command: "/bin/sh".into(),
            args: vec!["-c".into(), script.into()],
            output: Some(AgentType::Command),
        }
    }

    async fn go(command: &AgentCommand, prompt: &str, timeout: Duration) -> (Outcome, String) {
        let (tx, mut rx) = mpsc::unbounded_channel();
        let (_cancel_tx, cancel) = oneshot::channel();
        let job = Job {
            command,
            agent_type: AgentType::Command,
            prompt,
            system_flag: None,
            timeout,
        };
        let (outcome, _) = run(job, tx, cancel).await;
        let mut deltas = String::new();
        while let Ok(d) = rx.try_recv() {
            deltas.push_str(&d);
        }
        (outcome, deltas)
    }

    #[tokio::test]
    async fn the_prompt_goes_on_stdin_and_the_output_is_the_reply() {
        let big = "é".repeat(200_000);
        let (outcome, deltas) = go(&sh("wc -c"), &big, Duration::from_secs(10)).await;
        assert_eq!(outcome, Outcome::Replied("400000".into()));
        assert_eq!(deltas, "400000\n");
    }

    #[tokio::test]
    async fn a_system_flag_longer_than_one_argument_holds_is_a_failure_saying_so() {
        // `sh -c 'script' <arg0> <flag>`: the script prints the flag's length.
        let command = AgentCommand {
            command: "/bin/sh".into(),
            args: vec!["-c".into(), "printf %s \"$2\" | wc -c".into(), "sh".into()],
            output: Some(AgentType::Command),
        };
        for (bytes, fits) in [(MAX_ARGUMENT_BYTES, true), (MAX_ARGUMENT_BYTES + 1, false)] {
            let flag = "s".repeat(bytes);
            let (tx, _rx) = mpsc::unbounded_channel();
            let (_cancel_tx, cancel) = oneshot::channel();
            let job = Job {
                command: &command,
                agent_type: AgentType::Command,
                prompt: "x",
                system_flag: Some(&flag),
                timeout: Duration::from_secs(10),
            };
            let (outcome, _) = run(job, tx, cancel).await;
            if fits {
                assert_eq!(outcome, Outcome::Replied(bytes.to_string()));
            } else {
                let Outcome::Failed(reason) = outcome else {
                    panic!("{outcome:?}")
                };
                assert!(
                    reason.starts_with("the system part is 131072 bytes")
                        && reason.contains("at most 131071 bytes"),
                    "{reason}"
                );
            }
        }
    }

    #[tokio::test]
    async fn a_chatty_stderr_never_kills_the_agent() {
        // 1 MB of logs: the pipe is read to its end, so the agent neither blocks nor dies.
        let script = "set -e; head -c 1000000 /dev/zero | tr '\\0' 'e' >&2; echo done";
        let (outcome, _) = go(&sh(script), "x", Duration::from_secs(20)).await;
        assert_eq!(outcome, Outcome::Replied("done".into()));
    }

    #[tokio::test]
    async fn helpers_holding_a_pipe_or_an_agent_that_closed_its_output_are_not_waited_for() {
        for script in [
            // A helper keeps stdout open after the agent exited.
            "(sleep 20; echo late) & echo answered",
            // A helper keeps stdout open but not stderr.
            "(sleep 20; echo late) 2>/dev/null & echo answered",
            // A helper outside the agent's group (its own session) keeps stderr open.
            "setsid sleep 20 >/dev/null & echo answered",
            // A helper keeps stderr open.
            "(sleep 20) >/dev/null & echo answered",
            // The agent closes its output and keeps running.
            "echo answered; exec 1>&-; sleep 20",
        ] {
            let started = std::time::Instant::now();
            let (outcome, _) = go(&sh(script), "x", Duration::from_secs(15)).await;
            assert_eq!(outcome, Outcome::Replied("answered".into()), "{script}");
            assert!(
                started.elapsed() < Duration::from_secs(5),
                "{script}: {:?}",
                started.elapsed()
            );
        }
    }

    #[tokio::test]
    async fn a_failure_names_the_stderr_line_that_says_why_and_is_kept_short() {
        let script =
            "echo 'Error: ANTHROPIC_API_KEY is not set' >&2; echo '    at main (x.js:1)' >&2; \
                      echo 'Node.js v20.20.2' >&2; exit 1";
        let (outcome, _) = go(&sh(script), "x", Duration::from_secs(10)).await;
        assert_eq!(
            outcome,
            Outcome::Failed(
                "/bin/sh exited with code 1: Error: ANTHROPIC_API_KEY is not set".into()
            )
        );
        let long = format!("echo '{}' >&2; exit 1", "Error ".repeat(2000));
        let (Outcome::Failed(reason), _) = go(&sh(&long), "x", Duration::from_secs(10)).await
        else {
            panic!("a failure")
        };
        assert!(
            reason.len() < 4200 && reason.ends_with("more bytes)"),
            "{}",
            reason.len()
        );
    }

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

    #[tokio::test]
    async fn a_crash_is_a_failure_naming_the_exit_code_and_stderr() {
        let (outcome, _) = go(&sh("echo boom >&2; exit 3"), "x", Duration::from_secs(10)).await;
        assert_eq!(
            outcome,
            Outcome::Failed("/bin/sh exited with code 3: boom".into())
        );
    }

    #[tokio::test]
    async fn a_hang_is_killed_with_its_children_at_the_timeout() {
        let started = std::time::Instant::now();
        let (outcome, _) = go(
            &sh("sleep 30 & sleep 30; echo late"),
            "x",
            Duration::from_millis(300),
        )
        .await;
        assert_eq!(
            outcome,
            Outcome::Failed("no reply within 300 ms: the agent was stopped".into())
        );
        assert!(started.elapsed() < Duration::from_secs(5));
    }

    /// Whether `pid` runs (a zombie, killed and waiting for its reaper, does not).
    fn alive(pid: &str) -> bool {
        std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
            stat.rsplit(") ")
                .next()
                .is_some_and(|s| !s.starts_with('Z'))
        })
    }

    /// Waits up to 5 s for `file` to hold a pid.
    async fn helper_pid(file: &std::path::Path) -> String {
        for _ in 0..500 {
            if let Ok(pid) = std::fs::read_to_string(file) {
                if !pid.trim().is_empty() {
                    return pid.trim().to_string();
                }
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("the agent never wrote its helper's pid");
    }

    async fn gone(pid: &str) -> bool {
        for _ in 0..500 {
            if !alive(pid) {
                return true;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        false
    }

    #[tokio::test]
    async fn a_dropped_run_kills_the_agent_and_the_helpers_it_started() {
        // What happens to a run in progress when the bridge stops (`/exit`, Ctrl-C, SIGTERM):
        // the runtime drops it.
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("helper.pid");
        let script = format!("sleep 30 & echo $! > '{}'; sleep 30", file.display());
        let command = sh(&script);
        let running = tokio::spawn(async move { go(&command, "x", Duration::from_secs(60)).await });
        let helper = helper_pid(&file).await;
        assert!(alive(&helper));
        running.abort();
        assert!(
            gone(&helper).await,
            "the agent's helper {helper} outlived the run"
        );
    }

    #[tokio::test]
    async fn a_timeout_kills_the_helpers_too() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("helper.pid");
        let script = format!("sleep 30 & echo $! > '{}'; sleep 30", file.display());
        let (outcome, _) = go(&sh(&script), "x", Duration::from_millis(500)).await;
        assert!(matches!(outcome, Outcome::Failed(_)));
        let helper = helper_pid(&file).await;
        assert!(
            gone(&helper).await,
            "the agent's helper {helper} outlived the timeout"
        );
    }

    #[test]
    fn durations_read_exactly() {
        for (ms, want) in [
            (300, "300 ms"),
            (1500, "1.5 s"),
            (1250, "1.25 s"),
            (30_000, "30 s"),
            (1_800_000, "30 min"),
            (90_000, "90 s"),
        ] {
            assert_eq!(human(Duration::from_millis(ms)), want);
        }
    }

    #[tokio::test]
    async fn a_missing_program_is_a_failure() {
        let command = AgentCommand {
            command: "agent-chatter-no-such-cli".into(),
            args: vec![],
            output: None,
        };
        let (outcome, _) = go(&command, "x", Duration::from_secs(1)).await;
        assert!(
            matches!(outcome, Outcome::Failed(m) if m.starts_with("could not start agent-chatter-no-such-cli"))
        );
    }
}
