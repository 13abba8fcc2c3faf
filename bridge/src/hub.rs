//! The bridge's one session (docs/architecture.md §6b, §14) as an actor: one thread owns the
//! core's `Session`, its fact log in SQLite and the running agent; the server and the terminal
//! chat hold a [`Hub`] handle and send it commands over a channel, each with a oneshot for the
//! answer. Finished runs report into the same inbox, so every change to the session happens in
//! one place, one at a time. Every fact is committed before the actions it causes run; every
//! page connected sees the same facts, in `seq` order.
//!
//! The actor is a dedicated OS thread, not an async task: SQLite's calls block, and they never
//! hold up an async worker. Agent runs are async tasks on the runtime that started the hub.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use agent_chatter::conversation::{Action, Delivery};
use agent_chatter::message::{Millis, MAX_MESSAGE_BYTES};
use agent_chatter::protocol::{encode_event, AgentReport, Event, SearchHit, SessionInfo};
use agent_chatter::session::{Fact, Session, SessionError, SessionFileError};
use agent_chatter::team::Team;
use thiserror::Error;
use tokio::sync::{broadcast, mpsc, oneshot};
use tokio_tungstenite::tungstenite::Utf8Bytes;

use crate::agents::decode::above_the_limit;
use crate::agents::machine::MachineSettings;
use crate::agents::run::{self, Job, Outcome, CANCELLED};
use crate::agents::settings;
use crate::agents::{AgentType, AgentsFile, Answerer, MemberAgent};
use crate::chat::{Prior, Reporter, Said};
use crate::clock::now;
use crate::store::{Store, StoreError};
use agent_chatter::session::Failure;
use agent_chatter::usage::Usage;

/// Default agent timeout when the team sets none (`maxAgentResponseTime`): 30 minutes.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30 * 60);
/// Events kept for pages that are behind.
pub(crate) const EVENT_BUFFER: usize = 256;
/// Pause before a simulated reply, so a person can watch the chain unfold.
const SIMULATED_DELAY: Duration = Duration::from_millis(300);
/// Streamed output is relayed in frames of at most this size.
const OUTPUT_FRAME_BYTES: usize = 64 * 1024;
/// The most of a run's streamed output the hub keeps for a page that connects while it runs
/// (its last bytes); the page keeps as much.
const STREAMED_KEPT_BYTES: usize = 1024 * 1024;

/// What the run in flight has streamed so far (its last [`STREAMED_KEPT_BYTES`]), for a page
/// that connects while it runs. Each delta is kept and published under its lock, and a page
/// attaches under it too, so every delta is either in what it is sent first or in its events,
/// never both, never neither.
#[derive(Default)]
struct Streamed {
    run: u64,
    to: String,
    text: String,
}

type StreamedSlot = Arc<std::sync::Mutex<Option<Streamed>>>;

impl Streamed {
    fn push(&mut self, delta: &str) {
        self.text.push_str(delta);
        if self.text.len() > STREAMED_KEPT_BYTES {
            let over = self.text.len() - STREAMED_KEPT_BYTES;
            // The first character boundary at or after `over` (at most 3 bytes on).
            let cut = (over..=self.text.len())
                .find(|&i| self.text.is_char_boundary(i))
                .unwrap_or(self.text.len());
            self.text.drain(..cut);
        }
    }
}
/// Pauses between the tries of a fact's write that failed (a busy or briefly failing disk).
const WRITE_RETRIES: [Duration; 3] = [
    Duration::from_millis(20),
    Duration::from_millis(100),
    Duration::from_millis(400),
];
/// How often a run's outcome that could not be written is tried again.
const UNSTORED_RETRY: Duration = Duration::from_secs(2);

