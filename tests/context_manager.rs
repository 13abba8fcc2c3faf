//! docs/architecture.md §19 (seed 001 §8 and seed 000 §8.1/§8.5): the `ContextManager` API, one
//! behaviour per test.

mod support;

use agent_chatter::context::MAX_TEAM_TASK_BYTES;
use agent_chatter::explain::Fate;
use agent_chatter::message::{MessageId, Millis, Routing, Speaker, MAX_MESSAGE_BYTES};
use agent_chatter::peer::context_manager::{
    AddMessageError, AgentContextOptions, ContextManager, ManagerOptions,
};
use support::*;

fn manager_with(window: usize, messages: &[(Speaker, &str)]) -> ContextManager {
    let mut cm = ContextManager::new(ManagerOptions {
        context_window_size: window,
        ..ManagerOptions::default()
    });
    for (i, (speaker, content)) in messages.iter().enumerate() {
        cm.add_message(
            speaker.clone(),
            content.to_string(),
            Routing::default(),
            Millis(i as u64),
        )
        .unwrap();
    }
    cm
}

fn contents(cm: &ContextManager, agent: &str, window_override: Option<usize>) -> Vec<String> {
    let opts = AgentContextOptions {
        window_size_override: window_override,
        ..Default::default()
    };
    cm.context_for_agent(agent, "claude", &opts)
        .context_messages
        .into_iter()
        .map(|l| l.content)
        .collect()
}

// --- 8.1 message management ---

#[test]
fn add_message_stores_and_returns_message_with_generated_id() {
    let mut cm = ContextManager::default();
    let m = cm
        .add_message(human("kailai"), "Hi".into(), Routing::default(), Millis(7))
        .unwrap();
    assert_eq!(m.id, MessageId("msg-1".into()));
    assert_eq!(m.content, "Hi");
    let m2 = cm
        .add_message(ai("max"), "Yo".into(), Routing::default(), Millis(8))
        .unwrap();
    assert_eq!(m2.id.as_str(), "msg-2");
}

#[test]
fn add_message_throws_on_missing_speaker_id_and_stores_nothing() {
    let mut cm = ContextManager::default();
    let err = cm
        .add_message(human(""), "Hi".into(), Routing::default(), Millis(0))
        .unwrap_err();
    assert_eq!(err, AddMessageError::MissingSpeakerId);
    assert!(err.to_string().contains("speaker.id"));
    assert!(cm.messages().is_empty());
}

#[test]
fn add_message_refuses_a_message_over_the_size_limit() {
    let mut cm = manager_with(5, &[(human("kailai"), "Hi")]);
    let big = "x".repeat(MAX_MESSAGE_BYTES + 1);
    let err = cm
        .add_message(human("kailai"), big, Routing::default(), Millis(0))
        .unwrap_err();
    assert!(
        err.to_string()
            .contains(&format!("{} bytes", MAX_MESSAGE_BYTES + 1)),
        "{err}"
    );
    assert_eq!(cm.messages().len(), 1);
}

#[test]
fn get_messages_returns_all_messages_in_order() {
    let cm = manager_with(
        5,
        &[(human("kailai"), "a"), (ai("max"), "b"), (ai("sarah"), "c")],
    );
    let got: Vec<_> = cm.messages().iter().map(|m| m.content.as_str()).collect();
    assert_eq!(got, ["a", "b", "c"]);
}

#[test]
fn get_messages_returns_empty_initially_and_latest_is_none() {
    let cm = ContextManager::default();
    assert!(cm.messages().is_empty());
    assert!(cm.latest().is_none());
}

#[test]
fn get_latest_message_returns_last_message() {
    let cm = manager_with(5, &[(human("kailai"), "a"), (ai("max"), "b")]);
    assert_eq!(cm.latest().unwrap().content, "b");
}

// --- 8.2 team task ---

#[test]
fn set_team_task_stores_task_and_get_team_task_is_none_initially() {
    let mut cm = ContextManager::default();
    assert_eq!(cm.team_task(), None);
    assert_eq!(cm.set_team_task("Ship v1"), None);
    assert_eq!(cm.team_task(), Some("Ship v1"));
}

