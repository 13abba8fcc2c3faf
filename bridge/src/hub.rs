//! The bridge's one session (DESIGN §6b, §14): the core's `Session`, its fact log in SQLite,
//! and the agents it runs. Every fact is committed before the actions it causes run; every
//! page connected sees the same facts, in `seq` order.

use std::sync::Arc;
use std::time::Duration;

use agent_chatter::conversation::{Action, Delivery};
use agent_chatter::message::{Millis, MAX_MESSAGE_BYTES};
use agent_chatter::session::{Fact, Session};
use agent_chatter::team::Team;
use tokio::sync::{broadcast, mpsc, oneshot, Mutex};

use crate::agents::run::{self, Job, Outcome, CANCELLED};
use crate::agents::{locate, AgentType, AgentsFile};
use crate::protocol::Event;
use crate::store::Store;

/// Default agent timeout when the team sets none (`maxAgentResponseTime`): 30 minutes.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30 * 60);
/// Event frames kept for pages that are behind.
const EVENT_BUFFER: usize = 256;
/// Pause before a simulated reply, so a person can watch the chain unfold.
const SIMULATED_DELAY: Duration = Duration::from_millis(300);

/// The wall clock in ms (the core reads none; time enters with each fact).
pub fn now() -> Millis {
    Millis(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64),
    )
}

/// Shared handle to the hub.
pub type SharedHub = Arc<Mutex<Hub>>;

pub struct Hub {
    store: Store,
    session_id: i64,
    /// Counts the conversations begun by this bridge (a session opened, or a team set or a
    /// scenario loaded in it); a run belongs to the opening it started in, and its outcome is
    /// stale once another has begun (the same session left and reopened is a new opening).
    opening: u64,
    session: Session,
    agents: AgentsFile,
    /// The running delivery (a real agent's or the simulator's).
    running: Option<Running>,
    /// The number the next run gets, so a finished run is told apart from a newer one for the
    /// same member.
    next_run: u64,
    /// Event frames for every connected page.
    events: broadcast::Sender<String>,
    /// Simulated replies come after this pause (0 in tests).
    simulated_delay: Duration,
    /// Finished runs, reported in order by one task ([`report_outcomes`]).
    outcomes: mpsc::UnboundedSender<Finished>,
    /// The open session was created by this start (not resumed).
    created: bool,
}

/// The delivery being run: which run, for whom, and its cancel switch (sending on it, or
/// dropping it, stops the run).
struct Running {
    run: u64,
    to: String,
    cancel: oneshot::Sender<()>,
}

/// A finished run: the session and run it belongs to, who, how, and everything it printed.
struct Finished {
    opening: u64,
    session: i64,
    run: u64,
    to: String,
    outcome: Outcome,
    output: Vec<u8>,
}

impl Hub {
    /// Opens session `id` from `store` (replaying its facts), or starts a new one with `team`.
    pub fn start(
        mut store: Store,
        session: Option<i64>,
        team: Team,
        agents: AgentsFile,
    ) -> Result<SharedHub, String> {
        // The channel keeps its last frames in memory: a small ring keeps the bridge's memory
        // flat; a page that falls further behind gets the whole log again (server.rs).
        let (events, _) = broadcast::channel(EVENT_BUFFER);
        let (outcomes, finished) = mpsc::unbounded_channel();
        let created = session.is_none();
        let (session_id, session) = match session {
            Some(id) => (id, reopen(&store, id)?),
            None => create(&mut store, team)?,
        };
        let hub = Arc::new(Mutex::new(Hub {
            store,
            session_id,
            opening: 1,
            session,
            agents,
            running: None,
            next_run: 1,
            events,
            simulated_delay: SIMULATED_DELAY,
            outcomes,
            created,
        }));
        tokio::spawn(report_outcomes(hub.clone(), finished));
        Ok(hub)
    }

    pub fn set_simulated_delay(&mut self, delay: Duration) {
        self.simulated_delay = delay;
    }

    pub fn session_id(&self) -> i64 {
        self.session_id
    }

    /// Removes the session this start created when nothing happened in it but its team (the
    /// terminal chat given no message), so no empty session is left in the list.
    pub fn discard_if_unused(&mut self) {
        if self.created && self.session.facts().len() == 1 {
            if let Err(e) = self.store.delete_session(self.session_id) {
                eprintln!(
                    "bridge: the unused session {} was not removed: {e}",
                    self.session_id
                );
            }
        }
    }

    pub fn session(&self) -> &Session {
        &self.session
    }

