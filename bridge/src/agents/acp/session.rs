//! One ACP session with the agent, from `initialize` to the prompt's response (docs/architecture.md §14d):
//! notifications and permission requests arrive through the SDK's handlers into channels, and
//! one loop here reads them beside the prompt's response, the approvals' answers and a cancel.

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Duration;

use agent_chatter::activity::{Activity, ApprovalRequest, DecidedBy, Decision, ToolCall};
use agent_chatter::usage::{Usage, Usd};
use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema as acp;
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{Agent, Client};
use tokio::process::{ChildStdin, ChildStdout};
use tokio::sync::{mpsc, oneshot};

use super::frames::{self, Malformed};
use super::policy::{self, allow_option, reject_option};
use super::updates::{self, Said};
use super::{AcpJob, Signal, Streams, Talked, Unchecked, CANCEL_GRACE, START_TIMEOUT};
use crate::agents::reason::human;
use crate::clock::now;

type Asked = (
    acp::RequestPermissionRequest,
    Responder<acp::RequestPermissionResponse>,
);

/// The step the session is at: what a timeout names when it cuts the run short.
#[derive(Default)]
pub(super) struct Step(std::sync::Mutex<&'static str>);

/// The step of the prompt's turn.
pub(super) const TURN: &str = "its turn";

impl Step {
    fn set(&self, step: &'static str) {
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = step;
    }

    pub(super) fn now(&self) -> &'static str {
        let step = *self.0.lock().unwrap_or_else(|e| e.into_inner());
        if step.is_empty() {
            "initialize"
        } else {
            step
        }
    }
}

/// Talks to the agent on its `stdin`/`stdout` until its turn ends, the connection breaks, or
/// a cancel's grace runs out; `step` follows where it is.
pub(super) async fn talk(
    job: &AcpJob<'_>,
    stdin: ChildStdin,
    stdout: ChildStdout,
    streams: Streams,
    cancel: oneshot::Receiver<()>,
    step: &Step,
) -> Talked {
    let (updates_tx, updates_rx) = mpsc::unbounded_channel::<acp::SessionNotification>();
    let (asks_tx, asks_rx) = mpsc::unbounded_channel::<Asked>();
    let malformed = Malformed::default();
    let transport = frames::transport(stdin, stdout, malformed.clone());
    let inbox = Inbox {
        updates: updates_rx,
        asks: asks_rx,
    };
    let talked = Client
        .v1()
        .name("agent-chatter")
        .on_receive_notification(
            async move |notification: acp::SessionNotification, _cx| {
                let _ = updates_tx.send(notification);
                Ok(())
            },
            agent_client_protocol::on_receive_notification!(),
        )
        .on_receive_request(
            async move |request: acp::RequestPermissionRequest, responder, _cx| {
                let _ = asks_tx.send((request, responder));
                Ok(())
            },
            agent_client_protocol::on_receive_request!(),
        )
        .connect_with(transport, async |cx: ConnectionTo<Agent>| {
            Ok(converse(&cx, job, streams, inbox, cancel, step).await)
        })
        .await;
    let talked = talked.unwrap_or_else(|e| Talked::Broken {
        step: "the connection",
        why: words(&e),
    });
    // What the agent printed that is no protocol says more than a closed connection does.
    match (talked, malformed.first()) {
        (Talked::Broken { step, .. }, Some(line)) => Talked::Broken {
            step,
            why: format!("it printed a line that is not ACP (JSON-RPC): {line:?}"),
        },
        (talked, _) => talked,
    }
}

/// Opens a session as a run would (`initialize`, `session/new`, its mode and model) and goes
/// no further: no prompt, so no model is asked anything. What the agent sends meanwhile is
/// dropped; it may ask nothing of a person before a prompt.
pub(super) async fn open_only(
    job: &AcpJob<'_>,
    stdin: ChildStdin,
    stdout: ChildStdout,
) -> Result<(), Unchecked> {
    let step = Step::default();
    let malformed = Malformed::default();
    let transport = frames::transport(stdin, stdout, malformed.clone());
    let opened = Client
        .v1()
        .name("agent-chatter")
        .on_receive_notification(
            async move |_: acp::SessionNotification, _cx| Ok(()),
            agent_client_protocol::on_receive_notification!(),
        )
        .connect_with(transport, async |cx: ConnectionTo<Agent>| {
            Ok(match open(&cx, job, &step).await {
                Ok(_) => Ok(()),
                Err(Talked::Refused(why)) => Err(Unchecked::Refused(why)),
                Err(Talked::Broken { step, why }) => {
                    Err(Unchecked::Unasked(format!("at {step}: {why}")))
                }
                Err(_) => Err(Unchecked::Unasked("it ended the session".to_string())),
            })
        })
        .await
        .unwrap_or_else(|e| Err(Unchecked::Unasked(words(&e))));
    match (opened, malformed.first()) {
        (Err(Unchecked::Unasked(_)), Some(line)) => Err(Unchecked::Unasked(format!(
            "it printed a line that is not ACP (JSON-RPC): {line:?}"
        ))),
        (opened, _) => opened,
    }
}

