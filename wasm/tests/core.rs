//! A meaningful subset of the core's behaviour, run on wasm32 in Node: markers, a prompt
//! build, a snapshot roundtrip. Catches anything that differs between native and wasm32
//! (clock use, integer widths, panics that abort).
#![cfg(target_arch = "wasm32")]

use agent_chatter::assemble::AssemblerInput;
use agent_chatter::markers::{self, DropTargets, Intent};
use agent_chatter::message::{Millis, Routing, Speaker, SpeakerKind};
use agent_chatter::peer::context_manager::{AgentContextOptions, ContextManager, ManagerOptions};
use agent_chatter::snapshot;
use wasm_bindgen_test::wasm_bindgen_test;

fn speaker(id: &str, kind: SpeakerKind) -> Speaker {
    Speaker {
        id: id.into(),
        name: id.into(),
        display_name: id.into(),
        kind,
    }
}

#[wasm_bindgen_test]
fn markers_parse_and_strip_on_wasm32() {
    let text = "[FROM: kailai] go [NEXT: max !P1, sarah] [DROP: ALL] [TEAM_TASK: t] [DONE]";
    let m = markers::parse(text);
    assert_eq!(m.from.as_deref(), Some("kailai"));
    assert_eq!(
        m.next
            .iter()
            .map(|a| (a.name.as_str(), a.intent))
            .collect::<Vec<_>>(),
        [("max", Intent::P1), ("sarah", Intent::P2)]
    );
    assert_eq!(m.drop, Some(DropTargets::All));
    assert!(m.done);
    assert_eq!(markers::strip_all(text), "go");
    assert_eq!(
        markers::strip_routing(text),
        "[FROM: kailai] go [TEAM_TASK: t]"
    );
}

#[wasm_bindgen_test]
fn claude_prompt_is_built_with_the_system_part_in_the_flag_only() {
    let mut cm = ContextManager::new(ManagerOptions::default());
    cm.add_message(
        speaker("kailai", SpeakerKind::Human),
        "Plan it [NEXT: max]".into(),
        Routing::default(),
        Millis(1),
    )
    .expect("stored");
    cm.add_message(
        speaker("max", SpeakerKind::Ai),
        "The plan".into(),
        Routing::default(),
        Millis(2),
    )
    .expect("stored");
    let options = AgentContextOptions {
        system_instruction: Some("Review.".into()),
        ..Default::default()
    };
    let input = cm.context_for_agent("sarah", "claude", &options);
    let prompt = cm.assemble_prompt("claude", &input);
    assert_eq!(
        prompt.prompt,
        "[CONTEXT]\n- kailai -> all: Plan it\n\n[MESSAGE]\nThe plan"
    );
    assert_eq!(prompt.system_flag.as_deref(), Some("Review."));
    assert_eq!(
        prompt.explain.total_bytes,
        prompt.prompt.len() + "Review.".len()
    );
}

#[wasm_bindgen_test]
fn the_budget_bound_holds_on_wasm32() {
    let cm = ContextManager::default();
    let input = AssemblerInput {
        current_message: "é".repeat(1000),
        system_instruction: Some("s".repeat(500)),
        max_bytes: 300,
        ..Default::default()
    };
    let prompt = cm.assemble_prompt("codex", &input);
    assert!(prompt.prompt.len() <= 300, "{} bytes", prompt.prompt.len());
}

#[wasm_bindgen_test]
fn snapshot_roundtrips_through_json_on_wasm32() {
    let mut cm = ContextManager::default();
    cm.add_message(
        speaker("kailai", SpeakerKind::Human),
        "one".into(),
        Routing::default(),
        Millis(1_700_000_000_000),
    )
    .expect("stored");
    cm.set_team_task("task");
    let json = serde_json::to_string(&snapshot::export(cm.store(), Millis(5))).expect("serializes");
    let mut copy = ContextManager::default();
    snapshot::import_str(copy.store_mut(), &json).expect("imports");
    assert_eq!(copy.messages(), cm.messages());
    assert_eq!(copy.team_task(), Some("task"));
    let next = copy
        .add_message(
            speaker("kailai", SpeakerKind::Human),
            "two".into(),
            Routing::default(),
            Millis(6),
        )
        .expect("stored");
    assert_eq!(next.id.as_str(), "msg-2");
}