    pub fn subscribe(&self) -> broadcast::Receiver<String> {
        self.events.subscribe()
    }

    /// The `session` event: the whole log.
    pub fn session_event(&self) -> Event {
        Event::Session {
            id: self.session_id,
            facts: self.session.facts().to_vec(),
            // Only for showing: a database that cannot say leaves the page without them.
            sent: self.store.sent(self.session_id).unwrap_or_default(),
        }
    }

    /// The `agents` event: how each AI member of the current team is answered here.
    pub fn agents_event(&self) -> Event {
        let list = match self.session.team() {
            Some(team) => crate::agents::members(team, &self.agents)
                .into_iter()
                .map(|m| crate::protocol::AgentReport {
                    runs: m.path.is_some(),
                    command: m.command.map(|c| {
                        std::iter::once(c.command)
                            .chain(c.args)
                            .collect::<Vec<_>>()
                            .join(" ")
                    }),
                    member: m.member,
                })
                .collect(),
            None => Vec::new(),
        };
        Event::Agents { list }
    }

    pub fn list(&self) -> Result<Event, String> {
        Ok(Event::Sessions {
            list: self.store.list().map_err(|e| e.to_string())?,
        })
    }

    /// After a fact was not stored: the session becomes what the database holds (the same
    /// log, or one another bridge on the same file has added to) and every page is sent it.
    /// The replayed actions are dropped, not performed again: the delivery they re-emit is
    /// already running here, or belongs to the bridge that wrote those facts.
    fn reload(&mut self) {
        let Ok(facts) = self.store.facts(self.session_id) else {
            return;
        };
        if let Ok(mut session) = Session::replay(facts) {
            drain(&mut session);
            self.session = session;
            let event = self.session_event();
            self.send(&event);
        }
    }

    fn send(&self, event: &Event) {
        let _ = self.events.send(event.to_frame());
    }
}

/// Applies `fact`: the core checks it, SQLite commits it, every page gets it, and then what
/// it causes is performed. A refused fact changes nothing and its reason comes back.
pub async fn apply(hub: &SharedHub, fact: Fact) -> Result<(), String> {
    apply_to(hub, None, fact).await
}

/// [`apply`], only while `opening` (when given) is still the open session: a run's outcome
/// belongs to the session it was delivered in, and is dropped (`Ok`) once another is open.
async fn apply_to(hub: &SharedHub, opening: Option<u64>, fact: Fact) -> Result<(), String> {
    let actions = {
        let mut h = hub.lock().await;
        if opening.is_some_and(|o| o != h.opening) {
            return Ok(());
        }
        h.session.apply(&fact).map_err(|e| e.to_string())?;
        let id = h.session_id;
        let seq = h.session.facts().len() as i64;
        if let Err(e) = h.store.append(id, seq, &fact) {
            // Not stored, so not applied: go back to what the database holds.
            h.reload();
            return Err(format!("{e}; the session was reloaded from the database"));
        }
        let new_team = matches!(fact, Fact::SetTeam { .. } | Fact::LoadScenario { .. });
        if new_team {
            // A new team begins a new conversation: the running delivery belongs to the one
            // that ended, so it is stopped and its outcome is not recorded (it would land on
            // the next delivery to the same member).
            if let Some(running) = h.running.take() {
                let _ = running.cancel.send(());
            }
            h.opening += 1;
        }
        h.send(&Event::Fact { seq, fact });
        if new_team {
            let agents = h.agents_event();
            h.send(&agents);
        }
        drain(&mut h.session)
    };
    perform(hub, actions).await;
    Ok(())
}

/// Performs the actions pending after a start or a replay (an agent that was running when the
/// bridge died is simply delivered again).
pub async fn resume(hub: &SharedHub) {
    let actions = drain(&mut hub.lock().await.session);
    perform(hub, actions).await;
}

/// Switches every page to session `id` (or a new one with the current team). The session
/// being left keeps its log as it is: its running agent is stopped and that run's outcome is
/// not recorded, so the delivery is made again when the session is reopened (as after a
/// restart). A session that cannot be opened changes nothing, and nothing is stopped.
pub async fn open(hub: &SharedHub, id: Option<i64>) -> Result<(), String> {
    {
        let mut h = hub.lock().await;
        let (id, session) = match id {
            Some(id) => (id, reopen(&h.store, id)?),
            None => {
                let team = h
                    .session
                    .team()
                    .cloned()
                    .unwrap_or_else(agent_chatter::demo::team);
                create(&mut h.store, team)?
            }
        };
        if let Some(running) = h.running.take() {
            let _ = running.cancel.send(());
        }
        h.session_id = id;
        h.opening += 1;
        h.session = session;
        let event = h.session_event();
        h.send(&event);
        let agents = h.agents_event();
        h.send(&agents);
    }
    resume(hub).await;
    Ok(())
}

