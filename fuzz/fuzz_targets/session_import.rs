//! Session files: any input is refused or imported; an imported session exports to a file
//! that imports to the same session (replay is exact).
#![no_main]
use agent_chatter::session::Session;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    if let Ok(session) = Session::import(text) {
        let file = session.export();
        let again = Session::import(&file).expect("an exported session imports");
        assert_eq!(again.export(), file);
        assert_eq!(again.messages(), session.messages());
    }
});
