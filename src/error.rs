//! Errors of the core, each naming what was wrong and where.
//!
//! Every loader (team config, snapshot, scenario) reads JSON by hand so an error carries the
//! JSON path of the offending value (`messages[3].speaker.id: missing`): the user can go
//! straight to it. The per-format enums live beside their loaders; [`Error`](enum@Error) gathers them for
//! callers that do not care which one failed.

use thiserror::Error;

pub use crate::config::ConfigError;
pub use crate::json::{FieldError, JsonSyntaxError};
pub use crate::scenario::ScenarioError;
pub use crate::snapshot::SnapshotError;

/// How an error lists the names a value may take: `"a", "b" or "c"` (each quoted as a JSON
/// string), as in `kind: expected "human" or "ai", found "robot"`.
pub fn choices<'a>(names: impl IntoIterator<Item = &'a str>) -> String {
    let names: Vec<String> = names.into_iter().map(|name| format!("{name:?}")).collect();
    match names.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => names.concat(),
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
