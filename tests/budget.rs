//! docs/architecture.md §9: the trim order, the hard bound, and what the explain reports.

mod support;

use agent_chatter::context::{BuildSettings, Recipient};
use agent_chatter::explain::{BudgetStatus, Fate};
use agent_chatter::message::Routing;
use agent_chatter::team::{CompactionStrategy, DeliveryPolicy, ExtraSection};
use agent_chatter::testing::{cut_with_note, headroom_target, truncation_note};
use agent_chatter::text::floor_char_boundary;
use support::*;

fn history(n: usize, len: usize) -> agent_chatter::context::Store {
    let rows = (1..=n).map(|i| {
        (
            human("k"),
            format!("{i:03}{}", "x".repeat(len - 3)),
            to(&["max"]),
        )
    });
    store_of(rows)
}

#[test]
fn floor_char_boundary_never_splits_a_character() {
    let s = "a€b"; // € is 3 bytes at 1..4
    assert_eq!(floor_char_boundary(s, 0), 0);
    assert_eq!(floor_char_boundary(s, 2), 1);
    assert_eq!(floor_char_boundary(s, 3), 1);
    assert_eq!(floor_char_boundary(s, 4), 4);
    assert_eq!(floor_char_boundary(s, 99), 5);
}

#[test]
fn cut_with_note_fits_exactly_and_says_how_much_was_cut() {
    let text = "0123456789".repeat(10);
    let cut = cut_with_note(&text, 40).unwrap();
    assert!(cut.len() <= 40);
    assert!(cut.ends_with(&truncation_note(100 - cut.find('…').unwrap())));
    assert_eq!(cut_with_note(&text, 5), None, "not even the note fits");
    assert_eq!(cut_with_note("short", 5).unwrap(), "short");
}

#[test]
fn oldest_history_lines_go_first_and_are_explained() {
    let store = history(6, 20);
    // Each line "- k -> max: " (12) + 20 = 32 bytes. Full prompt: 10 + 5*32 + 4 + 2 + 10 + 20.
    let full = latest_prompt(&store, &recipient("max", "codex"), &settings(5, 100_000));
    assert_eq!(full.prompt.len(), 10 + 5 * 32 + 4 + 2 + 10 + 20);
    let p = latest_prompt(
        &store,
        &recipient("max", "codex"),
        &settings(5, full.prompt.len() - 1),
    );
    assert!(!p.prompt.contains("- k -> max: 001"));
    assert!(p.prompt.contains("- k -> max: 002"));
    assert_eq!(p.explain.fate_of(0), Fate::TrimmedForBudget);
    assert_eq!(p.explain.fate_of(1), Fate::Included);
    assert_eq!(p.prompt.len(), full.prompt.len() - 33);
}

#[test]
fn message_is_cut_with_a_visible_note_only_after_all_history_is_gone() {
    let store = history(3, 200);
    let p = latest_prompt(&store, &recipient("max", "codex"), &settings(5, 120));
    assert!(!p.prompt.contains("[CONTEXT]"));
    assert!(p.prompt.starts_with("[MESSAGE]\n003xxx"));
    assert!(p.prompt.contains("…[truncated "), "{}", p.prompt);
    assert!(p.prompt.len() <= 120);
    assert_eq!(p.explain.truncations.len(), 1);
    assert_eq!(p.explain.truncations[0].section, "message");
    assert_eq!(p.explain.truncations[0].from_bytes, 200);
}

#[test]
fn system_is_cut_after_the_message() {
    let store = history(1, 100);
    let r = Recipient {
        system_instruction: Some("S".repeat(100)),
        ..recipient("max", "codex")
    };
    // Room for both headers and two small notes, not for the bodies.
    let p = latest_prompt(&store, &r, &settings(5, 90));
    assert!(p.prompt.len() <= 90, "{}", p.prompt.len());
    let cut: Vec<&str> = p
        .explain
        .truncations
        .iter()
        .map(|t| t.section.as_str())
        .collect();
    assert_eq!(cut[0], "message");
    assert!(
        p.prompt.contains("[MESSAGE]"),
        "the message survives as long as anything does: {}",
        p.prompt
    );
}

#[test]
fn claude_flag_counts_against_the_budget() {
    let store = history(1, 10);
    let r = Recipient {
        system_instruction: Some("I".repeat(500)),
        ..recipient("max", "claude")
    };
    let p = latest_prompt(&store, &r, &settings(5, 300));
    let total = p.prompt.len() + p.system_flag.as_ref().map_or(0, String::len);
    assert!(total <= 300);
    assert_eq!(p.explain.total_bytes, total);
    assert!(p.system_flag.unwrap().contains("…[truncated "));
    assert_eq!(p.prompt, "[MESSAGE]\n001xxxxxxx");
}

