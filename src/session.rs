//! The session (docs/architecture.md §6b): a team, its settings and the conversation machine, fed
//! by one log of serializable [`Fact`]s. Every host holds one — the page, the bridge, the terminal
//! chat, the npm `Conversation` — and because the core is deterministic (no clock, no randomness,
//! fixed hash keys) **the same facts give the same messages, actions and prompt bytes on every
//! host**.
//!
//! - persistence = append each applied fact; resume = [`Session::import`] (a replay);
//! - time travel and what-if = [`Session::preview`], which never changes the session;
//! - a snapshot (§11) and a scenario (§11b) can be derived at any time.
//!
//! ```
//! use agent_chatter::conversation::Action;
//! use agent_chatter::message::Millis;
//! use agent_chatter::session::{Fact, Session};
//!
//! let team = agent_chatter::config::load_team(r#"{"name": "Duo", "members": [
//!     {"name": "kailai", "kind": "human"},
//!     {"name": "max", "kind": "ai", "agentType": "codex"}]}"#).unwrap();
//! let mut session = Session::new();
//! session.apply(&Fact::set_team(team)).unwrap();
//! session.apply(&Fact::human("Plan it [NEXT: max]", Millis(1))).unwrap();
//! while let Some(action) = session.poll_action() {
//!     if let Action::Deliver(d) = action {
//!         assert_eq!(d.prompt.prompt, "[MESSAGE]\nPlan it");
//!         session.apply(&Fact::replied(&d.to, "Done. [DONE]", Millis(2))).unwrap();
//!     }
//! }
//! // The log replays to the same state anywhere.
//! let copy = Session::import(&session.export()).unwrap();
//! assert_eq!(copy.messages(), session.messages());
//! ```
//!
//! Decisions where docs/architecture.md is silent:
//! - `setTeam`'s optional `settings` replace the team's own (the team config keeps its
//!   settings too; a fact that names both uses the fact's).
//! - A replayed session's pending actions are only what the host must do now: the in-flight
//!   delivery again (same prompt bytes as when it was first emitted), or `AwaitHuman`.
//!   Everything earlier was performed by whoever applied the facts first.
//! - [`Session::preview`] of a message that `member` was actually delivered uses that
//!   delivery's parent, the store as it was then (the history it saw, the team task in force
//!   then) and the settings it was built with (recorded with the delivery), so time travel
//!   shows exactly what the agent got (docs/architecture.md §13: "what each agent received at that
//!   point"), even after a settings change; a what-if override still applies on top.
//!   docs/architecture.md §6b's "the settings in force" is read as "in force for that delivery".
//!   Otherwise the message is previewed as the current one, after it was stored, with no parent,
//!   under the settings in force now — what [`crate::scenario::preview`] gives for the history up
//!   to it.

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

mod file;

use serde::{Serialize, Serializer};
use thiserror::Error;

use crate::config::ConfigError;
use crate::context::{self, AsOf, BuildError, BuildSettings, Prompt, Recipient, Store, Target};
use crate::conversation::{Action, Conversation, Delivery, InputError};
use crate::json::Path;
use crate::json::{FieldError, JsonSyntaxError};
use crate::message::{MemberId, Message, Millis, Text};
use crate::scenario::{Scenario, ScenarioError};
use crate::snapshot::{self, Snapshot};
use crate::team::{self, Member, NotAMember, Team, TeamSettings};
use crate::usage::{Spend, Usage, Usd};

/// The `format` of a session file this version reads and writes.
pub const SESSION_FORMAT: &str = "agent-chatter-session/1";

/// One input of a session. In JSON, internally tagged and camelCase:
/// `{"type": "human", "text": "[NEXT: max] hi", "sender": null, "at": 1700000000000}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(
    tag = "type",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum Fact {
    /// A team was loaded: everything resets. `settings`, when given, replace the team's own.
    /// (Team and settings are boxed, as the scenario is, so every fact stays small: a session
    /// holds one per message.)
    // The team is shared: the conversation holds this one (docs/architecture.md §14, "Memory").
    SetTeam {
        team: Arc<Team>,
        #[serde(skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "ts", ts(optional))]
        settings: Option<Box<TeamSettings>>,
    },
    /// New settings (window, budgets, policy); the conversation goes on.
    SetSettings { settings: Box<TeamSettings> },
    /// A human typed `text` (raw, markers included); `sender` is a member id when known.
    // The message it becomes holds this text, not a copy.
    Human {
        text: Text,
        sender: Option<MemberId>,
        at: Millis,
    },
    /// The agent of the pending delivery `to` answered with its final text. `incomplete`, when
    /// given, is the CLI's reason the text may be cut short (a loop detector, a turn limit, a
    /// cut stream): the reply is stored and routed all the same, and marked.
    Replied {
        to: MemberId,
        text: Text,
        at: Millis,
        #[serde(skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "ts", ts(optional))]
        incomplete: Option<String>,
        /// What the run cost, as its CLI reported it (docs/architecture.md §14c). Absent in
        /// logs written before it was recorded, which replay as they always did.
        // Boxed: most facts are not runs, and each fact is as large as the largest.
        #[serde(skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "ts", ts(optional))]
        usage: Option<Box<Usage>>,
    },
    /// The pending delivery `to` failed (timeout, crash, bad output). `reason` is the full
    /// account for the people (the CLI's own words); `failure`, when given, is the kind of
    /// failure, and then the other agents' context gets only one short line in words
    /// (`bob failed: no reply in time`), never the CLI's output (docs/architecture.md §14c).
    Failed {
        to: MemberId,
        reason: String,
        at: Millis,
        #[serde(skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "ts", ts(optional))]
        failure: Option<Failure>,
        #[serde(skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "ts", ts(optional))]
        usage: Option<Box<Usage>>,
    },
    /// The user asked to run `to`'s failed delivery again (docs/architecture.md §6b): valid
    /// only when `to`'s last run in this conversation failed and nothing is in flight or queued
    /// for it. The delivery is queued again, answering the same message at the same priority,
    /// and runs as any other (a wait for a human is over: the user chose to go on).
    Retry { to: MemberId, at: Millis },
    /// A recorded history was opened (a scenario, docs/architecture.md §11b; a snapshot becomes one
    /// with the team in use): everything resets to the scenario's team, settings and messages,
    /// appended as history without routing, exactly as `scenario::preview` stores them. The
    /// conversation then waits for the team's first human, as after any message that routes no one:
    /// the next human message is routed as usual. Not in docs/architecture.md §6b's list: added so
    /// a shared case opens in every host and stays a replayable fact log.
    LoadScenario {
        // Written in the scenario format (our team format, every setting) and read back by
        // the scenario reader, which takes any scenario.
        #[cfg_attr(feature = "ts", ts(type = "ScenarioInput"))]
        scenario: Box<Scenario>,
    },
}

