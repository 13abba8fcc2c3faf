//! docs/architecture.md §19 (seed 000 §8.3) integration tests, driven through the conversation
//! state machine with scripted replies (no processes, no sleeps).

use agent_chatter::config::load_team;
use agent_chatter::conversation::{Action, Conversation, Delivery, HumanInput};
use agent_chatter::explain::Fate;
use agent_chatter::message::Millis;

fn team(max_bytes: usize) -> agent_chatter::team::Team {
    load_team(&format!(
        r#"{{"id": "t", "name": "T", "settings": {{"maxBytes": {max_bytes}}}, "members": [
        {{"id": "kailai", "name": "kailai", "displayName": "Kailai", "kind": "human"}},
        {{"id": "max", "name": "max", "displayName": "Max", "kind": "ai", "agentType": "claude"}},
        {{"id": "sarah", "name": "sarah", "displayName": "Sarah", "kind": "ai", "agentType": "codex"}},
        {{"id": "carol", "name": "carol", "displayName": "Carol", "kind": "ai", "agentType": "gemini"}}
    ]}}"#
    ))
    .expect("team")
}

/// Runs `input`, answering each delivery with `reply(to)`; returns the deliveries in order.
fn run(conv: &mut Conversation, input: &str, reply: impl Fn(&str) -> String) -> Vec<Delivery> {
    conv.handle_human_input(HumanInput::text(input), Millis(0))
        .expect("input accepted");
    let mut deliveries = Vec::new();
    for step in 0..100 {
        let Some(action) = conv.poll_action() else {
            return deliveries;
        };
        if let Action::Deliver(d) = action {
            conv.handle_agent_replied(&d.to, reply(&d.to), Millis(step))
                .expect("reply accepted");
            deliveries.push(*d);
        }
    }
    panic!("conversation did not settle in 100 steps");
}

#[test]
fn parallel_next_routing_each_agent_gets_correct_context() {
    // docs/architecture.md §19 (seed 000 §2.4): "[NEXT:max] [NEXT:sarah] [NEXT:carol] Hi"; each
    // answer is stored before the next agent runs, and each agent gets the newest message.
    let mut conv = Conversation::with_team(team(768 * 1024));
    let answers = |to: &str| match to {
        "max" => "我建议先写测试".to_string(),
        "sarah" => "技术上可行".to_string(),
        _ => "OK".to_string(),
    };
    let d = run(
        &mut conv,
        "[NEXT:max] [NEXT:sarah] [NEXT:carol] Hi",
        answers,
    );
    let order: Vec<&str> = d.iter().map(|d| d.to.as_str()).collect();
    assert_eq!(order, ["max", "sarah", "carol"]);
    assert_eq!(d[0].prompt.prompt, "[MESSAGE]\nHi");
    assert_eq!(
        d[1].prompt.prompt,
        "[CONTEXT]\n- kailai -> max, sarah, carol: Hi\n\n[MESSAGE]\n我建议先写测试"
    );
    assert_eq!(
        d[2].prompt.prompt,
        "Conversation so far:\n- kailai: Hi\n- max: 我建议先写测试\n\nLast message:\n技术上可行"
    );
}

#[test]
fn ai_to_ai_deduplication_in_routing_chain() {
    // max → sarah → carol: each gets the previous answer once, as the message, never also as
    // the last history line.
    let mut conv = Conversation::with_team(team(768 * 1024));
    let d = run(&mut conv, "Start [NEXT: max]", |to| match to {
        "max" => "Plan A [NEXT: sarah]".into(),
        "sarah" => "Plan A looks right [NEXT: carol]".into(),
        _ => "Done".into(),
    });
    let carol = &d[2];
    assert_eq!(carol.to, "carol");
    assert!(carol
        .prompt
        .prompt
        .ends_with("Last message:\nPlan A looks right"));
    assert_eq!(carol.prompt.prompt.matches("Plan A looks right").count(), 1);
    assert_eq!(carol.prompt.explain.fate_of(2), Fate::Current);
}

#[test]
fn team_task_injection_across_all_agents() {
    let mut conv = Conversation::with_team(team(768 * 1024));
    let d = run(
        &mut conv,
        "[TEAM_TASK: Build auth] Go [NEXT: max, sarah, carol]",
        |_| "ok".into(),
    );
    assert!(d[0]
        .prompt
        .prompt
        .starts_with("[TEAM_TASK]\nBuild auth\n\n"));
    assert!(d[1]
        .prompt
        .prompt
        .starts_with("[TEAM_TASK]\nBuild auth\n\n"));
    assert!(d[2].prompt.prompt.starts_with("Team Task:\nBuild auth\n\n"));
    // The task reaches agents through its own section only, never repeated in history.
    assert!(d
        .iter()
        .all(|d| d.prompt.prompt.matches("Build auth").count() == 1));
}

#[test]
fn token_budget_trimming_drops_oldest_context() {
    let mut conv = Conversation::with_team(team(300));
    for i in 0..4 {
        run(
            &mut conv,
            &format!("[FROM: kailai] note {i} {}", "x".repeat(60)),
            |_| String::new(),
        );
    }
    let d = run(&mut conv, "Summarise [NEXT: sarah]", |_| "ok".into());
    let p = &d[0].prompt;
    assert!(p.prompt.len() <= 300);
    assert!(!p.prompt.contains("note 0"), "{}", p.prompt);
    assert!(p.prompt.contains("note 3"));
    assert_eq!(p.explain.fate_of(0), Fate::TrimmedForBudget);
    assert!(p.prompt.ends_with("[MESSAGE]\nSummarise"));
}

#[test]
fn context_marker_stripping_prevents_duplication() {
    let mut conv = Conversation::with_team(team(768 * 1024));
    let d = run(&mut conv, "Look at this [NEXT: max]", |to| match to {
        "max" => "Found it [NEXT: sarah]".into(),
        _ => "ok".into(),
    });
    let sarah = &d[1].prompt.prompt;
    assert!(!sarah.contains("[NEXT"), "{sarah}");
    assert_eq!(
        sarah,
        "[CONTEXT]\n- kailai -> max: Look at this\n\n[MESSAGE]\nFound it"
    );
}
