//! Snapshot import: any input is refused with an error or imported; a refused one leaves the
//! store as it was.
#![no_main]
use agent_chatter::context::Store;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    let mut store = Store::new();
    match agent_chatter::snapshot::import_str(&mut store, text) {
        Ok(imported) => assert_eq!(imported.messages, store.len()),
        Err(_) => assert!(store.is_empty(), "a refused snapshot changed the store"),
    }
});
