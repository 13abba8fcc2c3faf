//! Running one delivery over ACP, the Agent Client Protocol (docs/architecture.md §14d), with the protocol's
//! own SDK (`agent-client-protocol`): the agent starts in its own process group as a CLI run
//! does, then one ACP session per delivery — `initialize`, `session/new` in the member's
//! `baseDir` with the system part as `systemPrompt` (append), its mode and model set, and one
//! `session/prompt` whose one text block is the previewed prompt. Text chunks make the reply;
//! tool calls, plans, thoughts and the context fill are activity; a permission request is
//! answered by the member's rule or put to a person. The prompt's `stopReason` is the outcome.

mod frames;
mod policy;
mod session;
mod updates;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use agent_chatter::activity::{Activity, ApprovalRequest, DecidedBy};
use agent_chatter::session::Failure;
use agent_chatter::team::PermissionMode;
use agent_chatter::usage::Usage;
use tokio::process::Command;
use tokio::sync::{mpsc, oneshot};

pub(crate) use policy::Approve;
pub(crate) use policy::DEFAULT_APPROVAL_TIMEOUT;

use super::process::{self, GroupGuard};
use super::reason::{cap, human};
use super::run::{Outcome, Output, Ran, CANCELLED};
use super::stderr::{stderr_summary, stderr_tail};
use super::AgentCommand;

/// What one run over ACP needs.
pub(crate) struct AcpJob<'a> {
    pub command: &'a AgentCommand,
    /// The member, for errors and approval ids.
    pub member: &'a str,
    /// The run's number in the hub, for approval ids unique within the session.
    pub run: u64,
    pub prompt: &'a str,
    /// The system part, sent as `systemPrompt` (append).
    pub system: Option<&'a str>,
    pub model: Option<&'a str>,
    pub permission_mode: Option<PermissionMode>,
    pub approve: Approve,
    pub approval_timeout: Duration,
    pub timeout: Duration,
}

/// What a run tells its host while it runs.
pub(crate) enum Signal {
    /// Something to show and keep with the run.
    Activity(Activity),
    /// A question for a person; the answer (an option id, and who gave it) comes back on
    /// `answer`. Dropping `answer` unanswered withdraws nothing: the timeout answers.
    Ask {
        request: ApprovalRequest,
        answer: oneshot::Sender<(String, DecidedBy)>,
    },
}

/// Where a run's stream goes.
pub(crate) struct Streams {
    pub deltas: mpsc::UnboundedSender<String>,
    pub signals: mpsc::UnboundedSender<Signal>,
}

/// How long an agent gets to answer `initialize` and `session/new` (an adapter starts Node
/// and reads its config first).
const START_TIMEOUT: Duration = Duration::from_secs(60);
/// How long an agent gets, after our `session/cancel`, to end its turn before its group is
/// stopped.
const CANCEL_GRACE: Duration = Duration::from_secs(3);

/// Why a member's ACP settings could not be confirmed at start ([`check`]).
pub(crate) enum Unchecked {
    /// The agent does not offer the mode or model set (the error names member and value).
    Refused(String),
    /// The agent could not be asked (it did not start, or broke off): its first run will say.
    Unasked(String),
}

/// Opens a session with `job`'s agent, sets its mode and model, and stops the agent without a
/// prompt (nothing reaches a model): the check at start of docs/architecture.md §14d, so a
/// value the agent does not offer is found before any run, not at the member's first
/// delivery after others' paid runs.
pub(crate) async fn check(job: AcpJob<'_>) -> Result<(), Unchecked> {
    let mut child = spawn(&job).map_err(Unchecked::Unasked)?;
    let mut group = GroupGuard::new(child.id());
    let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
        return Err(Unchecked::Unasked("no pipe to the agent".to_string()));
    };
    let stderr = tokio::spawn(stderr_tail(child.stderr.take(), Arc::default()));
    let opened = tokio::time::timeout(job.timeout, session::open_only(&job, stdin, stdout)).await;
    stop(&mut child, &mut group, stderr).await;
    opened.unwrap_or_else(|_| {
        Err(Unchecked::Unasked(format!(
            "no session within {}",
            human(job.timeout)
        )))
    })
}

