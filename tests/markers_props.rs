//! Property tests for the marker invariants of docs/architecture.md §5.

use agent_chatter::markers::{
    line_spans, parse, spans, strip_all, strip_all_counted, strip_routing, LineKind, Markers,
};
use proptest::prelude::*;

/// Pieces that make markers, near-markers, fences and awkward whitespace likely.
const TOKENS: &[&str] = &[
    "[",
    "]",
    ":",
    ",",
    "!",
    "`",
    "``",
    "```",
    "````",
    "\n",
    "\r\n",
    "\r",
    " ",
    "  ",
    "\t",
    "\u{3000}",
    "\u{85}",
    "\u{FEFF}",
    "\u{2028}",
    "\u{A0}",
    "\u{1680}",
    "\u{2000}",
    "\u{205F}",
    // Non-spaces sharing lead bytes with the multi-byte spaces (CJK punctuation, kana,
    // dashes, quotes, joiner, emoji): the fast scans match spaces on all their bytes.
    "\u{3001}",
    "。",
    "レ",
    "—",
    "“",
    "\u{200B}",
    "\u{200D}",
    "\u{1681}",
    "\u{205E}",
    "✅",
    "日本語",
    "NEXT",
    "next",
    "DONE",
    "done",
    "FROM",
    "TEAM_TASK",
    "DROP",
    "ALL",
    "!P1",
    "!p3",
    "a",
    "bob",
    "é",
    "🦀",
    "[NEXT:",
    "[DONE]",
    "[FROM:",
    "[TEAM_TASK:",
    "[DROP:",
    "[TEAM_TASK]",
    "x y",
];

fn tokens_from(alphabet: &'static [&'static str], max: usize) -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(alphabet), 0..max).prop_map(|v| v.concat())
}

fn marker_text() -> impl Strategy<Value = String> {
    tokens_from(TOKENS, 40)
}

fn marker_text_without_backticks() -> impl Strategy<Value = String> {
    let alphabet: Vec<&'static str> = TOKENS
        .iter()
        .copied()
        .filter(|t| !t.contains('`'))
        .collect();
    let alphabet: &'static [&'static str] = Box::leak(alphabet.into_boxed_slice());
    tokens_from(alphabet, 40)
}

fn any_text() -> impl Strategy<Value = String> {
    prop_oneof![
        marker_text(),
        any::<String>(),
        "[\\[\\]:`\n a-zA-Z_!,]{0,60}"
    ]
}

fn words(s: &Option<String>) -> Option<Vec<&str>> {
    s.as_deref().map(|s| s.split_whitespace().collect())
}

fn non_whitespace(s: &str) -> Vec<char> {
    s.chars().filter(|c| !c.is_whitespace()).collect()
}

fn is_subsequence(small: &[char], big: &[char]) -> bool {
    let mut it = big.iter();
    small.iter().all(|c| it.any(|b| b == c))
}