#[wasm_bindgen_test]
fn a_conversation_runs_human_to_ai_to_ai_on_wasm32() {
    use agent_chatter::conversation::{Action, Conversation, HumanInput};
    let team = agent_chatter::config::load_team(
        r#"{"members": [{"name": "kailai", "kind": "human"},
            {"name": "max", "kind": "ai", "agentType": "claude", "systemInstruction": "You are Max."},
            {"name": "sarah", "kind": "ai", "agentType": "codex"}]}"#,
    )
    .expect("valid team");
    let mut conv = Conversation::with_team(team);
    conv.handle_human_input(HumanInput::text("Plan it [NEXT: max]"), Millis(1))
        .expect("accepted");
    let deliveries = |conv: &mut Conversation| -> Vec<(String, String)> {
        std::iter::from_fn(|| conv.poll_action())
            .filter_map(|a| match a {
                Action::Deliver(d) => Some((d.to.clone(), d.prompt.prompt.clone())),
                _ => None,
            })
            .collect()
    };
    assert_eq!(
        deliveries(&mut conv),
        [("max".to_string(), "[MESSAGE]\nPlan it".to_string())]
    );
    conv.handle_agent_replied("max", "The plan [NEXT: sarah]".into(), Millis(2))
        .expect("in flight");
    assert_eq!(
        deliveries(&mut conv),
        [(
            "sarah".to_string(),
            "[CONTEXT]\n- kailai -> max: Plan it\n\n[MESSAGE]\nThe plan".to_string()
        )]
    );
}

/// Pieces for the differential test below: markers and near-markers, fences, every kind of
/// whitespace the fast scans test by byte (multi-byte ones included), bytes they flag that
/// are no whitespace, and runs of prose long enough to fill whole scan blocks.
const PIECES: &[&str] = &[
    "[",
    "]",
    ":",
    ",",
    "`",
    "```",
    "\n",
    "\r\n",
    "\r",
    " ",
    "  ",
    "\t",
    "\x0b",
    "\x0c",
    "\u{1}",
    "\u{7F}",
    "\u{85}",
    "\u{A0}",
    "\u{1680}",
    "\u{2000}",
    "\u{200A}",
    "\u{200B}",
    "\u{2028}",
    "\u{2029}",
    "\u{202F}",
    "\u{205F}",
    "\u{3000}",
    "\u{FEFF}",
    "\u{180E}",
    "\u{900}",
    // Non-spaces sharing lead bytes with the multi-byte spaces (the scans match all bytes).
    "\u{3001}",
    "。",
    "レ",
    "—",
    "“",
    "\u{200D}",
    "\u{2027}",
    "\u{2030}",
    "\u{205E}",
    "\u{1681}",
    "\u{A1}",
    "✅",
    "é",
    "日本",
    "🦀",
    "NEXT",
    "next",
    "DONE",
    "ALL",
    "!P1",
    "[NEXT: a]",
    "[NEXT:",
    "[DONE]",
    "[FROM: b]",
    "[TEAM_TASK: t]",
    "[DROP: c]",
    "bob",
    "sixteen-byte-run",
    "a longer run of ordinary prose, thirty-two or more bytes.",
];

/// The fast marker engine (on wasm with SIMD, its 16-byte vector scans) against the plain
/// reference reading of the grammar, on texts made from [`PIECES`] by a fixed generator:
/// the same spans, meaning and views (native property tests cover the 8-byte scans).
#[wasm_bindgen_test]
fn the_fast_marker_engine_equals_the_reference_on_wasm32() {
    use agent_chatter::markers::reference;
    let mut state = 0x9E37_79B9_7F4A_7C15_u64;
    let mut next = move || {
        // xorshift64: deterministic, so a failure repeats.
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for case in 0..3000 {
        let len = (next() % 60) as usize;
        let text: String = (0..len)
            .map(|_| PIECES[(next() % PIECES.len() as u64) as usize])
            .collect();
        let owned = |(view, n): (std::borrow::Cow<'_, str>, usize)| (view.into_owned(), n);
        assert_eq!(
            markers::spans(&text).collect::<Vec<_>>(),
            reference::spans(&text),
            "case {case}: {text:?}"
        );
        assert_eq!(
            markers::parse(&text),
            reference::parse(&text),
            "case {case}: {text:?}"
        );
        assert_eq!(
            owned(markers::strip_all_counted(&text)),
            reference::strip_all_counted(&text),
            "case {case}: {text:?}"
        );
        assert_eq!(
            owned(markers::strip_routing_counted(&text)),
            reference::strip_routing_counted(&text),
            "case {case}: {text:?}"
        );
    }
}
