//! The page as its own host (simulation, docs/architecture.md §13): it applies facts to the
//! session, performs the actions the session asks for, and keeps the fact log in this
//! browser's storage after every change, in a library of sessions (named, dated, searched,
//! forked) that this browser keeps.
//!
//! In simulation an agent's delivery waits in [`AppState::due`] until the user types the reply
//! or lets the core's demo agent answer; either way it goes back in as a `Replied` fact, so the
//! conversation goes on through the core's routing exactly as with real agents.

use agent_chatter::conversation::Action;
use agent_chatter::library::fork_name;
use agent_chatter::message::{MemberId, Millis};
use agent_chatter::session::{Fact, Session};
use agent_chatter::team::Team;
use leptos::prelude::*;

use super::done::Done;
use super::RunInfo;
use crate::browser::{self, now};
use crate::library::{self, default_name, Entry, Hit, Library};
use crate::share;
use crate::shared_case;
use crate::state::{drain, AppState};
use crate::storage::{self, Stored};

/// How long a burst of changes may last before the session is saved.
const SAVE_DELAY: std::time::Duration = std::time::Duration::from_millis(150);

/// The header's connection status in simulation.
pub const CONNECTION_LABEL: &str = "● simulation";
/// What it means, on hover.
pub const CONNECTION_TITLE: &str =
    "No bridge: the page is its own host and agents are answered by you or the simulator. \
    To mirror a bridge, open the address `agent-chatter serve` printed (it ends in #token=…)";

/// Why a member's run settings are read only in simulation.
pub const RUN_SETTINGS_NOTE: &str = "Read only: in simulation nothing runs, and the page keeps no \
    run settings (model, permissions, env, arguments, working directory): a bridge started with \
    the team's file reads them from that file, on its machine, and the page cannot change them.";

/// The simulation host; `Copy`.
#[derive(Clone, Copy)]
pub struct Simulation {
    state: AppState,
    /// A save is scheduled (changes are saved once per burst).
    save_pending: StoredValue<bool>,
    /// Which session's log is stored in parts, and how many of its facts: a save appends
    /// what came after them. `None` after another session is shown under an id (import,
    /// reset, team edit): the next save writes the whole log.
    saved: StoredValue<Option<(i64, usize)>>,
    /// The sessions this browser keeps, and the one shown (`current`).
    library: RwSignal<Library>,
    /// The last search of the library: the query and what it found.
    hits: RwSignal<Option<(String, Vec<Hit>)>>,
    /// The session "new session" made, while nothing was done in it: left for another, it
    /// leaves the library, as a bridge's unused session does (docs/architecture.md §13).
    unused: StoredValue<Option<i64>>,
    /// The last file opened or fork made at the user's request.
    done: RwSignal<Option<Done>>,
}

impl Simulation {
    /// The page as its own host. A pending save is made at once when the page goes away
    /// (reload, close), so the debounce never loses the last fact.
    pub fn new(state: AppState) -> Self {
        let simulation = Simulation {
            state,
            save_pending: StoredValue::new(false),
            saved: StoredValue::new(None),
            library: RwSignal::new(Library::default()),
            hits: RwSignal::new(None),
            unused: StoredValue::new(None),
            done: RwSignal::new(None),
        };
        let handle = window_event_listener(leptos::ev::pagehide, move |_| simulation.flush());
        on_cleanup(move || handle.remove());
        simulation
    }

    pub fn state(&self) -> AppState {
        self.state
    }

    /// Opens what the page shows first: the shared link in the address, else the session
    /// stored in this browser, else the demo (a stored session that no longer reads is set
    /// aside and the user told).
    pub fn open_first(&self) {
        let (library, problem) = storage::load_library(now().0);
        self.library.set(library);
        if let Some(fragment) = share::take_from_url() {
            self.open_shared(&fragment);
        } else {
            self.restore_or_demo();
        }
        if let Some(message) = problem {
            self.state.report(message);
        }
    }

    /// Opens a shared link as a `loadScenario` fact; the session in use is kept aside first.
    /// A damaged link shows its error over the stored session or the demo, never a blank page.
    pub fn open_shared(&self, fragment: &str) {
        // The browser inflates it (asynchronously, a few milliseconds).
        let (simulation, fragment) = (*self, fragment.to_owned());
        leptos::task::spawn_local(async move {
            let shared = share::decode(&fragment).await;
            simulation.open_decoded(shared);
        });
    }

