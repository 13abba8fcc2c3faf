//! Property tests for the invariants of docs/architecture.md §7 and §9.

mod support;

use agent_chatter::context::{build, BuildSettings, Recipient, Store, Target, TokenEstimator};
use agent_chatter::explain::Fate;
use agent_chatter::message::{MessageId, Millis, Routing, Speaker, SpeakerKind};
use agent_chatter::team::{CompactionStrategy, DeliveryPolicy, ExtraSection};
use agent_chatter::testing::estimate_chars_div4;
use proptest::prelude::*;

/// Text with multi-byte characters, blank lines and long runs, the shapes that break cuts.
fn text() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![
            4 => "[a-z ]{0,40}",
            1 => "[é€😀界]{1,12}",
            1 => Just("\n".to_string()),
            1 => Just("\n\n".to_string()),
            1 => "x{100,600}",
        ],
        0..8,
    )
    .prop_map(|parts| parts.concat())
}

fn speaker() -> impl Strategy<Value = Speaker> {
    (0..6usize, 0..10u8).prop_map(|(i, k)| {
        let kind = match k {
            0..=3 => SpeakerKind::Human,
            4..=8 => SpeakerKind::Ai,
            _ => SpeakerKind::System,
        };
        let id = if kind == SpeakerKind::System {
            "system".to_string()
        } else {
            format!("m{i}")
        };
        Speaker {
            id: id.clone(),
            name: id.clone(),
            display_name: id,
            kind,
        }
    })
}

#[derive(Debug, Clone)]
struct Case {
    store: Store,
    recipient: Recipient,
    target: Target,
    settings: BuildSettings,
}

