//! The marker rules of docs/architecture.md §5 (docs/architecture.md §19 (seed 004, final round)),
//! example by example.

use std::borrow::Cow;

use agent_chatter::markers::{
    line_spans, parse, parse_and_strip_routing, spans, strip_all, strip_all_counted, strip_routing,
    strip_routing_counted, DropTargets, Intent, LineKind, MarkerKind, Markers,
};
use agent_chatter::message::Addressee;
use agent_chatter::testing::normalize_identifier;

fn names(markers: &Markers) -> Vec<&str> {
    markers.next.iter().map(|a| a.name.as_str()).collect()
}

fn addr(name: &str, intent: Intent) -> Addressee {
    Addressee {
        name: name.to_string(),
        intent,
    }
}

// ---------------------------------------------------------------------------------------------
// docs/architecture.md §19 (seed 004, round 3), "Examples of Strip Behavior"

#[test]
fn seed_example_1_basic_message_with_multiple_markers() {
    let input = "[FROM:kailai][TEAM_TASK:Design auth][NEXT:max] Let's start planning";
    let m = parse(input);
    assert_eq!(m.from.as_deref(), Some("kailai"));
    assert_eq!(m.team_task.as_deref(), Some("Design auth"));
    assert_eq!(names(&m), ["max"]);
    assert!(!m.done);
    assert_eq!(
        strip_routing(input),
        "[FROM:kailai][TEAM_TASK:Design auth] Let's start planning"
    );
    assert_eq!(strip_all(input), "Let's start planning");
}

#[test]
fn seed_example_2_multiple_next_markers() {
    let input = "[FROM:bob] Task description [NEXT:max][NEXT:carol][NEXT:alice] more text [DONE]";
    let m = parse(input);
    assert_eq!(m.from.as_deref(), Some("bob"));
    assert_eq!(names(&m), ["max", "carol", "alice"]);
    assert!(m.done);
    assert_eq!(
        strip_routing(input),
        "[FROM:bob] Task description more text"
    );
    assert_eq!(strip_all(input), "Task description more text");
}

#[test]
fn seed_example_3_markers_with_extra_whitespace() {
    let input = "[FROM: kailai ]  [TEAM_TASK:  Design system  ]   \n  Let's go  [NEXT:  max  ]  ";
    let m = parse(input);
    assert_eq!(m.from.as_deref(), Some("kailai"));
    assert_eq!(m.team_task.as_deref(), Some("Design system"));
    assert_eq!(names(&m), ["max"]);
    // Whitespace inside kept markers collapses like any other run on the line.
    assert_eq!(
        strip_routing(input),
        "[FROM: kailai ] [TEAM_TASK: Design system ]\nLet's go"
    );
    assert_eq!(strip_all(input), "Let's go");
}

#[test]
fn seed_example_4_multi_line_content() {
    let input = "[FROM:kailai][NEXT:max]\nHere's my analysis:\n1. Point one\n2. Point two\n[DONE]";
    let m = parse(input);
    assert_eq!(names(&m), ["max"]);
    assert!(m.done);
    assert_eq!(
        strip_routing(input),
        "[FROM:kailai]\nHere's my analysis:\n1. Point one\n2. Point two"
    );
    assert_eq!(
        strip_all(input),
        "Here's my analysis:\n1. Point one\n2. Point two"
    );
}

#[test]
fn seed_team_task_dedup_example_history_lines_do_not_repeat_the_task() {
    // docs/architecture.md §19 (seed 004 round 3 §7): the stored message keeps every marker; the
    // context line uses strip_all, so the task appears only in its own prompt section.
    let first = "[FROM:kailai][TEAM_TASK:Design OAuth2 authentication] Let's start";
    let second = "I'll create a PRD [NEXT:carol]";
    assert_eq!(
        parse(first).team_task.as_deref(),
        Some("Design OAuth2 authentication")
    );
    assert_eq!(strip_all(first), "Let's start");
    assert_eq!(strip_all(second), "I'll create a PRD");
    assert_eq!(names(&parse(second)), ["carol"]);
    // The stored-content view keeps the task for audit.
    assert_eq!(strip_routing(first), first);
}