    fn open_decoded(&self, shared: Result<share::Shared, String>) {
        let state = self.state;
        let shared = match shared {
            Ok(shared) => shared,
            Err(e) => {
                self.restore_or_demo();
                return state.report(e);
            }
        };
        let had = self.current().is_some();
        let before = self.current();
        let label = shared_case::label(&shared);
        let mut session = Session::new();
        match session.apply(&Fact::LoadScenario {
            scenario: Box::new(shared.scenario),
        }) {
            Ok(()) => {
                let name = format!("{} (shared)", default_name(&session));
                self.add(name, session);
                // Undecided until the user keeps or discards it (the banner).
                shared_case::begin(label, self.current(), before);
                state.recipient.set(shared.member);
                if had {
                    state.notices.update(|n| {
                        n.push(
                            "opened a shared case as a new session; the one shown before is in the sessions library"
                                .to_string(),
                        )
                    });
                }
            }
            Err(e) => {
                self.restore_or_demo();
                state.report(format!("the shared link's case does not open: {e}"));
            }
        }
    }

    /// Keeps the shared case shown as a session of the library (the banner goes).
    pub fn keep_shared(&self) {
        shared_case::decide();
    }

    /// Drops the shared case and shows again the session it replaced, exactly as it was
    /// stored (the demo when there was none); the case leaves the library and its log is removed.
    pub fn discard_shared(&self) {
        let Some(case) = shared_case::decide() else {
            return;
        };
        let back = case.before.is_some_and(|id| self.open(id));
        if let Some(id) = case.shared.filter(|id| Some(*id) != case.before) {
            let shown = self.current() == Some(id);
            self.forget(id);
            if shown {
                // Nothing to go back to: the demo replaces the case (never a session of the
                // case's team, which is what is being discarded).
                let demo = demo_session(now());
                self.add(default_name(&demo), demo);
            }
        }
        if !back && case.before.is_some() {
            self.state.report(
                "the session shown before the shared case is no longer in this browser's storage",
            );
        }
    }

    /// Applies `fact` to the page's session; a refused fact changes nothing and its reason
    /// goes to the banner.
    pub fn apply(&self, fact: Fact) -> bool {
        let applied = self.state.apply_fact(&fact).is_some();
        if applied {
            self.persist();
            // The user did something that went through: an earlier error is no longer news.
            self.state.error.set(None);
        }
        applied
    }

    /// Replaces the whole session shown (import, team edit, reset): its pending actions
    /// become the page's, and the selection starts over at the latest message.
    fn adopt(&self, session: Session) {
        if self.current().is_none() {
            return self.add(default_name(&session), session);
        }
        // A new session in use (import, reset, team edit): earlier errors were about another.
        self.state.error.set(None);
        self.saved.set_value(None);
        self.state.show(session);
        self.persist();
    }

    /// The library's session shown.
    fn current(&self) -> Option<i64> {
        self.library.with_untracked(|l| l.current)
    }

    /// Adds `session` to the library as `name` and shows it; the one shown before stays as
    /// it is.
    fn add(&self, name: String, session: Session) {
        self.discard_if_unused();
        self.flush();
        self.library.update(|l| {
            let id = l.add(name, &session, now().0);
            l.current = Some(id);
        });
        self.state.error.set(None);
        self.saved.set_value(None);
        self.state.show(session);
        self.persist();
    }

    /// The session shown last in this browser if it reads, else the newest one that does,
    /// else the demo as a new session; a log that no longer reads is set aside and said.
    fn restore_or_demo(&self) {
        let mut problem = None;
        let mut order: Vec<i64> = self.library.with_untracked(|l| {
            l.current
                .into_iter()
                .chain(l.newest_first().into_iter().map(|e| e.id))
                .collect()
        });
        let mut seen = Vec::new();
        order.retain(|id| {
            let first = !seen.contains(id);
            seen.push(*id);
            first
        });
        for id in order {
            match storage::load_log(id) {
                Stored::Session(session, parts) => {
                    self.library.update(|l| l.current = Some(id));
                    let _ = self.library.with_untracked(storage::save_library);
                    self.shown_stored(id, *session, parts);
                    break;
                }
                Stored::Unreadable(message) => {
                    problem.get_or_insert(message);
                    self.forget(id);
                }
                Stored::Nothing => self.forget(id),
            }
        }
        if self.current().is_none() {
            let demo = demo_session(now());
            self.add(default_name(&demo), demo);
        }
        let live: Vec<i64> = self
            .library
            .with_untracked(|l| l.sessions.iter().map(|e| e.id).collect());
        storage::prune_drafts(storage::Drafts::Library, &live);
        if let Some(message) = problem {
            self.state
                .report(format!("{message}, and another session was opened instead"));
        }
    }

