//! The four prompt formats of docs/architecture.md §8, compared byte for byte with fixture files.

mod support;

use agent_chatter::context::Recipient;
use agent_chatter::message::Routing;
use agent_chatter::team::ExtraSection;
use support::*;

/// kailai asks max and sarah; max answers (two lines); the prompt goes to sarah.
fn review_store() -> agent_chatter::context::Store {
    let mut store = store_of([
        (
            human("kailai"),
            "Please review the parser.",
            to(&["max", "sarah"]),
        ),
        (
            ai("max"),
            "I found two bugs.\nFirst: off-by-one.",
            Routing::default(),
        ),
    ]);
    store.set_team_task(Some("Ship v1"));
    store
}

fn sarah(agent_type: &str) -> Recipient {
    Recipient {
        system_instruction: Some("  You are Sarah.\n".into()),
        instruction_file_text: Some("Follow the style guide.".into()),
        ..recipient("sarah", agent_type)
    }
}

fn fixture(name: &str) -> String {
    let path = format!(
        "{}/tests/fixtures/prompts/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{path}: {e}"))
        .strip_suffix('\n')
        .map(str::to_string)
        .unwrap_or_default()
}

#[test]
fn claude_prompt_matches_fixture_and_system_goes_to_the_flag_only() {
    let p = latest_prompt(&review_store(), &sarah("claude"), &settings(5, 768 * 1024));
    assert_eq!(p.prompt, fixture("review.claude.txt"));
    assert_eq!(
        p.system_flag.as_deref(),
        Some("You are Sarah.\n\nFollow the style guide.")
    );
    assert!(!p.prompt.contains("You are Sarah"));
}

#[test]
fn codex_prompt_matches_fixture_with_inline_system() {
    let p = latest_prompt(
        &review_store(),
        &sarah("openai-codex"),
        &settings(5, 768 * 1024),
    );
    assert_eq!(p.prompt, fixture("review.codex.txt"));
    assert_eq!(p.system_flag, None);
}

#[test]
fn gemini_prompt_matches_fixture_without_brackets() {
    let p = latest_prompt(&review_store(), &sarah("Gemini"), &settings(5, 768 * 1024));
    assert_eq!(p.prompt, fixture("review.gemini.txt"));
    assert_eq!(p.system_flag, None);
}

#[test]
fn plain_prompt_matches_fixture_for_unknown_agent_type() {
    let p = latest_prompt(&review_store(), &sarah("aider"), &settings(5, 768 * 1024));
    assert_eq!(p.prompt, fixture("review.plain.txt"));
    assert_eq!(p.system_flag, None);
}

#[test]
fn empty_sections_are_not_emitted() {
    let store = store_of([(human("kailai"), "Hi", to(&["max"]))]);
    let p = latest_prompt(&store, &recipient("max", "codex"), &settings(5, 1000));
    assert_eq!(p.prompt, "[MESSAGE]\nHi");
    let p = latest_prompt(&store, &recipient("max", "claude"), &settings(5, 1000));
    assert_eq!(p.system_flag, None);
}

#[test]
fn whitespace_only_instructions_are_treated_as_empty() {
    let store = store_of([(human("kailai"), "Hi", to(&["max"]))]);
    let r = Recipient {
        system_instruction: Some(" \n\t".into()),
        instruction_file_text: Some("Only the file.".into()),
        ..recipient("max", "codex")
    };
    let p = latest_prompt(&store, &r, &settings(5, 1000));
    assert_eq!(p.prompt, "[SYSTEM]\nOnly the file.\n\n[MESSAGE]\nHi");
}

#[test]
fn history_message_with_empty_text_still_gets_its_line() {
    let store = store_of([
        (human("kailai"), "", to(&["max"])),
        (human("kailai"), "Now?", to(&["max"])),
    ]);
    let p = latest_prompt(&store, &recipient("max", "codex"), &settings(5, 1000));
    assert_eq!(p.prompt, "[CONTEXT]\n- kailai -> max: \n\n[MESSAGE]\nNow?");
}

#[test]
fn message_content_with_section_like_text_is_kept_verbatim() {
    // The peer re-finds sections with regexes; content with a blank line and `[` broke it.
    let store = store_of([
        (
            human("kailai"),
            "See below\n[MESSAGE] is a header\n$& $' stay",
            to(&["max"]),
        ),
        (human("kailai"), "Go", to(&["max"])),
    ]);
    let r = Recipient {
        system_instruction: Some("Para one.\n\n[Para two]".into()),
        ..recipient("max", "codex")
    };
    let p = latest_prompt(&store, &r, &settings(5, 10_000));
    assert_eq!(
        p.prompt,
        "[SYSTEM]\nPara one.\n\n[Para two]\n\n[CONTEXT]\n- kailai -> max: See below\n[MESSAGE] is a header\n$& $' stay\n\n[MESSAGE]\nGo"
    );
}

#[test]
fn extra_sections_render_after_team_task_in_each_format() {
    let mut store = store_of([(human("kailai"), "Hi", to(&["max"]))]);
    store.set_team_task(Some("T"));
    let extra = vec![ExtraSection {
        name: "plan".into(),
        content: "1. parse\n2. test".into(),
        priority: 1,
        compactable: false,
    }];
    let cases = [
        (
            "codex",
            "[TEAM_TASK]\nT\n\n[PLAN]\n1. parse\n2. test\n\n[MESSAGE]\nHi",
        ),
        (
            "gemini",
            "Team Task:\nT\n\nplan:\n1. parse\n2. test\n\nLast message:\nHi",
        ),
        ("aider", "T\n\n1. parse\n2. test\n\nHi"),
    ];
    for (agent_type, expected) in cases {
        let r = Recipient {
            extra_sections: extra.clone(),
            ..recipient("max", agent_type)
        };
        assert_eq!(
            latest_prompt(&store, &r, &settings(5, 10_000)).prompt,
            expected,
            "{agent_type}"
        );
    }
}