#[test]
fn team_task_of_exactly_5_kib_is_kept_whole() {
    let mut cm = ContextManager::default();
    let task = "a".repeat(MAX_TEAM_TASK_BYTES);
    assert_eq!(cm.set_team_task(&task), None);
    assert_eq!(cm.team_task().unwrap().len(), MAX_TEAM_TASK_BYTES);
}

#[test]
fn team_task_over_5_kib_is_truncated_at_a_char_boundary_with_a_report() {
    let mut cm = ContextManager::default();
    // 3-byte chars: 5120 is not a multiple of 3, so a byte cut would split one.
    let task = "界".repeat(2000);
    let cut = cm.set_team_task(&task).expect("truncation reported");
    assert_eq!(cut.from, 6000);
    assert_eq!(cut.to, 5118);
    assert_eq!(cm.team_task().unwrap(), "界".repeat(1706));
}

// --- 8.3 context preparation ---

#[test]
fn returns_empty_context_when_no_messages() {
    let mut cm = ContextManager::default();
    cm.set_team_task("T");
    let input = cm.context_for_agent("max", "claude", &AgentContextOptions::default());
    assert!(input.context_messages.is_empty());
    assert_eq!(input.current_message, "");
    assert_eq!(input.team_task.as_deref(), Some("T"));
    assert_eq!(input.max_bytes, 768 * 1024);
}

#[test]
fn applies_context_window_size_limit() {
    let msgs: Vec<_> = (1..=8)
        .map(|i| (human("kailai"), format!("m{i}")))
        .collect();
    let refs: Vec<_> = msgs.iter().map(|(s, c)| (s.clone(), c.as_str())).collect();
    let cm = manager_with(3, &refs);
    assert_eq!(contents(&cm, "max", None), ["m5", "m6", "m7"]);
}

#[test]
fn respects_window_size_override() {
    let cm = manager_with(
        3,
        &[
            (human("k"), "a"),
            (human("k"), "b"),
            (human("k"), "c"),
            (human("k"), "d"),
        ],
    );
    assert_eq!(contents(&cm, "max", Some(1)), ["c"]);
}

#[test]
fn window_zero_gives_no_history() {
    let cm = manager_with(0, &[(human("k"), "a"), (human("k"), "b")]);
    assert!(contents(&cm, "max", None).is_empty());
    let cm = manager_with(5, &[(human("k"), "a"), (human("k"), "b")]);
    assert!(contents(&cm, "max", Some(0)).is_empty());
}

#[test]
fn single_message_has_no_context() {
    let cm = manager_with(5, &[(human("k"), "only")]);
    let input = cm.context_for_agent("max", "claude", &AgentContextOptions::default());
    assert!(input.context_messages.is_empty());
    assert_eq!(input.current_message, "only");
}

#[test]
fn deduplicates_ai_to_ai_context_by_speaker_and_content() {
    // max said the same thing twice; sarah gets it once, as the message.
    let cm = manager_with(
        5,
        &[
            (human("kailai"), "Hi"),
            (ai("max"), "Hello!"),
            (ai("max"), "Hello!"),
        ],
    );
    assert_eq!(contents(&cm, "sarah", None), ["Hi"]);
}

#[test]
fn does_not_deduplicate_when_speaker_differs() {
    let cm = manager_with(
        5,
        &[
            (human("kailai"), "Hi"),
            (ai("sarah"), "Hello!"),
            (ai("max"), "Hello!"),
        ],
    );
    assert_eq!(contents(&cm, "carol", None), ["Hi", "Hello!"]);
}

#[test]
fn does_not_deduplicate_human_messages() {
    let cm = manager_with(5, &[(human("kailai"), "Again"), (human("kailai"), "Again")]);
    assert_eq!(contents(&cm, "max", None), ["Again"]);
}

#[test]
fn does_not_deduplicate_a_human_and_an_ai_sharing_a_name() {
    // Same display name, different ids: the peer compares names and loses a message.
    let mut h = human("kailai-h");
    h.name = "kai".into();
    let mut a = ai("kailai-ai");
    a.name = "kai".into();
    let cm = manager_with(5, &[(h, "Same"), (a, "Same")]);
    assert_eq!(contents(&cm, "max", None), ["Same"]);
}