fn case() -> impl Strategy<Value = Case> {
    let messages = prop::collection::vec((speaker(), text(), any::<bool>(), 0..4usize), 1..30);
    let recipient = (
        prop::sample::select(vec!["claude", "codex", "gemini", "aider"]),
        prop::option::of(text()),
        prop::option::of(text()),
        prop::collection::vec((text(), -2..12i32, any::<bool>()), 0..3),
    );
    let settings = (
        0..12usize,
        any::<bool>(),
        0..6000usize,
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
        prop::option::of(1..1500usize),
    );
    (
        messages,
        recipient,
        settings,
        prop::option::of(text()),
        any::<prop::sample::Index>(),
    )
        .prop_map(
            |(
                msgs,
                (agent_type, sys, file, extras),
                (window, pin_first, max_bytes, parent_policy, proactive, tokens, max_tokens),
                task,
                pick,
            )| {
                let mut store = Store::new();
                for (i, (speaker, content, answers, parent_back)) in msgs.iter().enumerate() {
                    let parent = (*answers && i > 0)
                        .then(|| MessageId::from_seq((i - parent_back.min(&i)).max(1) as u64));
                    let routing = Routing {
                        parent,
                        resolved_names: vec!["m1".into()],
                        ..Routing::default()
                    };
                    store.push(speaker.clone(), content.clone(), routing, Millis(i as u64));
                }
                store.set_team_task(task.as_deref());
                let current_pos = pick.index(store.len());
                let current = store.messages()[current_pos].id.clone();
                let parent = store.messages()[current_pos].routing.parent.clone();
                let (current, parent) = if parent_policy {
                    (
                        parent.clone().unwrap_or(current.clone()),
                        Some(parent.unwrap_or(current)),
                    )
                } else {
                    (current, parent)
                };
                Case {
                    store,
                    recipient: Recipient {
                        id: "m1".into(),
                        agent_type: agent_type.to_string(),
                        system_instruction: sys,
                        instruction_file_text: file,
                        extra_sections: extras
                            .into_iter()
                            .enumerate()
                            .map(|(i, (content, priority, compactable))| ExtraSection {
                                name: format!("x{i}"),
                                content,
                                priority,
                                compactable,
                            })
                            .collect(),
                    },
                    target: Target { current, parent },
                    settings: BuildSettings {
                        window,
                        pin_first,
                        max_bytes,
                        delivery: if parent_policy {
                            DeliveryPolicy::Parent
                        } else {
                            DeliveryPolicy::Latest
                        },
                        compaction: if proactive {
                            CompactionStrategy::Proactive
                        } else {
                            CompactionStrategy::Lazy
                        },
                        tokens: if tokens {
                            TokenEstimator::CharsDiv4
                        } else {
                            TokenEstimator::None
                        },
                        max_tokens,
                    },
                }
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn prompt_and_flag_never_exceed_the_budget(c in case()) {
        let p = build(&c.store, &c.recipient, &c.target, &c.settings).unwrap();
        let total = p.prompt.len() + p.system_flag.as_ref().map_or(0, String::len);
        prop_assert!(total <= c.settings.max_bytes, "{} > {}", total, c.settings.max_bytes);
        prop_assert_eq!(p.explain.total_bytes, total);
    }

    #[test]
    fn a_token_budget_always_holds_beside_the_byte_budget(c in case()) {
        let p = build(&c.store, &c.recipient, &c.target, &c.settings).unwrap();
        if let Some(max_tokens) = c.settings.max_tokens {
            let tokens = p.explain.total_tokens.expect("a token budget reports tokens");
            let recount = estimate_chars_div4(&p.prompt) + p.system_flag.as_deref().map_or(0, estimate_chars_div4);
            prop_assert_eq!(tokens, recount);
            prop_assert!(tokens <= max_tokens, "{} tokens > {}", tokens, max_tokens);
            prop_assert_eq!(p.explain.max_tokens, Some(max_tokens));
        }
        let total = p.prompt.len() + p.system_flag.as_ref().map_or(0, String::len);
        prop_assert!(total <= c.settings.max_bytes);
    }

    #[test]
    fn cuts_never_split_a_character(c in case()) {
        let p = build(&c.store, &c.recipient, &c.target, &c.settings).unwrap();
        // Inputs hold no U+FFFD, so any here would come from a broken cut; and every char of
        // the output is one the inputs or the templates contain.
        prop_assert!(!p.prompt.contains(char::REPLACEMENT_CHARACTER), "replacement char in prompt");
        prop_assert!(p.system_flag.as_deref().is_none_or(|f| !f.contains(char::REPLACEMENT_CHARACTER)), "replacement char in flag");
        for ch in p.prompt.chars().chain(p.system_flag.iter().flat_map(|f| f.chars())) {
            prop_assert!(ch.is_ascii() || "é€😀界…".contains(ch), "unexpected {:?}", ch);
        }
    }

    #[test]
    fn message_is_never_cut_while_a_history_line_remains(c in case()) {
        let p = build(&c.store, &c.recipient, &c.target, &c.settings).unwrap();
        let history_left = p.explain.messages.iter().any(|m| matches!(m.fate, Fate::Included | Fate::Pinned));
        let message_cut = p.explain.truncations.iter().any(|t| t.section == "message");
        prop_assert!(!(history_left && message_cut), "history kept while the message was cut");
    }

    /// Pin-first, whatever the window (docs/architecture.md §9, §19 (seed 002)): the first
    /// message is dropped only after every window line, also when the window reaches it.
    #[test]
    fn under_pin_first_the_first_message_is_trimmed_after_every_window_line(c in case()) {
        let settings = BuildSettings { pin_first: true, ..c.settings.clone() };
        let p = build(&c.store, &c.recipient, &c.target, &settings).unwrap();
        if p.explain.fate_of(0) == Fate::TrimmedForBudget {
            let kept = p.explain.messages.iter().find(|m| matches!(m.fate, Fate::Included | Fate::Pinned));
            prop_assert!(kept.is_none(), "{:?} kept after the first message was trimmed", kept);
        }
        // Nothing trimmed: pin-first changes no byte and no fate of a window reaching message 0.
        let reaches_first = p.explain.current.is_some_and(|cur| settings.window >= cur);
        let trimmed = p.explain.messages.iter().any(|m| m.fate == Fate::TrimmedForBudget);
        if reaches_first && !trimmed {
            let off = BuildSettings { pin_first: false, ..settings };
            let q = build(&c.store, &c.recipient, &c.target, &off).unwrap();
            prop_assert_eq!(&p.prompt, &q.prompt);
            prop_assert_eq!(&p.system_flag, &q.system_flag);
            prop_assert_eq!(&p.explain.messages, &q.explain.messages);
        }
    }

    #[test]
    fn dedup_never_removes_a_human_message(c in case()) {
        let p = build(&c.store, &c.recipient, &c.target, &c.settings).unwrap();
        for m in &p.explain.messages {
            if let Fate::Deduplicated { reason } = m.fate {
                let msg = &c.store.messages()[m.index];
                prop_assert!(msg.speaker.kind != SpeakerKind::Human, "{:?} removed a human message", reason);
            }
        }
    }

    #[test]
    fn explain_sections_add_up_to_the_output(c in case()) {
        let p = build(&c.store, &c.recipient, &c.target, &c.settings).unwrap();
        let in_prompt: Vec<_> = p.explain.sections.iter().filter(|s| !s.in_system_flag && s.bytes > 0).collect();
        let sum: usize = in_prompt.iter().map(|s| s.bytes).sum::<usize>() + 2 * in_prompt.len().saturating_sub(1);
        prop_assert_eq!(sum, p.prompt.len());
    }

    #[test]
    fn section_ranges_tile_the_prompt_with_one_blank_line_between(c in case()) {
        let p = build(&c.store, &c.recipient, &c.target, &c.settings).unwrap();
        let ranges = p.explain.section_ranges(&p.prompt);
        let pieces: Vec<&str> = ranges.iter().map(|r| &p.prompt[r.range.clone()]).collect();
        prop_assert_eq!(pieces.join("\n\n"), p.prompt.clone());
        let names: Vec<&str> = ranges.iter().map(|r| r.name).collect();
        let emitted: Vec<&str> = p.explain.sections.iter()
            .filter(|s| !s.in_system_flag && s.bytes > 0).map(|s| s.name.as_str()).collect();
        prop_assert_eq!(names, emitted);
    }
}

/// Text with markers and marker fragments (no code fences: markers inside fences are text).
fn marked_text() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop::sample::select(vec![
            "[NEXT: m3]",
            "[next:m4 !P1, m5]",
            "[FROM: m0]",
            "[TEAM_TASK: ship]",
            "[TEAM_TASK:]",
            "[DONE]",
            "[DROP: ALL]",
            "[drop: m3]",
            "[NE",
            "XT: m4]",
            "[",
            "]",
            ":",
            " ",
            "  ",
            "\n",
            "hello",
            "界",
            "[TEAM_TASK]",
            "[NEXT:\nm3]",
        ]),
        0..24,
    )
    .prop_map(|parts| parts.concat())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn markers_never_leak_into_prompts(
        texts in prop::collection::vec((0..6usize, marked_text()), 1..12),
        agent_type in prop::sample::select(vec!["claude", "codex", "gemini", "aider"]),
        window in 0..8usize,
    ) {
        let mut store = Store::new();
        for (i, (who, content)) in texts.iter().enumerate() {
            let kind = if *who < 3 { SpeakerKind::Human } else { SpeakerKind::Ai };
            let id = format!("m{who}");
            let speaker = Speaker { id: id.clone(), name: id.clone(), display_name: id, kind };
            store.push(speaker, content.clone(), Routing::default(), Millis(i as u64));
        }
        let recipient = Recipient { id: "m4".into(), agent_type: agent_type.into(), ..Recipient::default() };
        let current = store.latest().unwrap().id.clone();
        let settings = BuildSettings {
            window,
            pin_first: false,
            max_bytes: 1 << 20,
            delivery: DeliveryPolicy::Latest,
            compaction: CompactionStrategy::Lazy,
            tokens: TokenEstimator::None,
            max_tokens: None,
        };
        let p = build(&store, &recipient, &Target { current, parent: None }, &settings).unwrap();
        prop_assert_eq!(agent_chatter::markers::parse(&p.prompt), agent_chatter::markers::Markers::default(), "prompt: {:?}", p.prompt);
    }
}