/// Starts `job`'s agent in a process group of its own, its stdio piped.
fn spawn(job: &AcpJob<'_>) -> Result<tokio::process::Child, String> {
    let mut cmd = Command::new(&job.command.command);
    cmd.args(&job.command.args);
    cmd.envs(&job.command.env);
    if let Some(dir) = &job.command.dir {
        cmd.current_dir(dir);
    }
    cmd.stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    process::own_group(&mut cmd);
    cmd.spawn()
        .map_err(|e| format!("could not start {}: {e}", job.command.command))
}

/// Ends the agent, one way or another: it and its helpers go with its group, and any
/// descendant an adapter started in a session of its own (a tool's shell) with them; then a
/// moment for it to be reaped and for its stderr to be read to the end.
async fn stop(
    child: &mut tokio::process::Child,
    group: &mut GroupGuard,
    stderr: tokio::task::JoinHandle<()>,
) {
    let strays = child.id().map(process::descendants).unwrap_or_default();
    group.kill();
    process::kill_each(&strays);
    let _ = tokio::time::timeout(Duration::from_secs(2), child.wait()).await;
    let _ = tokio::time::timeout(Duration::from_millis(500), stderr).await;
    group.release();
}

/// Runs `job` over ACP. The timeout holds over the whole run; `cancel` firing sends
/// `session/cancel`, and the group is stopped after [`CANCEL_GRACE`].
pub(crate) async fn run(job: AcpJob<'_>, streams: Streams, cancel: oneshot::Receiver<()>) -> Ran {
    let mut child = match spawn(&job) {
        Ok(child) => child,
        Err(why) => return failed(Failure::CannotRun, why),
    };
    let mut group = GroupGuard::new(child.id());
    let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
        return failed(Failure::CannotRun, "no pipe to the agent".to_string());
    };
    let stderr_kept = Arc::new(Mutex::new(Vec::new()));
    let stderr_reader = tokio::spawn(stderr_tail(child.stderr.take(), stderr_kept.clone()));
    let step = session::Step::default();
    let talk = session::talk(&job, stdin, stdout, streams, cancel, &step);
    let ended = tokio::time::timeout(job.timeout, talk).await;
    // A broken connection may be the agent dying: a moment to exit on its own, so its exit
    // status (not our kill) is what the failure names.
    let exit = match &ended {
        Ok(Talked::Broken { .. }) => {
            tokio::time::timeout(Duration::from_millis(500), child.wait()).await
        }
        _ => Ok(child
            .try_wait()
            .and_then(|s| s.ok_or_else(|| std::io::Error::other("still running")))),
    };
    stop(&mut child, &mut group, stderr_reader).await;
    let stderr = stderr_kept
        .lock()
        .map(|k| String::from_utf8_lossy(&k).into_owned())
        .unwrap_or_default();
    let (outcome, usage) = match ended {
        Ok(talked) => talked.verdict(&stderr, &job.command.command, exit),
        Err(_) => (
            Outcome::Failed(
                Failure::Timeout,
                match step.now() {
                    session::TURN => format!(
                        "no reply within {}: the agent was stopped",
                        human(job.timeout)
                    ),
                    step => format!(
                        "no reply within {}: the agent never answered {step}, and was stopped",
                        human(job.timeout)
                    ),
                },
            ),
            Usage::default(),
        ),
    };
    // A failed agent's stderr is what it said beyond the protocol (its stdout is the
    // protocol's): kept as its output, as a stream-json CLI's is, so "show output" and
    // `agent-chatter outputs` have it; a run the user cancelled keeps none.
    let output = match &outcome {
        Outcome::Failed(failure, _) if *failure != Failure::Cancelled => {
            Output::of(stderr.as_bytes())
        }
        _ => Output::default(),
    };
    Ran {
        outcome,
        usage,
        output,
        model: None,
    }
}

fn failed(failure: Failure, reason: String) -> Ran {
    Ran {
        outcome: Outcome::Failed(failure, reason),
        usage: Usage::default(),
        output: Output::default(),
        model: None,
    }
}