/// What the agent sends us besides responses.
struct Inbox {
    updates: mpsc::UnboundedReceiver<acp::SessionNotification>,
    asks: mpsc::UnboundedReceiver<Asked>,
}

/// An error of the agent's (or of the connection) in the user's words: its message, and its
/// JSON-RPC code only when the message is empty.
fn words(e: &agent_client_protocol::Error) -> String {
    let message = e.message.trim();
    if message == "Incoming transport closed" {
        "it closed its output without answering".to_string()
    } else if message.is_empty() {
        format!("error {}", i32::from(e.code))
    } else {
        message.to_string()
    }
}

/// Sends `request` and waits at most `within` for its response; `step` names it in errors.
async fn ask<R>(
    cx: &ConnectionTo<Agent>,
    step: &'static str,
    request: R,
    within: Duration,
) -> Result<R::Response, Talked>
where
    R: agent_client_protocol::JsonRpcRequest,
{
    match tokio::time::timeout(within, cx.send_request(request).block_task()).await {
        Ok(Ok(response)) => Ok(response),
        Ok(Err(e)) => Err(Talked::Broken {
            step,
            why: words(&e),
        }),
        Err(_) => Err(Talked::Broken {
            step,
            why: format!("no answer within {}", human(within)),
        }),
    }
}

async fn converse(
    cx: &ConnectionTo<Agent>,
    job: &AcpJob<'_>,
    streams: Streams,
    inbox: Inbox,
    cancel: oneshot::Receiver<()>,
    step: &Step,
) -> Talked {
    let session = match open(cx, job, step).await {
        Ok(session) => session,
        Err(talked) => return talked,
    };
    let prompt = acp::PromptRequest::new(
        session.clone(),
        vec![acp::ContentBlock::Text(acp::TextContent::new(
            job.prompt.to_string(),
        ))],
    );
    let mut turn = Turn {
        job,
        streams,
        session,
        text: String::new(),
        calls: Vec::new(),
        cost: None,
        pending: HashMap::new(),
        asked: 0,
        refused: None,
    };
    step.set(TURN);
    turn.run(cx, prompt, inbox, cancel).await
}

/// Opens the session: `initialize`, `session/new` in the member's directory with its system
/// part, then its mode and model. Each refusal names the member and the value.
async fn open(
    cx: &ConnectionTo<Agent>,
    job: &AcpJob<'_>,
    step: &Step,
) -> Result<acp::SessionId, Talked> {
    step.set("initialize");
    // No `fs`, no `terminal`: the agent uses its own tools, in its own sandbox.
    let init = ask(
        cx,
        "initialize",
        acp::InitializeRequest::new(ProtocolVersion::V1),
        START_TIMEOUT,
    )
    .await?;
    let takes_system = init
        .agent_capabilities
        .session_capabilities
        .system_prompt
        .is_some();
    let cwd = job
        .command
        .dir
        .clone()
        .or_else(|| std::env::current_dir().ok())
        .unwrap_or_else(|| PathBuf::from("/"));
    let mut new = acp::NewSessionRequest::new(cwd);
    if let Some(system) = job.system {
        if !takes_system {
            return Err(Talked::Refused(format!(
                "{}: its agent does not take a system prompt over ACP (no \
                 sessionCapabilities.systemPrompt), and its prompt format sends the system part \
                 apart from the prompt; give the member an agent type whose format puts it in \
                 the prompt",
                job.member
            )));
        }
        new = new.system_prompt(acp::SystemPrompt::new(vec![acp::ContentBlock::Text(
            acp::TextContent::new(system.to_string()),
        )]));
    }
    step.set("session/new");
    let created = ask(cx, "session/new", new, START_TIMEOUT).await?;
    let session = created.session_id.clone();
    let modes = created.modes.as_ref();
    let advertised: Vec<String> = modes
        .map(|m| m.available_modes.iter().map(|m| m.id.to_string()).collect())
        .unwrap_or_default();
    let mode = match job.permission_mode {
        Some(mode) => Some(
            policy::mode_id(mode, &advertised)
                .map_err(|e| Talked::Refused(format!("{}: {e}", job.member)))?,
        ),
        // No mode set: the agent's asking mode, so a risky step comes to a person.
        None => modes
            .filter(|m| m.current_mode_id.to_string() != policy::ASKING_MODE)
            .filter(|_| advertised.iter().any(|a| a == policy::ASKING_MODE))
            .map(|_| policy::ASKING_MODE.to_string()),
    };
    if let Some(id) = mode {
        step.set("session/set_mode");
        ask(
            cx,
            "session/set_mode",
            acp::SetSessionModeRequest::new(session.clone(), id),
            START_TIMEOUT,
        )
        .await?;
    }
    if let Some(model) = job.model {
        set_model(
            cx,
            job,
            step,
            &session,
            created.config_options.as_deref(),
            model,
        )
        .await?;
    }
    Ok(session)
}