/// Why the hub refused or could not do what it was asked.
#[derive(Debug, Error)]
pub enum HubError {
    /// The core refused the fact (an unknown sender, no team, …): nothing changed.
    #[error("{0}")]
    Refused(#[from] SessionError),
    /// The fact was not committed, so not applied; the session is what the database holds.
    #[error("{0}; the session was reloaded from the database")]
    NotStored(StoreError),
    #[error("{0}")]
    Store(#[from] StoreError),
    #[error("session {id}: {error}")]
    DoesNotReplay { id: i64, error: SessionFileError },
    /// A session command (`rename`, `fork`) that could not be done: nothing changed.
    #[error("{what}: {why}")]
    Library { what: &'static str, why: String },
    #[error("cancel: {0} is not running")]
    NotRunning(String),
    /// The run ended, but its outcome is not yet in the database (it is being written again).
    #[error("cancel: {0}'s run has ended; its outcome could not be written to the database yet and is tried again every {secs} s", secs = UNSTORED_RETRY.as_secs())]
    Unstored(String),
    /// A member's run settings cannot be used on this machine: nothing changed.
    #[error("{0}")]
    Settings(String),
    #[error("cannot start the session's thread: {0}")]
    Thread(std::io::Error),
    /// The actor is gone (the bridge is stopping).
    #[error("the bridge is stopping: the session no longer takes commands")]
    Stopped,
}

/// An event as every subscriber receives it; its frame text is made once, by whichever
/// connection sends it first, and shared by the others (each sends the same bytes, not a
/// copy).
#[derive(Debug)]
pub(crate) struct Published {
    event: Event,
    frame: OnceLock<Utf8Bytes>,
    /// For a fact, what the chat prints of it when a chat is subscribed ([`Hub::report`]).
    said: Vec<Said>,
}

impl Published {
    fn new(event: Event) -> Arc<Published> {
        Self::with(event, Vec::new())
    }

    fn with(event: Event, said: Vec<Said>) -> Arc<Published> {
        Arc::new(Published {
            event,
            frame: OnceLock::new(),
            said,
        })
    }

    pub(crate) fn event(&self) -> &Event {
        &self.event
    }

    /// What the chat prints of this fact (nothing for other events, or with no chat).
    pub(crate) fn said(&self) -> &[Said] {
        &self.said
    }

    /// The event's protocol frame.
    pub(crate) fn frame(&self) -> Utf8Bytes {
        self.frame
            .get_or_init(|| encode_event(&self.event).into())
            .clone()
    }
}

/// What a page needs when it connects: the events from now on, and the log and agents as
/// they are at that instant (taken together, so nothing falls between them).
pub(crate) struct Attached {
    pub events: broadcast::Receiver<Arc<Published>>,
    pub session: Event,
    pub agents: Event,
    /// What the run in flight has streamed so far, if anything.
    pub output: Option<Event>,
}

/// How many actors run, so a stopping process can wait for them to close their database
/// ([`wait_for_actors`]).
static ACTORS: Actors = Actors {
    running: std::sync::Mutex::new(0),
    changed: std::sync::Condvar::new(),
};

struct Actors {
    running: std::sync::Mutex<usize>,
    changed: std::sync::Condvar,
}

impl Actors {
    fn started(&self) {
        *self.running.lock().unwrap_or_else(|e| e.into_inner()) += 1;
    }

    fn ended(&self) {
        let mut running = self.running.lock().unwrap_or_else(|e| e.into_inner());
        *running = running.saturating_sub(1);
        self.changed.notify_all();
    }
}

/// Waits, at most `timeout`, until every hub's actor has ended (its handles all dropped) and
/// closed its database: called when the process stops, so the database is left checkpointed.
pub fn wait_for_actors(timeout: Duration) {
    let running = ACTORS.running.lock().unwrap_or_else(|e| e.into_inner());
    let _ = ACTORS
        .changed
        .wait_timeout_while(running, timeout, |n| *n > 0);
}

/// A handle to the hub; cheap to clone.
#[derive(Clone)]
pub struct Hub {
    inbox: mpsc::UnboundedSender<Msg>,
    events: broadcast::Sender<Arc<Published>>,
    /// Searches run here, off the session's thread (a slow one never delays a fact).
    reader: Arc<crate::store::Reader>,
}

type Reply<T> = oneshot::Sender<Result<T, HubError>>;
type Query = Box<dyn FnOnce(&Actor) + Send>;

/// What the actor is asked to do.
enum Msg {
    Apply {
        fact: Fact,
        reply: Reply<()>,
    },
    Cancel {
        to: String,
        reply: Reply<()>,
    },
    /// A team from a file on this machine, and the machine settings it gives its members.
    Deploy {
        team: Box<Team>,
        machine: Box<MachineSettings>,
        reply: Reply<()>,
    },
    Open {
        id: Option<i64>,
        reply: Reply<()>,
    },
    Sessions {
        reply: Reply<Vec<SessionInfo>>,
    },
    Rename {
        id: i64,
        name: String,
        reply: Reply<()>,
    },
    Fork {
        id: i64,
        upto: u64,
        reply: Reply<()>,
    },
    /// Performs the actions pending after a start or a replay.
    Resume,
    DiscardIfUnused {
        reply: oneshot::Sender<()>,
    },
    /// A read of the state, run on the actor's thread.
    Query(Query),
    /// A run ended (sent by the run's own task).
    Finished(Finished),
    /// Time to write again the outcome that could not be written.
    RetryUnstored,
}

impl Hub {
    /// Opens session `id` from `store` (replaying its facts; its machine settings read again
    /// from the team file it remembers), or starts a new one with `team` and `machine` (the
    /// settings of the file `team` was read from), and starts the actor. Call it inside the
    /// tokio runtime that is to run the agents.
    pub fn start(
        mut store: Store,
        session: Option<i64>,
        team: Team,
        agents: AgentsFile,
        simulate_all: bool,
        machine: MachineSettings,
    ) -> Result<Hub, HubError> {
        // The channel keeps its last events in memory: a small ring keeps the bridge's memory
        // flat; a page that falls further behind gets the whole log again (server.rs).
        let (events, _) = broadcast::channel(EVENT_BUFFER);
        let (inbox, messages) = mpsc::unbounded_channel();
        let created = session.is_none();
        // One session has one runner: its lease is taken before anything of it is run, and a
        // session another live bridge holds is refused, naming it (docs/architecture.md §14).
        let (session_id, session, machine) = match session {
            Some(id) => {
                store.lease(id)?;
                let session = reopen(&store, id)?;
                let (machine, note) = MachineSettings::resume(id, store.team_file(id)?);
                if let Some(note) = note {
                    eprintln!("agent-chatter: warning: {note}");
                }
                (id, session, machine)
            }
            None => {
                let (id, session) = create(&mut store, team)?;
                store.lease(id)?;
                store.remember_team_file(id, machine.file())?;
                (id, session, machine)
            }
        };
        crate::debug::session_opened(session_id, created, &session);
        let reader = Arc::new(store.reader());
        let actor = Actor {
            store,
            session_id,
            opening: 1,
            session,
            agents,
            simulate_all,
            running: None,
            unstored: None,
            next_run: 1,
            events: events.clone(),
            inbox: inbox.downgrade(),
            runtime: tokio::runtime::Handle::current(),
            created,
            machine,
            streamed: StreamedSlot::default(),
            reporter: OnceLock::new(),
            opened: false,
        };
        std::thread::Builder::new()
            .name("agent-chatter-hub".into())
            .spawn(move || {
                ACTORS.started();
                actor.run(messages)
            })
            .map_err(HubError::Thread)?;
        Ok(Hub {
            inbox,
            events,
            reader,
        })
    }

    async fn ask<T>(&self, msg: impl FnOnce(Reply<T>) -> Msg) -> Result<T, HubError> {
        let (reply, answer) = oneshot::channel();
        self.inbox.send(msg(reply)).map_err(|_| HubError::Stopped)?;
        answer.await.map_err(|_| HubError::Stopped)?
    }

    /// Applies `fact`: the core checks it, SQLite commits it, every page gets it, and then
    /// what it causes is performed. A refused fact changes nothing and its reason comes back.
    pub(crate) async fn apply(&self, fact: Fact) -> Result<(), HubError> {
        self.ask(|reply| Msg::Apply { fact, reply }).await
    }

    /// Sets `team`, read from a file on this machine (`/team deploy`): its run settings
    /// (`machine`) are checked against the installed CLIs first, and are the ones the bridge
    /// applies from now on; the session remembers the file to read them again on resume.
    pub(crate) async fn deploy(
        &self,
        team: Team,
        machine: MachineSettings,
    ) -> Result<(), HubError> {
        let (team, machine) = (Box::new(team), Box::new(machine));
        self.ask(|reply| Msg::Deploy {
            team,
            machine,
            reply,
        })
        .await
    }

    /// Stops the running delivery to `to` (a real agent or the simulator); it becomes a
    /// `failed` fact.
    pub(crate) async fn cancel(&self, to: &str) -> Result<(), HubError> {
        let to = to.to_string();
        self.ask(|reply| Msg::Cancel { to, reply }).await
    }

    /// Switches every page to session `id` (or a new one with the current team). The session
    /// being left keeps its log as it is: its running agent is stopped, and when the session is
    /// reopened that run is recorded as interrupted (as after a restart), not made again. A session that cannot be opened changes nothing, and nothing is stopped.
    pub(crate) async fn open(&self, id: Option<i64>) -> Result<(), HubError> {
        self.ask(|reply| Msg::Open { id, reply }).await
    }

    /// Notes why the run in flight stops without an outcome (the chat exits while an agent
    /// runs): the session's next open records that run as interrupted, saying so. False when
    /// no run is noted (the simulator's, whose delivery is simply made again).
    pub(crate) async fn stopping(&self, why: &'static str) -> bool {
        self.read(move |actor| actor.store.run_stopped(actor.session_id, why))
            .await
            .is_ok_and(|noted| noted.is_ok_and(|rows| rows > 0))
    }

    /// The sessions of the database.
    pub(crate) async fn sessions(&self) -> Result<Vec<SessionInfo>, HubError> {
        self.ask(|reply| Msg::Sessions { reply }).await
    }

    /// Names session `id` (trimmed; 1 to 120 characters); every page gets the new list.
    pub(crate) async fn rename(&self, id: i64, name: String) -> Result<(), HubError> {
        self.ask(|reply| Msg::Rename { id, name, reply }).await
    }

    /// The facts of every session whose text matches `query` (see [`Store::search`]), found
    /// on the hub's reader, off the session's thread: no fact or delivery waits on a search.
    pub(crate) async fn search(&self, query: String) -> Result<Vec<SearchHit>, HubError> {
        let reader = Arc::clone(&self.reader);
        tokio::task::spawn_blocking(move || reader.search(&query))
            .await
            .map_err(|_| HubError::Stopped)?
            .map_err(HubError::from)
    }

    /// "Continue from here": a new session whose log is the first `upto` facts of session
    /// `id`, opened as [`Hub::open`] opens one; session `id` is unchanged.
    pub(crate) async fn fork(&self, id: i64, upto: u64) -> Result<(), HubError> {
        self.ask(|reply| Msg::Fork { id, upto, reply }).await
    }

    /// Performs the actions pending after a start. A delivery whose run started and never
    /// ended (the bridge died while the agent ran) is recorded as interrupted, not made again
    /// (docs/architecture.md §14c "Interrupted runs").
    pub fn resume(&self) {
        let _ = self.inbox.send(Msg::Resume);
    }

    /// Removes the session this start created when nothing happened in it but its team (the
    /// terminal chat given no message), so no empty session is left in the list.
    pub(crate) async fn discard_if_unused(&self) {
        let (reply, done) = oneshot::channel();
        if self.inbox.send(Msg::DiscardIfUnused { reply }).is_ok() {
            let _ = done.await;
        }
    }

    /// `read` of the session and its id, as they are once every earlier command is done.
    pub(crate) async fn query<T: Send + 'static>(
        &self,
        read: impl FnOnce(&Session, i64) -> T + Send + 'static,
    ) -> Result<T, HubError> {
        self.read(move |actor| read(&actor.session, actor.session_id))
            .await
    }

    async fn read<T: Send + 'static>(
        &self,
        read: impl FnOnce(&Actor) -> T + Send + 'static,
    ) -> Result<T, HubError> {
        let (reply, answer) = oneshot::channel();
        let query: Query = Box::new(move |actor| {
            let _ = reply.send(read(actor));
        });
        self.inbox
            .send(Msg::Query(query))
            .map_err(|_| HubError::Stopped)?;
        answer.await.map_err(|_| HubError::Stopped)
    }

    /// The events from now on, each fact published with what `reporter` says of it, computed
    /// on the actor's thread from the session just before and just after the fact (the chat:
    /// it prints the conversation without a session of its own); with what it says of the
    /// actions still pending (the notices of the team loaded) and the number of facts so far.
    /// Taken on the actor's thread, where every event is sent, so none falls between.
    pub(crate) async fn report(
        &self,
        reporter: Reporter,
    ) -> Result<(broadcast::Receiver<Arc<Published>>, Vec<Said>, usize), HubError> {
        let events = self.events.clone();
        self.read(move |actor| {
            let _ = actor.reporter.set(reporter);
            let mut pending = actor.session.clone();
            let actions: Vec<Action> = std::iter::from_fn(|| pending.poll_action()).collect();
            let said = (reporter.actions)(&pending, &actions);
            (events.subscribe(), said, actor.session.facts().len())
        })
        .await
    }

    /// A page connects: see [`Attached`].
    pub(crate) async fn attach(&self) -> Result<Attached, HubError> {
        let events = self.events.clone();
        self.read(move |actor| {
            let streamed = actor.streamed.lock().unwrap_or_else(|e| e.into_inner());
            let output = streamed
                .as_ref()
                .filter(|s| !s.text.is_empty())
                .map(|s| Event::Output {
                    to: s.to.clone(),
                    delta: s.text.clone(),
                });
            Attached {
                events: events.subscribe(),
                session: actor.session_event(),
                agents: actor.agents_event(),
                output,
            }
        })
        .await
    }

    /// How each AI member of the current team is answered here.
    pub async fn agents(&self) -> Result<Vec<AgentReport>, HubError> {
        self.read(Actor::agent_reports).await
    }

    /// When the team sets a cost cap: the members whose CLI reports no cost (Codex, Gemini, a
    /// plain command), so the cap cannot count their runs (docs/architecture.md §14c).
    pub async fn uncapped(&self) -> Vec<String> {
        self.read(|actor| {
            let Some(team) = actor.session.team() else {
                return Vec::new();
            };
            if team.settings.max_cost_usd.is_none() {
                return Vec::new();
            }
            crate::agents::members(team, &actor.agents, actor.simulate_all)
                .into_iter()
                .filter(|m| matches!(m.answerer, Answerer::Cli(_)))
                .filter(|m| {
                    let kind = m.command.as_ref().and_then(|c| c.output);
                    !kind.unwrap_or(AgentType::of(&m.agent_type)).reports_cost()
                })
                .map(|m| {
                    team.member(&m.member)
                        .map_or(m.member.clone(), |t| t.display_name.clone())
                })
                .collect()
        })
        .await
        .unwrap_or_default()
    }

    /// The `session` event (the whole log), for a page that fell behind.
    pub(crate) async fn session_event(&self) -> Result<Event, HubError> {
        self.read(Actor::session_event).await
    }
}

/// The hub's state, owned by its thread.
struct Actor {
    store: Store,
    session_id: i64,
    /// Counts the conversations begun by this bridge (a session opened, or a team set or a
    /// scenario loaded in it); a run belongs to the opening it started in, and its outcome is
    /// stale once another has begun (the same session left and reopened is a new opening).
    opening: u64,
    session: Session,
    agents: AgentsFile,
    /// `--simulate`: the simulator answers every AI member.
    simulate_all: bool,
    /// The running delivery (a real agent's or the simulator's).
    running: Option<Running>,
    /// The outcome of the delivery in flight whose run has ended but whose fact could not be
    /// written (a full disk, an I/O error): kept here and written again, first thing at each
    /// command and every [`UNSTORED_RETRY`], so the conversation goes on once the disk does.
    /// While it is set, `running` is `None` and the session still has the delivery in flight.
    unstored: Option<Unstored>,
    /// The number the next run gets, so a finished run is told apart from a newer one for the
    /// same member.
    next_run: u64,
    events: broadcast::Sender<Arc<Published>>,
    /// The actor's own inbox, for runs to report into (weak: the actor ends when every
    /// handle is gone).
    inbox: mpsc::WeakUnboundedSender<Msg>,
    runtime: tokio::runtime::Handle,
    /// The open session was created by this start (not resumed).
    created: bool,
    /// The members' run settings and working directories, from the team file on this machine
    /// (docs/architecture.md §14c): held here, never in the session.
    machine: MachineSettings,
    /// What the run in flight has streamed (see [`Streamed`]).
    streamed: StreamedSlot,
    /// Set by a chat: see [`Hub::report`].
    reporter: OnceLock<Reporter>,
    /// Set while the actions of a session just opened (or resumed) are performed: only then
    /// can a run be in flight that this bridge never saw end ([`Actor::interrupted`]).
    opened: bool,
}

/// The delivery being run: which run, for whom, and its cancel switch (sending on it, or
/// dropping it, stops the run).
struct Running {
    run: u64,
    to: String,
    cancel: oneshot::Sender<()>,
}

/// A run's outcome not yet written: the opening it belongs to, and its fact.
struct Unstored {
    opening: u64,
    to: String,
    fact: Fact,
}

/// A finished run: the session and run it belongs to, who, how, and everything it printed.
struct Finished {
    opening: u64,
    session: i64,
    run: u64,
    to: String,
    outcome: Outcome,
    /// What the run cost, as its CLI reported it (and how long it took here).
    usage: Usage,
    /// What is kept of the agent's stdout.
    output: run::Output,
}

impl Actor {
    fn run(mut self, mut inbox: mpsc::UnboundedReceiver<Msg>) {
        while let Some(msg) = inbox.blocking_recv() {
            self.handle(msg);
        }
        self.store.release(self.session_id);
        // Closing the database's last connection checkpoints its WAL into the file and
        // removes it: a clean stop leaves no -wal behind.
        drop(self);
        ACTORS.ended();
    }

