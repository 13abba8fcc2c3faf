//! The demo scenario that `cargo xtask prompts` previews (examples/demo-scenario.json) stays
//! loadable and shows what it is meant to show.

use agent_chatter::explain::Fate;
use agent_chatter::scenario::{load_scenario, preview, Scenario};

fn demo() -> Scenario {
    load_scenario(include_str!("../examples/demo-scenario.json")).expect("demo loads")
}

#[test]
fn demo_team_has_one_human_and_three_agent_types() {
    let scenario = demo();
    let agents: Vec<(&str, Option<&str>)> = scenario
        .team
        .members
        .iter()
        .map(|m| (m.id.as_str(), m.agent_type.as_deref()))
        .collect();
    assert_eq!(
        agents,
        [
            ("kailai", None),
            ("max", Some("claude-code")),
            ("sarah", Some("openai-codex")),
            ("carol", Some("google-gemini")),
        ]
    );
}

#[test]
fn every_demo_agent_gets_the_team_task_and_the_last_message() {
    let scenario = demo();
    for member in ["max", "sarah", "carol"] {
        let prompt = preview(&scenario, member).expect(member);
        assert!(
            prompt
                .prompt
                .contains("Write the release notes for parser v1"),
            "{member}: {}",
            prompt.prompt
        );
        assert!(
            prompt.prompt.contains("one last pass, then we are done"),
            "{member}"
        );
        assert!(
            !prompt.prompt.contains("[NEXT: max, sarah, carol]"),
            "{member}"
        );
    }
}

#[test]
fn only_claude_gets_a_system_flag_in_the_demo() {
    let scenario = demo();
    let flag = |m| preview(&scenario, m).expect("preview").system_flag;
    assert_eq!(
        flag("max").as_deref(),
        Some("You are Max, the team's writer. Keep drafts short and concrete.")
    );
    assert_eq!(flag("sarah"), None);
    assert_eq!(flag("carol"), None);
}

#[test]
fn carols_own_window_of_two_leaves_the_first_messages_out() {
    let prompt = preview(&demo(), "carol").expect("preview");
    assert_eq!(prompt.explain.window, 2);
    assert_eq!(prompt.explain.fate_of(0), Fate::OutsideWindow);
    assert_eq!(prompt.explain.fate_of(1), Fate::OutsideWindow);
    assert_eq!(prompt.explain.fate_of(2), Fate::Included);
    assert_eq!(prompt.explain.fate_of(4), Fate::Current);
}

#[test]
fn the_embedded_demo_team_is_the_demo_scenarios_team() {
    let team = agent_chatter::demo::team();
    assert_eq!(team.members, demo().team.members);
    assert_eq!(team.name, "Release notes crew");
}

#[test]
fn the_demo_opening_message_is_the_scenarios_first() {
    assert_eq!(
        agent_chatter::demo::OPENING_MESSAGE,
        demo().messages[0].content
    );
}