#[test]
fn seed_round_1_example_stored_view_keeps_from_and_team_task() {
    let input = "[FROM:kailai][TEAM_TASK:Design auth][NEXT:max] Let's start";
    assert_eq!(
        strip_routing(input),
        "[FROM:kailai][TEAM_TASK:Design auth] Let's start"
    );
}

// ---------------------------------------------------------------------------------------------
// Parse rules, table-driven

#[test]
fn marker_names_are_case_insensitive_and_values_trimmed() {
    let cases: &[(&str, &[&str])] = &[
        ("[next: a]", &["a"]),
        ("[Next:a]", &["a"]),
        ("[NEXT:   a   ]", &["a"]),
        ("[nExT:\ta\t]", &["a"]),
        ("[NEXT:\u{3000}a\u{3000}]", &["a"]),
    ];
    for (input, want) in cases {
        assert_eq!(names(&parse(input)), *want, "input {input:?}");
    }
    assert!(parse("[done]").done);
    assert!(parse("[Done]").done);
    assert_eq!(parse("[from: Bob ]").from.as_deref(), Some("Bob"));
    assert_eq!(parse("[team_task: x ]").team_task.as_deref(), Some("x"));
    assert_eq!(parse("[drop: all]").drop, Some(DropTargets::All));
}

#[test]
fn whitespace_between_bracket_name_and_colon_is_not_a_marker() {
    for input in [
        "[ NEXT: a]",
        "[NEXT : a]",
        "[ DONE]",
        "[DONE ]",
        "[NE XT: a]",
        "[TEAM TASK: x]",
    ] {
        assert_eq!(parse(input), Markers::default(), "input {input:?}");
        assert_eq!(strip_all(input), input, "input {input:?}");
    }
}

#[test]
fn next_intents_parse_from_the_suffix() {
    let cases: &[(&str, &[(&str, Intent)])] = &[
        ("[NEXT: a]", &[("a", Intent::P2)]),
        ("[NEXT: a !P1]", &[("a", Intent::P1)]),
        ("[NEXT: a!p3]", &[("a", Intent::P3)]),
        ("[NEXT: a  \t!P2 ]", &[("a", Intent::P2)]),
        (
            "[NEXT: a, b !P1, c]",
            &[("a", Intent::P2), ("b", Intent::P1), ("c", Intent::P2)],
        ),
        ("[NEXT: a !P4]", &[("a !P4", Intent::P2)]),
        ("[NEXT: a !X1]", &[("a !X1", Intent::P2)]),
        ("[NEXT: Max Smith !p1]", &[("Max Smith", Intent::P1)]),
        ("[NEXT: !P1]", &[]),
        ("[NEXT: a ! P1]", &[("a ! P1", Intent::P2)]),
        ("[NEXT: a,, ,b]", &[("a", Intent::P2), ("b", Intent::P2)]),
        ("[NEXT: ,]", &[]),
    ];
    for (input, want) in cases {
        let want: Vec<Addressee> = want.iter().map(|(n, i)| addr(n, *i)).collect();
        assert_eq!(parse(input).next, want, "input {input:?}");
    }
}

#[test]
fn next_collects_all_occurrences_in_order() {
    let m = parse("[NEXT: a] text [next: b, c !P3]\nmore [NEXT:d]");
    assert_eq!(
        m.next,
        vec![
            addr("a", Intent::P2),
            addr("b", Intent::P2),
            addr("c", Intent::P3),
            addr("d", Intent::P2)
        ]
    );
}

#[test]
fn first_non_empty_from_wins() {
    let cases: &[(&str, Option<&str>)] = &[
        ("[FROM: a] [FROM: b]", Some("a")),
        ("[FROM:] [FROM: b]", Some("b")),
        ("[FROM:   ] x", None),
        ("x", None),
    ];
    for (input, want) in cases {
        assert_eq!(parse(input).from.as_deref(), *want, "input {input:?}");
    }
}