impl Fact {
    /// Drops the machine settings (run settings, working directories) of the team this fact
    /// carries, and says whether it held any: a session's log never keeps them
    /// (docs/architecture.md §14c). Logs written before that rule are cleaned this way.
    pub fn strip_machine_settings(&mut self) -> bool {
        match self {
            Fact::SetTeam { team, .. } if team.has_machine_settings() => {
                Arc::make_mut(team).strip_machine_settings()
            }
            Fact::LoadScenario { scenario } => scenario.team.strip_machine_settings(),
            _ => false,
        }
    }

    /// Whether this fact carries machine settings ([`Self::strip_machine_settings`]).
    pub fn has_machine_settings(&self) -> bool {
        match self {
            Fact::SetTeam { team, .. } => team.has_machine_settings(),
            Fact::LoadScenario { scenario } => scenario.team.has_machine_settings(),
            _ => false,
        }
    }

    pub fn set_team(team: Team) -> Self {
        Fact::SetTeam {
            team: Arc::new(team),
            settings: None,
        }
    }

    pub fn set_settings(settings: TeamSettings) -> Self {
        Fact::SetSettings {
            settings: Box::new(settings),
        }
    }

    pub fn human(text: impl Into<Text>, at: Millis) -> Self {
        Fact::Human {
            text: text.into(),
            sender: None,
            at,
        }
    }

    pub fn replied(to: impl Into<MemberId>, text: impl Into<Text>, at: Millis) -> Self {
        Fact::Replied {
            to: to.into(),
            text: text.into(),
            at,
            incomplete: None,
            usage: None,
        }
    }

    pub fn failed(to: impl Into<MemberId>, reason: impl Into<String>, at: Millis) -> Self {
        Fact::Failed {
            to: to.into(),
            reason: reason.into(),
            at,
            failure: None,
            usage: None,
        }
    }

    /// This outcome fact with the run's usage (nothing changes for other facts, or for a
    /// usage with nothing reported).
    #[must_use]
    pub fn with_usage(mut self, reported: Usage) -> Self {
        if let Fact::Replied { usage, .. } | Fact::Failed { usage, .. } = &mut self {
            *usage = (!reported.is_empty()).then(|| Box::new(reported));
        }
        self
    }

    /// The JSON `type` of this fact.
    pub fn kind(&self) -> &'static str {
        match self {
            Fact::SetTeam { .. } => "setTeam",
            Fact::SetSettings { .. } => "setSettings",
            Fact::Human { .. } => "human",
            Fact::Replied { .. } => "replied",
            Fact::Failed { .. } => "failed",
            Fact::Retry { .. } => "retry",
            Fact::LoadScenario { .. } => "loadScenario",
        }
    }
}

/// The kind of an agent's failure: what the other agents' context says of it, in words, where
/// the full reason (a CLI's stderr, an address, a stack) would only mislead them or leak.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum Failure {
    /// No reply within the timeout; the agent was stopped.
    Timeout,
    /// The user stopped it.
    Cancelled,
    /// Its CLI exited with an error status.
    Crashed,
    /// Its CLI reported an error of its own (an API error, a refusal, a limit).
    AgentError,
    /// It ended without saying anything.
    EmptyReply,
    /// Its reply was over the message size limit.
    TooLarge,
    /// Its output was cut off before a final text.
    CutOff,
    /// It cannot run on this machine (not installed, a prompt it cannot be handed).
    CannotRun,
    /// Its run was cut short by its host, not by the agent: the bridge stopped (or the
    /// session was left) while it ran, so the run is recorded as ended rather than made again
    /// unasked (docs/architecture.md §14c "Interrupted runs").
    Interrupted,
}

