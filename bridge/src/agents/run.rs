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

use super::decode::{Decoder, Verdict};
use super::{AgentCommand, AgentType};

/// The reason recorded when a run is cancelled (`cancel{to}`, `/cancel`).
pub const CANCELLED: &str = "cancelled by the user: the agent was stopped";

/// The longest one command-line argument may be on Linux (`MAX_ARG_STRLEN`, 32 pages, less
/// the closing NUL). Claude's system part is an argument, so a longer one cannot be passed.
pub const MAX_ARGUMENT_BYTES: usize = 32 * 4096 - 1;

/// Why a delivery cannot be handed to `command` at all, if it cannot: a system flag longer
/// than one argument may be. Checked before anything is announced or spawned.
pub fn unsendable(command: &AgentCommand, system_flag: Option<&str>) -> Option<String> {
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
pub enum Outcome {
    /// The agent's final text, exactly.
    Replied(String),
    /// Why it failed, in the user's terms.
    Failed(String),
}

/// What one run needs.
pub struct Job<'a> {
    pub command: &'a AgentCommand,
    pub agent_type: AgentType,
    pub prompt: &'a str,
    /// Claude's system part, passed as `--append-system-prompt`.
    pub system_flag: Option<&'a str>,
    pub timeout: Duration,
}

/// Runs `job`; each text delta goes to `deltas` as it is decoded; `cancel` firing kills it.
/// Also returns the whole stdout, so a reply too big for the conversation is never lost.
pub async fn run(
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
        .stderr(Stdio::piped())
        .process_group(0);
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
    let mut stderr = child.stderr.take();
    let prompt = job.prompt.as_bytes().to_vec();
    // Write the prompt concurrently with reading, so a large prompt cannot deadlock on a
    // full pipe; then close stdin (the CLIs read until EOF).
    let writer = tokio::spawn(async move {
        if let Some(mut stdin) = stdin.take() {
            let _ = stdin.write_all(&prompt).await;
            let _ = stdin.shutdown().await;
        }
    });
    let stderr_reader = tokio::spawn(async move {
        let mut buf = Vec::new();
        if let Some(stderr) = stderr.as_mut() {
            let _ = stderr.take(64 * 1024).read_to_end(&mut buf).await;
        }
        String::from_utf8_lossy(&buf).into_owned()
    });

    let mut decoder = Decoder::new(job.command.output.unwrap_or(job.agent_type));
    let mut all = Vec::new();
    let reading = async {
        let mut buf = vec![0u8; 16 * 1024];
        if let Some(out) = stdout.as_mut() {
            loop {
                match out.read(&mut buf).await {
                    Ok(0) | Err(_) => break,
                    Ok(n) => {
                        all.extend_from_slice(&buf[..n]);
                        for delta in decoder.push(&buf[..n]) {
                            let _ = deltas.send(delta);
                        }
                    }
                }
            }
        }
    };
    let stopped = tokio::select! {
        () = reading => None,
        () = tokio::time::sleep(job.timeout) => Some(format!("no reply within {}: the agent was stopped", human(job.timeout))),
        _ = cancel => Some(CANCELLED.to_string()),
    };
    if let Some(reason) = stopped {
        drop(group); // kills the group
        let _ = child.wait().await;
        writer.abort();
        return (Outcome::Failed(reason), all);
    }
    let status = child.wait().await;
    // Ended on its own: nothing to kill (and its pid may be reused from here on).
    group.0 = None;
    let _ = writer.await;
    let stderr = stderr_reader.await.unwrap_or_default();
    let (last, verdict) = decoder.finish();
    for delta in last {
        let _ = deltas.send(delta);
    }
    let last_stderr = stderr
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim()
        .to_string();
    let outcome = match (status, verdict) {
        (Ok(s), Verdict::Reply(text)) if s.success() => Outcome::Replied(text),
        (Ok(s), Verdict::Error(message)) if s.success() => Outcome::Failed(message),
        (Ok(s), Verdict::Nothing) if s.success() => {
            Outcome::Failed("the agent ended without a reply".to_string())
        }
        (Ok(s), verdict) => {
            let said = match verdict {
                Verdict::Error(m) => m,
                _ if !last_stderr.is_empty() => last_stderr,
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
        (Err(e), _) => Outcome::Failed(format!("could not wait for {}: {e}", job.command.command)),
    };
    (outcome, all)
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

/// The agent's process group while it runs: dropped before the agent ended on its own (a
/// timeout, a cancel, or the run itself dropped), it kills the group — the agent and
/// everything it started. (`kill_on_drop` would kill the agent alone, orphaning its helpers.)
struct GroupGuard(Option<u32>);

impl Drop for GroupGuard {
    fn drop(&mut self) {
        let Some(pid) = self.0.and_then(|p| i32::try_from(p).ok()) else {
            return;
        };
        // SAFETY: kill(2) with a negative pid signals the process group; no memory is shared.
        unsafe {
            libc::kill(-pid, libc::SIGKILL);
        }
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