    /// Shows session `id` as read from storage; a log kept in parts is appended to by the
    /// next save.
    fn shown_stored(&self, id: i64, session: Session, parts: bool) {
        let facts = session.facts().len();
        self.saved.set_value(parts.then_some((id, facts)));
        self.state.show(session);
    }

    /// Drops session `id` from the library, with its log (if any is left: it may be gone or
    /// set aside already), its draft and, when it is the one shown, its pending save.
    fn forget(&self, id: i64) {
        if self.current() == Some(id) {
            self.save_pending.set_value(false);
        }
        storage::remove_log(id);
        storage::set_draft(storage::Drafts::Library, Some(id), "");
        self.library.update(|l| {
            l.sessions.retain(|e| e.id != id);
            if l.current == Some(id) {
                l.current = None;
            }
        });
        let _ = self.library.with_untracked(storage::save_library);
    }

    /// The library's sessions, most recently changed first (reactive).
    pub fn entries(&self) -> Signal<Vec<Entry>> {
        let library = self.library;
        Signal::derive(move || library.with(Library::newest_first))
    }

    /// The library's session shown (reactive).
    pub fn shown(&self) -> Signal<Option<i64>> {
        let library = self.library;
        Signal::derive(move || library.with(|l| l.current))
    }

    /// Shows the library's session `id`; false when it does not open (the reason is on the
    /// banner, and the session shown stays).
    pub fn open(&self, id: i64) -> bool {
        if self.current() == Some(id) {
            return true;
        }
        self.flush();
        match storage::load_log(id) {
            Stored::Session(session, parts) => {
                self.discard_if_unused();
                self.library.update(|l| l.current = Some(id));
                if let Err(e) = self.library.with_untracked(storage::save_library) {
                    self.state.report(e);
                } else {
                    self.state.error.set(None);
                }
                self.shown_stored(id, *session, parts);
                true
            }
            Stored::Unreadable(message) => {
                self.forget(id);
                self.state.report(message);
                false
            }
            Stored::Nothing => {
                self.forget(id);
                self.state
                    .report("that session is no longer in this browser's storage");
                false
            }
        }
    }

    /// Names the library's session `id`; a name refused says why on the banner.
    pub fn rename(&self, id: i64, name: &str) {
        if self.unused.get_value() == Some(id) {
            // Named by the user: kept.
            self.unused.set_value(None);
        }
        let mut result = Ok(());
        self.library.update(|l| result = l.rename(id, name));
        match result.and_then(|()| self.library.with_untracked(storage::save_library)) {
            Ok(()) => self.state.error.set(None),
            Err(e) => self.state.report(format!("session not renamed: {e}")),
        }
    }

    /// Searches every session this browser keeps (names and texts, ignoring case).
    pub fn search(&self, query: String) {
        self.flush();
        let found = self
            .library
            .with_untracked(|l| library::search(l, &query, storage::read_facts));
        self.hits.set(Some((query, found)));
    }

    /// The last search's query and hits (reactive).
    pub fn hits(&self) -> Signal<Option<(String, Vec<Hit>)>> {
        self.hits.into()
    }

    /// A new session in the library with the team shown (the demo's when there is none) and
    /// no message yet, as a bridge makes one: the user's team is kept, never swapped for the
    /// demo's ("reset demo" brings the demo back).
    pub fn new_session(&self) {
        let team = self
            .state
            .session
            .with_untracked(|s| s.team().cloned())
            .unwrap_or_else(agent_chatter::demo::team);
        let mut session = Session::new();
        // The team is the one a session holds, or the embedded demo's: valid either way.
        if session.apply(&Fact::set_team(team)).is_ok() {
            self.add(default_name(&session), session);
            self.unused.set_value(self.current());
        }
    }

    /// Drops the session "new session" made if it is still shown and nothing was done in it
    /// (no message, no edit, no name), before another is shown.
    fn discard_if_unused(&self) {
        let Some(id) = self.unused.get_value() else {
            return;
        };
        self.unused.set_value(None);
        if self.current() == Some(id) {
            self.forget(id);
        }
    }