impl Failure {
    /// Every kind with its JSON name.
    pub const ALL: [(&'static str, Failure); 9] = [
        ("timeout", Failure::Timeout),
        ("cancelled", Failure::Cancelled),
        ("crashed", Failure::Crashed),
        ("agentError", Failure::AgentError),
        ("emptyReply", Failure::EmptyReply),
        ("tooLarge", Failure::TooLarge),
        ("cutOff", Failure::CutOff),
        ("cannotRun", Failure::CannotRun),
        ("interrupted", Failure::Interrupted),
    ];

    /// The words the conversation stores: `{name} failed: {words}`.
    pub fn words(self) -> &'static str {
        match self {
            Failure::Timeout => "no reply in time, so it was stopped",
            Failure::Cancelled => "cancelled by the user",
            Failure::Crashed => "its CLI exited with an error",
            Failure::AgentError => "its CLI reported an error",
            Failure::EmptyReply => "empty reply",
            Failure::TooLarge => "its reply was over the message size limit",
            Failure::CutOff => "its output was cut off before a final text",
            Failure::CannotRun => "it cannot run on this machine",
            Failure::Interrupted => "its run was interrupted before it ended",
        }
    }
}

/// Notes that `task` is in force once `len` messages are stored (one entry per length; no
/// entry when nothing changed).
fn record(history: &mut TeamTaskHistory, len: usize, task: Option<&str>) {
    let last = history.last().and_then(|(_, t)| t.as_deref());
    if task == last {
        return;
    }
    let task = task.map(str::to_string);
    match history.last_mut() {
        Some(entry) if entry.0 == len => entry.1 = task,
        _ => history.push((len, task)),
    }
}

/// The conversation a scenario opens as, and its team-task history (for time travel): the
/// scenario's store (its `to`, markers and `teamTask` key, as `scenario::preview` sees them)
/// resumed with nothing pending.
fn load_scenario(scenario: &Scenario) -> Result<(Conversation, TeamTaskHistory), SessionError> {
    let mut team_tasks = TeamTaskHistory::new();
    let store = scenario
        .to_store_with(|len, task| record(&mut team_tasks, len, task))
        .map_err(SessionError::Scenario)?;
    // Nothing is pending after a recorded history, so the conversation waits for the first
    // human, as it does after any message that routes no one (docs/architecture.md §6): a message
    // without `[FROM]` is theirs, and the page says whose turn it is rather than "done".
    let first_human = scenario.team.humans().next().map(|h| h.id.clone());
    let state = crate::conversation::RoutingState {
        status: if store.is_empty() {
            crate::conversation::Status::Idle
        } else {
            crate::conversation::Status::AwaitingHuman
        },
        waiting_for: if store.is_empty() { None } else { first_human },
        last_completed: store.latest().map(|m| m.id.clone()),
        ..Default::default()
    };
    let conversation = Conversation::resume(scenario.team.clone(), store, state, Millis(0))
        .map_err(SessionError::Resume)?;
    Ok((conversation, team_tasks))
}

/// Why a fact was refused. The session is unchanged when one is returned.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum SessionError {
    #[error("no team yet: a session starts with a setTeam fact")]
    NoTeam,
    #[error("the message is empty: write some text, or a marker such as [NEXT: name] or [DONE]")]
    EmptyMessage,
    #[error("team: {0}")]
    Team(ConfigError),
    #[error("settings: {0}")]
    Settings(ConfigError),
    #[error(transparent)]
    Input(#[from] InputError),
    #[error("scenario: {0}")]
    Scenario(ScenarioError),
    /// A `retry` that has nothing to run again; says why in the user's terms.
    #[error("{0}")]
    CannotRetry(String),
    /// The scenario's history could not be resumed as a conversation.
    #[error("{0}")]
    Resume(crate::conversation::ResumeError),
}

/// A session file that cannot be used; nothing was changed.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum SessionFileError {
    #[error(transparent)]
    Syntax(#[from] JsonSyntaxError),
    #[error(transparent)]
    Field(#[from] FieldError),
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(
        "format: {found} is not a session file this version reads (expected \"{SESSION_FORMAT}\")"
    )]
    Format { found: String },
    /// A `loadScenario` fact whose scenario does not read; `path` is the fact's `scenario`.
    #[error("{path}: {error}")]
    Scenario { path: String, error: ScenarioError },
    #[error("facts[{index}] ({kind}): does not replay: {error}")]
    Replay {
        index: usize,
        kind: &'static str,
        error: SessionError,
    },
}