#[test]
fn budget_smaller_than_any_header_gives_an_empty_prompt_not_an_overflow() {
    let store = history(2, 50);
    let p = latest_prompt(&store, &recipient("max", "codex"), &settings(5, 3));
    assert!(p.prompt.len() <= 3);
    assert!(p
        .explain
        .truncations
        .iter()
        .any(|t| t.section == "message" && t.to_bytes == 0));
}

#[test]
fn related_answers_go_before_history() {
    let store = store_of([
        (human("k"), "old context line", to(&["a", "b"])),
        (human("k"), "Q?", to(&["a", "b"])),
        (ai("a"), "answer from a", answer_to("msg-2")),
    ]);
    let s = BuildSettings {
        delivery: DeliveryPolicy::Parent,
        ..settings(5, 10_000)
    };
    let full = routed_prompt(&store, &recipient("b", "codex"), 2, 2, &s);
    let tight = BuildSettings {
        max_bytes: full.prompt.len() - 1,
        ..s
    };
    let p = routed_prompt(&store, &recipient("b", "codex"), 2, 2, &tight);
    assert!(!p.prompt.contains("[RELATED_CONTEXT]"));
    assert!(p.prompt.contains("old context line"));
    assert_eq!(p.explain.fate_of(2), Fate::TrimmedForBudget);
}

#[test]
fn compactable_extra_sections_are_cut_before_history_highest_priority_first() {
    let store = history(2, 20);
    let r = Recipient {
        extra_sections: vec![
            ExtraSection {
                name: "memory".into(),
                content: "m".repeat(200),
                priority: 8,
                compactable: true,
            },
            ExtraSection {
                name: "tools".into(),
                content: "t".repeat(200),
                priority: 10,
                compactable: true,
            },
            ExtraSection {
                name: "plan".into(),
                content: "p".repeat(200),
                priority: 1,
                compactable: false,
            },
        ],
        ..recipient("max", "codex")
    };
    let full = latest_prompt(&store, &r, &settings(5, 100_000));
    let p = latest_prompt(&store, &r, &settings(5, full.prompt.len() - 50));
    assert_eq!(p.explain.truncations.len(), 1);
    assert_eq!(p.explain.truncations[0].section, "tools");
    assert!(
        p.prompt.contains(&"p".repeat(200)),
        "non-compactable plan untouched"
    );
    assert!(p.prompt.contains("- k -> max: 001"), "history untouched");
}

#[test]
fn status_thresholds_follow_seed_003() {
    assert_eq!(BudgetStatus::of(749, 1000), BudgetStatus::Ok);
    assert_eq!(BudgetStatus::of(750, 1000), BudgetStatus::Warning);
    assert_eq!(BudgetStatus::of(899, 1000), BudgetStatus::Warning);
    assert_eq!(BudgetStatus::of(900, 1000), BudgetStatus::Critical);
    assert_eq!(headroom_target(1000), 749);
}

#[test]
fn proactive_strategy_trims_history_to_just_under_the_warning_line() {
    let store = history(10, 90);
    let lazy = latest_prompt(&store, &recipient("max", "codex"), &settings(9, 1000));
    assert_eq!(lazy.explain.status, BudgetStatus::Critical);
    let s = BuildSettings {
        compaction: CompactionStrategy::Proactive,
        ..settings(9, 1000)
    };
    let p = latest_prompt(&store, &recipient("max", "codex"), &s);
    assert_eq!(p.explain.status, BudgetStatus::Ok);
    assert!(p.prompt.len() <= 749);
    assert!(
        p.prompt.len() > 749 - 103,
        "trims no more than needed: {}",
        p.prompt.len()
    );
    assert_eq!(p.explain.strategy, CompactionStrategy::Proactive);
}

#[test]
fn explain_reports_section_bytes_that_add_up() {
    let mut store = history(3, 10);
    store.set_team_task(Some("Task"));
    let r = Recipient {
        system_instruction: Some("Sys".into()),
        ..recipient("max", "codex")
    };
    let p = latest_prompt(&store, &r, &settings(5, 10_000));
    let names: Vec<&str> = p.explain.sections.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["system", "teamTask", "context", "message"]);
    let sum: usize = p.explain.sections.iter().map(|s| s.bytes).sum();
    assert_eq!(sum + 2 * 3, p.prompt.len());
    assert_eq!(p.explain.total_bytes, p.prompt.len());
}

#[test]
fn token_estimates_are_reported_when_an_estimator_is_set() {
    let store = history(1, 40);
    let s = BuildSettings {
        tokens: agent_chatter::context::TokenEstimator::CharsDiv4,
        max_tokens: None,
        ..settings(5, 10_000)
    };
    let p = latest_prompt(&store, &recipient("max", "codex"), &s);
    // "[MESSAGE]\n" + 40 chars = 50 chars → 13 tokens.
    assert_eq!(p.explain.total_tokens, Some(13));
    assert_eq!(p.explain.sections[0].tokens, Some(13));
    let _ = Routing::default();
}

