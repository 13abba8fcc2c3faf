//! Scenario preview on any JSON: no panic; when it loads, every member's prompt plus its
//! system flag fits `maxBytes` (String guarantees UTF-8, so no character is ever split).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    let Ok(scenario) = agent_chatter::scenario::load_scenario(text) else {
        return;
    };
    for member in &scenario.team.members {
        if let Ok(p) = agent_chatter::scenario::preview(&scenario, &member.id) {
            let total = p.prompt.len() + p.system_flag.as_ref().map_or(0, String::len);
            assert!(
                total <= scenario.team.settings.max_bytes,
                "{total} > max bytes"
            );
            assert_eq!(p.explain.total_bytes, total);
        }
    }
});