/// Why a preview cannot be made.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum PreviewError {
    #[error("no team yet: load a team first")]
    NoTeam,
    #[error("member: {0}")]
    UnknownMember(NotAMember),
    #[error("at: message #{at} does not exist; {} (0-based)", count_messages(*len))]
    NoSuchMessage { at: usize, len: usize },
    #[error(
        "overrides.{field}: must be greater than 0 (leave it out to keep the setting in force)"
    )]
    ZeroBudget { field: &'static str },
    #[error(transparent)]
    Build(#[from] BuildError),
}

/// "the conversation has 1 message", "… 3 messages", "… no messages yet".
fn count_messages(len: usize) -> String {
    match len {
        0 => "the conversation has no messages yet".into(),
        1 => "the conversation has 1 message".into(),
        n => format!("the conversation has {n} messages"),
    }
}

/// What-if settings for one preview; `None` keeps the setting in force.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "ts", ts(optional_fields))]
pub struct PreviewOverrides {
    pub window_size: Option<usize>,
    pub max_bytes: Option<usize>,
    pub pin_first: Option<bool>,
    pub max_tokens: Option<usize>,
}

impl PreviewOverrides {
    /// Puts the overrides in force; a zero budget is refused (naming the field), as the
    /// team's settings refuse it, rather than quietly becoming 1.
    fn apply(&self, settings: &mut BuildSettings) -> Result<(), PreviewError> {
        if self.max_bytes == Some(0) {
            return Err(PreviewError::ZeroBudget { field: "maxBytes" });
        }
        if self.max_tokens == Some(0) {
            return Err(PreviewError::ZeroBudget { field: "maxTokens" });
        }
        if let Some(w) = self.window_size {
            settings.window = w;
        }
        if let Some(b) = self.max_bytes {
            settings.max_bytes = b;
        }
        if let Some(p) = self.pin_first {
            settings.pin_first = p;
        }
        if let Some(t) = self.max_tokens {
            settings.max_tokens = Some(t);
        }
        Ok(())
    }

    /// True when no setting is overridden.
    pub fn is_empty(&self) -> bool {
        *self == PreviewOverrides::default()
    }
}

/// The team task after each change: (messages stored at that point, task).
type TeamTaskHistory = Vec<(usize, Option<String>)>;

/// A delivery the session emitted, kept so a preview of it is what the agent got.
#[derive(Debug, Clone, PartialEq, Eq)]
struct DeliveryRecord {
    to: MemberId,
    parent: Option<usize>,
    /// Messages stored when it was built.
    seen: usize,
    /// The settings it was built with: a later `setSettings` changes what agents get from
    /// then on, never what one was given.
    settings: BuildSettings,
}

/// Team + settings + conversation machine, driven by facts (module doc).
#[derive(Debug, Clone, Default)]
pub struct Session {
    conversation: Conversation,
    facts: Vec<Fact>,
    actions: VecDeque<Action>,
    team_tasks: TeamTaskHistory,
    /// Deliveries by the position of their `[MESSAGE]`.
    deliveries: BTreeMap<usize, Vec<DeliveryRecord>>,
    /// Every run's outcome in this conversation, in order (so by message position).
    runs: Vec<Run>,
    /// What the runs before the last team change (`setTeam`, `loadScenario`) reported, by
    /// member, and how many they were: money spent stays spent when the team changes, so the
    /// usage shown and the cost cap go on counting it (docs/architecture.md §14c).
    /// (A few members: a list, not a map, for the page's size.)
    earlier: Vec<(MemberId, Spend)>,
    /// The cap counts only the runs since the last team change, as before the spend carried
    /// over: set for a log written that way, which replays only so ([`Self::replay`]).
    cap_resets_on_team_change: bool,
}

/// How one agent run ended, as the session recorded it (docs/architecture.md §14c): the page's
/// per-delivery usage, the marks on incomplete replies, the reasons behind failure notices.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Run {
    pub to: MemberId,
    /// Position of the message it ended in: the reply, or the failure's notice.
    pub message: usize,
    pub usage: Option<Usage>,
    /// The CLI's reason the reply may be cut short.
    pub incomplete: Option<String>,
    /// The full reason, when it failed.
    pub failed: Option<String>,
    /// The kind of failure, when its host stated one (a timeout, a cancel, …).
    pub failure: Option<Failure>,
}

impl Run {
    /// How it ended, in the one word the page, `chat` and the transcripts all use for it
    /// (docs/architecture.md §14c): `replied`, `incomplete`, `failed`, `cancelled` or
    /// `timed out`.
    pub fn outcome(&self) -> &'static str {
        match (&self.failed, self.failure) {
            (Some(_), Some(Failure::Cancelled)) => "cancelled",
            (Some(_), Some(Failure::Timeout)) => "timed out",
            (Some(_), _) => "failed",
            (None, _) if self.incomplete.is_some() => "incomplete",
            (None, _) => "replied",
        }
    }

    /// Its host stopped it before its CLI could report (kind `interrupted`): what it cost is
    /// not known, though it reported nothing.
    pub fn cut_short(&self) -> bool {
        self.failure == Some(Failure::Interrupted)
    }

    /// What happened to a run that did not reply, as a sentence's verb: `failed`, `was
    /// cancelled` or `timed out` ([`Self::outcome`]'s word), `None` when it replied.
    pub fn failed_verb(&self) -> Option<&'static str> {
        self.failed.as_ref()?;
        Some(match self.failure {
            Some(Failure::Cancelled) => "was cancelled",
            Some(Failure::Timeout) => "timed out",
            _ => "failed",
        })
    }
}

impl Session {
    /// An empty session: the first fact must be `setTeam`.
    pub fn new() -> Self {
        Self::default()
    }

    /// Applies one fact. A refused fact changes nothing and says why; an accepted one is
    /// appended to the log and its actions queue up for [`Self::poll_action`].
    ///
    /// A new human message with no text (nothing but whitespace) is refused: it would be
    /// stored and shown as a message that says nothing. A log written before this rule may
    /// hold one, and [`Self::replay`] still takes it, so no stored session stops loading.
    pub fn apply(&mut self, fact: &Fact) -> Result<(), SessionError> {
        if let Fact::Human { text, .. } = fact {
            if text.trim().is_empty() {
                return Err(SessionError::EmptyMessage);
            }
        }
        self.apply_owned(fact.clone())
    }