/// Pin-first under a tight budget (docs/architecture.md §7, §19 (seed 002)), for every window,
/// including those that reach the first message: whenever history is shown, its first line is
/// the pinned first message (it is dropped only after every window line); the
/// `[N earlier messages omitted]` line says exactly how many messages lie between it and the
/// first history line shown, counting those the budget trimmed; and the pinned line never
/// stays without it when messages were skipped.
#[test]
fn under_pin_first_the_omitted_line_counts_what_the_budget_trimmed_too() {
    for (window, max_bytes) in (0..=9).flat_map(|w| (1..=200).map(move |b| (w, b))) {
        let scenario = agent_chatter::scenario::load_scenario(
            &serde_json::json!({
                "team": {"name": "t", "members": [
                    {"name": "kailai", "kind": "human"},
                    {"name": "carol", "kind": "ai", "agentType": "codex"}]},
                "context": {"windowSize": window, "maxBytes": max_bytes, "pinFirst": true},
                "messages": (1..=8).map(|i| serde_json::json!({"from": "kailai", "content": format!("m{i}")})).collect::<Vec<_>>()
            })
            .to_string(),
        )
        .unwrap();
        let prompt = agent_chatter::scenario::preview(&scenario, "carol")
            .unwrap()
            .prompt;
        let Some(context) = prompt
            .split("\n\n")
            .find_map(|s| s.strip_prefix("[CONTEXT]\n"))
        else {
            continue;
        };
        let lines: Vec<&str> = context.lines().collect();
        assert_eq!(
            lines[0], "- kailai -> all: m1",
            "{window}, {max_bytes}: {prompt:?}"
        );
        let shown: Vec<usize> = lines
            .iter()
            .skip(1)
            .filter_map(|l| l.strip_prefix("- kailai -> all: m"))
            .map(|n| n.parse().unwrap())
            .collect();
        // m8 is the [MESSAGE]; the history runs m2..=m7.
        let skipped = shown.first().map_or(6, |first| first - 2);
        let marker = lines
            .iter()
            .find(|l| l.starts_with('['))
            .map(|l| l.to_string());
        let expected = match skipped {
            0 => None,
            1 => Some("[1 earlier message omitted]".to_string()),
            n => Some(format!("[{n} earlier messages omitted]")),
        };
        assert_eq!(marker, expected, "{window}, {max_bytes}: {prompt:?}");
        assert!(prompt.len() <= max_bytes);
    }
}

/// Issue #24: pin-first once the window reaches the first message (docs/architecture.md §7.1,
/// §9, §19 (seed 002)). Widening the window from 10 to 30 messages must not turn the pinned first
/// message into the oldest window line, the first one the budget drops: it is trimmed last
/// whatever the window, so both windows give the same prompt under the same budget. With
/// nothing trimmed, a window that reaches it gives the prompt pin-first off gives, and its
/// fate stays `included`.
#[test]
fn under_pin_first_a_window_reaching_the_first_message_still_trims_it_last() {
    let preview = |window: usize, max_bytes: usize, pin_first: bool| {
        let scenario = agent_chatter::scenario::load_scenario(
            &serde_json::json!({
                "team": {"name": "t", "members": [
                    {"name": "kailai", "kind": "human"},
                    {"name": "carol", "kind": "ai", "agentType": "codex"}]},
                "context": {"windowSize": window, "maxBytes": max_bytes, "pinFirst": pin_first},
                "messages": (1..=30)
                    .map(|i| serde_json::json!({"from": "kailai", "content": format!("m{i:02} {}", "x".repeat(96))}))
                    .collect::<Vec<_>>()
            })
            .to_string(),
        )
        .unwrap();
        agent_chatter::scenario::preview(&scenario, "carol").unwrap()
    };
    let first = format!("- kailai -> all: m01 {}", "x".repeat(96));

    let narrow = preview(10, 1500, true);
    let wide = preview(30, 1500, true);
    for p in [&narrow, &wide] {
        assert_eq!(p.explain.fate_of(0), Fate::Pinned, "{:?}", p.explain);
        let context = p.prompt.strip_prefix("[CONTEXT]\n").unwrap();
        let lines: Vec<&str> = context.lines().collect();
        assert_eq!(lines[0], first, "{}", p.prompt);
        // The omitted line counts every message between m01 and the first window line shown.
        let shown: usize = lines[2][18..20].parse().unwrap();
        assert_eq!(
            lines[1],
            format!("[{} earlier messages omitted]", shown - 2)
        );
        assert!(p.explain.total_bytes <= 1500);
    }
    assert!(wide
        .explain
        .messages
        .iter()
        .any(|m| m.fate == Fate::TrimmedForBudget));
    assert_eq!(wide.prompt, narrow.prompt);

    // Nothing trimmed: the bytes and the fate are those without pin-first.
    let roomy = preview(30, 10_000, true);
    assert_eq!(roomy.prompt, preview(30, 10_000, false).prompt);
    assert!(!roomy.prompt.contains("omitted"));
    assert_eq!(roomy.explain.fate_of(0), Fate::Included);
}