/// How the ACP conversation with the agent ended.
pub(crate) enum Talked {
    /// The prompt's response: its stop reason, the text streamed, the usage reported.
    Stopped {
        stop: agent_client_protocol::v1::schema::StopReason,
        text: String,
        usage: Usage,
        cancelled: bool,
        /// A tool call refused during the turn, in words.
        refused: Option<String>,
    },
    /// The user cancelled and the agent did not end its turn within the grace.
    Cancelled { usage: Usage },
    /// The connection failed: at which step, and why (the agent's JSON-RPC error, a closed
    /// pipe, a malformed frame).
    Broken { step: &'static str, why: String },
    /// The run cannot go on as set (a mode or model the agent does not offer, a system part
    /// it does not take).
    Refused(String),
}

impl Talked {
    /// The run's outcome and usage (docs/architecture.md §14c, §14d): `end_turn` is a
    /// reply, `max_tokens` and `max_turn_requests` an incomplete one, `refusal` a failure,
    /// `cancelled` a cancel; a broken connection is a crash when the agent exited, else an
    /// error of the agent's.
    fn verdict(
        self,
        stderr: &str,
        command: &str,
        exit: Result<std::io::Result<std::process::ExitStatus>, tokio::time::error::Elapsed>,
    ) -> (Outcome, Usage) {
        use agent_client_protocol::v1::schema::StopReason;
        match self {
            Talked::Stopped {
                cancelled: true,
                usage,
                ..
            }
            | Talked::Cancelled { usage } => (
                Outcome::Failed(Failure::Cancelled, CANCELLED.to_string()),
                usage,
            ),
            Talked::Stopped {
                stop,
                text,
                usage,
                refused,
                ..
            } => {
                let outcome = match stop {
                    StopReason::EndTurn if text.trim().is_empty() => Outcome::Failed(
                        Failure::EmptyReply,
                        "the agent ended its turn without a reply".to_string(),
                    ),
                    StopReason::EndTurn => Outcome::Replied(text),
                    StopReason::MaxTokens => Outcome::Incomplete {
                        text,
                        reason: "the agent reached its output token limit (max_tokens)".into(),
                    },
                    StopReason::MaxTurnRequests => Outcome::Incomplete {
                        text,
                        reason: "the agent reached its limit of model requests in one turn \
                                 (max_turn_requests)"
                            .into(),
                    },
                    StopReason::Refusal => Outcome::Failed(
                        Failure::AgentError,
                        "the agent refused to answer (stopReason refusal)".to_string(),
                    ),
                    // Codex's adapter ends the turn when a tool call is refused.
                    StopReason::Cancelled => match refused {
                        Some(refused) if !text.trim().is_empty() => Outcome::Incomplete {
                            text,
                            reason: format!("the agent stopped its turn: {refused}"),
                        },
                        Some(refused) => Outcome::Failed(
                            Failure::AgentError,
                            format!("the agent stopped its turn without a reply: {refused}"),
                        ),
                        None => Outcome::Failed(
                            Failure::AgentError,
                            "the agent ended its turn as cancelled, though no one cancelled it"
                                .to_string(),
                        ),
                    },
                    _ => Outcome::Failed(
                        Failure::AgentError,
                        "the agent ended its turn with a stop reason this bridge does not know"
                            .to_string(),
                    ),
                };
                (within_limit(outcome), usage)
            }
            Talked::Refused(why) => (Outcome::Failed(Failure::CannotRun, why), Usage::default()),
            Talked::Broken { step, why } => {
                let program = std::path::Path::new(command)
                    .file_name()
                    .and_then(|n| n.to_str())
                    .unwrap_or(command);
                let said = stderr_summary(stderr);
                let exited = match exit {
                    Ok(Ok(status)) if !status.success() => Some(
                        status
                            .code()
                            .map_or_else(|| "a signal".to_string(), |c| format!("code {c}")),
                    ),
                    _ => None,
                };
                let outcome = match exited {
                    Some(code) => Outcome::Failed(
                        Failure::Crashed,
                        cap(format!(
                            "{program} exited during {step} with {code}{}",
                            if said.is_empty() {
                                String::new()
                            } else {
                                format!(": {said}")
                            }
                        )),
                    ),
                    None => Outcome::Failed(
                        Failure::AgentError,
                        cap(format!("{program} failed during {step}: {why}")),
                    ),
                };
                (outcome, Usage::default())
            }
        }
    }
}

/// `outcome`, unless its text is over the message limit: then the failure saying so (the reply
/// is assembled here from the agent's chunks; the stream decoders check their own).
fn within_limit(outcome: Outcome) -> Outcome {
    let len = match &outcome {
        Outcome::Replied(text) | Outcome::Incomplete { text, .. } => text.len(),
        Outcome::Failed(..) => 0,
    };
    if len > agent_chatter::message::MAX_MESSAGE_BYTES {
        return Outcome::Failed(
            Failure::TooLarge,
            super::decode::above_the_limit(len as u64),
        );
    }
    outcome
}
