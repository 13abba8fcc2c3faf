//! Running one delivery: spawn the command in its own process group, write the prompt to
//! stdin and close it, stream stdout (a file the agent writes) through the decoder as it
//! grows, and end with the reply or a failure when the agent's final event arrives, when its
//! stdout is closed, or when it exits, whichever comes first; an agent that does not exit
//! within half a second of the first two is stopped with its group.
//! A timeout or a cancel kills the whole group (agents start helpers of their own), and so does
//! dropping the run: when the bridge stops (`/exit`, Ctrl-C, SIGTERM), its runtime drops every
//! run in progress, and no agent or helper of one outlives it.

use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::AsyncWriteExt;
use tokio::process::Command;
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

use agent_chatter::session::Failure;
use agent_chatter::usage::Usage;

use super::decode::{Decoder, Overlong, Retry, Verdict, CUT_OFF, MAX_LINE_BYTES};
use super::process::{self, GroupGuard};
use super::reason::{cap, cap_to, human, MAX_REASON};
use super::stderr::{stderr_summary, stderr_tail};
pub(crate) use super::tail::Output;
use super::tail::{reader_of, Closed, Tail};
#[cfg(test)]
use super::tail::{KEPT_END, READ_BYTES};
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

/// How a run ended (docs/architecture.md §14c): exactly one of a reply, a reply marked
/// incomplete, or a failure.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// The agent's final text, exactly.
    Replied(String),
    /// What the agent said, and the CLI's reason it may be cut short.
    Incomplete { text: String, reason: String },
    /// The kind of failure, and why it failed in the user's terms.
    Failed(Failure, String),
}

/// A run's outcome, what it cost, and what is kept of its output.
#[derive(Debug)]
pub(crate) struct Ran {
    pub outcome: Outcome,
    pub usage: Usage,
    pub output: Output,
    /// The model the CLI's stream said answers, when it named one.
    pub model: Option<String>,
}

impl Ran {
    fn failed(failure: Failure, reason: String) -> Ran {
        Ran {
            outcome: Outcome::Failed(failure, reason),
            usage: Usage::default(),
            output: Output::default(),
            model: None,
        }
    }
}

/// What one run needs.
pub(crate) struct Job<'a> {
    pub command: &'a AgentCommand,
    pub agent_type: AgentType,
    pub prompt: &'a str,
    /// Claude's system part, passed as `--append-system-prompt`.
    pub system_flag: Option<&'a str>,
    pub timeout: Duration,
    /// Where the retries the CLI reports go, as they happen.
    pub retries: Option<mpsc::UnboundedSender<Retry>>,
}

/// Runs `job`; each text delta goes to `deltas` as it is decoded; `cancel` firing kills it.
/// Also returns what is kept of stdout ([`Output`]), so a reply too big for the conversation
/// is never lost unseen. In steps: [`spawn`] the agent, [`pump`] its output until it has said
/// all or exited, [`settle`] its helpers and stderr, and read the [`verdict`].
pub(crate) async fn run(
    job: Job<'_>,
    deltas: mpsc::UnboundedSender<String>,
    cancel: oneshot::Receiver<()>,
) -> Ran {
    if let Some(reason) = unsendable(job.command, job.system_flag) {
        return Ran::failed(Failure::CannotRun, reason);
    }
    let Agent {
        mut child,
        mut group,
        writer,
        mut stderr_reader,
        stderr_kept,
        stdout,
        closed,
    } = match spawn(&job) {
        Ok(agent) => agent,
        Err(reason) => return Ran::failed(Failure::CannotRun, reason),
    };
    let mut tail = Tail::new(
        stdout,
        Decoder::new(job.command.output.unwrap_or(job.agent_type)),
        job.retries,
        closed,
    );
    let status = match pump(&mut tail, &mut child, &deltas, job.timeout, cancel).await {
        Ok(Ended::Exited(status)) => Some(status),
        // All said: half a second to exit on its own (its exit status then counts as it
        // would have), then it is stopped with its group.
        Ok(Ended::Said) => match tokio::time::timeout(AFTER_EXIT, child.wait()).await {
            Ok(status) => Some(status),
            Err(_) => {
                group.kill();
                let _ = child.wait().await;
                None
            }
        },
        Err((failure, reason)) => {
            drop(group); // kills the group
            let _ = child.wait().await;
            writer.abort();
            stderr_reader.abort();
            return Ran {
                outcome: Outcome::Failed(failure, cap(reason)),
                usage: tail.decoder.usage(),
                model: tail.decoder.model(),
                output: tail.output,
            };
        }
    };
    let stderr = settle(
        &mut group,
        &mut stderr_reader,
        &stderr_kept,
        &mut tail,
        &deltas,
    )
    .await;
    // Over: nothing more to kill (and its pid may be reused from here on).
    group.release();
    writer.abort();
    let Tail {
        decoder, output, ..
    } = tail;
    let overlong = decoder.overlong();
    let usage = decoder.usage();
    let model = decoder.model();
    let (last, said) = decoder.finish();
    for delta in last {
        let _ = deltas.send(delta);
    }
    let outcome = match verdict(status, said, &stderr, &job.command.command) {
        Outcome::Failed(failure, reason) => {
            Outcome::Failed(failure, with_overlong(cap(reason), overlong))
        }
        other => other,
    };
    Ran {
        outcome,
        usage,
        output,
        model,
    }
}