#[test]
fn says_whether_a_context_dropped_an_ai_to_ai_duplicate() {
    // What the npm ContextManager's debug line "Deduplicated context for AI→AI" reports.
    use agent_chatter::peer::context_manager::Asked;
    let dropped = |messages: &[(Speaker, &str)]| {
        let cm = manager_with(5, messages);
        let options = AgentContextOptions::default();
        let asked = Asked {
            end: messages.len(),
            team_task: None,
            agent_id: "sarah",
            options: &options,
        };
        cm.deduplicated_as_of(&asked).unwrap()
    };
    let hello = [(human("kailai"), "Hi"), (ai("max"), "Hello!")];
    assert!(dropped(&[
        hello[0].clone(),
        hello[1].clone(),
        hello[1].clone()
    ]));
    assert!(!dropped(&hello), "no duplicate");
    assert!(
        !dropped(&[(human("kailai"), "Again"), (human("kailai"), "Again")]),
        "human"
    );
    assert!(!dropped(&[]), "no message");
}

#[test]
fn passes_system_instruction_and_instruction_file_text() {
    let cm = manager_with(5, &[(human("k"), "Hi")]);
    let opts = AgentContextOptions {
        system_instruction: Some("Be brief.".into()),
        instruction_file_text: Some("File text.".into()),
        ..Default::default()
    };
    let input = cm.context_for_agent("max", "codex", &opts);
    assert_eq!(input.system_instruction.as_deref(), Some("Be brief."));
    assert_eq!(input.instruction_file_text.as_deref(), Some("File text."));
    let p = cm.assemble_prompt("codex", &input);
    assert_eq!(
        p.prompt,
        "[SYSTEM]\nBe brief.\n\nFile text.\n\n[MESSAGE]\nHi"
    );
}

#[test]
fn passes_max_bytes_to_output() {
    let cm = ContextManager::new(ManagerOptions {
        max_bytes: 4096,
        ..ManagerOptions::default()
    });
    assert_eq!(
        cm.context_for_agent("a", "claude", &AgentContextOptions::default())
            .max_bytes,
        4096
    );
}

// --- 8.4 lifecycle ---

#[test]
fn clear_removes_messages_team_task_and_resets_ids() {
    let mut cm = manager_with(5, &[(human("k"), "a"), (human("k"), "b")]);
    cm.set_team_task("T");
    cm.clear();
    assert!(cm.messages().is_empty());
    assert_eq!(cm.team_task(), None);
    let m = cm
        .add_message(human("k"), "c".into(), Routing::default(), Millis(0))
        .unwrap();
    assert_eq!(m.id.as_str(), "msg-1");
}

// --- 8.5 assembler selection ---

#[test]
fn uses_the_assembler_of_each_agent_type_and_falls_back_to_plain() {
    let cm = manager_with(5, &[(human("k"), "Hi")]);
    let input = cm.context_for_agent("max", "x", &AgentContextOptions::default());
    let cases = [
        ("claude-code", "[MESSAGE]\nHi"),
        ("CLAUDE", "[MESSAGE]\nHi"),
        ("openai-codex", "[MESSAGE]\nHi"),
        ("google-gemini", "Last message:\nHi"),
        ("gemini", "Last message:\nHi"),
        ("my-own-agent", "Hi"),
    ];
    for (agent_type, expected) in cases {
        assert_eq!(
            cm.assemble_prompt(agent_type, &input).prompt,
            expected,
            "{agent_type}"
        );
    }
}

#[test]
fn assemble_prompt_explain_marks_history_and_current() {
    let cm = manager_with(5, &[(human("k"), "a"), (human("k"), "b")]);
    let input = cm.context_for_agent("max", "codex", &AgentContextOptions::default());
    let p = cm.assemble_prompt("codex", &input);
    assert_eq!(p.explain.fate_of(0), Fate::Included);
    assert_eq!(p.explain.fate_of(1), Fate::Current);
}

