//! "Did you mean": a `[NEXT]` name that is no member, and the member it most likely meant
//! (`Team::suggest`, `Team::unknown_addressees`), as the page's composer warns before sending.

use agent_chatter::config::load_team;
use agent_chatter::team::Team;

fn team() -> Team {
    load_team(
        r#"{"name": "Crew", "members": [
        {"name": "kailai", "kind": "human"},
        {"name": "sarah", "displayName": "Sarah Lee", "kind": "ai", "agentType": "codex"},
        {"name": "max", "kind": "ai", "agentType": "claude"},
        {"name": "carol", "kind": "ai", "agentType": "gemini"}]}"#,
    )
    .expect("valid team")
}

fn suggested(name: &str) -> Option<String> {
    team().suggest(name).map(|m| m.name.clone())
}

#[test]
fn a_swapped_letter_suggests_the_member() {
    assert_eq!(suggested("sarha").as_deref(), Some("sarah"));
}

#[test]
fn a_missing_letter_suggests_the_member() {
    assert_eq!(suggested("carl").as_deref(), Some("carol"));
}

#[test]
fn case_spaces_and_dashes_do_not_count_as_typos() {
    assert_eq!(suggested("Sarah-Le").as_deref(), Some("sarah"));
}

#[test]
fn a_name_that_is_a_member_suggests_nothing() {
    assert_eq!(suggested("Sarah Lee"), None);
    assert_eq!(suggested("max"), None);
}

#[test]
fn a_name_far_from_every_member_suggests_nothing() {
    assert_eq!(suggested("bob"), None);
    assert_eq!(suggested(""), None);
}

#[test]
fn the_unknown_next_names_of_a_draft_are_listed_once_with_their_suggestion() {
    let team = team();
    let found: Vec<(String, Option<String>)> = team
        .unknown_addressees("Please [NEXT: sarha, max, zed] and [NEXT: sarha !P1]")
        .into_iter()
        .map(|(name, m)| (name, m.map(|m| m.name.clone())))
        .collect();
    assert_eq!(
        found,
        [
            ("sarha".to_string(), Some("sarah".to_string())),
            ("zed".to_string(), None)
        ]
    );
}

#[test]
fn names_inside_a_code_fence_are_text_not_addressees() {
    assert!(team()
        .unknown_addressees("```\n[NEXT: sarha]\n```\n[NEXT: max]")
        .is_empty());
}