#[test]
fn last_team_task_wins_and_empty_clears() {
    let cases: &[(&str, Option<&str>)] = &[
        ("[TEAM_TASK: a] [TEAM_TASK: b]", Some("b")),
        ("[TEAM_TASK: a] [TEAM_TASK:]", Some("")),
        ("[TEAM_TASK:  ]", Some("")),
        ("[TEAM_TASK:] [TEAM_TASK: b]", Some("b")),
        ("no task", None),
    ];
    for (input, want) in cases {
        assert_eq!(parse(input).team_task.as_deref(), *want, "input {input:?}");
    }
}

#[test]
fn drop_merges_names_and_all_absorbs_them() {
    let members = |v: &[&str]| {
        Some(DropTargets::Members(
            v.iter().map(|s| s.to_string()).collect(),
        ))
    };
    let cases: &[(&str, Option<DropTargets>)] = &[
        ("[DROP: a, b]", members(&["a", "b"])),
        ("[DROP: a] [DROP: b, a]", members(&["a", "b"])),
        ("[DROP: ALL]", Some(DropTargets::All)),
        ("[DROP: all]", Some(DropTargets::All)),
        ("[DROP: a] [DROP: All]", Some(DropTargets::All)),
        ("[DROP: ALL] [DROP: a]", Some(DropTargets::All)),
        ("[DROP: a, all]", Some(DropTargets::All)),
        ("[DROP:]", None),
        ("[DROP: , ]", None),
        ("[DROP: allx]", members(&["allx"])),
        // DROP names take NEXT's intent suffix, which is ignored (docs/architecture.md §5).
        ("[DROP: max, sarah!P1]", members(&["max", "sarah"])),
        ("[DROP: sarah !p3, sarah]", members(&["sarah"])),
        ("[DROP: max, ALL!P1]", Some(DropTargets::All)),
    ];
    for (input, want) in cases {
        assert_eq!(&parse(input).drop, want, "input {input:?}");
    }
}

#[test]
fn drop_before_next_in_one_message_are_both_parsed() {
    let m = parse("[DROP: ALL] [NEXT: max]");
    assert_eq!(m.drop, Some(DropTargets::All));
    assert_eq!(names(&m), ["max"]);
    assert_eq!(strip_all("[DROP: ALL] [NEXT: max]"), "");
}

#[test]
fn empty_markers_do_nothing_but_are_stripped() {
    let input = "a [NEXT:] b [FROM:] c [DROP:] d [TEAM_TASK:] e";
    let m = parse(input);
    assert!(m.next.is_empty());
    assert_eq!(m.from, None);
    assert_eq!(m.drop, None);
    assert_eq!(m.team_task.as_deref(), Some(""));
    assert_eq!(strip_all(input), "a b c d e");
    assert_eq!(strip_routing(input), "a b [FROM:] c d [TEAM_TASK:] e");
}

#[test]
fn unclosed_next_marker_is_plain_text() {
    let cases = [
        "[NEXT: max and the rest",
        "see [NEXT: a, b",
        "[DONE",
        "[FROM: x",
    ];
    for input in cases {
        assert_eq!(parse(input), Markers::default(), "input {input:?}");
        assert_eq!(strip_all(input), input, "input {input:?}");
    }
}

#[test]
fn marker_value_never_crosses_a_line_break() {
    let input = "[NEXT: max\nand bob] [DONE]";
    let m = parse(input);
    assert!(m.next.is_empty());
    assert!(m.done);
    assert_eq!(strip_all(input), "[NEXT: max\nand bob]");
}

#[test]
fn unclosed_marker_eats_nothing_before_a_later_marker_on_the_next_line() {
    let input = "[TEAM_TASK: oops\n[NEXT: bob] hello";
    let m = parse(input);
    assert_eq!(m.team_task, None);
    assert_eq!(names(&m), ["bob"]);
    assert_eq!(strip_all(input), "[TEAM_TASK: oops\nhello");
}

