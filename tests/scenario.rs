//! Scenarios (docs/architecture.md §11b): loading, history as a store, team task precedence,
//! preview.

use std::fs;
use std::path::Path;

use agent_chatter::explain::Fate;
use agent_chatter::markers::Intent;
use agent_chatter::message::{Addressee, Speaker, SpeakerKind};
use agent_chatter::scenario::{load_scenario, preview, ScenarioError, TeamTaskOverride};
use serde_json::{json, Value};

fn fixture(rel: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(rel);
    fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn demo() -> agent_chatter::scenario::Scenario {
    load_scenario(&fixture("scenarios/demo.json")).expect("demo scenario loads")
}

/// A scenario around a small team whose ids differ from their names.
fn scenario_json(messages: Value) -> Value {
    json!({
        "team": {"name": "t", "members": [
            {"id": "u1", "name": "kailai", "displayName": "Kailai Z", "kind": "human"},
            {"id": "u2", "name": "max", "displayName": "Max", "kind": "ai", "agentType": "claude-code"},
            {"id": "u3", "name": "sarah", "kind": "ai", "agentType": "openai-codex"}
        ]},
        "messages": messages
    })
}

fn load_value(value: &Value) -> Result<agent_chatter::scenario::Scenario, ScenarioError> {
    load_scenario(&value.to_string())
}

fn load_err(value: &Value) -> String {
    match load_value(value) {
        Ok(s) => panic!("expected an error, loaded {s:?}"),
        Err(e) => e.to_string(),
    }
}

// --- loading -------------------------------------------------------------------------------

#[test]
fn demo_scenario_loads_team_context_and_messages() {
    let s = demo();
    assert_eq!(s.team.id, "trio");
    assert_eq!(s.team.members.len(), 3);
    assert_eq!(s.team.members[1].agent_type.as_deref(), Some("claude-code"));
    assert_eq!(
        (
            s.context.window_size,
            s.context.max_bytes,
            s.context.pin_first
        ),
        (5, 786_432, false)
    );
    assert_eq!(s.team_task, TeamTaskOverride::FromMarkers);
    assert_eq!(s.messages.len(), 5);
    assert_eq!(
        s.messages[3].to.as_deref(),
        Some(&["sarah".to_string(), "gina".to_string()][..])
    );
    assert_eq!(s.messages[0].to, None);
}

#[test]
fn scenario_with_a_peer_team_and_window_zero_loads() {
    let s = load_scenario(&fixture("scenarios/peer-team.json")).expect("loads");
    assert_eq!(s.team.id, "full-team");
    assert_eq!(s.context.window_size, 0);
    assert_eq!(
        s.team.settings.window_size, 0,
        "context replaces the team's settings"
    );
    assert_eq!(
        s.context.max_bytes,
        768 * 1024,
        "keys left out keep the team's values"
    );
    assert_eq!(s.team_task, TeamTaskOverride::Set("Review PR #12".into()));
}

#[test]
fn team_task_key_absent_null_and_string_are_three_things() {
    let mut v = scenario_json(json!([{"from": "kailai", "content": "hi"}]));
    assert_eq!(
        load_value(&v).expect("loads").team_task,
        TeamTaskOverride::FromMarkers
    );
    v["teamTask"] = Value::Null;
    assert_eq!(
        load_value(&v).expect("loads").team_task,
        TeamTaskOverride::Clear
    );
    v["teamTask"] = json!("ship");
    assert_eq!(
        load_value(&v).expect("loads").team_task,
        TeamTaskOverride::Set("ship".into())
    );
}

#[test]
fn scenario_serializes_back_to_an_equal_scenario() {
    for text in [
        fixture("scenarios/demo.json"),
        fixture("scenarios/peer-team.json"),
    ] {
        let s = load_scenario(&text).expect("loads");
        let again =
            load_scenario(&serde_json::to_string(&s).expect("serializes")).expect("reloads");
        assert_eq!(again, s);
    }
    let mut v = scenario_json(json!([{"from": "kailai", "content": "hi"}]));
    v["teamTask"] = Value::Null;
    let s = load_value(&v).expect("loads");
    let out = serde_json::to_value(&s).expect("serializes");
    assert_eq!(
        out.get("teamTask"),
        Some(&Value::Null),
        "null stays null, not absent"
    );
}

// --- bad scenarios -------------------------------------------------------------------------

#[test]
fn bad_scenarios_fail_naming_the_field() {
    let cases = [
        (
            "scenario-unknown-member.json",
            "messages[2].from: \"zed\" is not a member (members: kailai, max, sarah)",
        ),
        (
            "scenario-ai-only-team.json",
            "team.members: no human member; a team needs at least one, because the first message must come from a human",
        ),
        ("scenario-to-not-a-list.json", "messages[1].to: expected an array, found the string \"sarah\""),
        ("scenario-missing-content.json", "messages[0].content: missing"),
    ];
    for (file, expected) in cases {
        let message = match load_scenario(&fixture(&format!("bad/{file}"))) {
            Ok(s) => panic!("{file}: loaded {s:?}"),
            Err(e) => e.to_string(),
        };
        assert_eq!(message, expected, "{file}");
    }
}

#[test]
fn invalid_scenario_json_names_line_and_column() {
    match load_scenario("{\n  \"team\": {,\n}") {
        Err(ScenarioError::Syntax(e)) => assert_eq!((e.line, e.column), (2, 12)),
        other => panic!("expected a syntax error, got {other:?}"),
    }
}

#[test]
fn peer_team_errors_carry_the_team_prefix() {
    let mut v: Value = serde_json::from_str(&fixture("scenarios/peer-team.json")).expect("json");
    v["team"]["team"]["members"][0]
        .as_object_mut()
        .map(|m| m.remove("agentType"));
    assert!(load_err(&v)
        .starts_with("team.team.members[0] (claude): agentType: missing for an AI member"));
}

#[test]
fn context_max_bytes_zero_is_refused() {
    let mut v = scenario_json(json!([]));
    v["context"] = json!({"maxBytes": 0});
    assert_eq!(load_err(&v), "context.maxBytes: must be greater than 0");
}

#[test]
fn ten_megabyte_message_is_refused_with_its_size() {
    let v = scenario_json(json!([{"from": "kailai", "content": "x".repeat(10 * 1024 * 1024)}]));
    assert_eq!(
        load_err(&v),
        "messages[0].content: over the 1 MiB limit (1048576 bytes), found 10485760 bytes"
    );
}

// --- the store -----------------------------------------------------------------------------

#[test]
fn from_names_a_member_by_id_or_name_and_system_is_a_notice() {
    let v = scenario_json(json!([
        {"from": "u1", "content": "by id"},
        {"from": "Kailai", "content": "by name, any case"},
        {"from": "kailai z", "content": "by display name, fuzzily"},
        {"from": "system", "content": "a notice"}
    ]));
    let store = load_value(&v).expect("loads").to_store().expect("stores");
    let speakers: Vec<&str> = store
        .messages()
        .iter()
        .map(|m| m.speaker.id.as_str())
        .collect();
    assert_eq!(speakers, ["u1", "u1", "u1", "system"]);
    assert_eq!(store.messages()[0].speaker.name, "kailai");
    assert_eq!(*store.messages()[3].speaker, Speaker::system());
    assert_eq!(store.messages()[3].speaker.kind, SpeakerKind::System);
}

#[test]
fn to_entries_print_as_member_names_or_as_given() {
    let v = scenario_json(json!([
        {"from": "kailai", "content": "hi", "to": ["u2", "Sarah", "gina", " ", "system"]},
        {"from": "kailai", "content": "hi all", "to": []}
    ]));
    let store = load_value(&v).expect("loads").to_store().expect("stores");
    let first = &store.messages()[0];
    assert_eq!(first.routing.resolved, ["u2", "u3", "gina", "system"]);
    assert_eq!(first.to_label(), "max, sarah, gina, system");
    assert_eq!(store.messages()[1].to_label(), "all");
}

#[test]
fn messages_are_stored_raw_in_order_with_fresh_ids() {
    let store = demo().to_store().expect("stores");
    let ids: Vec<&str> = store.messages().iter().map(|m| m.id.as_str()).collect();
    assert_eq!(ids, ["msg-1", "msg-2", "msg-3", "msg-4", "msg-5"]);
    assert_eq!(
        store.messages()[0].content,
        "[TEAM_TASK: Build a login page] Max, please plan it. [NEXT: max]",
        "content is stored raw, markers included"
    );
}

#[test]
fn next_markers_give_the_routing_when_to_is_absent() {
    let store = demo().to_store().expect("stores");
    let first = &store.messages()[0];
    assert_eq!(
        first.routing.raw_next,
        vec![Addressee {
            name: "max".into(),
            intent: Intent::P2
        }]
    );
    assert_eq!(first.routing.resolved, ["max"]);
    let second = &store.messages()[1];
    assert_eq!(
        second.routing.raw_next,
        vec![Addressee {
            name: "sarah".into(),
            intent: Intent::P1
        }]
    );
    assert_eq!(second.to_label(), "sarah");
    assert_eq!(
        store.messages()[2].to_label(),
        "all",
        "no marker and no `to`: everyone"
    );
}

#[test]
fn unknown_next_addressees_are_left_out() {
    let v = scenario_json(json!([{"from": "kailai", "content": "[NEXT: max, zed, MAX]"}]));
    let store = load_value(&v).expect("loads").to_store().expect("stores");
    let m = &store.messages()[0];
    assert_eq!(m.routing.raw_next.len(), 3);
    assert_eq!(
        m.routing.resolved,
        ["u2"],
        "zed unknown, MAX the same member"
    );
    assert_eq!(m.to_label(), "max");
}

#[test]
fn explicit_to_wins_over_next_markers_but_raw_markers_are_kept() {
    let v = scenario_json(json!([{"from": "kailai", "content": "[NEXT: max]", "to": ["sarah"]}]));
    let store = load_value(&v).expect("loads").to_store().expect("stores");
    let m = &store.messages()[0];
    assert_eq!(m.routing.resolved, ["u3"]);
    assert_eq!(m.routing.raw_next.len(), 1);
}

#[test]
fn done_marker_is_recorded() {
    let v = scenario_json(json!([{"from": "max", "content": "All done. [DONE]"}]));
    let store = load_value(&v).expect("loads").to_store().expect("stores");
    assert!(store.messages()[0].routing.is_done);
}

#[test]
fn team_task_markers_decide_when_the_key_is_absent() {
    let store = demo().to_store().expect("stores");
    assert_eq!(store.team_task(), Some("Build a login page"));

    let v = scenario_json(json!([
        {"from": "kailai", "content": "[TEAM_TASK: first]"},
        {"from": "max", "content": "[TEAM_TASK: second, from an AI]"}
    ]));
    let store = load_value(&v).expect("loads").to_store().expect("stores");
    assert_eq!(store.team_task(), Some("second, from an AI"));
}

#[test]
fn team_task_key_wins_over_markers() {
    let base = scenario_json(json!([{"from": "kailai", "content": "[TEAM_TASK: from a marker]"}]));
    let cases = [
        (Value::Null, None),
        (json!("from the key"), Some("from the key")),
    ];
    for (key, expected) in cases {
        let mut v = base.clone();
        v["teamTask"] = key.clone();
        let store = load_value(&v).expect("loads").to_store().expect("stores");
        assert_eq!(store.team_task(), expected, "teamTask: {key}");
    }
}

#[test]
fn to_store_checks_members_edited_after_loading() {
    let mut s = demo();
    s.messages[1].from = "zed".into();
    assert_eq!(
        s.to_store().map(|_| ()).unwrap_err().to_string(),
        "messages[1].from: \"zed\" is not a member (members: kailai, max, sarah)"
    );
}

// --- preview -------------------------------------------------------------------------------

#[test]
fn preview_answers_the_last_message() {
    let s = demo();
    let p = preview(&s, "max").expect("builds");
    assert!(
        p.prompt.ends_with("[MESSAGE]\nDone: login.rs and tests."),
        "{}",
        p.prompt
    );
    assert!(
        p.prompt.contains("[TEAM_TASK]\nBuild a login page"),
        "{}",
        p.prompt
    );
    assert_eq!(
        p.system_flag.as_deref(),
        Some("You are Max, the architect.\nAnswer briefly."),
        "claude gets its system part as the flag"
    );
    assert!(!p.prompt.contains("[SYSTEM]"));
}

#[test]
fn preview_for_codex_puts_the_system_part_inline() {
    let p = preview(&demo(), "Sarah").expect("builds");
    assert_eq!(p.system_flag, None);
    assert!(
        p.prompt
            .starts_with("[SYSTEM]\nYou are Sarah, you write the code."),
        "{}",
        p.prompt
    );
}

#[test]
fn preview_with_window_zero_has_no_history() {
    let s = load_scenario(&fixture("scenarios/peer-team.json")).expect("loads");
    let p = preview(&s, "claude").expect("builds");
    assert!(!p.prompt.contains("[CONTEXT]"), "{}", p.prompt);
    assert!(
        p.prompt.contains("[TEAM_TASK]\nReview PR #12"),
        "the key wins: {}",
        p.prompt
    );
    assert!(
        p.prompt.ends_with("[MESSAGE]\nThanks, what did you find?"),
        "{}",
        p.prompt
    );
    assert_eq!(p.explain.fate_of(0), Fate::OutsideWindow);
}

#[test]
fn preview_is_the_same_for_the_same_file() {
    let a = preview(&demo(), "max").expect("builds");
    let b = preview(&demo(), "max").expect("builds");
    assert_eq!(a, b);
}

#[test]
fn preview_for_an_unknown_member_lists_the_members() {
    assert_eq!(
        preview(&demo(), "zed").map(|_| ()).unwrap_err().to_string(),
        "member: \"zed\" is not a member (members: kailai, max, sarah)"
    );
}

#[test]
fn preview_without_messages_is_the_skeleton_of_the_first_delivery() {
    let mut v = json!({
        "team": {"name": "t", "members": [
            {"id": "u1", "name": "kailai", "kind": "human"},
            {"id": "u2", "name": "sarah", "kind": "ai", "agentType": "codex",
             "systemInstruction": "You write the code."}
        ]},
        "teamTask": "Ship v1",
        "messages": []
    });
    let p = preview(&load_value(&v).expect("loads"), "sarah").expect("never an error");
    assert_eq!(
        p.prompt,
        "[SYSTEM]\nYou write the code.\n\n[TEAM_TASK]\nShip v1"
    );
    assert_eq!(p.system_flag, None);
    assert_eq!(p.explain.current, None, "no current message");
    assert!(p.explain.messages.is_empty());
    v["team"]["members"][1]["agentType"] = json!("claude");
    let p = preview(&load_value(&v).expect("loads"), "sarah").expect("never an error");
    assert_eq!(p.prompt, "[TEAM_TASK]\nShip v1");
    assert_eq!(p.system_flag.as_deref(), Some("You write the code."));
}

#[test]
fn preview_of_the_demo_scenario_is_byte_exact() {
    // docs/architecture.md §8: sections joined by one blank line; markers stripped from history and
    // message; `to` = resolved names or `all`; Claude's system part travels as the flag only.
    let history = "[TEAM_TASK]\nBuild a login page\n\n\
                   [CONTEXT]\n\
                   - kailai -> max: Max, please plan it.\n\
                   - max -> sarah: Plan: a form, a session, tests. Sarah, implement it.\n\
                   - system -> all: sarah failed: timeout after 300000 ms\n\
                   - kailai -> sarah, gina: Sarah, please retry.\n\n\
                   [MESSAGE]\nDone: login.rs and tests.";
    let max = preview(&demo(), "max").expect("builds");
    assert_eq!(max.prompt, history);
    let sarah = preview(&demo(), "sarah").expect("builds");
    assert_eq!(
        sarah.prompt,
        format!("[SYSTEM]\nYou are Sarah, you write the code.\n\n{history}")
    );
    let fates: Vec<Fate> = (0..5).map(|i| max.explain.fate_of(i)).collect();
    assert_eq!(
        fates,
        [
            Fate::Included,
            Fate::Included,
            Fate::Included,
            Fate::Included,
            Fate::Current
        ]
    );
}

#[test]
fn a_scenario_key_written_another_way_is_refused_naming_the_key_meant() {
    let base = scenario_json(json!([{"from": "kailai", "content": "Hi [NEXT: max]"}]));
    let with = |edit: &dyn Fn(&mut Value)| {
        let mut s = base.clone();
        edit(&mut s);
        load_value(&s).unwrap_err().to_string()
    };
    type Edit<'a> = &'a dyn Fn(&mut Value);
    let cases: [(Edit, &str); 3] = [
        (
            &|s| s["team_task"] = json!("Ship it"),
            r#"team_task: not a key here; did you mean "teamTask"?"#,
        ),
        (
            &|s| s["context"] = json!({"windowsize": 0}),
            r#"context.windowsize: not a key here; did you mean "windowSize"?"#,
        ),
        (
            &|s| s["messages"][0]["From"] = json!("kailai"),
            r#"messages[0].From: not a key here; did you mean "from"?"#,
        ),
    ];
    for (edit, expected) in cases {
        let error = with(edit);
        assert!(error.ends_with(expected), "{error}");
    }
}

#[test]
fn a_system_part_cut_by_the_budget_is_critical_even_with_no_message_yet() {
    let scenario = load_value(&json!({
        "team": {"name": "t", "members": [
            {"name": "kailai", "kind": "human"},
            {"name": "max", "kind": "ai", "agentType": "codex",
             "systemInstruction": "You are Max. Keep drafts short and concrete."}]},
        "context": {"maxBytes": 20},
        "messages": []
    }))
    .unwrap();
    let p = preview(&scenario, "max").unwrap();
    assert!(p.prompt.len() <= 20);
    assert!(p.explain.truncations.iter().any(|t| t.section == "system"));
    assert_eq!(
        p.explain.status,
        agent_chatter::explain::BudgetStatus::Critical,
        "the agent would run without its instructions"
    );
}