/// An agent started: its process and group, the task writing its prompt, the task keeping the
/// end of its stderr (and what it kept), and the file it writes its stdout to, with the watch
/// that says when that is closed.
struct Agent {
    child: tokio::process::Child,
    group: GroupGuard,
    writer: JoinHandle<()>,
    stderr_reader: JoinHandle<()>,
    stderr_kept: Arc<Mutex<Vec<u8>>>,
    stdout: std::fs::File,
    closed: Option<Closed>,
}

/// The program and arguments `command` is started with, `system_flag` (Claude's system part)
/// as `--append-system-prompt` last: what a person runs to start it again by hand (the prompt
/// goes on stdin; environment variables are not in it).
pub(crate) fn argv(command: &AgentCommand, system_flag: Option<&str>) -> Vec<String> {
    let mut argv = vec![command.command.clone()];
    argv.extend(command.args.iter().cloned());
    if let Some(flag) = system_flag {
        argv.push("--append-system-prompt".to_string());
        argv.push(flag.to_string());
    }
    argv
}

/// Starts `job`'s command in a process group of its own, its stdout a file (see [`Tail`]), its
/// prompt written to stdin and stdin closed, its stderr read as it comes; or why it could not.
fn spawn(job: &Job<'_>) -> Result<Agent, String> {
    // stdout is a regular file, read as it grows: an agent writes a file synchronously, where
    // a CLI writing a pipe may exit with its last events still queued and lose them (claude
    // 2.1.197 does, when the reader lags). Unlinked: nothing is left on disk.
    let (stdout, agent_stdout) = tempfile::tempfile()
        .and_then(|f| {
            let ours = reader_of(&f)?;
            Ok((ours, f))
        })
        .map_err(|e| {
            format!(
                "could not start {}: no file for its output: {e}",
                job.command.command
            )
        })?;
    let mut cmd = Command::new(&job.command.command);
    // The arguments as the run's details say them ([`argv`]).
    cmd.args(&argv(job.command, job.system_flag)[1..]);
    // The member's run settings (docs/architecture.md §14c): its variables on top of the
    // bridge's environment, its working directory.
    cmd.envs(&job.command.env);
    if let Some(dir) = &job.command.dir {
        cmd.current_dir(dir);
    }
    // Watched before the agent can close it.
    let closed = Closed::watch(&stdout);
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::from(agent_stdout))
        .stderr(Stdio::piped());
    process::own_group(&mut cmd);
    let spawned = cmd.spawn();
    drop(cmd); // its copy of the agent's stdout
    let mut child = spawned.map_err(|e| format!("could not start {}: {e}", job.command.command))?;
    let group = GroupGuard::new(child.id());
    let mut stdin = child.stdin.take();
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
    let stderr_kept = Arc::new(Mutex::new(Vec::new()));
    let stderr_reader = tokio::spawn(stderr_tail(stderr, stderr_kept.clone()));
    Ok(Agent {
        child,
        group,
        writer,
        stderr_reader,
        stderr_kept,
        stdout,
        closed,
    })
}

/// Reads the agent's output into `tail` until it has said all: its final event arrived, or
/// its stdout was closed (by it and every helper holding a copy) and read to its end, or it
/// exited, whichever comes first. The timeout and a cancel hold over all of it: they end it
/// with the failure they are.
async fn pump(
    tail: &mut Tail,
    child: &mut tokio::process::Child,
    deltas: &mpsc::UnboundedSender<String>,
    timeout: Duration,
    cancel: oneshot::Receiver<()>,
) -> Result<Ended, (Failure, String)> {
    tokio::select! {
        ended = async {
            loop {
                let read = tail.read(deltas).await;
                if tail.decoder.ended() {
                    break Ended::Said;
                }
                if read == 0 {
                    // Closed: everything it wrote before is in the file, so one more read
                    // takes the rest.
                    if tail.closed() {
                        tail.read(deltas).await;
                        break Ended::Said;
                    }
                    tokio::select! {
                        status = child.wait() => {
                            tail.read(deltas).await;
                            break Ended::Exited(status);
                        }
                        () = tokio::time::sleep(POLL) => {}
                    }
                }
            }
        } => Ok(ended),
        () = tokio::time::sleep(timeout) => Err((Failure::Timeout, format!("no reply within {}: the agent was stopped", human(timeout)))),
        _ = cancel => Err((Failure::Cancelled, CANCELLED.to_string())),
    }
}

