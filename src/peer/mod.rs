//! The TypeScript peer's (`@testany/agent-chatter-core` 1.1.8) shapes, and their conversion to
//! and from ours, so the pipeline takes only the core's own types and a host only converts.
//!
//! - [`message`]: its messages, speakers, routing (`rawNextMarkers`, `resolvedAddressees`,
//!   `parsedAddressees`) and long intent names (`P1_INTERRUPT`, …), read from and written to
//!   JSON for the npm `ContextManager`; `message::intent_named` and
//!   `message::raw_next_marker_addressees` are the one reading of those two fields, which
//!   the snapshot reader uses too.
//! - Its `cli-config` 1.1/1.2 team files are read and written by [`cli_config`]; members and
//!   settings are read by the rules ours uses too ([`crate::team`]), and one entry point,
//!   [`crate::config::load_team`], tells the two formats apart.
//! - Its `ContextManager` API ([`context_manager`]: options, `addMessage`, `getContextForAgent`,
//!   `assemblePrompt`, snapshots) over the same pipeline the conversation uses.
//! - Its snapshots are read by [`crate::snapshot::import`], the one snapshot reader, which takes
//!   the peer's message shape as well as ours.

pub mod cli_config;
pub mod context_manager;
mod json_writer;
pub mod message;
