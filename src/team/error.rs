//! The error of a team config, in either format: what is wrong and where, in the user's terms.

use thiserror::Error;

use crate::json::{FieldError, JsonSyntaxError};

/// A team config that cannot be used. `member` fields read like `team.members[2] (max)`.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ConfigError {
    #[error(transparent)]
    Syntax(#[from] JsonSyntaxError),
    #[error(transparent)]
    Field(#[from] FieldError),
    #[error("{path}: unsupported {found}, expected 1.1 or 1.2")]
    UnsupportedSchemaVersion { path: String, found: String },
    #[error("{path}: at least {min} members required, found {found}")]
    TooFewMembers {
        path: String,
        min: usize,
        found: usize,
    },
    #[error("{path}: no human member; a team needs at least one, because the first message must come from a human")]
    NoHuman { path: String },
    #[error("{member}: id: duplicate {id:?}, already used by {first}")]
    DuplicateId {
        member: String,
        id: String,
        first: String,
    },
    #[error("{member}: name: {name:?} is the same as the name of {first} once case, spaces, '-' and '_' are ignored; names must differ so [NEXT: …] can tell them apart")]
    DuplicateName {
        member: String,
        name: String,
        first: String,
    },
    #[error("{member}: agentType: missing for an AI member (e.g. \"claude-code\", \"openai-codex\", \"google-gemini\")")]
    MissingAgentType { member: String },
    #[error("{member}: {field}: \"system\" is reserved for system notices, choose another")]
    Reserved { member: String, field: &'static str },
    #[error("{member}: {field}: {reason}")]
    Member {
        member: String,
        field: &'static str,
        reason: String,
    },
}