/// Once the agent exited, or was stopped: helpers it left behind are stopped with its group,
/// once stderr is read to its end or after a short grace while one holds it (what they wrote
/// meanwhile is read too). A holder outside the group (`setsid`) is not waited for: after one
/// more grace its pipe is left behind. Then the rest of its output is read into `tail`.
/// Returns the end of stderr.
async fn settle(
    group: &mut GroupGuard,
    stderr_reader: &mut JoinHandle<()>,
    stderr_kept: &Mutex<Vec<u8>>,
    tail: &mut Tail,
    deltas: &mpsc::UnboundedSender<String>,
) -> String {
    let stderr_done = tokio::time::timeout(AFTER_EXIT, &mut *stderr_reader)
        .await
        .is_ok();
    group.kill();
    if !stderr_done
        && tokio::time::timeout(AFTER_EXIT, &mut *stderr_reader)
            .await
            .is_err()
    {
        stderr_reader.abort();
    }
    tail.read(deltas).await;
    let kept = stderr_kept.lock().map(|k| k.clone()).unwrap_or_default();
    String::from_utf8_lossy(&kept).into_owned()
}

/// The run's outcome from how the agent ended (`status`: its exit, or `None` when it was
/// stopped after saying all), what its stream said, and its stderr; `command` is the program
/// it ran.
fn verdict(
    status: Option<std::io::Result<std::process::ExitStatus>>,
    said: Verdict,
    stderr: &str,
    command: &str,
) -> Outcome {
    let said_on_stderr = stderr_summary(stderr);
    match (status, said) {
        (None, Verdict::Reply(text)) => Outcome::Replied(text),
        (_, Verdict::Incomplete { text, reason }) => Outcome::Incomplete { text, reason },
        (None, Verdict::Error(message)) => Outcome::Failed(Failure::AgentError, message),
        (_, Verdict::TooLarge(message)) => Outcome::Failed(Failure::TooLarge, message),
        (None, Verdict::CutOff) => Outcome::Failed(Failure::CutOff, CUT_OFF.to_string()),
        (None, Verdict::Nothing) => Outcome::Failed(
            Failure::EmptyReply,
            "the agent closed its output without a reply and did not exit: it was stopped"
                .to_string(),
        ),
        (Some(Ok(s)), Verdict::Reply(text)) if s.success() => Outcome::Replied(text),
        (Some(Ok(s)), Verdict::Error(message)) if s.success() => {
            Outcome::Failed(Failure::AgentError, message)
        }
        (Some(Ok(s)), Verdict::CutOff) if s.success() => {
            Outcome::Failed(Failure::CutOff, CUT_OFF.to_string())
        }
        (Some(Ok(s)), Verdict::Nothing) if s.success() => Outcome::Failed(
            Failure::EmptyReply,
            "the agent ended without a reply".to_string(),
        ),
        (Some(Ok(s)), verdict) => {
            // The agent's own error first, then what stderr says (a crash cuts the stream
            // off, and stderr says why better than the cut does).
            let (failure, said) = match verdict {
                Verdict::Error(m) => (Failure::AgentError, Some(m)),
                _ if !said_on_stderr.is_empty() => (Failure::Crashed, Some(said_on_stderr)),
                Verdict::CutOff => (Failure::Crashed, Some(CUT_OFF.to_string())),
                _ => (Failure::Crashed, None),
            };
            let code = s
                .code()
                .map_or_else(|| "a signal".to_string(), |c| format!("code {c}"));
            // The cause first: the page's status lines and columns are cut at their ends, and
            // the program's full path is in its run settings.
            let program = Path::new(command)
                .file_name()
                .and_then(|name| name.to_str())
                .unwrap_or(command);
            let exited = format!("{program} exited with {code}");
            let reason = match said {
                // Cut before the exit is added (with room for the cut's note), so a long
                // message never pushes the exit out.
                Some(said) => {
                    let room = MAX_REASON.saturating_sub(exited.len() + 40);
                    format!("{} ({exited})", cap_to(said, room))
                }
                None => exited,
            };
            Outcome::Failed(failure, reason)
        }
        (Some(Err(e)), _) => Outcome::Failed(
            Failure::Crashed,
            format!("could not wait for {command}: {e}"),
        ),
    }
}