    /// "Continue from here": a new session whose log is the first `upto` facts of the one
    /// shown (whose last message is `#number`); the one shown stays in the library as it is.
    pub fn fork(&self, upto: u64, number: usize) {
        let state = self.state;
        let facts = state
            .session
            .with_untracked(|s| s.facts()[..(upto as usize).min(s.facts().len())].to_vec());
        match Session::replay(facts) {
            Ok(session) => {
                let name = self
                    .current()
                    .and_then(|id| {
                        self.library
                            .with_untracked(|l| l.get(id).map(|e| e.name.clone()))
                    })
                    .unwrap_or_else(|| default_name(&session));
                let from = self.current();
                self.add(fork_name(&name, number as u64), session);
                if let Some(into) = self.current() {
                    self.done.set(Some(Done::Forked {
                        at: number as u64,
                        into,
                        from,
                    }));
                }
            }
            Err(e) => state.report(format!("message #{number} cannot be continued from: {e}")),
        }
    }

    /// The file `name` the user opened, as a session (a session file's log, or a team's or
    /// scenario's first fact): shown in place of a conversation with no message yet, else
    /// added to the library beside the one shown, which stays as it was; said as done.
    pub fn open_file_session(&self, name: &str, session: Session) {
        let members = session.team().map_or(0, |t| t.members.len());
        let messages = session.messages().len();
        let beside = self.state.message_count.get_untracked() > 0;
        if beside {
            self.add(default_name(&session), session);
        } else {
            self.adopt(session);
        }
        self.state.error.set(None);
        self.done.set(Some(Done::Opened {
            name: name.to_string(),
            members,
            messages,
            beside,
        }));
    }

    /// The last file opened or fork made at the user's request (see [`Done`]).
    pub fn done(&self) -> RwSignal<Option<Done>> {
        self.done
    }

    /// Starts over with the demo, once the user agrees to discard the conversation.
    pub fn reset_demo(&self) {
        if browser::confirm(
            "Start over with the demo? This conversation is discarded (save the session first to keep it).",
        ) {
            self.adopt(demo_session(now()));
        }
    }

    /// Changes the team's members and names, keeping the conversation: the log is rewritten
    /// with the new team in place of the last `setTeam` (or as the team of the last loaded
    /// scenario) and replayed, so every prompt is rebuilt as if the team had always been this
    /// one. A history the new team cannot replay (a removed member who had to answer) is
    /// refused and nothing changes. Members who left since (`memberLeft`) are in that team
    /// and leave again where they did, unless the edit names them again (an undo): then they
    /// never left.
    pub fn edit_team(&self, team: Team) -> bool {
        let state = self.state;
        let (mut log, mut team) = state.session.with_untracked(|s| {
            let facts = s.facts();
            let since = facts
                .iter()
                .rposition(|f| matches!(f, Fact::SetTeam { .. } | Fact::LoadScenario { .. }))
                .map_or(0, |i| i + 1);
            let back = |f: &Fact| {
                matches!(f, Fact::MemberLeft { member, .. } if team.member(member).is_some())
            };
            let log: Vec<Fact> = (facts.iter().enumerate())
                .filter(|&(i, f)| i < since || !back(f))
                .map(|(_, f)| f.clone())
                .collect();
            (log, s.with_left_members(team))
        });
        // The members change; the settings stay as they were at that point of the log (later
        // `setSettings` facts keep their place), so a past delivery keeps its budget and window.
        match log
            .iter_mut()
            .rev()
            .find(|f| matches!(f, Fact::SetTeam { .. } | Fact::LoadScenario { .. }))
        {
            // A loaded history (a scenario, a share link) stays, under the edited team.
            Some(Fact::LoadScenario { scenario }) => {
                team.settings = scenario.team.settings.clone();
                scenario.team = team;
            }
            Some(Fact::SetTeam { team: old, .. }) => {
                team.settings = old.settings.clone();
                *old = team.into();
            }
            _ => log.insert(0, Fact::set_team(team)),
        }
        match Session::replay(log) {
            Ok(session) => {
                let (selected, recipient) = (
                    state.selected.get_untracked(),
                    state.recipient.get_untracked(),
                );
                self.adopt(session);
                state.selected.set(selected);
                state.recipient.set(recipient);
                true
            }
            Err(e) => {
                // The fact's index and kind mean nothing to the user: only why it failed.
                let why = match e {
                    agent_chatter::session::SessionFileError::Replay { error, .. } => {
                        error.to_string()
                    }
                    other => other.to_string(),
                };
                state.report(format!(
                    "team not changed: the conversation so far does not fit the edited team \
                     ({why}). Undo the edit, or save the team (⬇ team file), edit the file and \
                     open it to start a new conversation with it."
                ));
                false
            }
        }
    }

