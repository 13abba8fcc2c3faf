//! Team configs (ours and the peer's cli-config): any input gives a team or an error, and a
//! team that loads either exports to the peer's format and reads back, or is refused for it
//! with a reason (`peer_export_problem`).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    if let Ok(team) = agent_chatter::config::load_team(text) {
        if agent_chatter::peer::cli_config::peer_export_problem(&team).is_some() {
            return;
        }
        let peer = agent_chatter::peer::cli_config::to_peer_config(&team).to_string();
        let again = agent_chatter::config::load_team(&peer).expect("an exported team reads back");
        assert_eq!(again.members.len(), team.members.len());
    }
});
