//! # agent-chatter core
//!
//! The context manager of an agent team conversation, as a pure state machine. This crate
//! contains no I/O, no clock and no randomness: it never spawns an agent, reads a file or
//! asks the time. Facts come in as method calls (with the time as [`message::Millis`]), and
//! what must happen comes out as [`conversation::Action`]s that the host performs — the
//! bridge with real agent CLIs, the web page with a person typing the replies, tests with
//! scripted answers. The same code runs natively and on `wasm32-unknown-unknown`.
//!
//! ## Inputs: facts
//!
//! Every host — the page, the bridge, the terminal chat, the npm `Conversation` — holds one
//! [`session::Session`] and feeds it [`session::Fact`]s (docs/architecture.md §6b). A fact is plain
//! data (camelCase JSON), so the log of facts *is* the session: persisting it and replaying it
//! anywhere gives the same messages, actions and prompt bytes.
//!
//! | fact | meaning |
//! |---|---|
//! | [`Fact::SetTeam`](session::Fact::SetTeam) | a team was loaded (resets everything) |
//! | [`Fact::SetSettings`](session::Fact::SetSettings) | window, budgets (`maxBytes`, `maxTokens`), policy changed; the conversation goes on |
//! | [`Fact::Human`](session::Fact::Human) | a human typed a message (raw, markers included) |
//! | [`Fact::Replied`](session::Fact::Replied) | the agent of the pending delivery answered (its final text) |
//! | [`Fact::Failed`](session::Fact::Failed) | that agent timed out, crashed or gave broken output |
//!
//! [`Session::apply`](session::Session::apply) refuses a fact that does not fit (a reply
//! from an agent that is not running, a first message from an AI) and then changes nothing.
//!
//! ## Actions
//!
//! Drained with [`Session::poll_action`](session::Session::poll_action) until it returns
//! `None`:
//!
//! | action | the host must |
//! |---|---|
//! | [`Deliver`](conversation::Action::Deliver) | run agent `to` with `prompt.prompt` on stdin (and `prompt.system_flag` as Claude's `--append-system-prompt`), then apply exactly one outcome fact |
//! | [`AwaitHuman`](conversation::Action::AwaitHuman) | ask that human to speak (any human may still buzz in with `[FROM: x]`) |
//! | [`Finished`](conversation::Action::Finished) | stop: `[DONE]` was said; the next human message reopens |
//! | [`Notice`](conversation::Action::Notice) | show it; never fatal |
//!
//! ## A run loop
//!
//! ```
//! use agent_chatter::config::load_team;
//! use agent_chatter::conversation::Action;
//! use agent_chatter::message::Millis;
//! use agent_chatter::session::{Fact, PreviewOverrides, Session};
//!
//! let team = load_team(r#"{"id": "t", "name": "Review", "members": [
//!     {"id": "kailai", "name": "kailai", "displayName": "Kailai", "kind": "human"},
//!     {"id": "max", "name": "max", "displayName": "Max", "kind": "ai", "agentType": "claude"},
//!     {"id": "sarah", "name": "sarah", "displayName": "Sarah", "kind": "ai", "agentType": "codex"}
//! ]}"#).expect("valid team");
//!
//! let mut session = Session::new();
//! session.apply(&Fact::set_team(team)).expect("a valid team");
//! let mut now = 0;
//! session
//!     .apply(&Fact::human("[TEAM_TASK: ship v1] Review the parser [NEXT: max]", Millis(now)))
//!     .expect("a human spoke first");
//!
//! while let Some(action) = session.poll_action() {
//!     now += 1;
//!     match action {
//!         Action::Deliver(d) => {
//!             // A real host runs the agent's CLI here, prompt on stdin (and persists each
//!             // fact before performing what it causes).
//!             let reply = match d.to.as_str() {
//!                 "max" => "Two bugs in the window code. [NEXT: sarah]",
//!                 _ => "Agreed, fixing both. [DONE]",
//!             };
//!             if d.to == "sarah" {
//!                 // sarah (codex) sees the task, kailai's request as history, max's answer as
//!                 // the message, with markers stripped.
//!                 assert_eq!(
//!                     d.prompt.prompt,
//!                     "[TEAM_TASK]\nship v1\n\n[CONTEXT]\n- kailai -> max: Review the parser\n\n\
//!                      [MESSAGE]\nTwo bugs in the window code."
//!                 );
//!             }
//!             session.apply(&Fact::replied(&d.to, reply, Millis(now))).expect("pending delivery");
//!         }
//!         Action::AwaitHuman { member } => println!("waiting for {member}"),
//!         Action::Finished => println!("done"),
//!         Action::Notice(notice) => println!("notice: {notice:?}"),
//!     }
//! }
//! assert_eq!(session.messages().len(), 3);
//!
//! // Time travel and what-if: what sarah would get for message #1 with no history window,
//! // without changing the session.
//! let what_if = PreviewOverrides { window_size: Some(0), ..PreviewOverrides::default() };
//! let p = session.preview("sarah", Some(1), &what_if).expect("a member and a message");
//! assert_eq!(p.prompt, "[TEAM_TASK]\nship v1\n\n[MESSAGE]\nTwo bugs in the window code.");
//!
//! // The fact log is the session: replayed anywhere, it gives the same bytes.
//! let file = session.export();
//! assert_eq!(Session::import(&file).expect("replays").messages(), session.messages());
//! ```
//!
//! Underneath, [`conversation::Conversation`] is the routing state machine itself
//! (`handle_human_input`, `handle_agent_replied`, `handle_agent_failed`, `poll_action`);
//! the session adds the fact log, replay, previews and the derived files. [`demo::reply`] is
//! the simulated agent the page and the bridge use when no real CLI answers.
//!
//! ## The pipeline of one prompt (docs/architecture.md §7–§9)
//!
//! [`markers`] parse and strip routing markers → [`context`] windows the history, strips it,
//! removes AI→AI duplicates (`context::dedup`) and adds route context (`context::route`)
//! → [`assemble`] lays it out in the recipient's format (`assemble::claude`,
//! `assemble::codex`, `assemble::gemini`, `assemble::plain`) → `budget` trims it so
//! `prompt + system_flag <= max_bytes`, always, and renders it once. Every step records why
//! each message is in or out: [`explain::Explain`].
//!
//! One prompt costs O(window + bytes emitted), independent of the history's length: each
//! message is stripped once, when stored ([`context::Store`]).
//!
//! ## Other entry points
//!
//! - [`session`]: files (`agent-chatter-session/1`), [`Session::snapshot`](session::Session::snapshot),
//!   [`Session::to_scenario`](session::Session::to_scenario).
//! - [`peer::context_manager::ContextManager`]: the TypeScript peer's `ContextManager` API over the
//!   same pipeline (the npm package's drop-in class).
//! - [`scenario`]: one JSON file (team, settings, messages) → the exact prompt of a member,
//!   shared by the CLI, the npm package and the page.
//! - [`config`]: team configs, ours and the peer's `cli-config` 1.1/1.2 (auto-detected), read
//!   into a validated [`team::Team`]; [`snapshot`]: snapshot v1 export/import, validated before
//!   anything changes. Each format has one reader, whatever the way in (text, a parsed value,
//!   serde), and its errors name the JSON path of what is wrong.
//! - [`peer`]: the TypeScript peer's shapes — messages, routing and intents
//!   ([`peer::message`]), its `cli-config` ([`peer::cli_config`]) and its `ContextManager`
//!   API ([`peer::context_manager`]) — converted at the edge, so the pipeline takes only ours.
//! - [`transcript`]: a session as people read it (who said what to whom, each delivery's exact
//!   prompt), as Markdown, self-contained HTML or JSON, for the CLI's `export` and the page.
//! - [`protocol`]: the page ⇄ bridge frames, one set of types for the bridge, the page and the
//!   terminal chat.
//! - [`library`]: the session library's rules (names, forks, the first message, search), the
//!   same in the bridge's store and the page's.

// The public surface is what the hosts (docs/architecture.md §2: the npm binding, the page, the
// bridge) and the crate's benches, fuzz targets, examples and tests (§15) use; the rest is
// `pub(crate)`.
#![warn(unreachable_pub)]

pub mod activity;
pub mod assemble;
mod budget;
pub mod config;
pub mod context;
pub mod conversation;
pub mod demo;
pub mod error;
pub mod explain;
mod hash;
mod json;
/// Serde readers that take JSON objects only (not a struct's fields as an array).
pub use json::objects;
/// JSON with every object's keys sorted, whatever serde_json's map order is in this build.
pub use json::sorted_keys;
/// Reads outside JSON with a serde derive; errors name the JSON path in the core's words.
pub use json::{from_text as read_json, ReadError};
pub mod library;
pub mod markers;
pub mod message;
pub mod peer;
pub mod protocol;
pub mod scenario;
pub mod session;
pub mod snapshot;
pub mod team;
#[cfg(any(test, feature = "testing"))]
pub mod testing;
pub mod text;
pub mod tokens;
pub mod transcript;
pub mod usage;