/// Stops the running delivery to `to` (a real agent or the simulator); it becomes a `failed`
/// fact.
pub async fn cancel(hub: &SharedHub, to: &str) -> Result<(), String> {
    let mut h = hub.lock().await;
    match h.running.take() {
        Some(running) if running.to == to => {
            let _ = running.cancel.send(());
            Ok(())
        }
        other => {
            h.running = other;
            Err(format!("cancel: {to} is not running"))
        }
    }
}

/// A new session in `store` that starts with `team` (its `setTeam` fact committed).
fn create(store: &mut Store, team: Team) -> Result<(i64, Session), String> {
    let title = team.name.clone();
    let fact = Fact::set_team(team);
    let mut session = Session::new();
    session.apply(&fact).map_err(|e| e.to_string())?;
    let id = store
        .create_session(&title, now().0 as i64, &fact)
        .map_err(|e| e.to_string())?;
    Ok((id, session))
}

/// Session `id` of `store`, replayed from its facts.
fn reopen(store: &Store, id: i64) -> Result<Session, String> {
    let facts = store.facts(id).map_err(|e| e.to_string())?;
    Session::replay(facts).map_err(|e| format!("session {id}: {e}"))
}

fn drain(session: &mut Session) -> Vec<Action> {
    std::iter::from_fn(|| session.poll_action()).collect()
}

async fn perform(hub: &SharedHub, actions: Vec<Action>) {
    for action in actions {
        if let Action::Deliver(delivery) = action {
            deliver(hub, *delivery).await;
        }
        // AwaitHuman, Finished and notices: the pages see them by applying the same facts.
    }
}

async fn deliver(hub: &SharedHub, delivery: Delivery) {
    let mut h = hub.lock().await;
    let agent_type = h
        .session
        .team()
        .and_then(|t| t.member(&delivery.to))
        .and_then(|m| m.agent_type.clone())
        .unwrap_or_default();
    let command = h
        .agents
        .command_for(&delivery.to, &agent_type)
        .filter(|c| locate(&c.command).is_some());
    // A delivery that cannot be handed over is not announced, and no digest says it was sent.
    let unsendable = command
        .as_ref()
        .and_then(|c| run::unsendable(c, delivery.prompt.system_flag.as_deref()));
    if unsendable.is_none() {
        let prompt = &delivery.prompt;
        let sha256 = prompt.sha256_hex();
        if let Err(e) =
            h.store
                .record_sent(h.session_id, &delivery.message.0, &delivery.to, &sha256)
        {
            eprintln!(
                "bridge: the digest of {}'s delivery was not kept: {e}",
                delivery.to
            );
        }
        h.send(&Event::Delivering {
            to: delivery.to.clone(),
            message: delivery.message.0.clone(),
            prompt_sha256: sha256,
            bytes: prompt.explain.total_bytes,
        });
    }
    let timeout = h
        .session
        .settings()
        .and_then(|s| s.max_agent_response_ms)
        .map_or(DEFAULT_TIMEOUT, Duration::from_millis);
    let to = delivery.to.clone();
    let session = h.session_id;
    let opening = h.opening;
    let run = h.next_run;
    h.next_run += 1;
    let (cancel_tx, cancel_rx) = oneshot::channel();
    h.running = Some(Running {
        run,
        to: to.clone(),
        cancel: cancel_tx,
    });
    let outcomes = h.outcomes.clone();
    let finished = move |to, outcome, output| {
        let _ = outcomes.send(Finished {
            opening,
            session,
            run,
            to,
            outcome,
            output,
        });
    };
    if let Some(reason) = unsendable {
        drop(h);
        tokio::spawn(async move { finished(to, Outcome::Failed(reason), Vec::new()) });
        return;
    }
    match command {
        None => {
            // Not installed here: the core's simulated agent answers (DESIGN §14), after a
            // pause in which it can be cancelled like a real agent.
            let text = h.session.simulate_reply(&delivery);
            let delay = h.simulated_delay;
            drop(h);
            tokio::spawn(async move {
                let outcome = tokio::select! {
                    () = tokio::time::sleep(delay) => Outcome::Replied(text),
                    _ = cancel_rx => Outcome::Failed(CANCELLED.to_string()),
                };
                finished(to, outcome, Vec::new());
            });
        }
        Some(command) => {
            let events = h.events.clone();
            drop(h);
            let prompt_text = delivery.prompt.prompt.clone();
            let flag = delivery.prompt.system_flag.clone();
            tokio::spawn(async move {
                let (tx, mut rx) = mpsc::unbounded_channel::<String>();
                let relay_to = to.clone();
                let relay = tokio::spawn(async move {
                    while let Some(mut delta) = rx.recv().await {
                        // What arrived meanwhile goes in the same frame: a burst of tiny deltas
                        // is a few frames, not thousands no page keeps up with.
                        while delta.len() < 64 * 1024 {
                            match rx.try_recv() {
                                Ok(more) => delta.push_str(&more),
                                Err(_) => break,
                            }
                        }
                        let event = Event::Output {
                            to: relay_to.clone(),
                            delta,
                        };
                        let _ = events.send(event.to_frame());
                    }
                });
                let job = Job {
                    command: &command,
                    agent_type: AgentType::of(&agent_type),
                    prompt: &prompt_text,
                    system_flag: flag.as_deref(),
                    timeout,
                };
                let (outcome, output) = run::run(job, tx, cancel_rx).await;
                let _ = relay.await;
                finished(to, outcome, output);
            });
        }
    }
}

