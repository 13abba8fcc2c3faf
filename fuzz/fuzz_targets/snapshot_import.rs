//! Snapshot import: any input is refused with an error or imported; a refused one leaves the
//! store as it was; and the one reader gives the same result from the text as from the text's
//! parsed `Value` (the page's way in), borrowed strings or not.
#![no_main]
use agent_chatter::context::Store;
use agent_chatter::snapshot::Snapshot;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    let mut store = Store::new();
    match agent_chatter::snapshot::import_str(&mut store, text) {
        Ok(imported) => assert_eq!(imported.messages, store.len()),
        Err(_) => assert!(store.is_empty(), "a refused snapshot changed the store"),
    }
    if let Ok(value) = serde_json::from_str::<serde_json::Value>(text) {
        let from_text = Snapshot::from_json(text).map_err(|e| e.to_string());
        let from_value = Snapshot::from_value(&value).map_err(|e| e.to_string());
        assert_eq!(from_text, from_value, "text and Value read differently");
    }
});
