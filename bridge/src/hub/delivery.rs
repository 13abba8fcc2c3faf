//! One delivery, in steps (docs/architecture.md §14, §14c): [`Actor::resolve`] finds how it is
//! handed over (the member's CLI command with its run settings in, the simulator, or why it
//! cannot be), [`Actor::announce`] notes and publishes it, [`Actor::spawn`] starts the run,
//! whose stream is relayed (`relay.rs`) and whose end reports into the actor's inbox
//! ([`RunEnd`]). A delivery due in a session just opened whose run began and never ended is
//! recorded as interrupted instead ([`Actor::interrupted`]).

use std::sync::Arc;
use std::time::{Duration, Instant};

use agent_chatter::conversation::Delivery;
use agent_chatter::message::Millis;
use agent_chatter::protocol::Event;
use agent_chatter::session::{Fact, Failure};
use agent_chatter::usage::Usage;
use tokio::sync::{mpsc, oneshot};

use super::actor::{gone_elsewhere, Actor, Finished, Msg, Running, Unstored};
use super::outcome::failed;
use super::relay::{self, Streamed};
use super::{HubError, UNSTORED_RETRY};
use crate::agents::acp::{self, AcpJob, Streams};
use crate::agents::run::{self, Job, Outcome, CANCELLED};
use crate::agents::settings;
use crate::agents::{AgentCommand, AgentType, Answerer, MemberAgent};
use crate::clock::now;
use crate::store::RunNote;

/// Default agent timeout when the team sets none (`maxAgentResponseTime`): 30 minutes.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30 * 60);
/// Pause before a simulated reply, so a person can watch the chain unfold.
const SIMULATED_DELAY: Duration = Duration::from_millis(300);

/// How a delivery is handed over, resolved before anything is announced.
struct Launch {
    /// The member's agent type (empty when no CLI answers it).
    agent_type: String,
    /// The member's CLI command, its run settings in; `None`: the simulator answers (or, with
    /// `unsendable`, nobody).
    command: Option<AgentCommand>,
    /// Why the delivery cannot be handed over at all: the run fails with it, unannounced.
    unsendable: Option<String>,
    timeout: Duration,
}

/// Where a run's end goes: the actor's inbox (weak: once no handle exists, the outcome has no
/// one to go to), as a [`Finished`] naming the opening, session and run it belongs to.
struct RunEnd {
    inbox: mpsc::WeakUnboundedSender<Msg>,
    opening: u64,
    session: i64,
    run: u64,
    to: String,
    started: Instant,
    /// Only a real CLI's run is timed (the simulator and a run that never started report
    /// nothing): a run that reports usage is one that ran, and may have cost money
    /// (`usage::Spend`, docs/architecture.md §14c).
    timed: bool,
    /// What is noted of a CLI's run beside its fact (argv, model), set when it starts.
    note: Option<Box<RunNote>>,
}

impl RunEnd {
    fn send(self, outcome: Outcome, mut usage: Usage, output: run::Output) {
        // The CLI's own figure when it gives one, else the bridge's clock.
        if self.timed {
            usage.duration_ms = usage
                .duration_ms
                .or(Some(self.started.elapsed().as_millis() as u64));
        }
        if let Some(inbox) = self.inbox.upgrade() {
            let _ = inbox.send(Msg::Finished(Finished {
                opening: self.opening,
                session: self.session,
                run: self.run,
                to: self.to,
                outcome,
                usage,
                output,
                note: self.note,
            }));
        }
    }
}

impl Actor {
    /// Performs `delivery`: resolved, announced unless it cannot be handed over, and run.
    pub(super) fn deliver(&mut self, delivery: Delivery) {
        if std::mem::take(&mut self.opened) {
            if let Some(fact) = self.interrupted(&delivery) {
                // Recorded, not run again: the conversation goes on from the failure.
                self.record_interrupted(&delivery.to, fact);
                return;
            }
        }
        let launch = self.resolve(&delivery);
        // A delivery that cannot be handed over is not announced, and no digest says it was
        // sent.
        if launch.unsendable.is_none() {
            self.announce(&delivery, launch.command.is_some());
        }
        let timed = launch.command.is_some() && launch.unsendable.is_none();
        let (end, cancel) = self.start_running(&delivery.to, timed);
        self.spawn(delivery, launch, cancel, end);
    }

