//! The page's state: one [`Session`] (docs/architecture.md §6b) in a signal, what the user
//! selected, and the [`Memo`]s every view reads. Views never compute prompts themselves: they read
//! these memos, which call the core's `Session::preview`, so what the page shows is what an agent
//! gets.

use agent_chatter::context::Prompt;
use agent_chatter::conversation::{Action, Delivery};
use agent_chatter::message::MemberId;
use agent_chatter::session::{Fact, PreviewOverrides, Session};
use std::collections::BTreeMap;

use agent_chatter::team::{Member, Team};
use leptos::prelude::*;

/// One AI member's prompt in the side-by-side view.
#[derive(Debug, Clone, PartialEq)]
pub struct Column {
    pub member: MemberId,
    pub display_name: String,
    pub agent_type: String,
    /// The column shows a what-if (the member's overrides are on), not the real prompt.
    pub whatif: bool,
    pub prompt: Result<Prompt, String>,
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
    pub actual: Memo<Option<Result<Prompt, String>>>,
    /// Whether the shown prompt was delivered (not only previewed).
    pub delivered: Memo<bool>,
    /// The team in use (settings in force included).
    pub team: Memo<Option<Team>>,
    /// The team's members (none without a team): what reads only them is not run again by a
    /// settings edit.
    pub members: Memo<Vec<Member>>,
    /// How many messages the conversation holds.
    pub message_count: Memo<usize>,
    /// Changes when the runs do (a run ended, or another session is shown), not with every
    /// fact: what sums every run (usage) follows it, so a setting edit or a selection costs
    /// the same on a long history as on a short one (docs/architecture.md §13). Read it with
    /// `get`, never only `track`: a memo that was never read has not run, so it watches
    /// nothing and never changes.
    pub runs: Memo<(u32, usize)>,
    /// Bumped each time another session is shown.
    shows: RwSignal<u32>,
    /// The recipient actually shown: the selected one if it is still a member, else the first
    /// AI member.
    pub shown_recipient: Memo<Option<MemberId>>,
    /// The message actually shown as current: the selected one, else the latest.
    pub shown_at: Memo<Option<usize>>,
    /// The inspector's prompt: `Session::preview(recipient, at)`.
    pub preview: Memo<Option<Result<Prompt, String>>>,
    /// Every AI member's prompt for the same message.
    pub side_by_side: Memo<Vec<Column>>,
}

impl AppState {
    pub fn new(session: Session) -> Self {
        let session = RwSignal::new(session);
        let recipient = RwSignal::new(None::<MemberId>);
        let selected = RwSignal::new(None::<usize>);
        let team = Memo::new(move |_| session.with(|s| s.team().cloned()));
        let members = Memo::new(move |_| {
            team.with(|t| t.as_ref().map_or_else(Vec::new, |t| t.members.clone()))
        });
        let message_count = Memo::new(move |_| session.with(|s| s.messages().len()));
        let shows = RwSignal::new(0u32);
        let runs = Memo::new(move |_| (shows.get(), session.with(|s| s.runs().len())));
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
                            prompt: s.preview(&m.id, at, &overrides).map_err(|e| e.to_string()),
                        }
                    })
                    .collect()
            })
        });
        AppState {
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
            shows,
            shown_recipient,
            shown_at,
            preview,
            side_by_side,
        }
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
        match result {
            Some(Ok(actions)) => Some(self.perform(actions)),
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
        self.shows.update(|n| *n = n.wrapping_add(1));
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
                    self.notices.update(|n| {
                        n.push(
                            "[DONE]: the conversation is complete until a human speaks".to_string(),
                        )
                    });
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

/// The member of `members` whose id is `id`: [`Team::member`] for what reads the members
/// apart from the team ([`AppState::members`]).
pub fn member<'a>(members: &'a [Member], id: &str) -> Option<&'a Member> {
    members.iter().find(|m| m.id == id)
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
