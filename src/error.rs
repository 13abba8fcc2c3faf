//! Errors of the core, each naming what was wrong and where.
//!
//! Every loader (team config, snapshot, scenario) reads JSON by hand so an error carries the
//! JSON path of the offending value (`messages[3].speaker.id: missing`): the user can go
//! straight to it. The per-format enums live beside their loaders; [`Error`](enum@Error) gathers them for
//! callers that do not care which one failed.

use thiserror::Error;

pub use crate::config::ConfigError;
pub use crate::scenario::ScenarioError;
pub use crate::snapshot::SnapshotError;

/// Text that is not JSON at all. Line and column are 1-based, as editors show them.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("invalid JSON at line {line}, column {column}: {reason}")]
pub struct JsonSyntaxError {
    pub line: usize,
    pub column: usize,
    /// serde_json's description, without its own position suffix.
    pub reason: String,
}

impl From<serde_json::Error> for JsonSyntaxError {
    fn from(e: serde_json::Error) -> Self {
        let full = e.to_string();
        // serde_json appends " at line L column C"; we print the position ourselves.
        let reason = match full.rfind(" at line ") {
            Some(i) => full[..i].to_string(),
            None => full,
        };
        JsonSyntaxError {
            line: e.line(),
            column: e.column(),
            reason,
        }
    }
}

/// A JSON value that is missing, of the wrong type, or out of range. `path` is the JSON path
/// of the value (`team.members[2].agentType`, `messages[0].content`).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum FieldError {
    #[error("{path}: missing")]
    Missing { path: String },
    #[error("{path}: expected {expected}, found {found}")]
    WrongType {
        path: String,
        expected: &'static str,
        found: String,
    },
    #[error("{path}: {reason}")]
    Invalid { path: String, reason: String },
}

impl FieldError {
    /// The JSON path the error is about.
    pub fn path(&self) -> &str {
        match self {
            FieldError::Missing { path }
            | FieldError::WrongType { path, .. }
            | FieldError::Invalid { path, .. } => path,
        }
    }
}

/// Any error of the core. Binding layers (npm, bridge) convert this one type.
#[derive(Debug, Error)]
pub enum Error {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Snapshot(#[from] SnapshotError),
    #[error(transparent)]
    Scenario(#[from] ScenarioError),
}