    fn handle(&mut self, msg: Msg) {
        // An outcome waiting to be written goes first: later facts come after it.
        if !matches!(msg, Msg::Query(_) | Msg::RetryUnstored) {
            self.write_unstored();
        }
        match msg {
            Msg::Apply { fact, reply } => {
                // A team sent from the page (or a scenario it opens) runs with the machine's
                // run settings, never its own: the session drops whatever it carries, and a
                // member keeps the settings its id has in the team file, as long as it keeps
                // the agent type they were written for (docs/architecture.md §14c).
                let checked = match &fact {
                    Fact::SetTeam { team, .. } => self.machine.check_page_team(team),
                    Fact::LoadScenario { scenario } => self.machine.check_page_team(&scenario.team),
                    _ => Ok(()),
                };
                let applied = checked
                    .map_err(HubError::Settings)
                    .and_then(|()| self.apply(None, fact));
                let _ = reply.send(applied);
            }
            Msg::Deploy {
                team,
                machine,
                reply,
            } => {
                let checked = crate::agents::check_team(&team, &self.agents, self.simulate_all)
                    .map_err(HubError::Settings);
                let applied = checked.and_then(|()| {
                    let before = std::mem::replace(&mut self.machine, *machine);
                    self.apply(None, Fact::set_team(*team))
                        .inspect_err(|_| {
                            self.machine = before;
                        })
                        .map(|()| {
                            if let Err(e) = self
                                .store
                                .remember_team_file(self.session_id, self.machine.file())
                            {
                                eprintln!(
                                    "bridge: the team file of session {} was not remembered \
                                     (a resume will run its members with no settings): {e}",
                                    self.session_id
                                );
                            }
                        })
                });
                let _ = reply.send(applied);
            }
            Msg::Cancel { to, reply } => {
                let _ = reply.send(self.cancel(to));
            }
            Msg::Open { id, reply } => {
                let _ = reply.send(self.open(id));
            }
            Msg::Sessions { reply } => {
                let _ = reply.send(self.store.list().map_err(HubError::from));
            }
            Msg::Rename { id, name, reply } => {
                let renamed = agent_chatter::library::session_name(&name)
                    .and_then(|name| self.store.rename(id, &name).map_err(|e| e.to_string()))
                    .map_err(|why| HubError::Library {
                        what: "rename",
                        why,
                    });
                if renamed.is_ok() {
                    self.publish_sessions();
                }
                let _ = reply.send(renamed);
            }
            Msg::Fork { id, upto, reply } => {
                let forked =
                    self.store
                        .fork(id, upto, now().0 as i64)
                        .map_err(|e| HubError::Library {
                            what: "fork",
                            why: e.to_string(),
                        });
                let _ = reply.send(forked.and_then(|fork| self.open(Some(fork))));
            }
            Msg::Resume => {
                let actions = drain(&mut self.session);
                self.perform_opened(actions);
            }
            Msg::DiscardIfUnused { reply } => {
                self.discard_if_unused();
                let _ = reply.send(());
            }
            Msg::Query(read) => read(self),
            Msg::Finished(run) => self.report(run),
            Msg::RetryUnstored => {
                if self.unstored.is_some() {
                    self.write_unstored();
                    if self.unstored.is_some() {
                        self.retry_unstored_later();
                    }
                }
            }
        }
    }

