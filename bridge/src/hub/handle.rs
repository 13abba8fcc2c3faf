//! [`Hub`]: the handle the server and the chat hold. Each command is a message to the actor
//! ([`Msg`]) with a oneshot for its answer; a read of the state runs on the actor's thread.

use std::sync::{Arc, OnceLock};

use agent_chatter::conversation::Action;
use agent_chatter::protocol::{AgentReport, Event, RunDetails, SearchHit, SessionInfo};
use agent_chatter::session::{Fact, Session};
use agent_chatter::team::Team;
use tokio::sync::{broadcast, mpsc, oneshot};

use super::actor::{Actor, Msg, Query, Reply, ACTORS};
use super::relay::StreamedSlot;
use super::sessions::{create, reopen};
use agent_chatter::activity::ApprovalRequest;

use super::{Attached, HubError, Observer, Published, Said, EVENT_BUFFER};
use crate::agents::machine::MachineSettings;
use crate::agents::AgentsFile;
use crate::store::{Reader, Store};

/// A handle to the hub; cheap to clone.
#[derive(Clone)]
pub struct Hub {
    inbox: mpsc::UnboundedSender<Msg>,
    events: broadcast::Sender<Arc<Published>>,
    /// Searches run here, off the session's thread (a slow one never delays a fact).
    reader: Arc<Reader>,
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
                    // Said once: the file as it is now is the one the session runs with.
                    let _ = store.remember_team_file(id, machine.file());
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
            observer: OnceLock::new(),
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

    /// Member `member` leaves the team of session `session` from now on (`leaveTeam`): a
    /// `memberLeft` fact, committed and sent to every page as any other. Refused, changing
    /// nothing, for another session than the open one, a member the team does not have, or
    /// one whose run is in flight.
    pub(crate) async fn leave_team(&self, session: i64, member: String) -> Result<(), HubError> {
        self.ask(|reply| Msg::Leave {
            session,
            member,
            reply,
        })
        .await
    }

    /// Answers the open question `request` of the running member `to` with the agent's option
    /// `option` (docs/architecture.md §14d); `place` says where the person answered (`page`, `chat`). Only a
    /// question of the run in flight of the open session can be answered, once.
    pub(crate) async fn answer_approval(
        &self,
        to: String,
        request: String,
        option: String,
        place: &'static str,
    ) -> Result<(), HubError> {
        self.read(move |actor| actor.answer_approval(&to, &request, &option, place))
            .await?
    }

    /// The questions the running agent has open: (member, request).
    pub(crate) async fn open_approvals(&self) -> Result<Vec<(String, ApprovalRequest)>, HubError> {
        self.read(|actor| actor.open_approvals()).await
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

    /// What is kept of `to`'s run in session `session` that ended at `at` (`runDetails`): read
    /// on the hub's reader, off the session's thread; an unknown run is named. Only of the
    /// session open here: a page reads and acts on the session it has open, never another
    /// one's commands and output (docs/architecture.md §14b).
    pub(crate) async fn run_details(
        &self,
        session: i64,
        to: String,
        at: u64,
    ) -> Result<RunDetails, HubError> {
        let open = self.query(|_, id| id).await?;
        if session != open {
            return Err(HubError::Library {
                what: "runDetails",
                why: format!(
                    "session {session} is not the session open here (session {open}): \
                     a page reads the runs of the session it has open"
                ),
            });
        }
        let reader = Arc::clone(&self.reader);
        tokio::task::spawn_blocking(move || reader.run_details(session, &to, at))
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

    /// The events from now on, each fact published with what `observer` says of it, computed
    /// on the actor's thread from the session just before and just after the fact (the chat:
    /// it prints the conversation without a session of its own); with what it says of the
    /// actions still pending (the notices of the team loaded) and the number of facts so far.
    /// Taken on the actor's thread, where every event is sent, so none falls between.
    pub(crate) async fn report(
        &self,
        observer: impl Observer + 'static,
    ) -> Result<(broadcast::Receiver<Arc<Published>>, Vec<Said>, usize), HubError> {
        let events = self.events.clone();
        self.read(move |actor| {
            let mut pending = actor.session.clone();
            let actions: Vec<Action> = std::iter::from_fn(|| pending.poll_action()).collect();
            let said = observer.pending(&pending, &actions);
            let _ = actor.observer.set(Box::new(observer));
            (events.subscribe(), said, actor.session.facts().len())
        })
        .await
    }

    /// A page connects: see [`Attached`].
    pub(crate) async fn attach(&self) -> Result<Attached, HubError> {
        let events = self.events.clone();
        self.read(move |actor| {
            let session = actor.session_event();
            let streamed = actor.streamed.lock().unwrap_or_else(|e| e.into_inner());
            let mut live = Vec::new();
            if let Some(s) = streamed.as_ref() {
                if !s.text.is_empty() {
                    live.push(Event::Output {
                        to: s.to.clone(),
                        delta: s.text.clone(),
                    });
                }
                live.extend(s.open.iter().map(|o| Event::Approval {
                    to: s.to.clone(),
                    message: s.message.clone(),
                    request: o.request.clone(),
                }));
            }
            Attached {
                events: events.subscribe(),
                session,
                agents: actor.agents_event(),
                live,
            }
        })
        .await
    }

    /// How each AI member of the current team is answered here.
    pub async fn agents(&self) -> Result<Vec<AgentReport>, HubError> {
        self.read(Actor::agent_reports).await
    }

    /// The demo team's members the simulator stands in for beside a real agent, by name.
    pub async fn stand_ins(&self) -> Vec<String> {
        self.read(Actor::stand_ins).await.unwrap_or_default()
    }

    /// When the team sets a cost cap: the members whose CLI reports no cost (Codex, Gemini, a
    /// plain command), so the cap cannot count their runs (docs/architecture.md §14c).
    pub async fn uncapped(&self) -> Vec<String> {
        self.read(Actor::uncapped).await.unwrap_or_default()
    }

    /// The `session` event (the whole log), for a page that fell behind.
    pub(crate) async fn session_event(&self) -> Result<Event, HubError> {
        self.read(Actor::session_event).await
    }
}