/// Text lines (outside fences) of a strip output obey the line rules.
fn assert_text_lines_normalised(out: &str) -> Result<(), TestCaseError> {
    if out.is_empty() {
        return Ok(());
    }
    for line in line_spans(out) {
        if line.kind != LineKind::Text {
            continue;
        }
        let l = &out[line.range.clone()];
        prop_assert!(!l.is_empty(), "empty text line in {out:?}");
        prop_assert_eq!(l.trim(), l, "untrimmed line in {:?}", out);
        let chars: Vec<char> = l.chars().collect();
        prop_assert!(
            !chars
                .windows(2)
                .any(|w| w[0].is_whitespace() && w[1].is_whitespace()),
            "double whitespace in {out:?}"
        );
    }
    prop_assert_eq!(out.trim(), out);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn nothing_panics_on_any_text(text in any_text()) {
        let _ = parse(&text);
        let _ = strip_all(&text);
        let _ = strip_routing(&text);
        let _ = spans(&text).count();
        let _ = line_spans(&text).count();
    }

    #[test]
    fn strip_all_leaves_no_marker_and_is_idempotent(text in any_text()) {
        let once = strip_all(&text);
        prop_assert_eq!(parse(&once), Markers::default());
        prop_assert_eq!(spans(&once).count(), 0);
        prop_assert_eq!(strip_all(&once), once.clone());
    }

    #[test]
    fn strip_routing_is_idempotent_and_strip_all_of_it_equals_strip_all(text in any_text()) {
        let stored = strip_routing(&text);
        prop_assert_eq!(strip_routing(&stored), stored.clone());
        prop_assert_eq!(strip_all(&stored), strip_all(&text));
    }

    #[test]
    fn strip_routing_keeps_exactly_from_and_team_task(text in any_text()) {
        let before = parse(&text);
        let after = parse(&strip_routing(&text));
        prop_assert!(after.next.is_empty() && !after.done && after.drop.is_none());
        // Whitespace inside kept markers collapses, so compare words.
        prop_assert_eq!(words(&after.from), words(&before.from));
        prop_assert_eq!(words(&after.team_task), words(&before.team_task));
    }

    #[test]
    fn strip_output_lines_are_normalised_outside_fences(text in any_text()) {
        assert_text_lines_normalised(&strip_all(&text))?;
        assert_text_lines_normalised(&strip_routing(&text))?;
    }

    #[test]
    fn without_fences_every_output_line_is_non_empty_and_trimmed(text in marker_text_without_backticks()) {
        for out in [strip_all(&text), strip_routing(&text)] {
            prop_assert!(out.lines().count() <= text.split('\n').count());
            for line in out.split('\n').filter(|_| !out.is_empty()) {
                prop_assert!(!line.is_empty() && line.trim() == line, "{:?} -> {:?}", text, out);
            }
        }
    }

    #[test]
    fn stripping_only_removes_characters_never_alters_them(text in any_text()) {
        for out in [strip_all(&text), strip_routing(&text)] {
            prop_assert!(out.len() <= text.len());
            prop_assert!(is_subsequence(&non_whitespace(&out), &non_whitespace(&text)));
        }
    }

    #[test]
    fn counted_strip_counts_every_span(text in any_text()) {
        let (out, removed) = strip_all_counted(&text);
        prop_assert_eq!(out, strip_all(&text));
        prop_assert_eq!(removed, spans(&text).count());
    }

    #[test]
    fn spans_are_ordered_bracketed_and_on_char_boundaries(text in any_text()) {
        let mut last_end = 0;
        for span in spans(&text) {
            prop_assert!(span.range.start >= last_end);
            let marker = text.get(span.range.clone());
            prop_assert!(marker.is_some_and(|m| m.starts_with('[') && m.ends_with(']')));
            prop_assert!(!marker.unwrap_or_default().contains('\n'));
            prop_assert!(span.range.start <= span.value.start && span.value.end < span.range.end);
            last_end = span.range.end;
        }
    }

    #[test]
    fn fenced_code_survives_both_strips_byte_for_byte(
        before in marker_text_without_backticks(),
        code in prop::collection::vec(marker_text_without_backticks().prop_map(|s| s.replace('\n', " ")), 1..5),
        after in marker_text_without_backticks(),
    ) {
        let code = code.join("\n");
        let text = format!("{before}\n```\n{code}\n```\n{after}");
        let block = format!("```\n{code}\n```");
        // The block's markers are text: parsing is as if it were not there.
        prop_assert_eq!(parse(&text), parse(&format!("{before}\n{after}")));
        prop_assert!(strip_all(&text).contains(&block));
        prop_assert!(strip_routing(&text).contains(&block));
    }
}