/// Sets `model`: through the agent's model selector when it offers one (`session/set_config_option`,
/// checked against its values), else with `session/set_model` (Gemini's and Codex's adapters),
/// whose refusal names the value.
async fn set_model(
    cx: &ConnectionTo<Agent>,
    job: &AcpJob<'_>,
    step: &Step,
    session: &acp::SessionId,
    options: Option<&[acp::SessionConfigOption]>,
    model: &str,
) -> Result<(), Talked> {
    let has_selector = options
        .unwrap_or_default()
        .iter()
        .any(|o| o.category == Some(acp::SessionConfigOptionCategory::Model));
    if has_selector {
        let (config, value) = model_choice(options, model)
            .map_err(|e| Talked::Refused(format!("{}: {e}", job.member)))?;
        step.set("session/set_config_option");
        ask(
            cx,
            "session/set_config_option",
            acp::SetSessionConfigOptionRequest::new(session.clone(), config, value.as_str()),
            START_TIMEOUT,
        )
        .await?;
        return Ok(());
    }
    step.set("session/set_model");
    let request = agent_client_protocol::UntypedMessage::new(
        "session/set_model",
        serde_json::json!({"sessionId": session.to_string(), "modelId": model}),
    )
    .map_err(|e| Talked::Broken {
        step: "session/set_model",
        why: words(&e),
    })?;
    match ask(cx, "session/set_model", request, START_TIMEOUT).await {
        Ok(_) => Ok(()),
        Err(Talked::Broken { why, .. }) => Err(Talked::Refused(format!(
            "{}: model {model:?}: the agent refused it ({why})",
            job.member
        ))),
        Err(other) => Err(other),
    }
}