#[test]
fn value_runs_to_the_first_closing_bracket_and_may_contain_an_opening_one() {
    // As in the seed's pattern `[^\]]*`: `[NEXT: a [DONE]` is one NEXT marker.
    let m = parse("[NEXT: a [DONE]");
    assert_eq!(names(&m), ["a [DONE"]);
    assert!(!m.done);
    let m = parse("[TEAM_TASK: fix a]b] rest");
    assert_eq!(m.team_task.as_deref(), Some("fix a"));
    assert_eq!(strip_all("[TEAM_TASK: fix a]b] rest"), "b] rest");
}

#[test]
fn block_form_team_task_is_text() {
    let input = "Here is the [TEAM_TASK] section\nand more text after it";
    assert_eq!(parse(input), Markers::default());
    assert_eq!(strip_all(input), input);
    assert_eq!(strip_routing(input), input);
}

#[test]
fn done_with_a_value_is_not_a_marker() {
    assert_eq!(parse("[DONE: yes]"), Markers::default());
    assert_eq!(parse("[DONE:]"), Markers::default());
}

// ---------------------------------------------------------------------------------------------
// Fenced code

#[test]
fn markers_inside_fenced_code_are_text() {
    let input = "Use it like this:\n```\n[NEXT: max] [DONE]\n```\n[NEXT: bob]";
    let m = parse(input);
    assert_eq!(names(&m), ["bob"]);
    assert!(!m.done);
    assert_eq!(
        strip_all(input),
        "Use it like this:\n```\n[NEXT: max] [DONE]\n```"
    );
}

#[test]
fn fenced_lines_keep_indentation_inner_whitespace_and_blank_lines() {
    let input =
        "intro   text\n```rust\nfn f() {\n    let  x =  1;\n\n\t[DONE]\n}\n```\nafter  [DONE]";
    assert_eq!(
        strip_all(input),
        "intro text\n```rust\nfn f() {\n    let  x =  1;\n\n\t[DONE]\n}\n```\nafter"
    );
    assert!(parse(input).done);
}

#[test]
fn fence_lines_without_markers_keep_their_indentation() {
    let input = "text\n   ```rust  \n  code\n   ```   \nmore";
    // The closing line's text part (here only whitespace) is trimmed like any text.
    assert_eq!(strip_all(input), "text\n   ```rust  \n  code\n   ```\nmore");
}

#[test]
fn unterminated_fence_runs_to_the_end() {
    let input = "look:\n```\n[NEXT: max]\n  indented  ";
    assert_eq!(parse(input), Markers::default());
    // The whole result is trimmed, so the last line loses only its trailing whitespace.
    assert_eq!(strip_all(input), "look:\n```\n[NEXT: max]\n  indented");
}

#[test]
fn indented_fence_lines_toggle() {
    let input = "  ```\n[NEXT: a]\n  ```  \n[NEXT: b]";
    assert_eq!(names(&parse(input)), ["b"]);
}

#[test]
fn leading_markers_before_a_fence_count_and_the_fence_opens() {
    let input = "[NEXT: max] ```rust [DONE]\nlet a = [1];\n```";
    let m = parse(input);
    assert_eq!(names(&m), ["max"]);
    assert!(!m.done, "text after the opening backticks is code");
    assert_eq!(strip_all(input), "```rust [DONE]\nlet a = [1];\n```");
    assert_eq!(
        strip_routing("[FROM: k]  [NEXT: max]   ```\nx\n```"),
        "[FROM: k] ```\nx\n```"
    );
}

#[test]
fn text_after_a_closing_fence_is_ordinary_text() {
    let input = "```\ncode\n```   [NEXT: max]   thanks";
    assert_eq!(names(&parse(input)), ["max"]);
    assert_eq!(strip_all(input), "```\ncode\n``` thanks");
}

