//! The page's state: one [`Session`] (docs/architecture.md §6b) in a signal, what the user
//! selected, and the [`Memo`]s every view reads. Views never compute prompts themselves: they read
//! these memos, which call the core's `Session::preview`, so what the page shows is what an agent
//! gets.

use agent_chatter::context::Prompt;
use agent_chatter::conversation::{Action, Delivery};
use agent_chatter::message::MemberId;
use agent_chatter::session::{Fact, PreviewOverrides, Session};
use std::collections::BTreeMap;
use std::sync::Arc;

use agent_chatter::team::{Member, Team};
use agent_chatter::usage::CapStanding;
use leptos::prelude::*;

/// One AI member's prompt in the side-by-side view.
#[derive(Debug, Clone, PartialEq)]
pub struct Column {
    pub member: MemberId,
    pub display_name: String,
    pub agent_type: String,
    /// The column shows a what-if (the member's overrides are on), not the real prompt.
    pub whatif: bool,
    pub prompt: Result<Arc<Prompt>, String>,
}

/// What the views share, whichever host performs the actions (docs/architecture.md §13);
/// `Copy`, provided once by [`crate::app::App`]. What only a bridge knows lives with the
/// bridge host ([`crate::host::Bridge`]).
#[derive(Clone, Copy)]
pub struct AppState {
    /// The one session: every fact the page applied, the team, the conversation.
    pub session: RwSignal<Session>,
    /// The recipient the inspector shows (a member id); `None` = the first AI member.
    pub recipient: RwSignal<Option<MemberId>>,
    /// The message shown as current (time travel); `None` = the latest.
    pub selected: RwSignal<Option<usize>>,
    /// The delivery waiting for its agent's reply (simulation: the user or the demo agent; a
    /// bridge: the agent it runs).
    pub due: RwSignal<Option<Delivery>>,
    /// When the page saw [`AppState::due`] become due (ms since the epoch).
    pub due_since: RwSignal<u64>,
    /// The wall clock (ms since the epoch), ticking each second: what running statuses count
    /// from.
    pub clock: RwSignal<u64>,
    /// How many facts the user has seen: what came after (an agent failed, a human's turn)
    /// is news for the tab's title until the user acts.
    pub seen: RwSignal<usize>,
    /// Notices from the conversation, newest last (unresolved names, runaway bound, DONE…),
    /// as people read them (`Session::describe`).
    pub notices: RwSignal<Vec<String>>,
    /// What went wrong last, in the user's terms; the banner shows it until dismissed.
    pub error: RwSignal<Option<String>>,
    /// What-if settings per recipient (window, budgets, pin-first): previews use them, the
    /// session does not change.
    pub whatif: RwSignal<BTreeMap<MemberId, PreviewOverrides>>,
    /// The shown recipient's what-if settings.
    pub shown_whatif: Memo<PreviewOverrides>,
    /// The inspector's prompt without what-if (for the diff "actual vs what-if").
    pub actual: Memo<Option<Result<Arc<Prompt>, String>>>,
    /// Whether the shown prompt was delivered (not only previewed).
    pub delivered: Memo<bool>,
    /// The team in use (settings in force included).
    pub team: ReadSignal<Option<Arc<Team>>>,
    /// The team's members (none without a team): what reads only them is not run again by a
    /// settings edit.
    pub members: ReadSignal<Vec<Member>>,
    /// How many messages the conversation holds.
    pub message_count: ReadSignal<usize>,
    /// Changes when the runs do (a run ended; another session shown, a new team or a loaded
    /// history), not with every fact: what sums every run (usage) follows it, so a setting edit or a selection costs
    /// the same on a long history as on a short one (docs/architecture.md §13).
    pub runs: ReadSignal<(u32, usize)>,
    /// Where the runs stand against the team's cost cap (`Session::cap_standing`), followed
    /// with the runs and the team: every view that says "reached" reads this one standing.
    pub cap: Memo<Option<CapStanding>>,
    /// Writes [`AppState::team`], [`AppState::members`], [`AppState::message_count`] and
    /// [`AppState::runs`] after each change of the session ([`AppState::follow_session`]).
    session_parts: SessionParts,
    /// The recipient actually shown: the selected one if it is still a member, else the first
    /// AI member.
    pub shown_recipient: Memo<Option<MemberId>>,
    /// The message actually shown as current: the selected one, else the latest.
    pub shown_at: Memo<Option<usize>>,
    /// The inspector's prompt: `Session::preview(recipient, at)`. Shared (`Arc`): the memos
    /// and views that pass it on copy a pointer, not the prompt and its explanation.
    pub preview: Memo<Option<Result<Arc<Prompt>, String>>>,
    /// Every AI member's prompt for the same message.
    pub side_by_side: Memo<Vec<Column>>,
}

