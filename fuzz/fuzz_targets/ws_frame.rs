//! The bridge's WebSocket frames (docs/architecture.md §14b): any text decodes to a command or an
//! error message, never a panic; a page can never smuggle in an agent's reply.
#![no_main]
use agent_chatter::session::Fact;
use agent_chatter_bridge::protocol::{decode, Command};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    if let Ok(Command::Apply { fact }) = decode(text) {
        assert!(!matches!(*fact, Fact::Replied { .. } | Fact::Failed { .. }));
    }
});