    /// [`Self::apply`] for a fact the caller gives away: the log keeps it as it is, and only
    /// the text the conversation stores is copied (a replay copies each text once, not twice).
    ///
    /// A team's machine settings (run settings, working directories) are dropped first: the
    /// log never holds them (docs/architecture.md §14c), so no host can send, save or share
    /// them.
    fn apply_owned(&mut self, mut fact: Fact) -> Result<(), SessionError> {
        fact.strip_machine_settings();
        match &fact {
            Fact::SetTeam { team, settings } => {
                // The conversation holds the fact's team, or a copy with the fact's settings.
                let mut team = Arc::clone(team);
                if let Some(settings) = settings {
                    Arc::make_mut(&mut team).settings = TeamSettings::clone(settings);
                }
                team.validate().map_err(SessionError::Team)?;
                let spent = self.carried_spend();
                self.conversation.set_shared_team(team);
                self.conversation.set_spent(spent);
                self.team_tasks.clear();
                self.deliveries.clear();
                self.set_runs_aside();
                self.actions.clear();
            }
            Fact::SetSettings { settings } => {
                if self.conversation.team().is_none() {
                    return Err(SessionError::NoTeam);
                }
                team::validate_settings(settings, &Path::Root).map_err(SessionError::Settings)?;
                self.conversation
                    .set_settings(TeamSettings::clone(settings));
            }
            Fact::Human { text, sender, at } => {
                self.conversation
                    .human_said(text.clone(), sender.as_deref(), *at)?;
            }
            Fact::Replied {
                to,
                text,
                at,
                incomplete,
                usage,
            } => {
                let spent = self.count_cost(usage.as_deref());
                let id = self
                    .conversation
                    .agent_replied(to, text.clone(), *at)
                    .inspect_err(|_| self.conversation.set_spent(spent))?;
                let usage = usage.as_deref().copied();
                self.record_run(to, &id, usage, incomplete.clone(), None);
            }
            Fact::Failed {
                to,
                reason,
                at,
                failure,
                usage,
            } => {
                let spent = self.count_cost(usage.as_deref());
                // The other agents read one short line in words; the people get the reason.
                let said = failure.map_or_else(|| reason.clone(), |f| f.words().to_string());
                let id = self
                    .conversation
                    .handle_agent_failed(to, said, *at)
                    .inspect_err(|_| self.conversation.set_spent(spent))?;
                let usage = usage.as_deref().copied();
                let failed = Some((reason.clone(), *failure));
                self.record_run(to, &id, usage, None, failed);
            }
            Fact::Retry { to, at } => {
                let (parent, intent) = self.failed_delivery(to)?;
                self.conversation.retry(to, parent, intent, *at);
            }
            Fact::LoadScenario { scenario } => {
                let (conversation, team_tasks) = load_scenario(scenario)?;
                let spent = self.carried_spend();
                self.conversation = conversation;
                self.conversation.set_spent(spent);
                self.team_tasks = team_tasks;
                self.deliveries.clear();
                self.set_runs_aside();
                self.actions.clear();
            }
        }
        self.facts.push(fact);
        self.record_team_task();
        self.collect_actions();
        Ok(())
    }

    /// What a retry of `to` runs again: the parent and intent of its last run, which must
    /// have failed, with nothing in flight or queued for it (docs/architecture.md §6b).
    fn failed_delivery(
        &self,
        to: &str,
    ) -> Result<(crate::message::MessageId, crate::message::Intent), SessionError> {
        let team = self.team().ok_or(SessionError::NoTeam)?;
        let member = team.member(to).ok_or_else(|| {
            SessionError::CannotRetry(format!(
                "{to:?} is not a member of the team: nothing to retry"
            ))
        })?;
        let name = &member.display_name;
        let cannot = |why: String| Err(SessionError::CannotRetry(why));
        let conversation = &self.conversation;
        if conversation.in_flight().is_some_and(|f| f.to == member.id)
            || conversation.pending().iter().any(|q| q.to == member.id)
        {
            return cannot(format!(
                "{name} is already running or queued: wait for that run instead of retrying"
            ));
        }
        let last = self.runs.iter().rev().find(|r| r.to == member.id);
        let Some(run) = last.filter(|r| r.failed.is_some()) else {
            return cannot(format!(
                "{name}'s last run did not fail, so there is nothing to retry; to ask {name} \
                 again, write a message with [NEXT: {}]",
                member.name
            ));
        };
        let routing = &self.messages()[run.message].routing;
        match (&routing.parent, routing.intent) {
            (Some(parent), Some(intent)) => Ok((parent.clone(), intent)),
            _ => cannot(format!(
                "{name}'s failed run no longer shows what it answered: write a message with \
                 [NEXT: {}] to ask again",
                member.name
            )),
        }
    }

    /// Whether `member` (id) can be retried now: its last run failed and nothing is in flight
    /// or queued for it (what a `retry` fact needs).
    pub fn can_retry(&self, member: &str) -> bool {
        self.failed_delivery(member).is_ok()
    }

    /// The next thing the host must do, or `None` until the next fact.
    #[must_use]
    pub fn poll_action(&mut self) -> Option<Action> {
        self.actions.pop_front()
    }

    /// Tells the conversation what the runs have cost so far, this one included, before it
    /// decides whether another delivery may start (a team's `maxCostUsd`); returns what it was
    /// before, to put back should the fact be refused.
    fn count_cost(&mut self, usage: Option<&Usage>) -> Usd {
        let before = self.conversation.spent();
        if let Some(cost) = usage.and_then(|u| u.cost_usd) {
            let after = Usd::new(before.dollars() + cost.dollars()).unwrap_or(before);
            self.conversation.set_spent(after);
        }
        before
    }

    /// What the cap of a new team starts from: what was spent so far (nothing for a log
    /// written when the cap started over with each team).
    fn carried_spend(&self) -> Usd {
        if self.cap_resets_on_team_change {
            Usd::default()
        } else {
            self.conversation.spent()
        }
    }

