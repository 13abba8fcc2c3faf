//! agent-chatter's native bridge (docs/architecture.md §14): it serves the page on loopback, holds
//! the session as a fact log in SQLite, runs the agent CLIs for the core's `Deliver` actions and
//! streams their output to every page connected.
//!
//! - [`guard`]: who may connect (Host, Origin, token); each rejection names its reason.
//! - [`store`]: sessions in SQLite, one row per fact, committed before acting on it.
//! - [`token`]: the token of a session database, kept beside it for every launch.
//! - [`files`]: the user's files (team configs, scenarios, instruction files), read with
//!   errors in the user's words.
//! - [`agents`]: the CLIs' commands and stream decoders, and running one delivery.
//! - [`hub`]: the session, its facts and its running agent, owned by one thread (an actor)
//!   the server and the chat reach through a channel.
//! - [`server`]: the axum app; it speaks `agent_chatter::protocol`, the frames the page and
//!   the chat read too.
//! - [`chat`]: the terminal conversation.
//! - [`clock`]: the wall clock, the bridge's one reading of time.
//! - [`debug`]: `--debug` diagnostics on stderr, derived from what the core exposes.

// Public is what the binary (src/main.rs), the tests and the fuzz targets use
// (docs/architecture.md §14, §15); the rest is `pub(crate)`.
#![warn(unreachable_pub)]

pub mod agents;
pub mod browser;
pub mod chat;
pub mod clock;
pub mod data;
pub mod debug;
pub mod doctor;
pub mod files;
pub mod guard;
pub mod hub;
pub mod page;
pub mod server;
pub mod store;
pub mod token;