#[test]
fn inline_backticks_do_not_protect_markers() {
    let input = "write `[DONE]` to finish";
    assert!(parse(input).done);
    assert_eq!(strip_all(input), "write ` ` to finish");
}

#[test]
fn two_backticks_do_not_open_a_fence() {
    assert!(parse("``\n[DONE]").done);
}

#[test]
fn a_longer_fence_shows_a_shorter_fence_and_its_markers_as_code() {
    // How an agent explains the syntax in Markdown: a fence of four around a fence of three.
    let input = "Route like this:\n````md\n```\n[NEXT: max] [DONE]\n```\n````\n[NEXT: bob]";
    let m = parse(input);
    assert_eq!(names(&m), ["bob"]);
    assert!(!m.done, "the inner fence's lines are code");
    assert_eq!(
        strip_all(input),
        "Route like this:\n````md\n```\n[NEXT: max] [DONE]\n```\n````"
    );
}

#[test]
fn a_fence_closes_only_with_a_run_at_least_as_long() {
    let cases: &[(&str, &[&str])] = &[
        // A shorter run inside is code: the marker after it stays text.
        ("````\n``` [NEXT: a]\n````\n[NEXT: b]", &["b"]),
        // A longer run closes a shorter fence, and the text after it routes.
        ("```\ncode\n````` [NEXT: a]", &["a"]),
        // An unclosed fence of four swallows the rest, runs of three included.
        ("````\n```\n[NEXT: a]\n```", &[]),
    ];
    for (input, expected) in cases {
        assert_eq!(names(&parse(input)), *expected, "{input:?}");
    }
}

// ---------------------------------------------------------------------------------------------
// Strip rules

#[test]
fn strip_routing_keeps_from_and_team_task_and_removes_the_rest() {
    let input = "[FROM: a] [TEAM_TASK: t] [NEXT: b] [DONE] [DROP: c] hi";
    assert_eq!(strip_routing(input), "[FROM: a] [TEAM_TASK: t] hi");
    assert_eq!(strip_all(input), "hi");
}

#[test]
fn removed_marker_between_words_leaves_one_space() {
    assert_eq!(strip_all("see[NEXT: a]you"), "see you");
    assert_eq!(strip_all("done.[DONE]"), "done.");
}

#[test]
fn removal_never_creates_a_new_marker() {
    for input in [
        "[NE[DONE]XT: a]",
        "[[DONE]NEXT: a]",
        "[NEXT[DONE]: a]",
        "[DO[DONE]NE]",
    ] {
        let out = strip_all(input);
        assert_eq!(parse(&out), Markers::default(), "{input:?} -> {out:?}");
    }
}

#[test]
fn whitespace_collapses_on_every_line_outside_fences() {
    let cases: &[(&str, &str)] = &[
        ("a  b", "a b"),
        ("  a b  ", "a b"),
        ("a\tb", "a\tb"),
        ("a\t\tb", "a b"),
        ("line one  \n\n\n  line   two", "line one\nline two"),
        ("a\r\nb\r\n", "a\nb"),
        ("\n\n  \n", ""),
        ("", ""),
    ];
    for (input, want) in cases {
        assert_eq!(strip_all(input), *want, "input {input:?}");
        assert_eq!(strip_routing(input), *want, "input {input:?}");
    }
}

#[test]
fn unicode_whitespace_follows_rust_is_whitespace() {
    let cases: &[(&str, &str)] = &[
        // U+3000 ideographic space: White_Space.
        ("a\u{3000}\u{3000}b", "a b"),
        ("a\u{3000}b", "a\u{3000}b"),
        ("\u{3000}a\u{3000}", "a"),
        // U+0085 next line: White_Space, but not a line break here.
        ("a\u{85}\u{85}b", "a b"),
        ("\u{85}a [NEXT: x]\u{85}", "a"),
        // U+FEFF zero-width no-break space: NOT White_Space in Rust, so it stays.
        ("\u{FEFF}a\u{FEFF}", "\u{FEFF}a\u{FEFF}"),
        ("\u{FEFF}[DONE]", "\u{FEFF}"),
    ];
    for (input, want) in cases {
        assert_eq!(strip_all(input), *want, "input {input:?}");
    }
}