    /// Whether `fact` is an outcome for a member not running, after a team change carried the
    /// spend: the mark of a log that went past its cap when each team's cap started over.
    fn stopped_by_carried_cap(&self, fact: &Fact) -> bool {
        let (Fact::Replied { to, .. } | Fact::Failed { to, .. }) = fact else {
            return false;
        };
        !self.cap_resets_on_team_change
            && !self.earlier.is_empty()
            && self.conversation.in_flight().is_none_or(|f| f.to != *to)
    }

    /// Counts the runs so far among the earlier ones, and starts the list of runs afresh: a
    /// new team's deliveries pair with its own runs.
    fn set_runs_aside(&mut self) {
        for run in std::mem::take(&mut self.runs) {
            let i = match self.earlier.iter().position(|(to, _)| *to == run.to) {
                Some(i) => i,
                None => {
                    self.earlier.push((run.to.clone(), Spend::default()));
                    self.earlier.len() - 1
                }
            };
            self.earlier[i]
                .1
                .add_run(run.usage.as_ref(), run.cut_short());
        }
    }

    fn record_run(
        &mut self,
        to: &str,
        message: &crate::message::MessageId,
        usage: Option<Usage>,
        incomplete: Option<String>,
        failed: Option<(String, Option<Failure>)>,
    ) {
        if let Some(message) = self.store().position(message) {
            let (failed, failure) = failed.unzip();
            self.runs.push(Run {
                to: to.to_string(),
                message,
                usage,
                incomplete,
                failed,
                failure: failure.flatten(),
            });
        }
    }

    fn record_team_task(&mut self) {
        let store = self.conversation.store();
        record(&mut self.team_tasks, store.len(), store.team_task());
    }

    fn collect_actions(&mut self) {
        while let Some(action) = self.conversation.poll_action() {
            if let Action::Deliver(d) = &action {
                let store = self.conversation.store();
                let team = self.conversation.team();
                let member = team.and_then(|t| t.member(&d.to));
                if let (Some(pos), Some(team), Some(member)) =
                    (store.position(&d.message), team, member)
                {
                    let parent = d.parent.as_ref().and_then(|p| store.position(p));
                    self.deliveries
                        .entry(pos)
                        .or_default()
                        .push(DeliveryRecord {
                            to: d.to.clone(),
                            parent,
                            seen: store.len(),
                            settings: BuildSettings::for_member(team, member),
                        });
                }
            }
            self.actions.push_back(action);
        }
    }

    // ------------------------------------------------------------------------ state

    /// Every fact applied so far, in order (the log to persist).
    pub fn facts(&self) -> &[Fact] {
        &self.facts
    }

    /// `notice` as a person reads it: each message named as the page numbers it (`#2 from
    /// Max`), never by its internal id.
    pub fn describe(&self, notice: &crate::conversation::Notice) -> String {
        let store = self.store();
        notice.describe(|id| match store.position(id) {
            Some(pos) => {
                let m = &store.messages()[pos];
                format!("#{} from {}", pos + 1, m.speaker.display_name)
            }
            None => id.0.clone(),
        })
    }

    /// Every run's outcome in this conversation (since the team was set), oldest first.
    pub fn runs(&self) -> &[Run] {
        &self.runs
    }

    /// Every delivery of this conversation (since the team was set) in the order they were
    /// made: the position of its `[MESSAGE]` and its recipient (id). A member's n-th delivery
    /// ended in its n-th run ([`Self::runs`]); one more is in flight.
    pub fn deliveries(&self) -> Vec<(usize, &str)> {
        let mut all: Vec<(usize, usize, usize, &str)> = self
            .deliveries
            .iter()
            .flat_map(|(at, ds)| {
                ds.iter()
                    .enumerate()
                    .map(move |(k, d)| (d.seen, *at, k, d.to.as_str()))
            })
            .collect();
        // Built when `seen` messages were stored: one at a time, so that is their order (the
        // deliveries of one message in the order they were made).
        all.sort_unstable_by_key(|d| (d.0, d.1, d.2));
        all.into_iter().map(|(_, at, _, to)| (at, to)).collect()
    }

    /// How many runs ended before the last team change: counted in [`Self::usage`], not listed
    /// in [`Self::runs`] (their prompts were built by the earlier team).
    pub fn earlier_runs(&self) -> usize {
        self.earlier.iter().map(|(_, spend)| spend.runs).sum()
    }

    /// The run that answered `member`'s prompt whose `[MESSAGE]` is message `at` (its newest
    /// such delivery), once it ended: its first run ending after the delivery was made, as
    /// one runs at a time. `None` while it runs or waits, or with no such delivery.
    pub fn answer(&self, member: &str, at: usize) -> Option<&Run> {
        let seen = self.delivery(member, at)?.seen;
        let from = self.runs.partition_point(|r| r.message < seen);
        self.runs[from..].iter().find(|r| r.to == member)
    }

    /// The run that ended in message `at` (its reply or failure notice), if one did.
    pub fn run_at(&self, at: usize) -> Option<&Run> {
        let i = self.runs.partition_point(|r| r.message < at);
        self.runs.get(i).filter(|r| r.message == at)
    }

    /// What `member`'s runs (every member's, for `None`) have cost in this session, and how
    /// many runs that is: those before the last team change too ([`Self::earlier_runs`]).
    pub fn usage(&self, member: Option<&str>) -> Spend {
        let mut total = Spend::default();
        for (_, spend) in self
            .earlier
            .iter()
            .filter(|(to, _)| member.is_none_or(|m| *to == m))
        {
            total.add(spend);
        }
        for run in self
            .runs
            .iter()
            .filter(|r| member.is_none_or(|m| r.to == m))
        {
            total.add_run(run.usage.as_ref(), run.cut_short());
        }
        total
    }

