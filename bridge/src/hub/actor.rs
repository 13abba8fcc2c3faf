//! The actor: the hub's state, owned by one thread, and its loop. Every command and every
//! finished run arrives in its inbox and is handled in turn; a fact is applied here (checked
//! by the core, committed to SQLite, published, then performed).

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use agent_chatter::conversation::Action;
use agent_chatter::protocol::Event;
use agent_chatter::session::{Fact, Session};
use agent_chatter::team::Team;
use agent_chatter::usage::Usage;
use tokio::sync::{broadcast, mpsc, oneshot};

use super::relay::StreamedSlot;
use super::{HubError, Observer, Published, UNSTORED_RETRY};
use crate::agents::machine::MachineSettings;
use crate::agents::run::{self, Outcome};
use crate::agents::AgentsFile;
use crate::store::{RunNote, SessionInfo, Store, StoreError};

/// Pauses between the tries of a fact's write that failed (a busy or briefly failing disk).
const WRITE_RETRIES: [Duration; 3] = [
    Duration::from_millis(20),
    Duration::from_millis(100),
    Duration::from_millis(400),
];

/// How many actors run, so a stopping process can wait for them to close their database
/// ([`wait_for_actors`]).
pub(super) static ACTORS: Actors = Actors {
    running: std::sync::Mutex::new(0),
    changed: std::sync::Condvar::new(),
};

pub(super) struct Actors {
    running: std::sync::Mutex<usize>,
    changed: std::sync::Condvar,
}