    /// See [`super::Host::run_info`]: none are kept here (docs/architecture.md §14c: a session's
    /// team holds no run settings), so the CLI's defaults are shown, and where settings come from.
    pub fn run_info(&self, member: &MemberId) -> Option<RunInfo> {
        self.state.members.with(|members| {
            let m = crate::state::member(members, member).filter(|m| m.is_ai())?;
            Some(RunInfo {
                settings: m.run.clone(),
                dir: m.base_dir.clone(),
                source: Some("a bridge's team file (the page keeps none)".to_string()),
                note: RUN_SETTINGS_NOTE,
            })
        })
    }

    /// The human composer: `text` as typed, markers included.
    pub fn send_human(&self, text: String) -> bool {
        self.apply(Fact::Human {
            text: text.into(),
            sender: None,
            at: now(),
        })
    }

    /// The due agent answers with `text` (typed by the user).
    pub fn reply_due(&self, text: String) -> bool {
        let Some(to) = self
            .state
            .due
            .with_untracked(|d| d.as_ref().map(|d| d.to.clone()))
        else {
            self.state
                .report("no agent is due: there is nothing to reply to");
            return false;
        };
        self.apply(Fact::replied(to, text, now()))
    }

    /// The due agent answers with the core's simulated reply.
    pub fn simulate_due(&self) -> bool {
        let Some(delivery) = self.state.due.get_untracked() else {
            return false;
        };
        let text = self
            .state
            .session
            .with_untracked(|s| s.simulate_reply(&delivery));
        self.apply(Fact::replied(delivery.to, text, now()))
    }

    /// Saves the session soon after a change, once for a burst of changes: serialising a long
    /// fact log costs milliseconds, which must not delay the inspector's update (one frame).
    fn persist(&self) {
        // Something was done in the session shown: it is kept.
        self.unused.set_value(None);
        if self.save_pending.get_value() {
            return;
        }
        self.save_pending.set_value(true);
        let simulation = *self;
        set_timeout(move || simulation.flush(), SAVE_DELAY);
    }

    /// Makes a pending save now (before another session is shown, or the page goes away):
    /// the log under its id, and its entry (fact count, first message, when it changed).
    fn flush(&self) {
        if !self.save_pending.get_value() {
            return;
        }
        self.save_pending.set_value(false);
        let state = self.state;
        let Some(id) = self.current() else {
            return;
        };
        let since = self
            .saved
            .get_value()
            .and_then(|(saved, facts)| (saved == id).then_some(facts));
        let (facts, written) = state.session.with_untracked(|s| {
            self.library.update(|l| l.touch(id, s, now().0));
            (s.facts().len(), storage::save_log(id, s.facts(), since))
        });
        self.saved.set_value(written.is_ok().then_some((id, facts)));
        let saved = written.and_then(|()| self.library.with_untracked(storage::save_library));
        if let Err(e) = saved {
            state.report(e);
        }
    }
}

/// A fresh session with the demo team and a short simulated conversation (first visit),
/// which happened just now: its messages are a minute apart and the last is at `now`, so the
/// agent left due is timed from the visit, not from a date long past (the prompts hold no
/// times: every visit still shows the same prompt bytes).
pub fn demo_session(now: Millis) -> Session {
    let start = now.0.saturating_sub(2 * 60_000);
    // The demo facts are built from the embedded team, which the core's tests keep valid, so
    // none is refused; a refusal would only shorten the demo.
    let mut session = Session::new();
    let _ = session.apply(&Fact::set_team(agent_chatter::demo::team()));
    let _ = session.apply(&Fact::Human {
        text: agent_chatter::demo::OPENING_MESSAGE.into(),
        sender: Some("kailai".to_string()),
        at: Millis(start),
    });
    // Two simulated replies (Max, then Sarah); the third agent is left due, so the inspector
    // opens on a prompt waiting for its answer. Its actions stay queued for `adopt`.
    for minute in 1..=2 {
        let due = drain(&mut session).into_iter().find_map(|a| match a {
            Action::Deliver(d) => Some(d),
            _ => None,
        });
        let Some(delivery) = due else { break };
        let text = session.simulate_reply(&delivery);
        let _ = session.apply(&Fact::replied(
            delivery.to.clone(),
            text,
            Millis(start + minute * 60_000),
        ));
    }
    session
}