    /// The conversation machine (status, queue, waiting state, in-flight delivery).
    pub fn conversation(&self) -> &Conversation {
        &self.conversation
    }

    pub fn team(&self) -> Option<&Team> {
        self.conversation.team()
    }

    /// The team in use, shared ([`Conversation::shared_team`]).
    pub fn shared_team(&self) -> Option<&Arc<Team>> {
        self.conversation.shared_team()
    }

    /// The settings in force (the team's).
    pub fn settings(&self) -> Option<&TeamSettings> {
        self.team().map(|t| &t.settings)
    }

    pub fn store(&self) -> &Store {
        self.conversation.store()
    }

    /// Every stored message, oldest first.
    pub fn messages(&self) -> &[Message] {
        self.conversation.store().messages()
    }

    /// The team task in force after the first `len` messages were stored.
    pub fn team_task_after(&self, len: usize) -> Option<&str> {
        let i = self.team_tasks.partition_point(|(n, _)| *n <= len);
        i.checked_sub(1)
            .and_then(|i| self.team_tasks[i].1.as_deref())
    }

    /// Whether `member` (id) was delivered a prompt whose `[MESSAGE]` is message `at`: a
    /// preview there is what the agent got, not only what it would get.
    pub fn was_delivered(&self, member: &str, at: usize) -> bool {
        self.delivery(member, at).is_some()
    }

    /// The members (ids) delivered a prompt whose `[MESSAGE]` is message `at`, in the order
    /// they were delivered, each once (a transcript lists what each of them got).
    pub fn delivered_at(&self, at: usize) -> Vec<&str> {
        let mut members: Vec<&str> = Vec::new();
        for d in self.deliveries.get(&at).into_iter().flatten() {
            if !members.contains(&d.to.as_str()) {
                members.push(&d.to);
            }
        }
        members
    }

    /// The newest delivery to `member` whose `[MESSAGE]` is message `at`.
    fn delivery(&self, member: &str, at: usize) -> Option<&DeliveryRecord> {
        self.deliveries
            .get(&at)?
            .iter()
            .rev()
            .find(|d| d.to == member)
    }

    /// The team's settings as they were for the prompt `member` was delivered with message
    /// `at` as its `[MESSAGE]` (the settings in force now, with that delivery's window, budgets,
    /// pin-first, policy and compaction), so a scenario cut at `at` opens that prompt again;
    /// `None` when there was no such delivery. The window goes to the team's setting only
    /// when the member has no window of its own.
    pub fn settings_delivered(&self, member: &str, at: usize) -> Option<TeamSettings> {
        let team = self.team()?;
        let used = &self.delivery(member, at)?.settings;
        let mut settings = team.settings.clone();
        if team.member(member).is_some_and(|m| m.window_size.is_none()) {
            settings.window_size = used.window;
        }
        settings.pin_first = used.pin_first;
        settings.max_bytes = used.max_bytes;
        settings.delivery = used.delivery;
        settings.compaction = used.compaction;
        settings.token_estimator = used.tokens;
        settings.max_tokens = used.max_tokens;
        Some(settings)
    }

    /// The simulated agent's reply to `delivery` ([`crate::demo::reply`]), for hosts that
    /// answer in simulation: apply it as `Fact::replied(&delivery.to, text, at)`.
    pub fn simulate_reply(&self, delivery: &Delivery) -> String {
        let store = self.store();
        let current = store
            .position(&delivery.message)
            .and_then(|pos| store.stripped(pos))
            .unwrap_or_default();
        match self.team() {
            Some(team) => crate::demo::reply(
                team,
                delivery,
                current,
                store.team_task(),
                self.conversation.rounds(),
            ),
            None => String::new(),
        }
    }

    // ---------------------------------------------------------------------- preview

    /// The prompt, system flag and explain `member` (id or name) would get with message `at`
    /// (0-based position; the last one when `None`) as its `[MESSAGE]`, with the settings in
    /// force (for a message `member` was delivered: the ones that delivery was built with),
    /// `overrides` on top. Changes nothing. With no message yet it is the skeleton the first
    /// delivery starts from. Cost: O(window + bytes emitted), whatever the history's length.
    pub fn preview(
        &self,
        member: &str,
        at: Option<usize>,
        overrides: &PreviewOverrides,
    ) -> Result<Prompt, PreviewError> {
        let team = self.team().ok_or(PreviewError::NoTeam)?;
        let member = find_member(team, member)?;
        let recipient = Recipient::from_member(member);
        let store = self.store();
        let len = store.len();
        let at = match at {
            Some(at) if at < len => at,
            Some(at) => return Err(PreviewError::NoSuchMessage { at, len }),
            None if len == 0 => {
                let mut settings = BuildSettings::for_member(team, member);
                overrides.apply(&mut settings)?;
                return Ok(context::build_skeleton(
                    &recipient,
                    &settings,
                    store.team_task(),
                ));
            }
            None => len - 1,
        };
        let delivered = self.delivery(&member.id, at);
        // A delivered prompt is rebuilt with the settings it was built with (what-if
        // overrides apply on top); any other point, with the settings in force now.
        let (parent, seen, mut settings) = match delivered {
            Some(d) => (d.parent, d.seen, d.settings.clone()),
            None => (None, at + 1, BuildSettings::for_member(team, member)),
        };
        overrides.apply(&mut settings)?;
        let messages = store.messages();
        let target = Target {
            current: messages[at].id.clone(),
            parent: parent.map(|p| messages[p].id.clone()),
        };
        let as_of = AsOf {
            len: seen,
            team_task: self.team_task_after(seen),
        };
        Ok(context::build_as_of(
            store, &recipient, &target, &settings, as_of,
        )?)
    }

