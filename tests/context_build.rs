//! docs/architecture.md §7: window, pin-first, dedup, route context, and the fates the explain
//! records.

mod support;

use agent_chatter::context::{build, BuildSettings, Target};
use agent_chatter::explain::{DedupReason, Fate};
use agent_chatter::message::{Message, Millis, Routing};
use agent_chatter::team::DeliveryPolicy;
use agent_chatter::testing::repeats_current;
use support::*;

fn fates(p: &agent_chatter::context::Prompt) -> Vec<(usize, Fate)> {
    p.explain
        .messages
        .iter()
        .map(|m| (m.index, m.fate))
        .collect()
}

#[test]
fn explain_lists_window_and_current_and_counts_the_rest_outside() {
    let store = store_of((1..=10).map(|i| (human("k"), format!("m{i}"), Routing::default())));
    let p = latest_prompt(&store, &recipient("max", "codex"), &settings(3, 10_000));
    assert_eq!(
        fates(&p),
        [
            (6, Fate::Included),
            (7, Fate::Included),
            (8, Fate::Included),
            (9, Fate::Current),
        ]
    );
    assert_eq!(p.explain.outside_window, 6);
    assert_eq!(p.explain.fate_of(1), Fate::OutsideWindow);
    assert_eq!(p.explain.window, 3);
}

#[test]
fn pin_first_keeps_the_first_message_and_counts_the_omitted_ones() {
    let store = store_of((1..=6).map(|i| (human("k"), format!("m{i}"), to(&["max"]))));
    let s = BuildSettings {
        pin_first: true,
        ..settings(2, 10_000)
    };
    let p = latest_prompt(&store, &recipient("max", "codex"), &s);
    assert_eq!(
        p.prompt,
        "[CONTEXT]\n- k -> max: m1\n[2 earlier messages omitted]\n- k -> max: m4\n- k -> max: m5\n\n[MESSAGE]\nm6"
    );
    assert_eq!(p.explain.fate_of(0), Fate::Pinned);
    assert_eq!(p.explain.fate_of(1), Fate::OutsideWindow);
}

#[test]
fn pin_first_says_message_in_the_singular() {
    let store = store_of((1..=5).map(|i| (human("k"), format!("m{i}"), to(&["max"]))));
    let s = BuildSettings {
        pin_first: true,
        ..settings(2, 10_000)
    };
    let p = latest_prompt(&store, &recipient("max", "codex"), &s);
    assert!(
        p.prompt
            .contains("- k -> max: m1\n[1 earlier message omitted]\n- k -> max: m3"),
        "{}",
        p.prompt
    );
}

#[test]
fn pin_first_adds_nothing_when_the_window_reaches_the_first_message() {
    let store = store_of([
        (human("k"), "a", to(&["max"])),
        (human("k"), "b", to(&["max"])),
    ]);
    let s = BuildSettings {
        pin_first: true,
        ..settings(5, 10_000)
    };
    let p = latest_prompt(&store, &recipient("max", "codex"), &s);
    assert_eq!(p.prompt, "[CONTEXT]\n- k -> max: a\n\n[MESSAGE]\nb");
}

#[test]
fn ai_to_ai_duplicate_is_removed_and_explained() {
    let store = store_of([
        (human("kailai"), "Hi", to(&["max", "sarah"])),
        (ai("max"), "Hello!", Routing::default()),
        (ai("max"), "Hello!", Routing::default()),
    ]);
    let p = latest_prompt(&store, &recipient("sarah", "codex"), &settings(5, 10_000));
    assert_eq!(
        p.prompt,
        "[CONTEXT]\n- kailai -> max, sarah: Hi\n\n[MESSAGE]\nHello!"
    );
    assert_eq!(
        p.explain.fate_of(1),
        Fate::Deduplicated {
            reason: DedupReason::SameSpeakerAndContent
        }
    );
}

#[test]
fn dedup_by_id_comes_before_speaker_and_content() {
    let m = |id: u64, kind: &str, content: &str| Message {
        id: agent_chatter::message::MessageId::from_seq(id),
        speaker: if kind == "ai" {
            ai("max")
        } else {
            human("max")
        }
        .into(),
        content: content.into(),
        routing: Routing::default(),
        at: Millis(0),
    };
    let cur = m(2, "ai", "x");
    assert_eq!(
        repeats_current(&cur, "x", &cur, "x"),
        Some(DedupReason::SameId)
    );
    assert_eq!(
        repeats_current(&m(1, "ai", "x"), "x", &cur, "x"),
        Some(DedupReason::SameSpeakerAndContent)
    );
    assert_eq!(repeats_current(&m(1, "ai", "y"), "y", &cur, "x"), None);
    assert_eq!(
        repeats_current(&m(1, "human", "x"), "x", &cur, "x"),
        None,
        "human lines are never deduplicated"
    );
}

/// kailai asks max and sarah (msg-1); max answers (msg-2); then sarah's turn.
fn parallel_store() -> agent_chatter::context::Store {
    store_of([
        (human("kailai"), "Which parser?", to(&["max", "sarah"])),
        (
            ai("max"),
            "Use nom.\n```rust\nfn main() {}\n```\nIt is fast.",
            answer_to("msg-1"),
        ),
    ])
}

