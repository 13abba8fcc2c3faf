//! `agent-chatter-wasm`: the npm binding of the agent-chatter core (DESIGN §12).
//!
//! Thin by rule: every export converts its JS input with [`js::from_js`], calls the core, and
//! converts the result back with [`js::to_js`]; errors become JS `Error`s with the core's
//! message ([`js::into_error`]). Peer-compatible shapes live in [`peer_shapes`]. The TypeScript
//! declarations of every input and output are in `types.d.ts`, appended to the generated
//! `.d.ts` (no `any` anywhere).

pub mod context_manager;
pub mod conversation;
pub mod js;
pub mod markers;
pub mod peer_shapes;
pub mod preview;

use wasm_bindgen::prelude::*;

#[wasm_bindgen(typescript_custom_section)]
const TYPES: &str = include_str!("types.d.ts");

/// The package version (equal to the crate version and to `package.json`'s).
#[wasm_bindgen]
pub fn version() -> String {
    env!("CARGO_PKG_VERSION").to_string()
}