#[test]
fn lines_left_empty_by_removal_disappear() {
    let input = "first\n[NEXT: a]\n   [DONE]   \nlast";
    assert_eq!(strip_all(input), "first\nlast");
}

#[test]
fn counted_strips_report_how_many_markers_were_removed() {
    let input = "[FROM: a][TEAM_TASK: t] x [NEXT: b][DONE]\n```\n[DONE]\n```";
    assert_eq!(strip_all_counted(input).1, 4);
    assert_eq!(strip_routing_counted(input).1, 2);
    assert_eq!(strip_all_counted("plain").1, 0);
}

// ---------------------------------------------------------------------------------------------
// Spans

#[test]
fn spans_locate_every_marker_outside_code_in_raw_byte_offsets() {
    let input = "é [NEXT: a]\n```\n[DONE]\n```\n[done] [FROM:x]";
    let found: Vec<(&str, MarkerKind, &str)> = spans(input)
        .map(|s| (&input[s.range.clone()], s.kind, &input[s.value.clone()]))
        .collect();
    assert_eq!(
        found,
        vec![
            ("[NEXT: a]", MarkerKind::Next, " a"),
            ("[done]", MarkerKind::Done, ""),
            ("[FROM:x]", MarkerKind::From, "x"),
        ]
    );
}

#[test]
fn line_spans_classify_lines_as_the_parser_reads_them() {
    let input = "hi\n[NEXT: a] ```js\nx\n``` ok\nbye";
    let kinds: Vec<(&str, LineKind)> = line_spans(input)
        .map(|l| (&input[l.range], l.kind))
        .collect();
    assert_eq!(
        kinds,
        vec![
            ("hi", LineKind::Text),
            ("[NEXT: a] ```js", LineKind::FenceOpen { code_at: 13 }),
            ("x", LineKind::Code),
            ("``` ok", LineKind::FenceClose { rest_at: 24 }),
            ("bye", LineKind::Text),
        ]
    );
}

#[test]
fn identifiers_normalise_case_whitespace_hyphens_and_underscores() {
    let cases = [
        ("Max", "max"),
        ("Max Smith", "maxsmith"),
        ("max-smith_2", "maxsmith2"),
        ("  MAX\u{3000}\tX ", "maxx"),
        ("Ünïcode", "ünïcode"),
        ("\u{FEFF}a", "\u{FEFF}a"),
        ("", ""),
    ];
    for (input, want) in cases {
        assert_eq!(normalize_identifier(input), want, "input {input:?}");
    }
}

#[test]
fn a_strip_that_changes_nothing_inside_the_text_borrows_it() {
    // Prose, trimmed ends, a dropped marker-only line or a trailing marker: the view is a
    // piece of the input, so hosts pass its position instead of a copy.
    for text in [
        "plain prose",
        "  padded prose \n",
        "two\nlines",
        "trailing marker [DONE]",
        "[NEXT: max]\nnext line",
    ] {
        assert!(
            matches!(strip_all(text), Cow::Borrowed(_)),
            "{text:?} was copied"
        );
    }
    for (text, view) in [
        ("a  b", "a b"),
        ("see[NEXT: max]you", "see you"),
        ("x [DONE] y", "x y"),
    ] {
        assert_eq!(strip_all(text), Cow::<str>::Owned(view.to_string()));
    }
}

#[test]
fn parse_and_strip_routing_reads_both_in_one_pass() {
    let text = "[FROM: kailai] hi [NEXT: max !P1]\n```\n[NEXT: sarah]\n```\n[DONE]";
    let (markers, view) = parse_and_strip_routing(text);
    assert_eq!(markers, parse(text));
    assert_eq!(view, strip_routing(text));
}