    /// Writes the outcome kept by [`Self::unstored`], if any; on success the conversation goes
    /// on from it, as if it had been written when the run ended.
    fn write_unstored(&mut self) {
        let Some(Unstored { opening, to, fact }) = self.unstored.take() else {
            return;
        };
        match self.apply(Some(opening), fact.clone()) {
            Ok(()) => eprintln!("bridge: {to}'s outcome is now written to the database"),
            Err(HubError::NotStored(e)) if !gone_elsewhere(&e) => {
                self.unstored = Some(Unstored { opening, to, fact });
            }
            Err(e) => self.publish(Event::Error {
                message: format!("the outcome of {to}'s run was not recorded: {e}"),
            }),
        }
    }

    /// Forgets what run `run` streamed (it ended): a page connecting now is sent its outcome.
    fn forget_streamed(&self, run: u64) {
        let mut streamed = self.streamed.lock().unwrap_or_else(|e| e.into_inner());
        if streamed.as_ref().is_some_and(|s| s.run == run) {
            *streamed = None;
        }
    }

    /// Sends [`Msg::RetryUnstored`] to the actor after [`UNSTORED_RETRY`].
    fn retry_unstored_later(&self) {
        let inbox = self.inbox.clone();
        self.runtime.spawn(async move {
            tokio::time::sleep(UNSTORED_RETRY).await;
            if let Some(inbox) = inbox.upgrade() {
                let _ = inbox.send(Msg::RetryUnstored);
            }
        });
    }