/// Reports finished runs one at a time, in the order they finished.
async fn report_outcomes(hub: SharedHub, mut finished: mpsc::UnboundedReceiver<Finished>) {
    while let Some(run) = finished.recv().await {
        report(&hub, run).await;
    }
}

/// Turns a run's outcome into a fact of the session it was delivered in. A reply above the
/// core's message limit is never lost: the whole output is kept in the database and the
/// conversation records a `failed` fact naming its size (a cut reply could mislead the next
/// agent); so is the output of a run that failed. The outcome of a run whose session was left
/// meanwhile is not recorded: that session's log stays as it was, and the delivery is made
/// again when it is reopened.
async fn report(hub: &SharedHub, run: Finished) {
    let Finished {
        opening,
        session,
        run,
        to,
        outcome,
        output,
    } = run;
    let at = now();
    {
        let mut h = hub.lock().await;
        if h.running.as_ref().is_some_and(|r| r.run == run) {
            h.running = None;
        }
        if h.opening != opening {
            eprintln!(
                "bridge: {to}'s run ended after its session {session} was left; not recorded \
                 (it is delivered again when that session is opened)"
            );
            return;
        }
    }
    let fact = match outcome {
        Outcome::Replied(text) if text.len() > MAX_MESSAGE_BYTES => {
            let h = hub.lock().await;
            let kept = h.store.keep_output(session, &to, at.0 as i64, &output);
            let where_ = match kept {
                Ok(()) if output.len() >= run::MAX_KEPT_OUTPUT => {
                    "the first 64 MiB of its output are kept in the session database (table outputs)"
                }
                Ok(()) => "its full output is kept in the session database (table outputs)",
                Err(_) => "its output could not be kept",
            };
            Fact::failed(
                to.as_str(),
                format!(
                    "reply of {} bytes is above the {} byte message limit; {where_}",
                    text.len(),
                    MAX_MESSAGE_BYTES
                ),
                at,
            )
        }
        Outcome::Replied(text) => Fact::replied(to.as_str(), text, at),
        // What a failed agent wrote (streamed text with no final one, a half event) is kept
        // too, so nothing it said is lost; a run the user cancelled is not.
        Outcome::Failed(reason) if !output.is_empty() && reason != CANCELLED => {
            let h = hub.lock().await;
            let reason = match h.store.keep_output(session, &to, at.0 as i64, &output) {
                Ok(()) if output.len() >= run::MAX_KEPT_OUTPUT => format!(
                    "{reason}; the first 64 MiB of its output are kept in the session database (table outputs)"
                ),
                Ok(()) => format!(
                    "{reason}; its output ({} bytes) is kept in the session database (table outputs)",
                    output.len()
                ),
                Err(_) => reason,
            };
            Fact::failed(to.as_str(), reason, at)
        }
        Outcome::Failed(reason) => Fact::failed(to.as_str(), reason, at),
    };
    if let Err(e) = apply_to(hub, Some(opening), fact).await {
        let h = hub.lock().await;
        h.send(&Event::Error {
            message: format!("the outcome of {to}'s run was not recorded: {e}"),
        });
    }
}