#[test]
fn strips_markers_from_context_and_current_message() {
    let cm = manager_with(
        5,
        &[
            (
                human("kailai"),
                "[FROM: kailai] [TEAM_TASK: T] Plan it [NEXT: max]",
            ),
            (ai("max"), "Planned. [NEXT: sarah !P1] [DONE]"),
        ],
    );
    let input = cm.context_for_agent("sarah", "codex", &AgentContextOptions::default());
    assert_eq!(input.context_messages[0].content, "Plan it");
    assert_eq!(input.current_message, "Planned.");
}

#[test]
fn export_snapshot_then_import_restores_messages_team_task_and_id_counter() {
    let mut cm = manager_with(5, &[(human("k"), "a"), (ai("max"), "b")]);
    cm.set_team_task("T");
    let snap = agent_chatter::snapshot::export(cm.store(), Millis(99));
    let json = serde_json::to_string(&snap).unwrap();

    let mut other = ContextManager::default();
    agent_chatter::snapshot::import_str(other.store_mut(), &json).unwrap();
    assert_eq!(other.messages(), cm.messages());
    assert_eq!(other.team_task(), Some("T"));
    let next = other
        .add_message(human("k"), "c".into(), Routing::default(), Millis(100))
        .unwrap();
    assert_eq!(next.id.as_str(), "msg-3");
}