impl AppState {
    pub fn new(session: Session) -> Self {
        let session = RwSignal::new(session);
        let recipient = RwSignal::new(None::<MemberId>);
        let selected = RwSignal::new(None::<usize>);
        // Signals written after each change of the session, not memos of it: a memo of the
        // session is marked on every fact, and marks everything that reads it again on each
        // path, so the timeline's rows (which read the message count and the runs) would be
        // walked on every setting edit (docs/architecture.md §13, "Update cost").
        let (team, set_team) = signal(None::<Arc<Team>>);
        let (members, set_members) = signal(Vec::<Member>::new());
        let (message_count, set_message_count) = signal(0usize);
        let (runs, set_runs) = signal((0u32, 0usize));
        let session_parts = SessionParts {
            team: set_team,
            members: set_members,
            message_count: set_message_count,
            runs: set_runs,
        };
        let shown_recipient = Memo::new(move |_| {
            let wanted = recipient.get();
            members.with(|members| {
                wanted
                    .filter(|id| member(members, id).is_some_and(Member::is_ai))
                    .or_else(|| members.iter().find(|m| m.is_ai()).map(|m| m.id.clone()))
            })
        });
        let shown_at = Memo::new(move |_| {
            let len = message_count.get();
            match selected.get() {
                Some(at) if at < len => Some(at),
                _ => len.checked_sub(1),
            }
        });
        let whatif = RwSignal::new(BTreeMap::<MemberId, PreviewOverrides>::new());
        let shown_whatif = Memo::new(move |_| {
            let member = shown_recipient.get();
            whatif.with(|w| member.and_then(|m| w.get(&m).copied()).unwrap_or_default())
        });
        let preview = Memo::new(move |_| {
            let member = shown_recipient.get()?;
            let at = shown_at.get();
            let overrides = shown_whatif.get();
            Some(session.with(|s| {
                s.preview(&member, at, &overrides)
                    .map(Arc::new)
                    .map_err(|e| e.to_string())
            }))
        });
        let actual = Memo::new(move |_| {
            if shown_whatif.get().is_empty() {
                return preview.get();
            }
            let member = shown_recipient.get()?;
            let at = shown_at.get();
            Some(session.with(|s| {
                s.preview(&member, at, &PreviewOverrides::default())
                    .map(Arc::new)
                    .map_err(|e| e.to_string())
            }))
        });
        let delivered = Memo::new(move |_| {
            let (Some(member), Some(at)) = (shown_recipient.get(), shown_at.get()) else {
                return false;
            };
            session.with(|s| s.was_delivered(&member, at))
        });
        let side_by_side = Memo::new(move |_| {
            let at = shown_at.get();
            let whatifs = whatif.get();
            // The shown recipient's column is the inspector's prompt (the same message and
            // what-if settings): built once, not twice.
            let shown = shown_recipient.get();
            let inspected = preview.get();
            session.with(|s| {
                let Some(team) = s.team() else {
                    return Vec::new();
                };
                team.members
                    .iter()
                    .filter(|m| m.is_ai())
                    .map(|m| {
                        let overrides = whatifs.get(&m.id).copied().unwrap_or_default();
                        Column {
                            member: m.id.clone(),
                            display_name: m.display_name.clone(),
                            agent_type: m.agent_type.clone().unwrap_or_default(),
                            whatif: !overrides.is_empty(),
                            prompt: match (&inspected, shown.as_ref() == Some(&m.id)) {
                                (Some(prompt), true) => prompt.clone(),
                                _ => s
                                    .preview(&m.id, at, &overrides)
                                    .map(Arc::new)
                                    .map_err(|e| e.to_string()),
                            },
                        }
                    })
                    .collect()
            })
        });
        // A run's cost or a new cap moves the standing; a message or a setting else does not.
        let cap = Memo::new(move |_| {
            let _ = runs.get();
            team.track();
            session.with_untracked(Session::cap_standing)
        });
        let state = AppState {
            session,
            recipient,
            selected,
            due: RwSignal::new(None),
            due_since: RwSignal::new(0),
            clock: RwSignal::new(crate::browser::now().0),
            seen: RwSignal::new(0),
            notices: RwSignal::new(Vec::new()),
            error: RwSignal::new(None),
            whatif,
            shown_whatif,
            actual,
            delivered,
            team,
            members,
            message_count,
            runs,
            cap,
            session_parts,
            shown_recipient,
            shown_at,
            preview,
            side_by_side,
        };
        state.follow_session(Change::Everything);
        state
    }