    // ---------------------------------------------------------------- files, derived

    /// The session file: `{"format": "agent-chatter-session/1", "facts": [...]}` (the bytes
    /// of this type's `Serialize`, through [`facts_json`] and [`session_file`], which a host
    /// storing a log in parts uses too: one serializer for both in the page's wasm).
    pub fn export(&self) -> String {
        session_file(&facts_json(&self.facts))
    }

    /// Reads a session file and replays it into a new session. A file that is not JSON, of
    /// another format, with a malformed fact, or whose facts do not replay gives an error
    /// naming the fact index and field; the caller's session stays as it was. The new
    /// session's pending actions are what the host must do now (module doc).
    pub fn import(json_text: &str) -> Result<Session, SessionFileError> {
        Self::replay(file::facts(json_text)?)
    }

    /// A new session with `facts` applied in order; its pending actions are only what the
    /// host must do now. The first refused fact is reported with its index.
    ///
    /// Given owned facts (a file just read, a database's rows) each is moved into the log;
    /// given a slice, each is copied.
    pub fn replay(facts: impl Into<Vec<Fact>>) -> Result<Session, SessionFileError> {
        Self::replay_as(facts.into(), false)
    }

    /// [`Self::replay`], the cap starting over with each team when `cap_resets`. A log
    /// written that way (an agent ran after a team change though the spend before it had
    /// reached the cap) is replayed again so, as it was written (docs/architecture.md §14c).
    fn replay_as(facts: Vec<Fact>, cap_resets: bool) -> Result<Session, SessionFileError> {
        let mut session = Session::new();
        session.cap_resets_on_team_change = cap_resets;
        session.facts.reserve(facts.len());
        // The newest Deliver, moved out of the drained actions (deliveries run one at a time,
        // so it is the in-flight one if any is).
        let mut last_delivery = None;
        let mut facts = facts.into_iter().enumerate();
        while let Some((index, fact)) = facts.next() {
            if session.stopped_by_carried_cap(&fact) {
                let mut all = std::mem::take(&mut session.facts);
                all.push(fact);
                all.extend(facts.map(|(_, f)| f));
                return Self::replay_as(all, true);
            }
            // Deliveries that are over need no prompt: only the newest one's is built, below.
            // (Set before every fact: a `loadScenario` brings a new conversation.)
            session.conversation.defer_prompts(true);
            let kind = fact.kind();
            session
                .apply_owned(fact)
                .map_err(|error| SessionFileError::Replay { index, kind, error })?;
            for action in session.actions.drain(..) {
                if let Action::Deliver(d) = action {
                    last_delivery = Some(d);
                }
            }
        }
        // What the host must do now: the in-flight delivery again, exactly as first emitted,
        // or the wait for a human.
        let built = session.conversation.build_deferred();
        session.conversation.defer_prompts(false);
        let conversation = &session.conversation;
        if conversation.in_flight().is_some() {
            if let Some(mut d) = last_delivery {
                // Checked when it was due (its messages exist): building it cannot fail.
                if let Some(Ok(prompt)) = built {
                    d.prompt = prompt;
                }
                session.actions.push_back(Action::Deliver(d));
            }
        } else if let Some(member) = conversation.waiting_for() {
            let member = member.to_string();
            session.actions.push_back(Action::AwaitHuman { member });
        }
        Ok(session)
    }

    /// The messages and team task as a snapshot v1 (§11), stamped `now`.
    pub fn snapshot(&self, now: Millis) -> Snapshot {
        snapshot::export(self.store(), now)
    }

    /// The session as a scenario (§11b): the team with the settings in force, every message
    /// with its sender and resolved addressees, and the team task. Previewing the scenario
    /// gives the bytes [`Self::preview`] gives for the last message (unless that member was
    /// delivered it with a parent outside its window; see the module doc). `None` before
    /// `setTeam`.
    pub fn to_scenario(&self) -> Option<Scenario> {
        let team = self.team()?.clone();
        Some(Scenario::from_history(
            team,
            self.messages(),
            self.store().team_task(),
        ))
    }
}

fn find_member<'t>(team: &'t Team, name: &str) -> Result<&'t Member, PreviewError> {
    team.find_or_explain(name)
        .map_err(PreviewError::UnknownMember)
}

/// Facts read through the one reader ([`Session::import`]'s, module `file`), so `serde_json::from_str::<Fact>`
/// gives the same errors with field paths.
impl<'de> serde::Deserialize<'de> for Fact {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        file::fact(d)
    }
}

/// `facts` as a JSON array, as a session file holds them.
pub fn facts_json(facts: &[Fact]) -> String {
    serde_json::to_string(facts).expect("facts serialize")
}

/// The session file holding `facts`, a JSON array of facts (as [`facts_json`] writes it):
/// what [`Session::export`] writes, and what a host that stores a log in parts puts together
/// for [`Session::import`].
pub fn session_file(facts: &str) -> String {
    format!("{{\"format\":\"{SESSION_FORMAT}\",\"facts\":{facts}}}")
}

/// Serializes a session as its file (the same JSON as [`Session::export`]).
impl Serialize for Session {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut st = s.serialize_struct("Session", 2)?;
        st.serialize_field("format", SESSION_FORMAT)?;
        st.serialize_field("facts", &self.facts)?;
        st.end()
    }
}