/// The whitespace rule written the obvious way, for text without markers or fences.
fn reference_normalise(text: &str) -> String {
    let mut lines = Vec::new();
    for line in text.split('\n') {
        let mut out = String::new();
        let mut run: Vec<char> = Vec::new();
        for c in line.chars() {
            if c.is_whitespace() {
                run.push(c);
                continue;
            }
            match run.len() {
                0 => {}
                1 if !out.is_empty() => out.push(run[0]),
                _ if !out.is_empty() => out.push(' '),
                _ => {}
            }
            run.clear();
            out.push(c);
        }
        if !out.is_empty() {
            lines.push(out);
        }
    }
    lines.join("\n")
}

/// Long lines of words and whitespace of every kind, to exercise the copy fast path.
fn prose() -> impl Strategy<Value = String> {
    const PIECES: &[&str] = &[
        "word",
        "é",
        "日本",
        "\u{FEFF}",
        " ",
        " ",
        " ",
        "  ",
        "\t",
        "\u{3000}",
        "\u{85}",
        "\u{A0}",
        "\u{2028}",
        "\u{1680}",
        "\n",
        "\r\n",
        "x",
        "longerword",
        "\u{C0}",
        // Bytes the word-at-a-time scan flags that are no whitespace, and the rest of
        // White_Space.
        "\u{1}",
        "\u{1F}",
        "\u{900}",
        "\u{200B}",
        "\u{180E}",
        "\x0b",
        "\x0c",
        "\r",
        "\u{2000}",
        "\u{200A}",
        "\u{2029}",
        "\u{202F}",
        "\u{205F}",
        "a sentence of several ordinary words",
    ];
    tokens_from(PIECES, 200)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    #[test]
    fn whitespace_rule_matches_the_obvious_implementation(text in prose()) {
        prop_assert_eq!(strip_all(&text), reference_normalise(&text));
        prop_assert_eq!(strip_routing(&text), reference_normalise(&text));
    }
}

mod reference_engine {
    //! The fast engine against the plain line-by-line reference (`markers::reference`): the
    //! same spans, lines, meaning and stripped text on every input.
    use super::{any_text, marker_text};
    use agent_chatter::markers::{self, reference, MarkerKind};
    use proptest::prelude::*;

    fn same_as_reference(text: &str) -> Result<(), TestCaseError> {
        prop_assert_eq!(
            markers::spans(text).collect::<Vec<_>>(),
            reference::spans(text)
        );
        prop_assert_eq!(
            markers::line_spans(text).collect::<Vec<_>>(),
            reference::line_spans(text)
        );
        prop_assert_eq!(markers::parse(text), reference::parse(text));
        let owned = |(view, n): (std::borrow::Cow<'_, str>, usize)| (view.into_owned(), n);
        prop_assert_eq!(
            owned(markers::strip_all_counted(text)),
            reference::strip_all_counted(text)
        );
        let routing = reference::strip_routing_counted(text);
        prop_assert_eq!(owned(markers::strip_routing_counted(text)), routing.clone());
        let (parsed, view) = markers::parse_and_strip_routing(text);
        prop_assert_eq!(parsed, reference::parse(text));
        prop_assert_eq!(view, routing.0);
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3000))]

        #[test]
        fn fast_engine_equals_the_reference_on_marker_text(text in marker_text()) {
            same_as_reference(&text)?;
        }

        #[test]
        fn fast_engine_equals_the_reference_on_any_text(text in any_text()) {
            same_as_reference(&text)?;
        }
    }

    #[test]
    fn names_are_ascii_case_insensitive_only() {
        // U+017F (long s) and U+212A (Kelvin) fold to `s` and `k` under Unicode case rules.
        for text in ["[TEAM_TA\u{17F}K: x]", "[TEAM_TAS\u{212A}: x]", "[NEXT: a]"] {
            same_as_reference(text).unwrap();
        }
        assert!(reference::spans("[TEAM_TA\u{17F}K: x]").is_empty());
        assert_eq!(
            reference::spans("[team_task: x]")[0].kind,
            MarkerKind::TeamTask
        );
    }
}