    fn publish(&self, event: Event) {
        let _ = self.events.send(Published::new(event));
    }

    /// Sends every page the session list, after a change to it.
    fn publish_sessions(&self) {
        match self.store.list() {
            Ok(list) => self.publish(Event::Sessions { list }),
            Err(e) => eprintln!("bridge: the session list could not be read: {e}"),
        }
    }

    fn discard_if_unused(&mut self) {
        if self.created && self.session.facts().len() == 1 {
            if let Err(e) = self.store.delete_session(self.session_id) {
                eprintln!(
                    "bridge: the unused session {} was not removed: {e}",
                    self.session_id
                );
            }
        }
    }

    /// The `session` event: the whole log.
    fn session_event(&self) -> Event {
        Event::Session {
            id: self.session_id,
            facts: self.session.facts().to_vec(),
            // Only for showing: a database that cannot say leaves the page without them.
            sent: self.store.sent(self.session_id).unwrap_or_default(),
        }
    }

    /// The `agents` event: how each AI member of the current team is answered here.
    fn agents_event(&self) -> Event {
        Event::Agents {
            list: self.agent_reports(),
        }
    }

    fn agent_reports(&self) -> Vec<AgentReport> {
        let Some(team) = self.session.team() else {
            return Vec::new();
        };
        crate::agents::members(team, &self.agents, self.simulate_all)
            .into_iter()
            .map(|m| {
                // The member with the settings the machine's team file gives its id.
                let member = team.member(&m.member).map(|m| self.machine.dress(m));
                let member = member.as_ref();
                let kind = m
                    .command
                    .as_ref()
                    .and_then(|c| c.output)
                    .unwrap_or(AgentType::of(&m.agent_type));
                // The command as it runs, the member's settings in (docs/architecture.md §14c).
                let command = match (&m.command, member) {
                    (Some(c), Some(member)) => settings::command_for_member(c, kind, member)
                        .ok()
                        .or(m.command.clone()),
                    _ => m.command.clone(),
                };
                let mut run = member.map(|m| m.run.clone()).unwrap_or_default();
                // Names only: a value may be a secret, and the page needs none.
                run.env.values_mut().for_each(String::clear);
                let has_settings = member.is_some_and(|m| m.has_machine_settings());
                AgentReport {
                    runs: matches!(m.answerer, Answerer::Cli(_)),
                    simulated: m.answerer == Answerer::Simulator,
                    // Under --simulate no command is used: none is reported.
                    command: command.filter(|_| !self.simulate_all).map(|c| {
                        std::iter::once(c.command)
                            .chain(c.args)
                            .collect::<Vec<_>>()
                            .join(" ")
                    }),
                    problem: match m.answerer {
                        Answerer::Nobody(why) => Some(why),
                        _ => None,
                    },
                    dir: member.as_ref().and_then(|m| m.base_dir.clone()),
                    source: (has_settings || self.machine.file().is_some())
                        .then(|| self.machine.source().to_string()),
                    settings: run,
                    member: m.member,
                }
            })
            .collect()
    }

    /// After a fact was not stored: the session becomes what the database holds (the same
    /// log, or one another bridge on the same file has added to) and every page is sent it.
    /// The delivery the replay has in flight is already running here, or its outcome is the
    /// fact that failed (which its caller keeps: `!perform`), or it belongs to the bridge that
    /// wrote those facts (`!perform` too): then it is not performed again. Otherwise it is, so
    /// a session never waits on a run that nobody makes.
    fn reload(&mut self, perform: bool) {
        let Ok(facts) = self.store.facts(self.session_id) else {
            return;
        };
        if let Ok(mut session) = Session::replay(facts) {
            let actions = drain(&mut session);
            self.session = session;
            self.publish(self.session_event());
            if perform && self.running.is_none() && self.unstored.is_none() {
                self.perform(actions);
            }
        }
    }

    /// Applies `fact` while `opening` (when given) is still the open session: a run's outcome
    /// belongs to the session it was delivered in, and is dropped (`Ok`) once another is open.
    fn apply(&mut self, opening: Option<u64>, mut fact: Fact) -> Result<(), HubError> {
        if opening.is_some_and(|o| o != self.opening) {
            return Ok(());
        }
        // The fact stored and sent is the one the session keeps: never with machine settings.
        fact.strip_machine_settings();
        let before = crate::debug::before(&self.session);
        let prior = self.reporter.get().map(|_| Prior::of(&self.session));
        self.session.apply(&fact)?;
        let seq = self.session.facts().len() as i64;
        let mut written = self.store.append(self.session_id, seq, &fact);
        // A busy or briefly failing disk: tried again, a moment later.
        for pause in WRITE_RETRIES {
            match &written {
                Err(StoreError::Sql(_)) => {
                    std::thread::sleep(pause);
                    written = self.store.append(self.session_id, seq, &fact);
                }
                _ => break,
            }
        }
        if let Err(e) = written {
            // Not stored, so not applied: go back to what the database holds.
            let outcome = matches!(fact, Fact::Replied { .. } | Fact::Failed { .. });
            self.reload(!outcome && !gone_elsewhere(&e));
            return Err(HubError::NotStored(e));
        }
        let new_team = matches!(fact, Fact::SetTeam { .. } | Fact::LoadScenario { .. });
        if new_team {
            // A new team begins a new conversation: the running delivery belongs to the one
            // that ended, so it is stopped and its outcome is not recorded (it would land on
            // the next delivery to the same member).
            if let Some(running) = self.running.take() {
                let _ = running.cancel.send(());
            }
            self.opening += 1;
        }
        let actions = drain(&mut self.session);
        let said = match (self.reporter.get(), prior) {
            (Some(reporter), Some(prior)) => {
                (reporter.fact)(&prior, &fact, &self.session, &actions)
            }
            _ => Vec::new(),
        };
        let _ = self.events.send(Published::with(
            Event::Fact {
                seq: seq as u64,
                fact,
            },
            said,
        ));
        if new_team {
            self.publish(self.agents_event());
            // A session never renamed is called by its new team.
            self.publish_sessions();
        }
        crate::debug::after(before, &self.session, &actions);
        self.perform(actions);
        Ok(())
    }