#[test]
fn import_snapshot_throws_on_invalid_format_and_keeps_state() {
    let mut cm = manager_with(5, &[(human("k"), "kept")]);
    let err =
        agent_chatter::snapshot::import_str(cm.store_mut(), r#"{"version": 2, "messages": []}"#)
            .unwrap_err();
    assert!(err.to_string().contains("version"), "{err}");
    assert_eq!(cm.messages().len(), 1);
    assert_eq!(cm.messages()[0].content, "kept");
}

#[test]
fn empty_input_assembles_to_an_empty_prompt() {
    let cm = ContextManager::default();
    let input = cm.context_for_agent("max", "codex", &AgentContextOptions::default());
    let p = cm.assemble_prompt("codex", &input);
    assert_eq!(p.prompt, "");
    assert_eq!(p.system_flag, None);
}

mod mirrored_suffix {
    //! A host that keeps the messages itself mirrors only the suffix its prompts read
    //! (`restart_at`): every input and prompt must be the one the whole store gives.
    use super::*;
    use agent_chatter::peer::context_manager::Asked;
    use proptest::prelude::*;

    fn speaker(i: u8) -> Speaker {
        match i % 3 {
            0 => human("kailai"),
            1 => ai("max"),
            _ => ai("sarah"),
        }
    }

    fn manager(window: usize, max_bytes: usize) -> ContextManager {
        ContextManager::new(ManagerOptions {
            context_window_size: window,
            max_bytes,
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]

        #[test]
        fn a_suffix_from_the_window_start_gives_the_same_inputs_and_prompts(
            messages in prop::collection::vec((0u8..3, "[a-c ]{0,12}( \\[NEXT: max\\])?"), 1..30),
            window in 0usize..8,
            window_override in prop::option::of(0usize..12),
            max_bytes in prop::sample::select(vec![40usize, 120, 786_432]),
            extra in 0usize..6,
            task in prop::option::of("[a-z]{1,8}"),
        ) {
            let mut whole = manager(window, max_bytes);
            for (i, (s, content)) in messages.iter().enumerate() {
                whole.add_message(speaker(*s), content.clone(), Routing::default(), Millis(i as u64)).unwrap();
            }
            whole.set_team_task(task.as_deref().unwrap_or(""));
            let end = messages.len();
            let needed = ContextManager::needed(end, whole.window(window_override));
            let first = needed.start.saturating_sub(extra);
            let mut suffix = manager(window, max_bytes);
            suffix.set_team_task(task.as_deref().unwrap_or(""));
            suffix.restart_at(first);
            for (i, (s, content)) in messages.iter().enumerate().skip(first) {
                suffix.add_message(speaker(*s), content.clone(), Routing::default(), Millis(i as u64)).unwrap();
            }
            let options = AgentContextOptions {
                window_size_override: window_override,
                system_instruction: Some("be brief".into()),
                ..Default::default()
            };
            let asked = Asked { end, team_task: whole.team_task(), agent_id: "sarah", options: &options };
            let expected_input = whole.context_for_agent("sarah", "claude", &options);
            prop_assert_eq!(&suffix.context_as_of(&asked).unwrap(), &expected_input);
            for format in ["claude", "codex", "gemini"] {
                let expected = whole.assemble_prompt(format, &expected_input);
                let held = suffix.prompt_as_of(format, &asked).unwrap();
                prop_assert_eq!(&held.prompt, &expected.prompt);
                prop_assert_eq!(&held.system_flag, &expected.system_flag);
                prop_assert_eq!(&held.explain.sections, &expected.explain.sections);
                prop_assert_eq!(&held, &whole.prompt_as_of(format, &asked).unwrap());
                // The explain tells the whole history's story: the window in force, and every
                // message either listed with its fate or counted outside the window.
                prop_assert_eq!(held.explain.window, whole.window(window_override));
                prop_assert_eq!(held.explain.messages.len() + held.explain.outside_window, end);
            }
            // As of an earlier length, the later messages do not exist.
            if end > 1 {
                let earlier = Asked { end: end - 1, ..asked };
                let mut prefix = manager(window, max_bytes);
                prefix.set_team_task(task.as_deref().unwrap_or(""));
                for (i, (s, content)) in messages.iter().enumerate().take(end - 1) {
                    prefix.add_message(speaker(*s), content.clone(), Routing::default(), Millis(i as u64)).unwrap();
                }
                prop_assert_eq!(
                    whole.context_as_of(&earlier).unwrap(),
                    prefix.context_for_agent("sarah", "claude", &options)
                );
            }
        }
    }

    #[test]
    fn a_window_reaching_before_the_held_suffix_is_refused_not_cut() {
        let mut cm = manager(5, 786_432);
        cm.restart_at(10);
        for i in 0..3 {
            cm.add_message(
                human("kailai"),
                format!("m{i}"),
                Routing::default(),
                Millis(i),
            )
            .unwrap();
        }
        let options = AgentContextOptions::default();
        let asked = Asked {
            end: 13,
            team_task: None,
            agent_id: "max",
            options: &options,
        };
        let err = cm.context_as_of(&asked).unwrap_err();
        assert_eq!((err.needed, err.held), (7..13, 10..13));
    }
}

#[test]
fn a_message_cut_by_the_budget_is_critical_and_a_dropped_one_is_listed() {
    let options = AgentContextOptions::default();
    for (max_bytes, dropped) in [(5usize, true), (70, false)] {
        let mut cm = ContextManager::new(ManagerOptions {
            context_window_size: 5,
            max_bytes,
        });
        let question =
            "the question that is rather long for the budget it is given here, ".repeat(2);
        cm.add_message(human("kailai"), question, Routing::default(), Millis(1))
            .unwrap();
        let out = cm.assemble_prompt("codex", &cm.context_for_agent("max", "codex", &options));
        assert!(out.prompt.len() <= max_bytes);
        assert_eq!(
            out.explain.status,
            agent_chatter::explain::BudgetStatus::Critical
        );
        assert!(out
            .explain
            .truncations
            .iter()
            .any(|t| t.section == "message"));
        let fate = out.explain.messages[0].fate;
        let expected = if dropped {
            Fate::TrimmedForBudget
        } else {
            Fate::Current
        };
        assert_eq!(fate, expected, "max_bytes {max_bytes}: {:?}", out.prompt);
    }
}

#[test]
fn an_assembler_input_takes_its_system_instruction_as_text_or_as_lines() {
    let read = |value: &str| {
        let json = format!(
            r#"{{"contextMessages": [], "currentMessage": "hi", "teamTask": null, "maxBytes": 100, "systemInstruction": {value}}}"#
        );
        serde_json::from_str::<agent_chatter::assemble::AssemblerInput>(&json)
            .map(|input| input.system_instruction)
            .map_err(|e| e.to_string())
    };
    assert_eq!(read(r#"" Be brief. ""#), Ok(Some(" Be brief. ".into())));
    assert_eq!(
        read(r#"["You are Max.", "", "  ", "Be brief. "]"#),
        Ok(Some("You are Max.\nBe brief.".into()))
    );
    assert_eq!(read("null"), Ok(None));
    assert_eq!(read("[]"), Ok(None));
    assert!(read("5")
        .unwrap_err()
        .contains("expected a string or an array of strings"));
}
