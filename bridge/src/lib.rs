//! agent-chatter's native bridge (DESIGN §14): it serves the page on loopback, holds the
//! session as a fact log in SQLite, runs the agent CLIs for the core's `Deliver` actions and
//! streams their output to every page connected.
//!
//! - [`guard`]: who may connect (Host, Origin, token); each rejection names its reason.
//! - [`protocol`]: the page ⇄ bridge frames (DESIGN §14b).
//! - [`store`]: sessions in SQLite, one row per fact, committed before acting on it.
//! - [`files`]: the user's files (team configs, scenarios, instruction files), read with
//!   errors in the user's words.
//! - [`agents`]: the CLIs' commands and stream decoders, and running one delivery.
//! - [`hub`]: the session, its facts and its running agent.
//! - [`server`]: the axum app.
//! - [`chat`]: the terminal conversation.

pub mod agents;
pub mod chat;
pub mod files;
pub mod guard;
pub mod hub;
pub mod protocol;
pub mod server;
pub mod store;
