//! The page's state: one [`Session`] (DESIGN §6b) in a signal, what the user selected, and the
//! [`Memo`]s every view reads. Views never compute prompts themselves: they read these memos,
//! which call the core's `Session::preview`, so what the page shows is what an agent gets.

use agent_chatter::context::Prompt;
use agent_chatter::conversation::Delivery;
use agent_chatter::message::MemberId;
use agent_chatter::session::{PreviewOverrides, Session};
use std::collections::BTreeMap;

use agent_chatter::team::Team;
use leptos::prelude::*;

/// Who performs the session's actions (DESIGN §13): the page itself, or a bridge.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mode {
    /// No bridge: the page is its own host; agents are answered by the user or the simulator.
    Simulation,
    /// Mirroring a bridge session over its WebSocket; the bridge runs the agents.
    Bridge { connected: bool },
}

/// Whether the prompt a bridge sent is the one the page previews (DESIGN §6b).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verification {
    pub to: String,
    /// The bridge's SHA-256 of what it wrote to the agent.
    pub sent: String,
    /// The page's own, from its session.
    pub previewed: Option<String>,
}

impl Verification {
    pub fn verified(&self) -> bool {
        self.previewed.as_deref() == Some(self.sent.as_str())
    }
}

/// One session of the bridge's database, as its `sessions` event lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionEntry {
    pub id: i64,
    pub title: String,
    pub facts: i64,
}

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

/// Everything the views share; `Copy`, provided once by [`crate::app::App`].
#[derive(Clone, Copy)]
pub struct AppState {
    /// The one session: every fact the page applied, the team, the conversation.
    pub session: RwSignal<Session>,
    /// The recipient the inspector shows (a member id); `None` = the first AI member.
    pub recipient: RwSignal<Option<MemberId>>,
    /// The message shown as current (time travel); `None` = the latest.
    pub selected: RwSignal<Option<usize>>,
    /// The delivery waiting for its agent's reply (simulation: the user or the demo agent).
    pub due: RwSignal<Option<Delivery>>,
    /// Notices from the conversation, newest last (unresolved names, runaway bound, DONE…).
    pub notices: RwSignal<Vec<String>>,
    /// What went wrong last, in the user's terms; the banner shows it until dismissed.
    pub error: RwSignal<Option<String>>,
    /// Simulation or bridge.
    pub mode: RwSignal<Mode>,
    /// The last delivery the bridge announced, checked against the page's preview.
    pub verification: RwSignal<Option<Verification>>,
    /// The running agent's streamed output so far (bridge mode; not stored).
    pub output: RwSignal<String>,
    /// The bridge's SHA-256 of every delivery it made in this session, by (message id,
    /// member): past deliveries are verified as the running one is.
    pub sent: RwSignal<BTreeMap<(String, MemberId), String>>,
    /// What-if settings per recipient (window, budgets, pin-first): previews use them, the
    /// session does not change.
    pub whatif: RwSignal<BTreeMap<MemberId, PreviewOverrides>>,
    /// The shown recipient's what-if settings.
    pub shown_whatif: Memo<PreviewOverrides>,
    /// The inspector's prompt without what-if (for the diff "actual vs what-if").
    pub actual: Memo<Option<Result<Prompt, String>>>,
    /// Whether the shown prompt was delivered (not only previewed).
    pub delivered: Memo<bool>,
    /// How the bridge answers each AI member: (runs for real, command) (bridge mode).
    pub agent_status: RwSignal<BTreeMap<MemberId, (bool, String)>>,
    /// The bridge's session shown, and the sessions its database holds (bridge mode).
    pub bridge_session: RwSignal<Option<i64>>,
    pub bridge_sessions: RwSignal<Vec<SessionEntry>>,
    /// The team in use (settings in force included).
    pub team: Memo<Option<Team>>,
    /// How many messages the conversation holds.
    pub message_count: Memo<usize>,
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
        let message_count = Memo::new(move |_| session.with(|s| s.messages().len()));
        let shown_recipient = Memo::new(move |_| {
            let wanted = recipient.get();
            team.with(|team| {
                let team = team.as_ref()?;
                wanted
                    .filter(|id| team.member(id).is_some_and(|m| m.is_ai()))
                    .or_else(|| {
                        team.members
                            .iter()
                            .find(|m| m.is_ai())
                            .map(|m| m.id.clone())
                    })
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
            notices: RwSignal::new(Vec::new()),
            error: RwSignal::new(None),
            mode: RwSignal::new(Mode::Simulation),
            verification: RwSignal::new(None),
            output: RwSignal::new(String::new()),
            sent: RwSignal::new(BTreeMap::new()),
            whatif,
            shown_whatif,
            actual,
            delivered,
            agent_status: RwSignal::new(BTreeMap::new()),
            bridge_session: RwSignal::new(None),
            bridge_sessions: RwSignal::new(Vec::new()),
            team,
            message_count,
            shown_recipient,
            shown_at,
            preview,
            side_by_side,
        }
    }

    pub fn is_bridge(&self) -> bool {
        matches!(self.mode.get_untracked(), Mode::Bridge { .. })
    }

    /// Shows `message` in the error banner.
    pub fn report(&self, message: impl Into<String>) {
        self.error.set(Some(message.into()));
    }
}

/// The page's state, from the context [`crate::app::App`] provides.
pub fn use_state() -> AppState {
    expect_context::<AppState>()
}
