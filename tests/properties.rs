//! Property tests for the invariants of DESIGN §7 and §9.

mod common;

use agent_chatter::context::{
    build, BuildSettings, ExtraSection, Recipient, Store, Target, TokenEstimator,
};
use agent_chatter::explain::{DedupReason, Fate};
use agent_chatter::message::{MessageId, Millis, Routing, Speaker, SpeakerKind};
use agent_chatter::team::{CompactionStrategy, DeliveryPolicy};
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
                (window, pin_first, max_bytes, parent_policy, proactive, tokens),
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

    #[test]
    fn dedup_never_removes_a_human_message(c in case()) {
        let p = build(&c.store, &c.recipient, &c.target, &c.settings).unwrap();
        for m in &p.explain.messages {
            if let Fate::Deduplicated { reason } = m.fate {
                let msg = c.store.get(&m.id).unwrap();
                prop_assert!(msg.speaker.kind != SpeakerKind::Human, "{:?} removed a human message", reason);
                prop_assert!(reason != DedupReason::Parent || msg.id != c.target.current);
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
}