    /// Brings the session's parts ([`AppState::team`], …) up to date after `change`. The team
    /// and its members are written only when the change can touch them, so what reads only
    /// them is not run again by a message or a reply; the counts only when they differ.
    fn follow_session(&self, change: Change) {
        let parts = self.session_parts;
        self.session.with_untracked(|s| {
            if change != Change::Conversation {
                parts.team.set(s.shared_team().cloned());
            }
            if change == Change::Everything {
                parts
                    .members
                    .set(s.team().map_or_else(Vec::new, |t| t.members.clone()));
            }
            let count = s.messages().len();
            if self.message_count.get_untracked() != count {
                parts.message_count.set(count);
            }
            let before = self.runs.get_untracked();
            let shows = before
                .0
                .wrapping_add(u32::from(change == Change::Everything));
            let now = (shows, s.runs().len());
            if now != before {
                parts.runs.set(now);
            }
        });
    }

    /// Every AI member's id and display name, in the team's order (what pickers of an agent
    /// list; reactive: it follows the members).
    pub fn agent_names(&self) -> Vec<(MemberId, String)> {
        self.members.with(|members| {
            members
                .iter()
                .filter(|m| m.is_ai())
                .map(|m| (m.id.clone(), m.display_name.clone()))
                .collect()
        })
    }

    /// The team's cost cap as the user set it, once the runs reached it (reactive): then no
    /// agent is given a message, nor a retry, until it is raised.
    pub fn cap_reached(&self) -> Option<String> {
        self.cap
            .get()
            .filter(|c| c.reached())
            .map(|c| c.cap.display_limit())
    }

    /// Shows `message` in the error banner.
    pub fn report(&self, message: impl Into<String>) {
        self.error.set(Some(message.into()));
    }

    /// Applies `fact` to the page's own session and performs the actions it asks for; `None`
    /// when the session refused it (nothing changed; the reason is on the banner). Every host
    /// ends here: the simulation with its own facts, a bridge with the facts it committed.
    pub fn apply_fact(&self, fact: &Fact) -> Option<Performed> {
        let result = self
            .session
            .try_update(|s| s.apply(fact).map(|()| drain(s)));
        self.follow_session(Change::of(fact));
        match result {
            Some(Ok(actions)) => {
                // A human spoke: the conversation is open again, and saying it is complete
                // would now be false.
                let finished = |n: &Vec<String>| n.iter().any(|t| t == FINISHED_NOTICE);
                if matches!(fact, Fact::Human { .. }) && self.notices.with_untracked(finished) {
                    self.notices
                        .update(|n| n.retain(|text| text != FINISHED_NOTICE));
                }
                Some(self.perform(actions))
            }
            Some(Err(e)) => {
                self.report(e.to_string());
                None
            }
            None => None,
        }
    }