    /// How `delivery` is handed over: the member's CLI command with the run settings the
    /// machine's team file gives its id (docs/architecture.md §14c; the session holds none),
    /// the simulator, or why it cannot be (a member that cannot run here, a setting its CLI
    /// cannot take, a system part too long for an argument); and its timeout.
    fn resolve(&self, delivery: &Delivery) -> Launch {
        let member = self.session.team().and_then(|team| {
            crate::agents::member(team, &delivery.to, &self.agents, self.simulate_all)
        });
        let settings_of = self
            .session
            .team()
            .and_then(|t| t.member(&delivery.to))
            .map(|m| self.machine.dress(m));
        let stand_in = self.stand_in_reply(delivery);
        let (agent_type, command, unsendable) = match member {
            Some(MemberAgent {
                agent_type,
                answerer: Answerer::Cli(_),
                ..
            }) if stand_in.is_some() => (agent_type, None, stand_in),
            Some(MemberAgent {
                agent_type,
                command: Some(command),
                answerer: Answerer::Cli(_),
                ..
            }) => {
                let kind = command.output.unwrap_or(AgentType::of(&agent_type));
                let command = match &settings_of {
                    Some(m) => settings::command_for_member(&command, kind, m),
                    None => Ok(command),
                };
                match command {
                    Ok(command) => {
                        // What is left under the cost cap, to a CLI that can stop there.
                        let command = settings::with_budget(command, kind, self.session.cap_left());
                        // Over ACP the system part travels in the session, not as an argument.
                        let unsendable = match command.acp {
                            Some(_) => None,
                            None => {
                                run::unsendable(&command, delivery.prompt.system_flag.as_deref())
                            }
                        };
                        (agent_type, Some(command), unsendable)
                    }
                    Err(why) => (agent_type, None, Some(why)),
                }
            }
            Some(MemberAgent {
                answerer: Answerer::Nobody(why),
                ..
            }) => (String::new(), None, Some(why)),
            _ => (String::new(), None, None),
        };
        let timeout = settings_of
            .as_ref()
            .and_then(|m| m.run.timeout_ms)
            .or_else(|| {
                self.session
                    .settings()
                    .and_then(|s| s.max_agent_response_ms)
            })
            .map_or(DEFAULT_TIMEOUT, Duration::from_millis);
        Launch {
            agent_type,
            command,
            unsendable,
            timeout,
        }
    }

    /// Why `delivery` may not run its member's real CLI: the message that addressed it is a
    /// reply the simulator wrote for a demo-team member whose CLI is not installed here, a
    /// stand-in the user did not choose, and a real run on a made-up reply could cost money
    /// (docs/architecture.md §14: a simulated reply never drives a paid agent unless the user
    /// chose simulation). `None` when a person or a real agent wrote it, the user chose the
    /// simulator (`--simulate`, `agentType: "simulated"`), or the delivery is a retry the user
    /// asked for: then a person decided to run it on that reply.
    fn stand_in_reply(&self, delivery: &Delivery) -> Option<String> {
        if matches!(self.session.facts().last(), Some(Fact::Retry { to, .. }) if *to == delivery.to)
        {
            return None;
        }
        let team = self.session.team()?;
        let addressed_by = delivery.parent.as_ref().unwrap_or(&delivery.message);
        let speaker = &self.session.store().get(addressed_by)?.speaker.id;
        let agent = crate::agents::member(team, speaker, &self.agents, self.simulate_all)?;
        let chosen = self.simulate_all
            || agent_chatter::team::normalize_agent_type(&agent.agent_type)
                == agent_chatter::team::SIMULATED;
        if chosen || !matches!(agent.answerer, Answerer::Simulator) {
            return None;
        }
        let name = |id: &str| {
            team.member(id)
                .map_or_else(|| id.to_string(), |m| m.display_name.clone())
        };
        let (to, by) = (name(&delivery.to), name(speaker));
        Some(format!(
            "{}: not run: {to} was addressed by {by}'s simulated reply ({by}'s CLI is not \
             installed here, so the built-in simulator stood in), and a real run on a made-up \
             reply could cost money; send {to} a message yourself to go on, retry {to} to run it \
             on that reply anyway, or start with --simulate to simulate every member",
            delivery.to
        ))
    }