/// The agent's model selector and the value for `model` in it (matched by value id, else by
/// name), or why there is none.
fn model_choice(
    options: Option<&[acp::SessionConfigOption]>,
    model: &str,
) -> Result<(acp::SessionConfigId, String), String> {
    let selector = options
        .unwrap_or_default()
        .iter()
        .find(|o| o.category == Some(acp::SessionConfigOptionCategory::Model));
    let Some(selector) = selector else {
        return Err(format!(
            "model {model:?}: the agent offers no choice of model"
        ));
    };
    let acp::SessionConfigKind::Select(select) = &selector.kind else {
        return Err(format!(
            "model {model:?}: the agent's model setting is not a list"
        ));
    };
    let values: Vec<(String, String)> = match &select.options {
        acp::SessionConfigSelectOptions::Ungrouped(list) => list
            .iter()
            .map(|o| (o.value.to_string(), o.name.clone()))
            .collect(),
        acp::SessionConfigSelectOptions::Grouped(groups) => groups
            .iter()
            .flat_map(|g| g.options.iter())
            .map(|o| (o.value.to_string(), o.name.clone()))
            .collect(),
        _ => Vec::new(),
    };
    values
        .iter()
        .find(|(value, name)| value == model || name == model)
        .map(|(value, _)| (selector.id.clone(), value.clone()))
        .ok_or_else(|| {
            format!(
                "model {model:?}: the agent offers no such model (its models: {})",
                values
                    .iter()
                    .map(|(v, _)| v.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })
}

/// An approval put to a person, waiting for an answer.
struct Pending {
    request: ApprovalRequest,
    responder: Responder<acp::RequestPermissionResponse>,
}

/// The prompt's turn: what has been said and asked so far.
struct Turn<'j, 'a> {
    job: &'j AcpJob<'a>,
    streams: Streams,
    session: acp::SessionId,
    text: String,
    calls: Vec<ToolCall>,
    cost: Option<f64>,
    pending: HashMap<String, Pending>,
    asked: u64,
    /// The last tool call refused, and by whom, for a turn the agent then ends as cancelled
    /// (Codex's adapter does).
    refused: Option<String>,
}

impl Turn<'_, '_> {
    async fn run(
        &mut self,
        cx: &ConnectionTo<Agent>,
        prompt: acp::PromptRequest,
        mut inbox: Inbox,
        mut cancel: oneshot::Receiver<()>,
    ) -> Talked {
        let response = cx.send_request(prompt).block_task();
        tokio::pin!(response);
        let (answers_tx, mut answers) = mpsc::unbounded_channel::<(String, Answer)>();
        let mut cancelled = false;
        let grace = tokio::time::sleep(Duration::MAX);
        tokio::pin!(grace);
        loop {
            tokio::select! {
                // Notifications sent before the response are already in the inbox.
                biased;
                Some(notification) = inbox.updates.recv() => self.update(notification),
                Some((request, responder)) = inbox.asks.recv() => {
                    self.asked(request, responder, &answers_tx, cancelled);
                }
                Some((id, answer)) = answers.recv() => self.answered(&id, answer),
                result = &mut response => {
                    while let Ok(notification) = inbox.updates.try_recv() {
                        self.update(notification);
                    }
                    self.withdraw_all();
                    return match result {
                        Ok(done) => Talked::Stopped {
                            stop: done.stop_reason,
                            text: std::mem::take(&mut self.text),
                            usage: self.usage(done.usage.as_ref(), done.meta.as_ref()),
                            cancelled,
                            refused: self.refused.take(),
                        },
                        Err(e) => Talked::Broken { step: "session/prompt", why: words(&e) },
                    };
                }
                _ = &mut cancel, if !cancelled => {
                    cancelled = true;
                    let _ = cx.send_notification(acp::CancelNotification::new(self.session.clone()));
                    // After a cancel every open question is answered `cancelled` (ACP).
                    self.withdraw_all();
                    grace.as_mut().reset(tokio::time::Instant::now() + CANCEL_GRACE);
                }
                () = &mut grace, if cancelled => {
                    return Talked::Cancelled { usage: self.usage(None, None) };
                }
            }
        }
    }

    fn signal(&self, activity: Activity) {
        let _ = self.streams.signals.send(Signal::Activity(activity));
    }

    fn update(&mut self, notification: acp::SessionNotification) {
        for said in updates::read(notification.update, &mut self.calls) {
            match said {
                Said::Text(text) => {
                    self.text.push_str(&text);
                    let _ = self.streams.deltas.send(text);
                }
                Said::Activity(activity) => self.signal(activity),
                Said::CostUsd(cost) => self.cost = Some(cost),
                Said::Nothing => {}
            }
        }
    }

    /// A permission request: answered by the member's rule, or put to a person with a
    /// deadline (after a cancel, answered `cancelled` at once).
    fn asked(
        &mut self,
        asked: acp::RequestPermissionRequest,
        responder: Responder<acp::RequestPermissionResponse>,
        answers: &mpsc::UnboundedSender<(String, Answer)>,
        cancelled: bool,
    ) {
        self.asked += 1;
        let call = updates::updated(&self.calls, &asked.tool_call);
        let request = ApprovalRequest {
            id: format!("{}-{}-{}", self.job.member, self.job.run, self.asked),
            tool_call: call,
            options: updates::options(&asked.options),
            deadline: agent_chatter::message::Millis(
                now().0 + self.job.approval_timeout.as_millis() as u64,
            ),
        };
        if cancelled {
            return self.settle(request, responder, None, DecidedBy::RunEnded);
        }
        let approve = self.job.approve;
        if approve.allows(request.tool_call.kind) {
            if let Some(option) = allow_option(&request) {
                let by = DecidedBy::Rule {
                    rule: approve.name().to_string(),
                };
                return self.settle(request, responder, Some(option), by);
            }
        }
        let (answer_tx, answer_rx) = oneshot::channel();
        let _ = self.streams.signals.send(Signal::Ask {
            request: request.clone(),
            answer: answer_tx,
        });
        let id = request.id.clone();
        let within = self.job.approval_timeout;
        let answers = answers.clone();
        tokio::spawn(async move {
            let answer = match tokio::time::timeout(within, answer_rx).await {
                Ok(Ok((option, by))) => Answer::Chosen(option, by),
                Ok(Err(_)) => Answer::Withdrawn,
                Err(_) => Answer::TimedOut,
            };
            let _ = answers.send((id, answer));
        });
        self.pending
            .insert(request.id.clone(), Pending { request, responder });
    }

    fn answered(&mut self, id: &str, answer: Answer) {
        let Some(Pending { request, responder }) = self.pending.remove(id) else {
            return; // settled already (the run's cancel withdrew it)
        };
        match answer {
            Answer::Chosen(option, by) => self.settle(request, responder, Some(option), by),
            Answer::TimedOut => {
                let option = reject_option(&request);
                self.settle(request, responder, option, DecidedBy::Timeout);
            }
            Answer::Withdrawn => {
                let option = reject_option(&request);
                self.settle(request, responder, option, DecidedBy::RunEnded);
            }
        }
    }

    /// Every question still open is answered `cancelled` (the turn is over or being
    /// cancelled).
    fn withdraw_all(&mut self) {
        let open: Vec<String> = self.pending.keys().cloned().collect();
        for id in open {
            if let Some(Pending { request, responder }) = self.pending.remove(&id) {
                self.settle(request, responder, None, DecidedBy::RunEnded);
            }
        }
    }

    /// Answers the agent with `option` (`None`: `cancelled`) and records the decision.
    fn settle(
        &mut self,
        request: ApprovalRequest,
        responder: Responder<acp::RequestPermissionResponse>,
        option: Option<String>,
        by: DecidedBy,
    ) {
        let outcome = match &option {
            Some(id) => acp::RequestPermissionOutcome::Selected(
                acp::SelectedPermissionOutcome::new(id.clone()),
            ),
            None => acp::RequestPermissionOutcome::Cancelled,
        };
        let _ = responder.respond(acp::RequestPermissionResponse::new(outcome));
        let option = option.and_then(|id| request.options.iter().find(|o| o.id == id).cloned());
        if option.as_ref().is_some_and(|o| !o.kind.allows()) {
            self.refused = Some(format!(
                "{:?} was refused by {}",
                request.tool_call.title,
                by.describe()
            ));
        }
        self.signal(Activity::Decision(Decision {
            request: request.id,
            tool_call: request.tool_call,
            option,
            by,
            at: now(),
        }));
    }

    /// The run's usage: tokens from the prompt's response (ACP's `usage`, or Gemini's
    /// `_meta.quota.token_count`), the cost from the last `usage_update`.
    fn usage(&self, usage: Option<&acp::Usage>, meta: Option<&acp::Meta>) -> Usage {
        let mut ours = Usage {
            cost_usd: self.cost.and_then(Usd::new),
            ..Usage::default()
        };
        if let Some(u) = usage {
            // ACP's `inputTokens` leaves the cached ones out (both adapters: codex-acp's 900
            // of the model's 1 202); ours counts them in, as the stream decoders do.
            let cached = u.cached_read_tokens.unwrap_or(0) + u.cached_write_tokens.unwrap_or(0);
            ours.input_tokens = Some(u.input_tokens + cached);
            ours.output_tokens = Some(u.output_tokens);
            ours.cached_tokens = u.cached_read_tokens;
        } else if let Some(count) = meta
            .and_then(|m| m.get("quota"))
            .and_then(|q| q.get("token_count"))
        {
            let figure = |key: &str| count.get(key).and_then(serde_json::Value::as_u64);
            ours.input_tokens = figure("input_tokens");
            ours.output_tokens = figure("output_tokens");
        }
        ours
    }
}

/// How a question put to a person ended.
enum Answer {
    Chosen(String, DecidedBy),
    TimedOut,
    /// The host dropped the question (the session was left).
    Withdrawn,
}