    /// Shows `session` in place of the one shown (import, reset, a bridge's log): its pending
    /// actions become the page's, and the selection starts over at the latest message.
    pub fn show(&self, mut session: Session) -> Performed {
        let actions = drain(&mut session);
        // A session opened is not news: what it ended on was not just now.
        self.seen.set(session.facts().len());
        self.session.set(session);
        self.follow_session(Change::Everything);
        self.due.set(None);
        self.notices.set(Vec::new());
        self.selected.set(None);
        self.perform(actions)
    }

    fn perform(&self, actions: Vec<Action>) -> Performed {
        let mut performed = Performed::default();
        for action in actions {
            match action {
                Action::Deliver(delivery) => {
                    // Show the prompt the agent is getting, at the message it answers.
                    self.recipient.set(Some(delivery.to.clone()));
                    self.selected.set(None);
                    self.due.set(Some(*delivery));
                    self.due_since.set(crate::browser::now().0);
                    performed.delivery = true;
                }
                Action::AwaitHuman { .. } => self.due.set(None),
                Action::Finished => {
                    self.due.set(None);
                    self.notices.update(|n| n.push(FINISHED_NOTICE.to_string()));
                }
                Action::Notice(notice) => {
                    let text = self.session.with_untracked(|s| s.describe(&notice));
                    self.notices.update(|n| n.push(text));
                }
            }
        }
        // A delivery that was answered is no longer due.
        let running = self
            .session
            .with_untracked(|s| s.conversation().in_flight().map(|f| f.to.clone()));
        if running.is_none() {
            self.due.set(None);
        }
        performed
    }
}

/// What the notices say while a `[DONE]` stands (until a human speaks again).
const FINISHED_NOTICE: &str = "[DONE]: the conversation is complete until a human speaks";

/// The member of `members` whose id is `id`: [`Team::member`] for what reads the members
/// apart from the team ([`AppState::members`]).
pub fn member<'a>(members: &'a [Member], id: &str) -> Option<&'a Member> {
    members.iter().find(|m| m.id == id)
}

/// The writers of the parts of the session the views read apart ([`AppState::follow_session`]).
#[derive(Clone, Copy)]
struct SessionParts {
    team: WriteSignal<Option<Arc<Team>>>,
    members: WriteSignal<Vec<Member>>,
    message_count: WriteSignal<usize>,
    runs: WriteSignal<(u32, usize)>,
}

/// What a change of the session can have touched ([`AppState::follow_session`]).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Change {
    /// Messages and runs only: a human's message, a reply, a failure, a retry.
    Conversation,
    /// The settings too (the team's members stay).
    Settings,
    /// Anything: another team, a loaded history, another session shown.
    Everything,
}

impl Change {
    /// What `fact` can touch; a kind not named here can touch anything.
    fn of(fact: &Fact) -> Self {
        match fact {
            Fact::Human { .. }
            | Fact::Replied { .. }
            | Fact::Failed { .. }
            | Fact::Retry { .. } => Change::Conversation,
            Fact::SetSettings { .. } => Change::Settings,
            _ => Change::Everything,
        }
    }
}

/// What the page did for the facts it applied, for the host to follow up.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Performed {
    /// A new delivery became due (a bridge checks its announcement of it afresh).
    pub delivery: bool,
}

/// Every action the session has pending.
pub fn drain(session: &mut Session) -> Vec<Action> {
    std::iter::from_fn(|| session.poll_action()).collect()
}

/// The page's state, from the context [`crate::app::App`] provides.
pub fn use_state() -> AppState {
    expect_context::<AppState>()
}