    /// Notes and publishes that `delivery` is handed over: a real CLI's run (`cli`) is noted
    /// before it starts, so one the bridge never sees end (it was killed) is recorded as
    /// interrupted when the session is next opened, not run again unasked
    /// (docs/architecture.md §14c "Interrupted runs"); the simulator costs nothing and changes
    /// nothing, so its delivery is simply made again. The prompt's digest is kept, and every
    /// page is told.
    fn announce(&mut self, delivery: &Delivery, cli: bool) {
        if cli {
            if let Err(e) = self.store.run_started(
                self.session_id,
                &delivery.to,
                &delivery.message.0,
                now().0 as i64,
            ) {
                eprintln!(
                    "bridge: the start of {}'s run was not noted: {e}",
                    delivery.to
                );
            }
        }
        let prompt = &delivery.prompt;
        let sha256 = prompt.sha256_hex();
        if let Err(e) =
            self.store
                .record_sent(self.session_id, &delivery.message.0, &delivery.to, &sha256)
        {
            eprintln!(
                "bridge: the digest of {}'s delivery was not kept: {e}",
                delivery.to
            );
        }
        self.publish(Event::Delivering {
            to: delivery.to.clone(),
            message: delivery.message.0.clone(),
            prompt_sha256: sha256,
            bytes: prompt.explain.total_bytes,
        });
    }

    /// The run to `to` becomes the running one: its number, its cancel switch, and where its
    /// end is reported.
    fn start_running(&mut self, to: &str, timed: bool) -> (RunEnd, oneshot::Receiver<()>) {
        let run = self.next_run;
        self.next_run += 1;
        let (cancel_tx, cancel_rx) = oneshot::channel();
        self.running = Some(Running {
            run,
            to: to.to_string(),
            cancel: cancel_tx,
        });
        let end = RunEnd {
            inbox: self.inbox.clone(),
            opening: self.opening,
            session: self.session_id,
            run,
            to: to.to_string(),
            started: Instant::now(),
            timed,
            note: None,
        };
        (end, cancel_rx)
    }

    /// Starts the run: it fails at once when `launch` cannot be handed over; else the
    /// simulator answers, or the member's CLI runs.
    fn spawn(
        &mut self,
        delivery: Delivery,
        launch: Launch,
        cancel: oneshot::Receiver<()>,
        end: RunEnd,
    ) {
        if let Some(reason) = launch.unsendable {
            end.send(
                Outcome::Failed(Failure::CannotRun, reason),
                Usage::default(),
                run::Output::default(),
            );
            return;
        }
        match launch.command {
            None => self.spawn_simulator(&delivery, cancel, end),
            Some(command) => {
                let agent_type = AgentType::of(&launch.agent_type);
                self.spawn_cli(delivery, command, agent_type, launch.timeout, cancel, end);
            }
        }
    }

    /// The simulator was chosen for this member: the core's simulated agent answers, after a
    /// pause in which it can be cancelled like a real agent.
    fn spawn_simulator(&mut self, delivery: &Delivery, cancel: oneshot::Receiver<()>, end: RunEnd) {
        let text = self.session.simulate_reply(delivery);
        self.runtime.spawn(async move {
            let outcome = tokio::select! {
                () = tokio::time::sleep(SIMULATED_DELAY) => Outcome::Replied(text),
                _ = cancel => Outcome::Failed(Failure::Cancelled, CANCELLED.to_string()),
            };
            // A simulated run costs nothing and is not timed: no usage is recorded.
            end.send(outcome, Usage::default(), run::Output::default());
        });
    }

