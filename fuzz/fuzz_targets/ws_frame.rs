//! The page ⇄ bridge frames (docs/architecture.md §14b): any text decodes to a command or a
//! frame error, never a panic; a page can never smuggle in an agent's reply.
#![no_main]
use agent_chatter::protocol::{decode_command, decode_event, Command};
use agent_chatter::session::Fact;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    if let Ok(Command::Apply { fact }) = decode_command(text) {
        assert!(!matches!(*fact, Fact::Replied { .. } | Fact::Failed { .. }));
    }
    // The page and the chat read the bridge's events with the same reader: no panic either.
    let _ = decode_event(text);
});
