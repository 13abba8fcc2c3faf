//! Errors of the core, each naming what was wrong and where.
//!
//! Every loader (team config, snapshot, scenario) reads JSON by hand so an error carries the
//! JSON path of the offending value (`messages[3].speaker.id: missing`): the user can go
//! straight to it. The per-format enums live beside their loaders; [`Error`](enum@Error) gathers them for
//! callers that do not care which one failed.

use thiserror::Error;

pub use crate::config::ConfigError;
/// How an error lists the names a value may take (kept here for the bindings).
pub use crate::json::choices;
pub use crate::json::{FieldError, JsonSyntaxError};
pub use crate::scenario::ScenarioError;
pub use crate::snapshot::SnapshotError;

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
