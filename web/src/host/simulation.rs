//! The page as its own host (simulation, docs/architecture.md §13): it applies facts to the
//! session, performs the actions the session asks for, and keeps the fact log in this
//! browser's storage after every change.
//!
//! In simulation an agent's delivery waits in [`AppState::due`] until the user types the reply
//! or lets the core's demo agent answer; either way it goes back in as a `Replied` fact, so the
//! conversation goes on through the core's routing exactly as with real agents.

use agent_chatter::conversation::Action;
use agent_chatter::message::{MemberId, Millis};
use agent_chatter::session::{Fact, Session};
use agent_chatter::team::Team;
use leptos::prelude::*;

use super::RunInfo;
use crate::browser::{self, now};
use crate::share;
use crate::state::{drain, AppState};
use crate::storage::{self, Stored};

/// Fixed clock of the demo conversation, so every first visit shows the same bytes.
const DEMO_EPOCH: u64 = 1_763_900_000_000;

/// How long a burst of changes may last before the session is saved.
const SAVE_DELAY: std::time::Duration = std::time::Duration::from_millis(150);

/// The header's connection status in simulation.
pub const CONNECTION_LABEL: &str = "● simulation";
/// What it means, on hover.
pub const CONNECTION_TITLE: &str =
    "No bridge: the page is its own host and agents are answered by you or the simulator. \
    To mirror a bridge, open the address `agent-chatter serve` printed (it ends in #token=…)";

/// Why a member's run settings are read only in simulation.
pub const RUN_SETTINGS_NOTE: &str = "Read only: in simulation nothing runs. A bridge started \
    with this team's file applies them; they come only from files on its machine, and the page \
    cannot change them.";

/// The simulation host; `Copy`.
#[derive(Clone, Copy)]
pub struct Simulation {
    state: AppState,
    /// A save is scheduled (changes are saved once per burst).
    save_pending: StoredValue<bool>,
}

impl Simulation {
    /// The page as its own host. A pending save is made at once when the page goes away
    /// (reload, close), so the debounce never loses the last fact.
    pub fn new(state: AppState) -> Self {
        let simulation = Simulation {
            state,
            save_pending: StoredValue::new(false),
        };
        let handle = window_event_listener(leptos::ev::pagehide, move |_| {
            if simulation.save_pending.get_value() {
                simulation.save_pending.set_value(false);
                let text = state.session.with_untracked(|s| s.export());
                let _ = storage::save_session(&text);
            }
        });
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
        if let Some(fragment) = share::take_from_url() {
            return self.open_shared(&fragment);
        }
        let problem = match storage::load_session() {
            Stored::Session(session) => {
                self.restore(*session);
                None
            }
            Stored::Nothing => {
                self.adopt(demo_session());
                None
            }
            Stored::Unreadable(message) => {
                self.adopt(demo_session());
                Some(message)
            }
        };
        if let Some(message) = problem {
            self.state.report(message);
        }
    }

    /// Opens a shared link as a `loadScenario` fact; the session in use is kept aside first.
    /// A damaged link shows its error over the stored session or the demo, never a blank page.
    pub fn open_shared(&self, fragment: &str) {
        let state = self.state;
        let shared = match share::decode(fragment) {
            Ok(shared) => shared,
            Err(e) => {
                self.restore_or_demo();
                return state.report(e);
            }
        };
        let kept = storage::set_aside_for_link();
        let mut session = Session::new();
        match session.apply(&Fact::LoadScenario {
            scenario: Box::new(shared.scenario),
        }) {
            Ok(()) => {
                self.adopt(session);
                state.recipient.set(shared.member);
                if kept {
                    state.notices.update(|n| {
                        n.push(format!(
                            "opened a shared case; your previous session is kept in localStorage under {:?}",
                            storage::BEFORE_LINK_KEY
                        ))
                    });
                }
            }
            Err(e) => {
                self.adopt(demo_session());
                state.report(format!("the shared link's case does not open: {e}"));
            }
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

    /// Replaces the whole session (import, team edit, reset): its pending actions become the
    /// page's, and the selection starts over at the latest message.
    fn adopt(&self, session: Session) {
        // A new session in use (import, reset, team edit): earlier errors were about another.
        self.state.error.set(None);
        self.state.show(session);
        self.persist();
    }

    /// Shows the session just read from this browser's storage (nothing to save).
    fn restore(&self, session: Session) {
        self.state.show(session);
    }

    /// The stored session if it reads, else the demo (used when a shared link fails to open).
    fn restore_or_demo(&self) {
        match storage::load_session() {
            Stored::Session(session) => self.restore(*session),
            _ => self.adopt(demo_session()),
        }
    }

    /// A session file the user opened: the page continues it.
    pub fn open_session_file(&self, session: Session) {
        self.adopt(session);
        self.state.error.set(None);
    }

    /// Starts over with the demo, once the user agrees to discard the conversation.
    pub fn reset_demo(&self) {
        if browser::confirm(
            "Start over with the demo? This conversation is discarded (save the session first to keep it).",
        ) {
            self.adopt(demo_session());
        }
    }

    /// Changes the team's members and names, keeping the conversation: the log is rewritten
    /// with the new team in place of the last `setTeam` (or as the team of the last loaded
    /// scenario) and replayed, so every prompt is rebuilt as if the team had always been this
    /// one. A history the new team cannot replay (a removed member who had to answer) is
    /// refused and nothing changes.
    pub fn edit_team(&self, team: Team) -> bool {
        let state = self.state;
        let mut log = state.session.with_untracked(|s| s.facts().to_vec());
        // The members change; the settings stay as they were at that point of the log (later
        // `setSettings` facts keep their place), so a past delivery keeps its budget and window.
        let mut team = team;
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
                **old = team;
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
                state.report(format!(
                    "the edited team cannot replay this conversation, so it was not applied: {e}"
                ));
                false
            }
        }
    }

    /// See [`super::Host::run_info`]: the member's own settings in the team.
    pub fn run_info(&self, member: &MemberId) -> Option<RunInfo> {
        self.state.team.with(|t| {
            let m = t.as_ref()?.member(member).filter(|m| m.is_ai())?;
            Some(RunInfo {
                settings: m.run.clone(),
                dir: m.base_dir.clone(),
                source: Some("this team (simulation)".to_string()),
                note: RUN_SETTINGS_NOTE,
            })
        })
    }

    /// The human composer: `text` as typed, markers included.
    pub fn send_human(&self, text: String) -> bool {
        self.apply(Fact::Human {
            text,
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
        if self.save_pending.get_value() {
            return;
        }
        self.save_pending.set_value(true);
        let simulation = *self;
        set_timeout(
            move || {
                simulation.save_pending.set_value(false);
                let state = simulation.state;
                let text = state.session.with_untracked(|s| s.export());
                if let Err(e) = storage::save_session(&text) {
                    state.report(e);
                }
            },
            SAVE_DELAY,
        );
    }
}

/// A fresh session with the demo team and a short simulated conversation (first visit).
pub fn demo_session() -> Session {
    // The demo facts are built from the embedded team, which the core's tests keep valid, so
    // none is refused; a refusal would only shorten the demo.
    let mut session = Session::new();
    let _ = session.apply(&Fact::set_team(agent_chatter::demo::team()));
    let _ = session.apply(&Fact::Human {
        text: agent_chatter::demo::OPENING_MESSAGE.to_string(),
        sender: Some("kailai".to_string()),
        at: Millis(DEMO_EPOCH),
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
            Millis(DEMO_EPOCH + minute * 60_000),
        ));
    }
    session
}