    /// Runs the member's CLI (or its ACP agent) on the runtime, its stream relayed to every
    /// page as it comes.
    fn spawn_cli(
        &mut self,
        delivery: Delivery,
        command: AgentCommand,
        agent_type: AgentType,
        timeout: Duration,
        cancel: oneshot::Receiver<()>,
        mut end: RunEnd,
    ) {
        let events = self.events.clone();
        let prompt = delivery.prompt;
        let message = delivery.message.0.clone();
        *self.streamed.lock().unwrap_or_else(|e| e.into_inner()) = Some(Streamed {
            run: end.run,
            to: delivery.to.clone(),
            message: message.clone(),
            ..Streamed::default()
        });
        let streamed = (Arc::clone(&self.streamed), end.run);
        let run_settings = self
            .session
            .team()
            .and_then(|t| t.member(&delivery.to))
            .map(|m| self.machine.dress(m).run)
            .unwrap_or_default();
        // Over ACP the system part travels in the session, not as an argument.
        let system_flag = prompt
            .system_flag
            .as_deref()
            .filter(|_| command.acp.is_none());
        end.note = Some(Box::new(RunNote {
            argv: run::argv(&command, system_flag),
            model: None,
            configured_model: run_settings.model.clone(),
        }));
        self.runtime.spawn(async move {
            let (senders, relaying) = relay::start(delivery.to.clone(), message, events, streamed);
            // Each sender the run does not take is dropped here, so its relay ends.
            let relay::Senders {
                deltas,
                retries,
                signals,
            } = senders;
            let ran = match command.acp {
                Some(acp_settings) => {
                    let job = AcpJob {
                        command: &command,
                        member: &delivery.to,
                        run: end.run,
                        prompt: &prompt.prompt,
                        system: prompt.system_flag.as_deref(),
                        model: run_settings.model.as_deref(),
                        permission_mode: run_settings.permission_mode,
                        approve: acp_settings.approve,
                        approval_timeout: acp_settings.approval_timeout,
                        timeout,
                    };
                    drop(retries);
                    acp::run(job, Streams { deltas, signals }, cancel).await
                }
                None => {
                    let job = Job {
                        command: &command,
                        agent_type,
                        prompt: &prompt.prompt,
                        system_flag: prompt.system_flag.as_deref(),
                        timeout,
                        retries: Some(retries),
                    };
                    drop(signals);
                    run::run(job, deltas, cancel).await
                }
            };
            relaying.finish().await;
            if let Some(note) = end.note.as_mut() {
                note.model = ran.model;
            }
            end.send(ran.outcome, ran.usage, ran.output);
        });
    }

    /// The `failed` fact for `delivery` when the store says a run of it started and never
    /// ended: the bridge stopped (or its session was left) while the agent ran. That run may
    /// have cost money and changed files, so it is not made again unasked; the user can retry
    /// it (docs/architecture.md §14c "Interrupted runs"). A record of another delivery is stale
    /// (its conversation moved on) and is dropped.
    fn interrupted(&mut self, delivery: &Delivery) -> Option<Fact> {
        let run = self.store.run_in_flight(self.session_id).ok()??;
        if run.member != delivery.to || run.message != delivery.message.0 {
            let _ = self.store.run_dropped(self.session_id);
            return None;
        }
        let why = run
            .stopped
            .as_deref()
            .unwrap_or("the bridge stopped while it ran");
        let started = agent_chatter::transcript::utc(Millis(run.started_ms.max(0) as u64));
        Some(failed(
            &delivery.to,
            Failure::Interrupted,
            format!(
                "interrupted: {why} (it started {started}), so what the agent did and what \
                 the run cost are not known; retry to run it again"
            ),
            now(),
        ))
    }

    /// Records `fact`, the failure of `to`'s interrupted run. One that cannot be written is
    /// kept and written again, as a run's outcome is ([`Actor::record_outcome`]), so the
    /// session never waits on a delivery nobody makes.
    fn record_interrupted(&mut self, to: &str, fact: Fact) {
        match self.apply(None, fact.clone()) {
            Ok(()) => {}
            Err(HubError::NotStored(e)) if !gone_elsewhere(&e) => {
                self.publish(Event::Error {
                    message: format!(
                        "that {to}'s run was interrupted could not be written to the session \
                         database ({e}); it is kept and written again every {} s",
                        UNSTORED_RETRY.as_secs()
                    ),
                });
                self.unstored = Some(Unstored {
                    opening: self.opening,
                    to: to.to_string(),
                    fact,
                });
                self.retry_unstored_later();
            }
            Err(e) => self.publish(Event::Error {
                message: format!("{to}'s interrupted run was not recorded: {e}"),
            }),
        }
    }
}