/// How the wait for the agent ended (short of the timeout or a cancel).
enum Ended {
    /// It exited.
    Exited(std::io::Result<std::process::ExitStatus>),
    /// Its final event arrived, or its stdout was closed: all it had to say is read.
    Said,
}

/// How long an agent gets, once all it said is read, to exit before it is stopped; and how
/// long its helpers get, after it exited, to close stderr before they are stopped (and, when
/// one is outside its group, how long its pipe is read after that).
const AFTER_EXIT: Duration = Duration::from_millis(500);
/// How often the agent's output file is looked at while it writes nothing.
const POLL: Duration = Duration::from_millis(15);
/// `reason`, saying what of the output was dropped for its length, if anything.
fn with_overlong(reason: String, overlong: Overlong) -> String {
    match overlong.lines {
        0 => reason,
        1 => format!(
            "{reason} (a line of its output of {} bytes was dropped: a line may hold at most \
             {MAX_LINE_BYTES} bytes)",
            overlong.bytes
        ),
        n => format!(
            "{reason} ({n} lines of its output, {} bytes in all, were dropped: a line may hold \
             at most {MAX_LINE_BYTES} bytes)",
            overlong.bytes
        ),
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
            ..Default::default()
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
            retries: None,
        };
        let Ran { outcome, .. } = run(job, tx, cancel).await;
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
            ..Default::default()
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
                retries: None,
            };
            let Ran { outcome, .. } = run(job, tx, cancel).await;
            if fits {
                assert_eq!(outcome, Outcome::Replied(bytes.to_string()));
            } else {
                let Outcome::Failed(Failure::CannotRun, reason) = outcome else {
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
    async fn helpers_holding_the_output_or_stderr_are_not_waited_for() {
        for script in [
            // A helper keeps stdout open after the agent exited.
            "(sleep 20; echo late) & echo answered",
            // A helper keeps stdout open but not stderr.
            "(sleep 20; echo late) 2>/dev/null & echo answered",
            // A helper outside the agent's group (its own session) keeps stderr open.
            "setsid sleep 20 >/dev/null & echo answered",
            // A helper keeps stderr open.
            "(sleep 20) >/dev/null & echo answered",
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
    async fn an_agent_that_closed_its_output_and_runs_on_ends_its_run_then() {
        // Its output is a file: closing it (and a helper's copy) ends the run, not its exit.
        for script in [
            "echo answered; exec 1>&-; sleep 60",
            "echo answered; (exec 1>&-; sleep 60) & exec 1>&-; sleep 60",
        ] {
            let started = std::time::Instant::now();
            let (outcome, deltas) = go(&sh(script), "x", Duration::from_secs(120)).await;
            assert_eq!(outcome, Outcome::Replied("answered".into()), "{script}");
            assert_eq!(deltas, "answered\n");
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "{script}: {:?}",
                started.elapsed()
            );
        }
    }

    #[tokio::test]
    async fn a_helper_holding_the_output_keeps_the_run_reading_until_the_agent_exits() {
        // The agent closed its copy, a helper still writes: the reply waits for it (here,
        // for the agent's exit), and has what the helper wrote.
        let (outcome, _) = go(
            &sh("(sleep 0.2; echo late) & exec 1>&-; wait"),
            "x",
            Duration::from_secs(60),
        )
        .await;
        assert_eq!(outcome, Outcome::Replied("late".into()));
    }

    /// The writer gives up where a pipe is full, as a CLI that exits with its output still
    /// queued does (claude 2.1.197): its stdout non-blocking, it writes 2 MiB at once and
    /// exits at the first `EAGAIN`. Its output is a file, so all of it is written, however
    /// late the bridge reads.
    #[tokio::test]
    async fn a_reply_written_at_once_arrives_whole_however_soon_the_agent_exits() {
        let perl = "use Fcntl; fcntl(STDOUT, F_SETFL, fcntl(STDOUT, F_GETFL, 0) | O_NONBLOCK); \
                    my $d = ('x' x 2097152) . \"\\n\"; my $o = 0; while ($o < length $d) { \
                    my $n = syswrite(STDOUT, $d, length($d) - $o, $o); last unless defined $n; \
                    $o += $n } print STDERR \"wrote $o bytes\\n\"";
        let command = AgentCommand {
            command: "perl".into(),
            args: vec!["-e".into(), perl.into()],
            output: Some(AgentType::Command),
            ..Default::default()
        };
        // The reader is late: this runtime (one thread) is held up as soon as the agent runs.
        let late = tokio::spawn(async { std::thread::sleep(Duration::from_millis(500)) });
        let (outcome, deltas) = go(&command, "x", Duration::from_secs(30)).await;
        late.await.unwrap();
        assert_eq!(deltas.len(), (2 << 20) + 1, "{outcome:?}");
        assert_eq!(outcome, Outcome::Replied("x".repeat(2 << 20)));
    }

    #[tokio::test]
    async fn a_huge_output_is_streamed_whole_and_kept_in_part() {
        // One 50 MB line: it streams in bounded deltas; its first and last megabyte are kept.
        let script = "head -c 50000000 /dev/zero | tr '\\0' x; echo";
        let command = sh(script);
        let (tx, mut rx) = mpsc::unbounded_channel::<String>();
        let (_cancel_tx, cancel) = oneshot::channel();
        let job = Job {
            command: &command,
            agent_type: AgentType::Command,
            prompt: "x",
            system_flag: None,
            timeout: Duration::from_secs(60),
            retries: None,
        };
        let counting = tokio::spawn(async move {
            let (mut bytes, mut largest) = (0, 0);
            while let Some(d) = rx.recv().await {
                bytes += d.len();
                largest = largest.max(d.len());
            }
            (bytes, largest)
        });
        let Ran {
            outcome, output, ..
        } = run(job, tx, cancel).await;
        let (bytes, largest) = counting.await.unwrap();
        assert_eq!(bytes, 50_000_001);
        assert!(largest <= READ_BYTES, "{largest}");
        assert_eq!(
            outcome,
            Outcome::Failed(
                Failure::TooLarge,
                "reply of 50000001 bytes is above the 1048576 byte message limit".into()
            )
        );
        assert_eq!(output.dropped(), 50_000_001 - 2 * KEPT_END as u64);
        assert!(output.bytes().len() < 2 * KEPT_END + 100);
    }

    #[tokio::test]
    async fn a_line_too_long_to_read_is_named_in_the_failure() {
        let command = AgentCommand {
            output: Some(AgentType::Claude),
            ..sh("head -c 5000000 /dev/zero | tr '\\0' x; echo")
        };
        let (outcome, _) = go(&command, "x", Duration::from_secs(30)).await;
        assert_eq!(
            outcome,
            Outcome::Failed(
                Failure::EmptyReply,
                "the agent ended without a reply (a line of its output of 5000000 bytes was \
                 dropped: a line may hold at most 4194304 bytes)"
                    .into()
            )
        );
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
                Failure::Crashed,
                "Error: ANTHROPIC_API_KEY is not set (sh exited with code 1)".into()
            )
        );
        let long = format!("echo '{}' >&2; exit 1", "Error ".repeat(2000));
        let (Outcome::Failed(_, reason), _) = go(&sh(&long), "x", Duration::from_secs(10)).await
        else {
            panic!("a failure")
        };
        assert!(
            reason.len() <= 4096
                && reason.contains("more bytes)")
                && reason.ends_with("(sh exited with code 1)"),
            "{}",
            reason.len()
        );
    }

    #[tokio::test]
    async fn a_crash_is_a_failure_naming_stderr_then_the_exit_code() {
        for (script, reason) in [
            ("echo boom >&2; exit 3", "boom (sh exited with code 3)"),
            // Nothing said: the exit alone.
            ("exit 3", "sh exited with code 3"),
        ] {
            let (outcome, _) = go(&sh(script), "x", Duration::from_secs(10)).await;
            assert_eq!(outcome, Outcome::Failed(Failure::Crashed, reason.into()));
        }
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
            Outcome::Failed(
                Failure::Timeout,
                "no reply within 300 ms: the agent was stopped".into()
            )
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
        assert!(matches!(outcome, Outcome::Failed(..)));
        let helper = helper_pid(&file).await;
        assert!(
            gone(&helper).await,
            "the agent's helper {helper} outlived the timeout"
        );
    }

    #[tokio::test]
    async fn a_missing_program_is_a_failure() {
        let command = AgentCommand {
            command: "agent-chatter-no-such-cli".into(),
            args: vec![],
            output: None,
            ..Default::default()
        };
        let (outcome, _) = go(&command, "x", Duration::from_secs(1)).await;
        assert!(
            matches!(outcome, Outcome::Failed(Failure::CannotRun, m) if m.starts_with("could not start agent-chatter-no-such-cli"))
        );
    }
}
