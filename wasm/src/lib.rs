//! `agent-chatter-wasm`: the npm binding of the agent-chatter core (docs/architecture.md §12).
//!
//! Exports: `version`, `parseMessage`/`stripAll`/`stripRouting` ([`markers`]), `preview` and
//! the `Scenario` class ([`preview`]), the `Conversation` state machine ([`conversation`]),
//! and `PromptEngine`, the wasm half of `ContextManager`, the drop-in for the TypeScript
//! peer's class whose JS half (`wasm/npm/context-manager.js`) keeps the messages
//! ([`prompt_engine`]).
//!
//! Thin by rule: every export converts its JS input ([`js::from_js`], [`js::json_text`],
//! [`js::string_arg`]), calls the core, and converts the result back with [`js::to_js`];
//! errors become JS `Error`s with the core's message ([`js::into_error`]). The peer's shapes
//! and their conversion live in the core's `peer` module. The TypeScript declarations of every input
//! and output are in `types.d.ts`, appended to the generated `.d.ts`: generated from the Rust
//! types by `tests/typescript.rs`, which fails when the committed file is not what they give
//! (no `any` anywhere; `wasm/js/types.test.mjs` checks real outputs against them).

pub mod conversation;
pub mod inbox;
pub mod js;
pub mod markers;
pub mod preview;
pub mod prompt_engine;

use wasm_bindgen::prelude::*;

#[wasm_bindgen(typescript_custom_section)]
const TYPES: &str = include_str!("types.d.ts");

/// The package version (equal to the crate version and to `package.json`'s).
#[wasm_bindgen]
pub fn version() -> String {
    env!("CARGO_PKG_VERSION").to_string()
}