impl Actors {
    pub(super) fn started(&self) {
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

pub(super) type Reply<T> = oneshot::Sender<Result<T, HubError>>;
pub(super) type Query = Box<dyn FnOnce(&Actor) + Send>;

/// What the actor is asked to do.
pub(super) enum Msg {
    Apply {
        fact: Fact,
        reply: Reply<()>,
    },
    Cancel {
        to: String,
        reply: Reply<()>,
    },
    /// `member` leaves the team of session `session` (which must be the open one).
    Leave {
        session: i64,
        member: String,
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

/// The hub's state, owned by its thread.
pub(super) struct Actor {
    pub(super) store: Store,
    pub(super) session_id: i64,
    /// Counts the conversations begun by this bridge (a session opened, or a team set or a
    /// scenario loaded in it); a run belongs to the opening it started in, and its outcome is
    /// stale once another has begun (the same session left and reopened is a new opening).
    pub(super) opening: u64,
    pub(super) session: Session,
    pub(super) agents: AgentsFile,
    /// `--simulate`: the simulator answers every AI member.
    pub(super) simulate_all: bool,
    /// The running delivery (a real agent's or the simulator's).
    pub(super) running: Option<Running>,
    /// The outcome of the delivery in flight whose run has ended but whose fact could not be
    /// written (a full disk, an I/O error): kept here and written again, first thing at each
    /// command and every [`UNSTORED_RETRY`], so the conversation goes on once the disk does.
    /// While it is set, `running` is `None` and the session still has the delivery in flight.
    pub(super) unstored: Option<Unstored>,
    /// The number the next run gets, so a finished run is told apart from a newer one for the
    /// same member.
    pub(super) next_run: u64,
    pub(super) events: broadcast::Sender<Arc<Published>>,
    /// The actor's own inbox, for runs to report into (weak: the actor ends when every
    /// handle is gone).
    pub(super) inbox: mpsc::WeakUnboundedSender<Msg>,
    pub(super) runtime: tokio::runtime::Handle,
    /// The open session was created by this start (not resumed).
    pub(super) created: bool,
    /// The members' run settings and working directories, from the team file on this machine
    /// (docs/architecture.md §14c): held here, never in the session.
    pub(super) machine: MachineSettings,
    /// What the run in flight has streamed (see [`Streamed`](super::relay::Streamed)).
    pub(super) streamed: StreamedSlot,
    /// Set by a chat: see [`Hub::report`](super::Hub::report).
    pub(super) observer: OnceLock<Box<dyn Observer>>,
    /// Set while the actions of a session just opened (or resumed) are performed: only then
    /// can a run be in flight that this bridge never saw end ([`Actor::interrupted`]).
    pub(super) opened: bool,
}

/// The delivery being run: which run, for whom, and its cancel switch (sending on it, or
/// dropping it, stops the run).
pub(super) struct Running {
    pub(super) run: u64,
    pub(super) to: String,
    pub(super) cancel: oneshot::Sender<()>,
}

/// A run's outcome not yet written: the opening it belongs to, and its fact.
pub(super) struct Unstored {
    pub(super) opening: u64,
    pub(super) to: String,
    pub(super) fact: Fact,
}

/// A finished run: the session and run it belongs to, who, how, and everything it printed.
pub(super) struct Finished {
    pub(super) opening: u64,
    pub(super) session: i64,
    pub(super) run: u64,
    pub(super) to: String,
    pub(super) outcome: Outcome,
    /// What the run cost, as its CLI reported it (and how long it took here).
    pub(super) usage: Usage,
    /// What is kept of the agent's stdout.
    pub(super) output: run::Output,
    /// What is noted of the run beside its fact (a CLI's: its argv and model).
    pub(super) note: Option<Box<RunNote>>,
}

impl Actor {
    pub(super) fn run(mut self, mut inbox: mpsc::UnboundedReceiver<Msg>) {
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
                let _ = reply.send(self.apply_from_page(fact));
            }
            Msg::Deploy {
                team,
                machine,
                reply,
            } => {
                let _ = reply.send(self.deploy(*team, *machine));
            }
            Msg::Cancel { to, reply } => {
                let _ = reply.send(self.cancel(to));
            }
            Msg::Leave {
                session,
                member,
                reply,
            } => {
                let _ = reply.send(self.leave(session, member));
            }
            Msg::Open { id, reply } => {
                let _ = reply.send(self.open(id));
            }
            Msg::Sessions { reply } => {
                let _ = reply.send(self.store.list().map_err(HubError::from));
            }
            Msg::Rename { id, name, reply } => {
                let _ = reply.send(self.rename(id, &name));
            }
            Msg::Fork { id, upto, reply } => {
                let _ = reply.send(self.fork(id, upto));
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
            Msg::Finished(run) => self.finished(run),
            Msg::RetryUnstored => self.retry_unstored(),
        }
    }

    /// Applies a fact the page sent. A team sent from the page (or a scenario it opens) runs
    /// with the machine's run settings, never its own: the session drops whatever it carries,
    /// and a member keeps the settings its id has in the team file, as long as it keeps the
    /// agent type they were written for (docs/architecture.md §14c).
    fn apply_from_page(&mut self, fact: Fact) -> Result<(), HubError> {
        let checked = match &fact {
            Fact::SetTeam { team, .. } => self.machine.check_page_team(team),
            Fact::LoadScenario { scenario } => self.machine.check_page_team(&scenario.team),
            _ => Ok(()),
        };
        checked
            .map_err(HubError::Settings)
            .and_then(|()| self.apply(None, fact))
    }

    /// `member` leaves the team from now on, as a `memberLeft` fact stamped now (the core
    /// refuses it, naming the member, when the team does not have them or they run). Only of
    /// the session open here: a page acts on the session it has open (docs/architecture.md §14b).
    fn leave(&mut self, session: i64, member: String) -> Result<(), HubError> {
        if session != self.session_id {
            return Err(HubError::Library {
                what: "leaveTeam",
                why: format!(
                    "session {session} is not the session open here (session {}): a page \
                     changes the team of the session it has open",
                    self.session_id
                ),
            });
        }
        let at = crate::clock::now();
        self.apply(None, Fact::MemberLeft { member, at })
    }

    /// Sets `team`, read from a file on this machine, with the settings it gives (`machine`),
    /// once they are checked against the installed CLIs; the session remembers the file.
    fn deploy(&mut self, team: Team, machine: MachineSettings) -> Result<(), HubError> {
        crate::agents::check_team(&team, &self.agents, self.simulate_all)
            .map_err(HubError::Settings)?;
        let before = std::mem::replace(&mut self.machine, machine);
        self.apply(None, Fact::set_team(team)).inspect_err(|_| {
            self.machine = before;
        })?;
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
        Ok(())
    }

    /// Applies `fact` while `opening` (when given) is still the open session: a run's outcome
    /// belongs to the session it was delivered in, and is dropped (`Ok`) once another is open.
    pub(super) fn apply(&mut self, opening: Option<u64>, mut fact: Fact) -> Result<(), HubError> {
        if opening.is_some_and(|o| o != self.opening) {
            return Ok(());
        }
        // The fact stored and sent is the one the session keeps: never with machine settings.
        fact.strip_machine_settings();
        let before = crate::debug::before(&self.session);
        let observed = self.observer.get().map(|o| o.before(&self.session));
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
        let left = matches!(fact, Fact::MemberLeft { .. });
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
        let said = observed.map_or_else(Vec::new, |said| said(&fact, &self.session, &actions));
        let _ = self.events.send(Published::with(
            Event::Fact {
                seq: seq as u64,
                fact,
            },
            said,
        ));
        if new_team || left {
            // Who is answered how: a member who left is no longer listed.
            self.publish(self.agents_event());
        }
        if new_team {
            // A session never renamed is called by its new team.
            self.publish_sessions();
        }
        crate::debug::after(before, &self.session, &actions);
        self.perform(actions);
        Ok(())
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

    /// [`Msg::RetryUnstored`]: the outcome kept is written again, and tried later again
    /// while it still cannot be.
    fn retry_unstored(&mut self) {
        if self.unstored.is_some() {
            self.write_unstored();
            if self.unstored.is_some() {
                self.retry_unstored_later();
            }
        }
    }

    /// Sends [`Msg::RetryUnstored`] to the actor after [`UNSTORED_RETRY`].
    pub(super) fn retry_unstored_later(&self) {
        let inbox = self.inbox.clone();
        self.runtime.spawn(async move {
            tokio::time::sleep(UNSTORED_RETRY).await;
            if let Some(inbox) = inbox.upgrade() {
                let _ = inbox.send(Msg::RetryUnstored);
            }
        });
    }

    pub(super) fn publish(&self, event: Event) {
        let _ = self.events.send(Published::new(event));
    }

    /// Sends every page the session list, after a change to it.
    pub(super) fn publish_sessions(&self) {
        match self.store.list() {
            Ok(list) => self.publish(Event::Sessions { list }),
            Err(e) => eprintln!("bridge: the session list could not be read: {e}"),
        }
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

    pub(super) fn perform(&mut self, actions: Vec<Action>) {
        for action in actions {
            if let Action::Deliver(delivery) = action {
                self.deliver(*delivery);
            }
            // AwaitHuman, Finished and notices: the pages see them by applying the same facts.
        }
    }
}

/// Whether a write failed because the session is no longer this bridge's to write (another
/// bridge wrote it or holds it now, or it was deleted), not because of the disk: then trying again is useless.
pub(super) fn gone_elsewhere(e: &StoreError) -> bool {
    matches!(
        e,
        StoreError::Conflict { .. } | StoreError::NoSuchSession(_) | StoreError::Held { .. }
    )
}

pub(super) fn drain(session: &mut Session) -> Vec<Action> {
    std::iter::from_fn(|| session.poll_action()).collect()
}
