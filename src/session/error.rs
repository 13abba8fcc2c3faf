//! Why a session refuses something, in the user's words: a fact ([`SessionError`]), a session
//! file ([`SessionFileError`]), a preview ([`PreviewError`]), a member's removal
//! ([`CannotRemove`]). Whatever is refused, the session is unchanged.

use thiserror::Error;

use super::SESSION_FORMAT;
use crate::config::ConfigError;
use crate::context::BuildError;
use crate::conversation::InputError;
use crate::json::{FieldError, JsonSyntaxError};
use crate::message::MemberId;
use crate::scenario::ScenarioError;
use crate::team::NotAMember;

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
    /// A `memberLeft` that cannot be applied now; says why and what to do instead.
    #[error("{0}")]
    CannotLeave(String),
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

/// Why a member cannot leave the team now, in the user's words (the host adds what to do
/// instead, in its own terms).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum CannotRemove {
    /// `member` has spoken (or a run of theirs ended) in this conversation: the history would
    /// no longer be theirs.
    #[error(
        "{name} has spoken in this conversation, so removing {name} would rewrite its history"
    )]
    HasSpoken { member: MemberId, name: String },
}