#[test]
fn latest_policy_gives_the_newest_message_with_the_question_in_context() {
    let store = parallel_store();
    let p = routed_prompt(
        &store,
        &recipient("sarah", "codex"),
        2,
        1,
        &settings(5, 10_000),
    );
    assert_eq!(
        p.prompt,
        "[CONTEXT]\n- kailai -> max, sarah: Which parser?\n\n[MESSAGE]\nUse nom.\n```rust\nfn main() {}\n```\nIt is fast."
    );
}

#[test]
fn latest_policy_reinserts_the_parent_when_it_fell_out_of_the_window() {
    let store = parallel_store();
    let p = routed_prompt(
        &store,
        &recipient("sarah", "claude"),
        2,
        1,
        &settings(0, 10_000),
    );
    assert_eq!(
        p.prompt,
        "[PARENT_CONTEXT]\n(This is the message you are replying to, reinserted for context)\n- kailai: Which parser?\n\n[MESSAGE]\nUse nom.\n```rust\nfn main() {}\n```\nIt is fast."
    );
    assert_eq!(p.explain.fate_of(0), Fate::ParentContext);
}

#[test]
fn parent_policy_gives_the_addressing_message_with_sibling_answers_as_related() {
    let store = parallel_store();
    let s = BuildSettings {
        delivery: DeliveryPolicy::Parent,
        ..settings(5, 10_000)
    };
    let p = routed_prompt(&store, &recipient("sarah", "gemini"), 1, 1, &s);
    assert_eq!(
        p.prompt,
        "Related responses (avoid repeating):\n- max: Use nom.\n[code block omitted]\nIt is fast.\n\nLast message:\nWhich parser?"
    );
    assert_eq!(p.explain.fate_of(0), Fate::Current);
    assert_eq!(p.explain.fate_of(1), Fate::Related);
}

#[test]
fn related_answers_omit_code_blocks_as_the_marker_parser_reads_them() {
    use agent_chatter::testing::summarize_related;
    let cases = [
        (
            "Use nom.\n```rust\nfn main() {}\n```\nIt is fast.",
            "Use nom.\n[code block omitted]\nIt is fast.",
        ),
        // A fence of four holds a fence of three: one block, as the parser reads it.
        (
            "See:\n````md\n```\nx\n```\n````\nDone.",
            "See:\n[code block omitted]\nDone.",
        ),
        // Text after a closing run is text for routing, and here too.
        (
            "```\ncode\n``` so that is it",
            "[code block omitted]\nso that is it",
        ),
        // An unclosed fence runs to the end.
        ("Start\n```\nrest", "Start\n[code block omitted]"),
    ];
    for (answer, shown) in cases {
        assert_eq!(summarize_related(answer), shown, "{answer:?}");
    }
}

#[test]
fn parent_policy_drops_the_receivers_own_last_message_from_context() {
    let store = store_of([
        (ai("sarah"), "Earlier idea.", Routing::default()),
        (human("kailai"), "Thoughts?", to(&["max", "sarah"])),
    ]);
    let s = BuildSettings {
        delivery: DeliveryPolicy::Parent,
        ..settings(5, 10_000)
    };
    let p = routed_prompt(&store, &recipient("sarah", "codex"), 2, 2, &s);
    assert_eq!(p.prompt, "[MESSAGE]\nThoughts?");
    assert_eq!(
        p.explain.fate_of(0),
        Fate::Deduplicated {
            reason: DedupReason::OwnLast
        }
    );
}

#[test]
fn related_answers_are_capped_at_five_newest_first_and_200_chars() {
    let long = "y".repeat(300);
    let mut rows = vec![(human("kailai"), "Q".to_string(), to(&["a"]))];
    for i in 0..7 {
        let content = if i == 6 {
            long.clone()
        } else {
            format!("answer {i}")
        };
        rows.push((ai(&format!("agent{i}")), content, answer_to("msg-1")));
    }
    let store = store_of(rows);
    let s = BuildSettings {
        delivery: DeliveryPolicy::Parent,
        ..settings(5, 100_000)
    };
    let p = routed_prompt(&store, &recipient("me", "codex"), 1, 1, &s);
    let expected_first = format!("- agent6: {}…", "y".repeat(200));
    let related: Vec<&str> = p
        .prompt
        .lines()
        .filter(|l| l.starts_with("- agent"))
        .collect();
    assert_eq!(
        related,
        [
            expected_first.as_str(),
            "- agent5: answer 5",
            "- agent4: answer 4",
            "- agent3: answer 3",
            "- agent2: answer 2"
        ]
    );
}

#[test]
fn unknown_current_message_is_an_error_naming_it() {
    let store = store_of([(human("k"), "a", Routing::default())]);
    let err = build(
        &store,
        &recipient("m", "codex"),
        &Target {
            current: id(9),
            parent: None,
        },
        &settings(5, 100),
    )
    .unwrap_err();
    assert_eq!(err.to_string(), "message msg-9: not in the conversation");
}

#[test]
fn system_notices_appear_in_history_as_system() {
    let store = store_of([
        (human("kailai"), "Go", to(&["max"])),
        (
            agent_chatter::message::Speaker::system(),
            "max failed: timeout after 60 s",
            Routing::default(),
        ),
        (human("kailai"), "Retry", to(&["max"])),
    ]);
    let p = latest_prompt(&store, &recipient("max", "codex"), &settings(5, 10_000));
    assert_eq!(
        p.prompt,
        "[CONTEXT]\n- kailai -> max: Go\n- system -> all: max failed: timeout after 60 s\n\n[MESSAGE]\nRetry"
    );
}
