//! agent-chatter core.

pub mod assemble;
pub mod budget;
pub mod config;
pub mod context;
pub mod conversation;
pub mod error;
pub mod explain;
mod json;
pub mod markers;
pub mod message;
pub mod scenario;
pub mod snapshot;
pub mod team;
pub mod tokens;