    fn open(&mut self, id: Option<i64>) -> Result<(), HubError> {
        let created = id.is_none();
        let (id, session) = match id {
            Some(id) => {
                // A session another bridge runs is refused; nothing changes here.
                self.store.lease(id)?;
                match reopen(&self.store, id) {
                    Ok(session) => (id, session),
                    Err(e) => {
                        if id != self.session_id {
                            self.store.release(id);
                        }
                        return Err(e);
                    }
                }
            }
            None => {
                let team = self
                    .session
                    .team()
                    .cloned()
                    .unwrap_or_else(agent_chatter::demo::team);
                let (id, session) = create(&mut self.store, team)?;
                self.store.lease(id)?;
                // The team shown goes on, with the settings of its file.
                if let Err(e) = self.store.remember_team_file(id, self.machine.file()) {
                    eprintln!("bridge: the team file of session {id} was not remembered: {e}");
                }
                (id, session)
            }
        };
        if !created {
            let remembered = self.store.team_file(id).unwrap_or_else(|e| {
                eprintln!("bridge: the team file of session {id} could not be read: {e}");
                None
            });
            let (machine, note) = MachineSettings::resume(id, remembered);
            if let Some(note) = note {
                eprintln!("agent-chatter: warning: {note}");
                self.publish(Event::Error { message: note });
            }
            self.machine = machine;
        }
        // The session left keeps its run's record, so its next open says how the run ended
        // (docs/architecture.md §14c "Interrupted runs"); noted while its lease is still held.
        let stopped = if self.unstored.is_some() {
            Some("its session was left before its outcome could be written")
        } else if self.running.is_some() {
            Some("its session was left while it ran")
        } else {
            None
        };
        if let Some(why) = stopped {
            if let Err(e) = self.store.run_stopped(self.session_id, why) {
                eprintln!(
                    "bridge: why session {}'s run stopped was not noted: {e}",
                    self.session_id
                );
            }
        }
        if id != self.session_id {
            // A session this bridge made and nothing was done in is not kept: a page asking
            // for new sessions again and again leaves one, not a list of empty ones.
            self.discard_if_unused();
            self.store.release(self.session_id);
        }
        if let Some(running) = self.running.take() {
            let _ = running.cancel.send(());
        }
        // Like a running delivery's, an unwritten outcome is not recorded once its session
        // is left: the run is recorded as interrupted when it is reopened.
        self.unstored = None;
        crate::debug::session_opened(id, created, &session);
        self.session_id = id;
        self.created = created;
        self.opening += 1;
        self.session = session;
        self.publish(self.session_event());
        self.publish(self.agents_event());
        self.publish_sessions();
        let actions = drain(&mut self.session);
        self.perform_opened(actions);
        Ok(())
    }

