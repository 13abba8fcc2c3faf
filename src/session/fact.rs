//! The inputs of a session (docs/architecture.md §6b): [`Fact`], one serializable enum whose
//! log *is* the session, and [`Failure`], the kind of an agent's failure as the other agents'
//! context names it (§14c).

use std::sync::Arc;

use serde::Serialize;

use super::file;
use crate::message::{MemberId, Millis, Text};
use crate::scenario::Scenario;
use crate::team::{Team, TeamSettings};
use crate::usage::Usage;

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
    /// `member` (an id) leaves the team from now on (docs/architecture.md §6b): the history
    /// stays as it is (their messages and runs stay theirs, named by their stored speaker),
    /// deliveries queued to them are dropped, and later `[NEXT]`s naming them match no one.
    /// Refused for a member the team does not have, while a run of theirs is in flight, and
    /// when the team without them would not be valid (its only human).
    MemberLeft { member: MemberId, at: Millis },
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
            Fact::MemberLeft { .. } => "memberLeft",
        }
    }
}

/// Facts read through the one reader ([`Session::import`]'s, module `file`), so `serde_json::from_str::<Fact>`
/// gives the same errors with field paths.
impl<'de> serde::Deserialize<'de> for Fact {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        file::fact(d)
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

    /// Whether its notice enters the other agents' later prompts: every failure's does but a
    /// cancel's, the user's own act, which their next message explains (docs/architecture.md §14c).
    pub fn reaches_prompts(self) -> bool {
        self != Failure::Cancelled
    }

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