    /// Performs the actions pending in a session just opened or resumed, where the delivery
    /// due may be a run that began and never ended ([`Actor::interrupted`]).
    fn perform_opened(&mut self, actions: Vec<Action>) {
        self.opened = true;
        self.perform(actions);
        self.opened = false;
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

    fn cancel(&mut self, to: String) -> Result<(), HubError> {
        match self.running.take() {
            Some(running) if running.to == to => {
                let _ = running.cancel.send(());
                Ok(())
            }
            other => {
                self.running = other;
                match &self.unstored {
                    Some(unstored) if unstored.to == to => Err(HubError::Unstored(to)),
                    _ => Err(HubError::NotRunning(to)),
                }
            }
        }
    }

    fn perform(&mut self, actions: Vec<Action>) {
        for action in actions {
            if let Action::Deliver(delivery) = action {
                self.deliver(*delivery);
            }
            // AwaitHuman, Finished and notices: the pages see them by applying the same facts.
        }
    }

    fn deliver(&mut self, delivery: Delivery) {
        let interrupted = if std::mem::take(&mut self.opened) {
            self.interrupted(&delivery)
        } else {
            None
        };
        if let Some(fact) = interrupted {
            // Recorded, not run again: the conversation goes on from the failure.
            match self.apply(None, fact.clone()) {
                Ok(()) => {}
                // Kept and written again, as a run's outcome is (`Self::report`), so the
                // session never waits on a delivery nobody makes.
                Err(HubError::NotStored(e)) if !gone_elsewhere(&e) => {
                    self.publish(Event::Error {
                        message: format!(
                            "that {}'s run was interrupted could not be written to the session \
                             database ({e}); it is kept and written again every {} s",
                            delivery.to,
                            UNSTORED_RETRY.as_secs()
                        ),
                    });
                    self.unstored = Some(Unstored {
                        opening: self.opening,
                        to: delivery.to.clone(),
                        fact,
                    });
                    self.retry_unstored_later();
                }
                Err(e) => self.publish(Event::Error {
                    message: format!("{}'s interrupted run was not recorded: {e}", delivery.to),
                }),
            }
            return;
        }
        let member = self.session.team().and_then(|team| {
            crate::agents::member(team, &delivery.to, &self.agents, self.simulate_all)
        });
        let settings_of = self
            .session
            .team()
            .and_then(|t| t.member(&delivery.to))
            .map(|m| self.machine.dress(m));
        let (agent_type, command, unsendable) = match member {
            Some(MemberAgent {
                agent_type,
                command: Some(command),
                answerer: Answerer::Cli(_),
                ..
            }) => {
                // The member's run settings (docs/architecture.md §14c), from the machine's
                // team file (the session holds none).
                let kind = command.output.unwrap_or(AgentType::of(&agent_type));
                let command = match &settings_of {
                    Some(m) => settings::command_for_member(&command, kind, m),
                    None => Ok(command),
                };
                match command {
                    Ok(command) => {
                        let unsendable =
                            run::unsendable(&command, delivery.prompt.system_flag.as_deref());
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
        // A delivery that cannot be handed over is not announced, and no digest says it was
        // sent.
        if unsendable.is_none() {
            // A run of a real CLI is noted before it starts, so one the bridge never sees end
            // (it was killed) is recorded as interrupted when the session is next opened, not
            // run again unasked (docs/architecture.md §14c "Interrupted runs"). The simulator
            // costs nothing and changes nothing: its delivery is simply made again.
            if command.is_some() {
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
        let timeout = settings_of
            .as_ref()
            .and_then(|m| m.run.timeout_ms)
            .or_else(|| {
                self.session
                    .settings()
                    .and_then(|s| s.max_agent_response_ms)
            })
            .map_or(DEFAULT_TIMEOUT, Duration::from_millis);
        let to = delivery.to.clone();
        let run = self.next_run;
        self.next_run += 1;
        let (cancel_tx, cancel_rx) = oneshot::channel();
        self.running = Some(Running {
            run,
            to: to.clone(),
            cancel: cancel_tx,
        });
        let (opening, session) = (self.opening, self.session_id);
        // The inbox outlives every run while a handle exists; once none does, the outcome has
        // no one to go to.
        let inbox = self.inbox.clone();
        let started = std::time::Instant::now();
        // Only a real CLI's run is timed (the simulator and a run that never started report
        // nothing): a run that reports usage is one that ran, and may have cost money
        // (`usage::Spend`, docs/architecture.md §14c).
        let timed = command.is_some() && unsendable.is_none();
        let finished = move |outcome, mut usage: Usage, output| {
            // The CLI's own figure when it gives one, else the bridge's clock.
            if timed {
                usage.duration_ms = usage
                    .duration_ms
                    .or(Some(started.elapsed().as_millis() as u64));
            }
            if let Some(inbox) = inbox.upgrade() {
                let _ = inbox.send(Msg::Finished(Finished {
                    opening,
                    session,
                    run,
                    to,
                    outcome,
                    usage,
                    output,
                }));
            }
        };
        if let Some(reason) = unsendable {
            finished(
                Outcome::Failed(Failure::CannotRun, reason),
                Usage::default(),
                run::Output::default(),
            );
            return;
        }
        match command {
            None => {
                // The simulator was chosen for this member: the core's simulated agent
                // answers, after a pause in which it can be cancelled like a real agent.
                let text = self.session.simulate_reply(&delivery);
                self.runtime.spawn(async move {
                    let outcome = tokio::select! {
                        () = tokio::time::sleep(SIMULATED_DELAY) => Outcome::Replied(text),
                        _ = cancel_rx => Outcome::Failed(Failure::Cancelled, CANCELLED.to_string()),
                    };
                    // A simulated run costs nothing and is not timed: no usage is recorded.
                    finished(outcome, Usage::default(), run::Output::default());
                });
            }
            Some(command) => {
                let events = self.events.clone();
                let prompt = delivery.prompt;
                *self.streamed.lock().unwrap_or_else(|e| e.into_inner()) = Some(Streamed {
                    run,
                    to: delivery.to.clone(),
                    text: String::new(),
                });
                let streamed = (Arc::clone(&self.streamed), run);
                self.runtime.spawn(async move {
                    let (tx, rx) = mpsc::unbounded_channel::<String>();
                    let (retries_tx, retries_rx) = mpsc::unbounded_channel();
                    let retried = tokio::spawn(relay_retries(
                        delivery.to.clone(),
                        retries_rx,
                        events.clone(),
                    ));
                    let relay = tokio::spawn(relay_output(delivery.to, rx, events, streamed));
                    let job = Job {
                        command: &command,
                        agent_type: AgentType::of(&agent_type),
                        prompt: &prompt.prompt,
                        system_flag: prompt.system_flag.as_deref(),
                        timeout,
                        retries: Some(retries_tx),
                    };
                    let ran = run::run(job, tx, cancel_rx).await;
                    let _ = relay.await;
                    let _ = retried.await;
                    finished(ran.outcome, ran.usage, ran.output);
                });
            }
        }
    }

    /// Turns a run's outcome into a fact of the session it was delivered in. A reply above
    /// the core's message limit is never lost: the whole output is kept in the database and
    /// the conversation records a `failed` fact naming its size (a cut reply could mislead
    /// the next agent); so is the output of a run that failed. The outcome of a run whose
    /// session was left meanwhile is not recorded: that session's log stays as it was, and
    /// the run is recorded as interrupted when it is reopened.
    fn report(&mut self, finished: Finished) {
        let Finished {
            opening,
            session,
            run,
            to,
            outcome,
            usage,
            output,
        } = finished;
        let at = now();
        if self.running.as_ref().is_some_and(|r| r.run == run) {
            self.running = None;
        }
        self.forget_streamed(run);
        if self.opening != opening {
            eprintln!(
                "bridge: {to}'s run ended after its session {session} was left; not recorded \
                 (it is recorded as interrupted when that session is opened)"
            );
            return;
        }
        let fact = match outcome {
            Outcome::Replied(text) | Outcome::Incomplete { text, .. }
                if text.len() > MAX_MESSAGE_BYTES =>
            {
                let kept = self
                    .store
                    .keep_output(session, &to, at.0 as i64, &output.bytes());
                let where_ = match kept {
                    Ok(()) if output.dropped() == 0 => {
                        "its full output is kept in the session database (`agent-chatter outputs` prints it)"
                            .to_string()
                    }
                    Ok(()) => output.where_kept(),
                    Err(_) => "its output could not be kept".to_string(),
                };
                failed(
                    &to,
                    Failure::TooLarge,
                    format!("{}; {where_}", above_the_limit(text.len() as u64)),
                    at,
                )
            }
            // An empty reply is no message: stored, it would hand the turn on with nothing
            // said and no routing (docs/architecture.md §14c).
            Outcome::Replied(text) | Outcome::Incomplete { text, .. } if text.trim().is_empty() => {
                failed(
                    &to,
                    Failure::EmptyReply,
                    "empty reply: the agent ended without saying anything".to_string(),
                    at,
                )
            }
            Outcome::Replied(text) => Fact::replied(to.as_str(), text, at),
            Outcome::Incomplete { text, reason } => Fact::Replied {
                to: to.clone(),
                text: text.into(),
                at,
                incomplete: Some(reason),
                usage: None,
            },
            // What a failed agent wrote (streamed text with no final one, a half event) is
            // kept too, so nothing it said is lost; a run the user cancelled is not.
            Outcome::Failed(failure, reason)
                if !output.is_empty() && failure != Failure::Cancelled =>
            {
                let reason =
                    match self
                        .store
                        .keep_output(session, &to, at.0 as i64, &output.bytes())
                    {
                        Ok(()) => {
                            format!("{}; {}", reason.trim_end_matches('.'), output.where_kept())
                        }
                        Err(_) => reason,
                    };
                failed(&to, failure, reason, at)
            }
            Outcome::Failed(failure, reason) => failed(&to, failure, reason, at),
        };
        let fact = fact.with_usage(usage);
        match self.apply(Some(opening), fact.clone()) {
            Ok(()) => {}
            // The disk failed, not the session: the outcome is kept and written again, and the
            // conversation goes on from it then.
            Err(HubError::NotStored(e)) if !gone_elsewhere(&e) => {
                self.publish(Event::Error {
                    message: format!(
                        "the outcome of {to}'s run could not be written to the session database \
                         ({e}); it is kept and written again every {} s, and the conversation \
                         goes on once it is stored",
                        UNSTORED_RETRY.as_secs()
                    ),
                });
                self.unstored = Some(Unstored { opening, to, fact });
                self.retry_unstored_later();
            }
            Err(e) => self.publish(Event::Error {
                message: format!("the outcome of {to}'s run was not recorded: {e}"),
            }),
        }
    }
}

/// Relays a run's streamed text to every subscriber, in frames of at most
/// [`OUTPUT_FRAME_BYTES`] (a longer delta is split at character boundaries). What arrived
/// meanwhile goes in the same event: a burst of tiny deltas is a few frames, not thousands no
/// page keeps up with.
async fn relay_output(
    to: String,
    mut deltas: mpsc::UnboundedReceiver<String>,
    events: broadcast::Sender<Arc<Published>>,
    (streamed, run): (StreamedSlot, u64),
) {
    let publish = |delta: String| {
        let mut kept = streamed.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(kept) = kept.as_mut().filter(|k| k.run == run) {
            kept.push(&delta);
        }
        let _ = events.send(Published::new(Event::Output {
            to: to.clone(),
            delta,
        }));
    };
    while let Some(mut delta) = deltas.recv().await {
        while delta.len() < OUTPUT_FRAME_BYTES {
            match deltas.try_recv() {
                Ok(more) => delta.push_str(&more),
                Err(_) => break,
            }
        }
        if delta.len() <= OUTPUT_FRAME_BYTES {
            publish(delta);
            continue;
        }
        let mut rest = delta.as_str();
        while !rest.is_empty() {
            let end = if rest.len() <= OUTPUT_FRAME_BYTES {
                rest.len()
            } else {
                agent_chatter::text::floor_char_boundary(rest, OUTPUT_FRAME_BYTES)
            };
            publish(rest[..end].to_string());
            rest = &rest[end..];
        }
    }
}

/// A failed fact with its kind, so the other agents read one short line in words.
fn failed(to: &str, failure: Failure, reason: String, at: Millis) -> Fact {
    Fact::Failed {
        to: to.to_string(),
        reason,
        at,
        failure: Some(failure),
        usage: None,
    }
}

/// Relays the retries a run's CLI reports, as they come (docs/architecture.md §14c).
async fn relay_retries(
    to: String,
    mut retries: mpsc::UnboundedReceiver<crate::agents::decode::Retry>,
    events: broadcast::Sender<Arc<Published>>,
) {
    while let Some(retry) = retries.recv().await {
        let _ = events.send(Published::new(Event::Retrying {
            to: to.clone(),
            attempt: retry.attempt,
            max: retry.max,
            reason: retry.reason,
        }));
    }
}

/// A new session in `store` that starts with `team` (its `setTeam` fact committed).
fn create(store: &mut Store, team: Team) -> Result<(i64, Session), HubError> {
    let title = team.name.clone();
    let mut fact = Fact::set_team(team);
    // Stored as the session keeps it: without machine settings (docs/architecture.md §14c).
    fact.strip_machine_settings();
    let mut session = Session::new();
    session.apply(&fact)?;
    let id = store.create_session(&title, now().0 as i64, &fact)?;
    Ok((id, session))
}

/// Session `id` of `store`, replayed from its facts.
fn reopen(store: &Store, id: i64) -> Result<Session, HubError> {
    let facts = store.facts(id)?;
    Session::replay(facts).map_err(|error| HubError::DoesNotReplay { id, error })
}

/// Whether a write failed because the session is no longer this bridge's to write (another
/// bridge wrote it or holds it now, or it was deleted), not because of the disk: then trying again is useless.
fn gone_elsewhere(e: &StoreError) -> bool {
    matches!(
        e,
        StoreError::Conflict { .. } | StoreError::NoSuchSession(_) | StoreError::Held { .. }
    )
}

fn drain(session: &mut Session) -> Vec<Action> {
    std::iter::from_fn(|| session.poll_action()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_output_kept_for_a_late_page_is_the_last_mib_cut_at_a_character() {
        let mut kept = Streamed::default();
        kept.push(&"é".repeat(STREAMED_KEPT_BYTES / 2));
        kept.push("x");
        kept.push(&"🦀".repeat(1000));
        assert!(
            kept.text.len() <= STREAMED_KEPT_BYTES,
            "{}",
            kept.text.len()
        );
        assert!(kept.text.len() > STREAMED_KEPT_BYTES - 4);
        assert!(kept.text.ends_with(&format!("x{}", "🦀".repeat(1000))));
    }

    #[tokio::test]
    async fn output_is_relayed_in_frames_of_at_most_the_frame_size_split_at_characters() {
        let (events, mut pages) = broadcast::channel(1024);
        let (tx, rx) = mpsc::unbounded_channel();
        let big = "é€🦀".repeat(30_000); // 270 kB of 2-, 3- and 4-byte characters
        tx.send("small ".to_string()).unwrap();
        tx.send(big.clone()).unwrap();
        tx.send(" end".to_string()).unwrap();
        drop(tx);
        relay_output("max".into(), rx, events, (StreamedSlot::default(), 1)).await;
        let mut relayed = String::new();
        while let Ok(event) = pages.try_recv() {
            let Event::Output { to, delta } = event.event() else {
                panic!("{:?}", event.event())
            };
            assert_eq!(to, "max");
            assert!(delta.len() <= OUTPUT_FRAME_BYTES, "{}", delta.len());
            relayed.push_str(delta);
        }
        assert_eq!(relayed, format!("small {big} end"));
    }
}
