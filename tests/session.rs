//! The session (docs/architecture.md §6b): facts in, the same bytes out; files; time travel and
//! what-if.

use agent_chatter::config::load_team;
use agent_chatter::conversation::{Action, Delivery, Status};
use agent_chatter::explain::Fate;
use agent_chatter::message::Millis;
use agent_chatter::scenario;
use agent_chatter::session::{Fact, Failure, PreviewOverrides, Session, SESSION_FORMAT};
use agent_chatter::team::{Team, TeamSettings};
use agent_chatter::usage::{Usage, Usd};
use serde_json::{json, Value};

fn team() -> Team {
    load_team(
        r#"{"id": "crew", "name": "Crew", "members": [
        {"id": "kailai", "name": "kailai", "displayName": "Kailai", "kind": "human"},
        {"id": "max", "name": "max", "displayName": "Max", "kind": "ai", "agentType": "claude",
         "systemInstruction": "You are Max, you plan."},
        {"id": "sarah", "name": "sarah", "displayName": "Sarah", "kind": "ai", "agentType": "codex",
         "systemInstruction": "You are Sarah, you write the code."},
        {"id": "carol", "name": "carol", "displayName": "Carol", "kind": "ai", "agentType": "gemini"}
    ]}"#,
    )
    .expect("valid team")
}

fn session() -> Session {
    let mut s = Session::new();
    s.apply(&Fact::set_team(team())).expect("team");
    s
}

fn drain(s: &mut Session) -> Vec<Action> {
    std::iter::from_fn(|| s.poll_action()).collect()
}

fn delivery(actions: &[Action]) -> Option<&Delivery> {
    actions.iter().find_map(|a| match a {
        Action::Deliver(d) => Some(&**d),
        _ => None,
    })
}

/// kailai → max → sarah → (sarah passes to carol) → carol says DONE.
fn chain() -> (Session, Vec<Delivery>) {
    let mut s = session();
    let mut delivered = Vec::new();
    s.apply(&Fact::human(
        "[TEAM_TASK: Build a login page] Max, plan it. [NEXT: max]",
        Millis(1),
    ))
    .unwrap();
    let replies = [
        "Plan: a form, a session, tests. [NEXT: sarah]",
        "Code is up. [NEXT: carol !P1]",
        "Reviewed, ship it. [DONE]",
    ];
    let mut next = replies.iter();
    let mut t = 1;
    loop {
        let actions = drain(&mut s);
        let Some(d) = delivery(&actions).cloned() else {
            break;
        };
        t += 1;
        s.apply(&Fact::replied(&d.to, *next.next().unwrap(), Millis(t)))
            .unwrap();
        delivered.push(d);
    }
    (s, delivered)
}

// --- facts -------------------------------------------------------------------------------

#[test]
fn a_human_fact_serializes_as_design_says() {
    let fact = Fact::human("[NEXT: max] hi", Millis(1_700_000_000_000));
    assert_eq!(
        serde_json::to_value(&fact).unwrap(),
        json!({"type": "human", "text": "[NEXT: max] hi", "sender": null, "at": 1_700_000_000_000u64})
    );
    let replied = Fact::replied("max", "ok", Millis(2));
    assert_eq!(
        serde_json::to_value(&replied).unwrap(),
        json!({"type": "replied", "to": "max", "text": "ok", "at": 2})
    );
}

#[test]
fn every_fact_reads_back_as_itself() {
    let settings = TeamSettings {
        window_size: 2,
        max_tokens: Some(900),
        ..TeamSettings::default()
    };
    let facts = [
        Fact::set_team(team()),
        Fact::set_settings(settings),
        Fact::Human {
            text: "hi".into(),
            sender: Some("kailai".into()),
            at: Millis(3),
        },
        Fact::replied("max", "ok", Millis(4)),
        Fact::failed("max", "timeout after 30 s", Millis(5)),
    ];
    for fact in facts {
        let text = serde_json::to_string(&fact).unwrap();
        let back: Fact = serde_json::from_str(&text).unwrap();
        assert_eq!(back, fact, "{text}");
    }
}

#[test]
fn a_refused_fact_changes_nothing_and_says_why() {
    let mut s = session();
    s.apply(&Fact::human("Plan it [NEXT: max]", Millis(1)))
        .unwrap();
    let before = s.export();
    let err = s
        .apply(&Fact::replied("sarah", "not my turn", Millis(2)))
        .unwrap_err();
    assert!(err.to_string().contains("sarah"), "{err}");
    assert_eq!(s.export(), before);
    let err = Session::new()
        .apply(&Fact::human("hi", Millis(1)))
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "No team loaded. Set a team before sending messages"
    );
}

#[test]
fn an_empty_human_message_is_refused_but_an_old_log_holding_one_still_replays() {
    let mut s = session();
    let before = s.export();
    for text in ["", "  \n\t", "\u{3000}"] {
        let err = s.apply(&Fact::human(text, Millis(1))).unwrap_err();
        assert_eq!(
            err.to_string(),
            "the message is empty: write some text, or a marker such as [NEXT: name] or [DONE]"
        );
        assert_eq!(s.export(), before, "nothing changed");
    }
    let old_log = [Fact::set_team(team()), Fact::human("", Millis(1))];
    let replayed = Session::replay(&old_log[..]).expect("a stored log keeps loading");
    assert_eq!(replayed.messages().len(), 1);
}

#[test]
fn a_message_cut_to_fit_the_budget_is_a_notice_before_its_delivery() {
    for (max_bytes, says) in [
        (120, "msg-1 reaches sarah cut to fit sarah's budget: "),
        (
            3,
            "msg-1 does not reach sarah: none of its 1000 bytes fit sarah's budget",
        ),
    ] {
        let mut s = session();
        s.apply(&Fact::set_settings(TeamSettings {
            max_bytes,
            ..TeamSettings::default()
        }))
        .unwrap();
        let text = format!("[NEXT: sarah] {}", "x".repeat(1000));
        s.apply(&Fact::human(text, Millis(1))).unwrap();
        let actions = drain(&mut s);
        let notice = actions
            .iter()
            .position(|a| matches!(a, Action::Notice(n) if n.to_string().starts_with(says)))
            .unwrap_or_else(|| panic!("{max_bytes}: {actions:?}"));
        let deliver = actions
            .iter()
            .position(|a| matches!(a, Action::Deliver(_)))
            .expect("the delivery goes ahead");
        assert!(notice < deliver, "{actions:?}");
    }
    // A message that fits raises none.
    let mut s = session();
    s.apply(&Fact::human("[NEXT: sarah] short", Millis(1)))
        .unwrap();
    assert!(!drain(&mut s).iter().any(|a| matches!(a, Action::Notice(_))));
}

#[test]
fn a_delivery_keeps_the_settings_it_was_built_with_for_a_scenario_cut_there() {
    let (mut s, delivered) = chain();
    s.apply(&Fact::set_settings(TeamSettings {
        max_bytes: 300,
        ..TeamSettings::default()
    }))
    .unwrap();
    let first = &delivered[0];
    let at = s
        .messages()
        .iter()
        .position(|m| m.id == first.message)
        .unwrap();
    let then = s.settings_delivered(&first.to, at).expect("a delivery");
    assert_eq!(then.max_bytes, TeamSettings::default().max_bytes);
    assert_eq!(s.settings().unwrap().max_bytes, 300, "the settings now");
    assert_eq!(
        s.settings_delivered("kailai", at),
        None,
        "no delivery to a human"
    );
}

#[test]
fn settings_change_without_resetting_the_conversation() {
    let (mut s, _) = chain();
    let messages = s.messages().len();
    let mut settings = s.settings().unwrap().clone();
    settings.window_size = 1;
    s.apply(&Fact::set_settings(settings)).unwrap();
    assert_eq!(s.messages().len(), messages);
    assert_eq!(s.settings().unwrap().window_size, 1);
    let bad = TeamSettings {
        max_bytes: 0,
        ..TeamSettings::default()
    };
    let err = s.apply(&Fact::set_settings(bad)).unwrap_err();
    assert_eq!(
        err.to_string(),
        "settings: maxBytes: must be greater than 0"
    );
    assert_eq!(s.settings().unwrap().window_size, 1);
}

// --- files -------------------------------------------------------------------------------

#[test]
fn export_is_the_fact_log_with_its_format() {
    let (s, _) = chain();
    let file: Value = serde_json::from_str(&s.export()).unwrap();
    assert_eq!(file["format"], SESSION_FORMAT);
    assert_eq!(file["facts"].as_array().unwrap().len(), s.facts().len());
    assert_eq!(file["facts"][0]["type"], "setTeam");
    assert_eq!(file["facts"][1]["type"], "human");
    assert_eq!(serde_json::to_string(&s).unwrap(), s.export());
}

#[test]
fn import_replays_to_the_same_messages_and_prompts() {
    let (s, _) = chain();
    let copy = Session::import(&s.export()).expect("imports");
    assert_eq!(copy.messages(), s.messages());
    assert_eq!(copy.store().team_task(), s.store().team_task());
    for member in ["max", "sarah", "carol"] {
        for at in 0..s.messages().len() {
            let o = PreviewOverrides::default();
            assert_eq!(
                copy.preview(member, Some(at), &o),
                s.preview(member, Some(at), &o)
            );
        }
    }
}

#[test]
fn an_imported_session_redelivers_the_agent_that_was_running() {
    let mut s = session();
    s.apply(&Fact::human("Plan it [NEXT: max]", Millis(1)))
        .unwrap();
    let first = delivery(&drain(&mut s)).cloned().expect("max is due");
    let mut resumed = Session::import(&s.export()).unwrap();
    let actions = drain(&mut resumed);
    assert_eq!(
        actions.len(),
        1,
        "only what the host must do now: {actions:?}"
    );
    assert_eq!(
        delivery(&actions),
        Some(&first),
        "same prompt bytes as the first time"
    );
    resumed
        .apply(&Fact::replied("max", "Done [NEXT: kailai]", Millis(2)))
        .unwrap();
    assert_eq!(
        drain(&mut resumed),
        vec![Action::AwaitHuman {
            member: "kailai".into()
        }]
    );
}

#[test]
fn an_imported_session_waiting_for_a_human_says_so() {
    let mut s = session();
    s.apply(&Fact::human("Just a note", Millis(1))).unwrap();
    let mut resumed = Session::import(&s.export()).unwrap();
    assert_eq!(
        drain(&mut resumed),
        vec![Action::AwaitHuman {
            member: "kailai".into()
        }]
    );
}

#[test]
fn bad_session_files_name_what_and_where() {
    let team = serde_json::to_value(team()).unwrap();
    let cases: Vec<(String, &str)> = vec![
        ("{".into(), "invalid JSON at line 1, column 1: the text ends inside an object (something is cut off or not closed)"),
        ("[]".into(), "expected an object, found an array"),
        (json!({"facts": []}).to_string(), "format: missing"),
        (
            json!({"format": "agent-chatter-session/2", "facts": []}).to_string(),
            "format: \"agent-chatter-session/2\" is not a session file this version reads (expected \"agent-chatter-session/1\")",
        ),
        (json!({"format": SESSION_FORMAT}).to_string(), "facts: missing"),
        (
            json!({"format": SESSION_FORMAT, "facts": [{"type": "setTeam", "team": team}, {"type": "human", "at": 1}]}).to_string(),
            "facts[1].text: missing",
        ),
        (
            json!({"format": SESSION_FORMAT, "facts": [{"type": "shout", "text": "hi"}]}).to_string(),
            "facts[0].type: unknown fact type \"shout\" (expected setTeam, setSettings, human, replied, failed, retry, loadScenario or memberLeft)",
        ),
        (
            json!({"format": SESSION_FORMAT, "facts": [{"type": "setTeam", "team": {"name": "t", "members": [
                {"name": "kailai", "kind": "human"}, {"name": "max", "kind": "ai"}]}}]}).to_string(),
            "facts[0].team.members[1] (max): agentType: missing for an AI member (e.g. \"claude-code\", \"openai-codex\", \"google-gemini\")",
        ),
        (
            json!({"format": SESSION_FORMAT, "facts": [{"type": "setTeam", "team": team}, {"type": "human", "text": "hi", "at": "noon"}]}).to_string(),
            "facts[1].at: expected a non-negative integer, found the string \"noon\"",
        ),
        (
            json!({"format": SESSION_FORMAT, "facts": [{"type": "setTeam", "team": team}, {"type": "replied", "to": "max", "text": "hi", "at": 1}]}).to_string(),
            "facts[1] (replied): does not replay:",
        ),
        (
            json!({"format": 1, "facts": []}).to_string(),
            "format: 1 is not a session file this version reads",
        ),
        (
            json!({"format": SESSION_FORMAT, "facts": {"0": {}}}).to_string(),
            "facts: expected an array, found an object",
        ),
        (
            json!({"format": SESSION_FORMAT, "facts": [[1]]}).to_string(),
            "facts[0]: expected an object, found an array",
        ),
        (
            json!({"format": SESSION_FORMAT, "facts": [{"type": "human", "text": ["hi"], "at": 1}]}).to_string(),
            "facts[0].text: expected a string, found an array",
        ),
        (
            json!({"format": SESSION_FORMAT, "facts": [{"type": "human", "text": "hi", "sender": 7, "at": 1}]}).to_string(),
            "facts[0].sender: expected a string, found 7",
        ),
        (
            json!({"format": SESSION_FORMAT, "facts": [{"type": "human", "text": "hi", "at": -1}]}).to_string(),
            "facts[0].at: expected a non-negative integer, found -1",
        ),
        (
            json!({"format": SESSION_FORMAT, "facts": [{"type": "setSettings"}]}).to_string(),
            "facts[0].settings: missing",
        ),
    ];
    for (file, expected) in cases {
        let err = Session::import(&file).map(|_| ()).unwrap_err().to_string();
        assert!(
            err.starts_with(expected) || err.ends_with(expected),
            "{file}\n  got: {err}\n want: {expected}"
        );
    }
}

#[test]
fn session_files_read_like_every_json_file_here() {
    // `null` counts as absent, a repeated key's last value wins, unknown keys are ignored,
    // escaped strings read as what they say.
    let team = serde_json::to_string(&team()).unwrap();
    let file = format!(
        r#"{{"format": "{SESSION_FORMAT}", "note": [1, {{"x": null}}], "facts": [
            {{"type": "setTeam", "team": {team}, "settings": null}},
            {{"type": "human", "text": "first", "text": "Plan \"it\"\n[NEXT: max]", "sender": null, "at": 1}}
        ]}}"#
    );
    let session = Session::import(&file).expect("reads");
    assert_eq!(session.messages().len(), 1);
    assert_eq!(session.messages()[0].content, "Plan \"it\"\n[NEXT: max]");
    let fact: Fact =
        serde_json::from_str(r#"{"type": "failed", "to": "max", "reason": "timed out", "at": 3}"#)
            .expect("one fact reads on its own");
    assert_eq!(fact, Fact::failed("max", "timed out", Millis(3)));
    let refused = serde_json::from_str::<Fact>(r#"{"type": "failed", "to": "max", "at": 3}"#)
        .unwrap_err()
        .to_string();
    assert!(refused.starts_with("reason: missing"), "{refused}");
}

// --- preview -----------------------------------------------------------------------------

#[test]
fn preview_of_a_delivered_message_is_what_the_agent_got() {
    let (s, delivered) = chain();
    assert_eq!(delivered.len(), 3);
    for d in &delivered {
        let at = s.store().position(&d.message).unwrap();
        let p = s
            .preview(&d.to, Some(at), &PreviewOverrides::default())
            .unwrap();
        assert_eq!(p, d.prompt, "{} at #{at}", d.to);
    }
}

#[test]
fn a_settings_change_never_rewrites_what_an_agent_was_given() {
    let (mut s, delivered) = chain();
    let mut settings = s.settings().unwrap().clone();
    settings.max_bytes = 200;
    settings.window_size = 0;
    s.apply(&Fact::set_settings(settings)).unwrap();
    for d in &delivered {
        let at = s.store().position(&d.message).unwrap();
        let p = s
            .preview(&d.to, Some(at), &PreviewOverrides::default())
            .unwrap();
        assert_eq!(
            p, d.prompt,
            "{} at #{at}, after the budget became 200",
            d.to
        );
    }
    // What-if still starts from what was delivered and changes only what it names.
    let d = &delivered[1];
    let at = s.store().position(&d.message).unwrap();
    let what_if = PreviewOverrides {
        max_bytes: Some(100),
        ..PreviewOverrides::default()
    };
    let p = s.preview(&d.to, Some(at), &what_if).unwrap();
    assert_eq!(p.explain.max_bytes, 100);
    assert_eq!(p.explain.window, d.prompt.explain.window);
    // A point where carol was delivered nothing previews with the settings in force now.
    assert!(!s.was_delivered("carol", 0));
    let p = s
        .preview("carol", Some(0), &PreviewOverrides::default())
        .unwrap();
    assert_eq!(p.explain.max_bytes, 200);
}

#[test]
fn preview_is_time_travel_the_team_task_of_then() {
    let mut s = session();
    s.apply(&Fact::human("First note", Millis(1))).unwrap();
    s.apply(&Fact::human("[TEAM_TASK: later task] Second", Millis(2)))
        .unwrap();
    let o = PreviewOverrides::default();
    let then = s.preview("sarah", Some(0), &o).unwrap();
    assert!(!then.prompt.contains("later task"), "{}", then.prompt);
    assert_eq!(then.explain.current, Some(0));
    let now = s.preview("sarah", None, &o).unwrap();
    assert!(now
        .prompt
        .starts_with("[SYSTEM]\nYou are Sarah, you write the code.\n\n[TEAM_TASK]\nlater task"));
    assert_eq!(
        s.preview("sarah", Some(7), &o).unwrap_err().to_string(),
        "at: message #7 does not exist; the conversation has 2 messages (0-based)"
    );
}

#[test]
fn what_if_changes_the_prompt_not_the_session() {
    let (s, _) = chain();
    let before = s.export();
    let last = s.messages().len() - 1;
    let actual = s
        .preview("carol", Some(last), &PreviewOverrides::default())
        .unwrap();
    let narrow = PreviewOverrides {
        window_size: Some(0),
        ..PreviewOverrides::default()
    };
    let what_if = s.preview("carol", Some(last), &narrow).unwrap();
    assert_ne!(actual.prompt, what_if.prompt);
    assert!(what_if
        .explain
        .messages
        .iter()
        .all(|m| m.fate == Fate::Current));
    let tight = PreviewOverrides {
        max_tokens: Some(20),
        ..PreviewOverrides::default()
    };
    let tokens = s.preview("carol", Some(last), &tight).unwrap();
    assert!(tokens.explain.total_tokens.unwrap() <= 20);
    assert_eq!(s.export(), before);
}

#[test]
fn preview_with_no_messages_is_the_skeleton() {
    let s = session();
    let p = s
        .preview("sarah", None, &PreviewOverrides::default())
        .unwrap();
    assert_eq!(p.prompt, "[SYSTEM]\nYou are Sarah, you write the code.");
    assert_eq!(p.explain.current, None);
    assert_eq!(
        s.preview("zed", None, &PreviewOverrides::default())
            .unwrap_err()
            .to_string(),
        "member: \"zed\" is not a member (members: kailai, max, sarah, carol)"
    );
}

#[test]
fn the_session_as_a_scenario_previews_the_same_bytes() {
    let (s, _) = chain();
    let scenario = s.to_scenario().unwrap();
    let text = serde_json::to_string(&scenario).unwrap();
    let loaded = scenario::load_scenario(&text).expect("the scenario reloads");
    for member in ["max", "sarah", "carol"] {
        assert_eq!(
            scenario::preview(&loaded, member).unwrap(),
            s.preview(member, None, &PreviewOverrides::default())
                .unwrap(),
            "{member}"
        );
    }
}

#[test]
fn the_session_as_a_snapshot_holds_every_message() {
    let (s, _) = chain();
    let snap = s.snapshot(Millis(99));
    assert_eq!(snap.messages.len(), s.messages().len());
    assert_eq!(snap.team_task.as_deref(), Some("Build a login page"));
}

// --- demo agent ---------------------------------------------------------------------------

#[test]
fn the_demo_agent_says_in_words_what_it_read_and_passes_the_turn() {
    let mut s = session();
    s.apply(&Fact::human(
        "[TEAM_TASK: Ship v1] Please start [NEXT: max]",
        Millis(1),
    ))
    .unwrap();
    let d = delivery(&drain(&mut s)).cloned().unwrap();
    assert_eq!(
        s.simulate_reply(&d),
        "Max (simulated): I read the task \"Ship v1\", no earlier messages and the message \
         \"Please start\". Passing to Sarah. [NEXT: sarah]"
    );
}

#[test]
fn the_demo_agent_counts_the_earlier_messages_its_prompt_held() {
    let mut s = session();
    s.apply(&Fact::human("Please start [NEXT: max]", Millis(1)))
        .unwrap();
    let d = delivery(&drain(&mut s)).cloned().unwrap();
    let reply = s.simulate_reply(&d);
    s.apply(&Fact::replied(&d.to, reply, Millis(2))).unwrap();
    let d = delivery(&drain(&mut s)).cloned().unwrap();
    assert_eq!(d.to, "sarah");
    assert!(
        s.simulate_reply(&d).starts_with(
            "Sarah (simulated): I read 1 earlier message and the message \"Max (simulated): I read"
        ),
        "{}",
        s.simulate_reply(&d)
    );
}

#[test]
fn a_simulated_conversation_ends_with_done() {
    let mut s = session();
    s.apply(&Fact::human("Go [NEXT: max]", Millis(1))).unwrap();
    let mut replies = 0;
    let mut t = 1;
    while let Some(d) = delivery(&drain(&mut s)).cloned() {
        t += 1;
        let reply = s.simulate_reply(&d);
        s.apply(&Fact::replied(&d.to, reply, Millis(t))).unwrap();
        replies += 1;
        assert!(replies <= 10, "the demo must stop");
    }
    assert_eq!(replies, agent_chatter::demo::MAX_DEMO_ROUNDS);
    assert_eq!(s.conversation().status(), Status::Completed);
    let again = {
        let copy = Session::import(&s.export()).unwrap();
        copy.messages().to_vec()
    };
    assert_eq!(again, s.messages(), "deterministic");
}

#[test]
fn a_loaded_scenario_previews_exactly_as_the_scenario_does() {
    let scenario =
        agent_chatter::scenario::load_scenario(include_str!("../examples/demo-scenario.json"))
            .unwrap();
    let mut session = Session::new();
    session
        .apply(&Fact::LoadScenario {
            scenario: Box::new(scenario.clone()),
        })
        .unwrap();
    assert_eq!(session.messages().len(), scenario.messages.len());
    for member in ["max", "sarah", "carol"] {
        let expected = agent_chatter::scenario::preview(&scenario, member).unwrap();
        let got = session
            .preview(member, None, &PreviewOverrides::default())
            .unwrap();
        assert_eq!(got, expected, "{member}");
    }
    // The facts replay, and the conversation goes on through routing.
    let replayed = Session::import(&session.export()).unwrap();
    assert_eq!(replayed.messages(), session.messages());
    session
        .apply(&Fact::human(
            "[FROM: kailai] Once more. [NEXT: max]",
            Millis(5),
        ))
        .unwrap();
    assert!(std::iter::from_fn(|| session.poll_action())
        .any(|a| matches!(a, Action::Deliver(d) if d.to == "max")));
}

#[test]
fn a_loaded_history_waits_for_the_first_human_whose_plain_message_it_takes() {
    let scenario = agent_chatter::scenario::load_scenario(
        r#"{"team": {"name": "t", "members": [{"name": "kailai", "kind": "human"},
            {"name": "ana", "kind": "human"}, {"name": "max", "kind": "ai", "agentType": "codex"}]},
            "messages": [{"from": "ana", "content": "first [NEXT: max]"},
                         {"from": "max", "content": "an answer"}]}"#,
    )
    .unwrap();
    let mut session = Session::new();
    session
        .apply(&Fact::LoadScenario {
            scenario: Box::new(scenario),
        })
        .unwrap();
    let conversation = session.conversation();
    assert_eq!(conversation.status(), Status::AwaitingHuman);
    assert_eq!(conversation.waiting_for(), Some("kailai"));
    // Two humans, no [FROM]: the awaited one speaks, as after any message routing no one.
    session
        .apply(&Fact::human("go on [NEXT: max]", Millis(5)))
        .unwrap();
    assert_eq!(session.messages().last().unwrap().speaker.id, "kailai");
}

#[test]
fn time_travel_in_a_loaded_scenario_sees_the_team_task_of_then() {
    let scenario = agent_chatter::scenario::load_scenario(
        r#"{"team": {"name": "t", "members": [{"name": "kailai", "kind": "human"},
            {"name": "max", "kind": "ai", "agentType": "codex"}]},
            "messages": [{"from": "kailai", "content": "first [NEXT: max]"},
                         {"from": "kailai", "content": "[TEAM_TASK: later task] second [NEXT: max]"}]}"#,
    )
    .unwrap();
    let mut session = Session::new();
    session
        .apply(&Fact::LoadScenario {
            scenario: Box::new(scenario),
        })
        .unwrap();
    let o = PreviewOverrides::default();
    assert!(!session
        .preview("max", Some(0), &o)
        .unwrap()
        .prompt
        .contains("later task"));
    assert!(session
        .preview("max", Some(1), &o)
        .unwrap()
        .prompt
        .contains("[TEAM_TASK]\nlater task"));
}

#[test]
fn a_bad_scenario_in_a_session_file_names_the_fact_and_the_field() {
    let file = r#"{"format": "agent-chatter-session/1", "facts": [
        {"type": "loadScenario", "scenario": {"team": {"name": "t", "members": [{"name": "kailai", "kind": "human"}]},
         "messages": [{"from": "zed", "content": "hi"}]}}]}"#;
    let err = Session::import(file).unwrap_err().to_string();
    assert!(
        err.starts_with("facts[0].scenario: messages[0].from: \"zed\" is not a member"),
        "{err}"
    );
}

#[test]
fn a_prompt_digest_covers_the_prompt_and_the_system_flag_apart() {
    let session = Session::replay(&[Fact::set_team(agent_chatter::demo::team())]).unwrap();
    let mut p = session
        .preview("max", None, &PreviewOverrides::default())
        .unwrap();
    p.prompt = "abc".into();
    p.system_flag = None;
    // sha256("abc"), the FIPS 180-2 test vector.
    assert_eq!(
        p.sha256_hex(),
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    );
    let plain = p.sha256_hex();
    p.system_flag = Some(String::new());
    assert_ne!(p.sha256_hex(), plain, "an empty flag is still a flag");
    p.prompt = "ab".into();
    p.system_flag = Some("c".into());
    let split = p.sha256_hex();
    p.prompt = "a".into();
    p.system_flag = Some("bc".into());
    assert_ne!(p.sha256_hex(), split);
}

#[test]
fn a_zero_budget_override_is_refused_naming_the_field() {
    let session = Session::replay(&[Fact::set_team(agent_chatter::demo::team())]).unwrap();
    for (overrides, field) in [
        (
            PreviewOverrides {
                max_bytes: Some(0),
                ..Default::default()
            },
            "overrides.maxBytes",
        ),
        (
            PreviewOverrides {
                max_tokens: Some(0),
                ..Default::default()
            },
            "overrides.maxTokens",
        ),
    ] {
        let err = session
            .preview("max", None, &overrides)
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with(&format!("{field}: must be greater than 0")),
            "{err}"
        );
    }
    let tiny = PreviewOverrides {
        max_bytes: Some(1),
        ..Default::default()
    };
    assert!(
        session
            .preview("max", None, &tiny)
            .unwrap()
            .explain
            .total_bytes
            <= 1
    );
}

#[test]
fn a_session_knows_which_prompts_were_delivered() {
    let mut session = Session::replay(&[Fact::set_team(agent_chatter::demo::team())]).unwrap();
    session
        .apply(&Fact::human("[FROM: kailai] go [NEXT: max]", Millis(1)))
        .unwrap();
    assert!(session.was_delivered("max", 0));
    assert!(!session.was_delivered("sarah", 0));
    assert!(!session.was_delivered("max", 1));
}

fn usage(cost: f64) -> Usage {
    Usage {
        input_tokens: Some(1000),
        output_tokens: Some(50),
        cost_usd: Usd::new(cost),
        ..Usage::default()
    }
}

#[test]
fn outcome_facts_carry_usage_and_read_back_as_themselves() {
    let facts = [
        Fact::replied("max", "ok", Millis(4)).with_usage(usage(0.25)),
        Fact::Replied {
            to: "max".into(),
            text: "half".into(),
            at: Millis(4),
            incomplete: Some("Loop detected, stopping execution".into()),
            usage: None,
        },
        Fact::Failed {
            to: "max".into(),
            reason: "claude exited with code 1: API Error: 500 (127.0.0.1:38287)".into(),
            at: Millis(5),
            failure: Some(Failure::Crashed),
            usage: Some(Box::new(usage(0.01))),
        },
    ];
    for fact in facts {
        let text = serde_json::to_string(&fact).unwrap();
        let back: Fact = serde_json::from_str(&text).unwrap();
        assert_eq!(back, fact, "{text}");
    }
    // Older logs, without the new fields, read as before and write back byte for byte.
    let old = r#"{"type":"failed","to":"max","reason":"boom","at":5}"#;
    let fact: Fact = serde_json::from_str(old).unwrap();
    assert_eq!(serde_json::to_string(&fact).unwrap(), old);
}

#[test]
fn a_bad_usage_or_failure_kind_is_named_by_its_path() {
    for (text, want) in [
        (
            r#"{"type":"replied","to":"max","text":"x","at":1,"usage":{"costUsd":"free"}}"#,
            r#"usage.costUsd: expected a number of dollars, found the string "free""#,
        ),
        (
            r#"{"type":"failed","to":"max","reason":"x","at":1,"failure":"oops"}"#,
            r#"failure: expected "timeout", "cancelled", "crashed""#,
        ),
    ] {
        let err = serde_json::from_str::<Fact>(text).unwrap_err().to_string();
        assert!(err.starts_with(want), "{err}");
    }
}

#[test]
fn usage_is_summed_per_member_and_per_conversation() {
    let mut s = session();
    s.apply(&Fact::human("go [NEXT: max, sarah]", Millis(1)))
        .unwrap();
    drain(&mut s);
    s.apply(&Fact::replied("max", "done", Millis(2)).with_usage(usage(0.25)))
        .unwrap();
    drain(&mut s);
    s.apply(&Fact::failed("sarah", "boom", Millis(3)).with_usage(usage(0.5)))
        .unwrap();
    let max = s.usage(Some("max"));
    assert_eq!((max.usage.cost_usd, max.runs), (Usd::new(0.25), 1));
    let all = s.usage(None);
    assert_eq!(
        (
            all.usage.cost_usd,
            all.usage.input_tokens,
            all.runs,
            all.unpriced
        ),
        (Usd::new(0.75), Some(2000), 2, 0)
    );
    // Each run is found by the message it ended in.
    let run = s.run_at(1).expect("max's reply is message 1");
    assert_eq!(run.to, "max");
    assert_eq!(s.run_at(2).unwrap().failed.as_deref(), Some("boom"));
    assert_eq!(s.run_at(0), None);
    // Each prompt is answered by its recipient's run: max's (with #1 as its [MESSAGE]) by
    // his reply, sarah's (with his reply, the latest) by her failure; no prompt of #1 for max.
    assert_eq!(s.answer("max", 0).map(|r| r.message), Some(1));
    assert_eq!(
        s.answer("sarah", 1).and_then(|r| r.failed.as_deref()),
        Some("boom")
    );
    assert_eq!(s.answer("max", 1), None);
    // A new team starts a new conversation, but what was spent stays spent: the usage still
    // counts the earlier runs, which are no longer listed with the new team's deliveries.
    let before = s.usage(None);
    s.apply(&Fact::set_team(team())).unwrap();
    assert_eq!(s.usage(None), before);
    assert_eq!(s.usage(Some("max")).runs, 1);
    assert!(s.runs().is_empty());
    assert_eq!(s.earlier_runs(), 2);
}

#[test]
fn a_team_change_does_not_reset_the_cost_cap() {
    let mut s = session();
    s.apply(&Fact::set_settings(TeamSettings {
        max_cost_usd: Usd::new(0.5),
        ..TeamSettings::default()
    }))
    .unwrap();
    s.apply(&Fact::human("go [NEXT: max]", Millis(1))).unwrap();
    drain(&mut s);
    s.apply(&Fact::replied("max", "done", Millis(2)).with_usage(usage(0.6)))
        .unwrap();
    drain(&mut s);
    // The same team again, cap and all (a member edit, or the team file opened anew): the
    // $0.60 already spent still counts against its $0.50.
    let mut capped = team();
    capped.settings.max_cost_usd = Usd::new(0.5);
    for change in [
        Fact::set_team(capped.clone()),
        Fact::LoadScenario {
            scenario: Box::new(scenario::Scenario::from_history(capped, s.messages(), None)),
        },
    ] {
        s.apply(&change).unwrap();
        drain(&mut s);
        s.apply(&Fact::human("again [NEXT: max]", Millis(3)))
            .unwrap();
        let actions = drain(&mut s);
        assert!(delivery(&actions).is_none(), "{change:?}: {actions:?}");
        assert_eq!(s.conversation().spent(), Usd::new(0.6).unwrap());
    }
}

#[test]
fn the_other_agents_read_a_failure_as_one_short_line_in_words() {
    let mut s = session();
    s.apply(&Fact::human("go [NEXT: max, sarah]", Millis(1)))
        .unwrap();
    drain(&mut s);
    let reason = "claude exited with code 1: check your inference gateway (127.0.0.1:38287)";
    s.apply(&Fact::Failed {
        to: "max".into(),
        reason: reason.into(),
        at: Millis(2),
        failure: Some(Failure::Crashed),
        usage: None,
    })
    .unwrap();
    assert!(delivery(&drain(&mut s)).is_some_and(|d| d.to == "sarah"));
    s.apply(&Fact::replied("sarah", "on it [NEXT: carol]", Millis(3)))
        .unwrap();
    let carol = delivery(&drain(&mut s)).expect("carol is next").clone();
    assert!(
        carol
            .prompt
            .prompt
            .contains("max failed: its CLI exited with an error"),
        "{}",
        carol.prompt.prompt
    );
    assert!(!carol.prompt.prompt.contains("127.0.0.1"));
    // The people still get the whole reason.
    assert_eq!(s.run_at(1).unwrap().failed.as_deref(), Some(reason));
}

#[test]
fn a_run_names_its_outcome_in_one_word_a_cancel_and_a_timeout_by_their_own() {
    let mut s = session();
    s.apply(&Fact::human("go [NEXT: max, sarah, carol]", Millis(1)))
        .unwrap();
    drain(&mut s);
    let failed = |to: &str, failure| Fact::Failed {
        to: to.into(),
        reason: "the reason".into(),
        at: Millis(2),
        failure,
        usage: None,
    };
    s.apply(&failed("max", Some(Failure::Cancelled))).unwrap();
    s.apply(&failed("sarah", Some(Failure::Timeout))).unwrap();
    s.apply(&failed("carol", Some(Failure::Crashed))).unwrap();
    let said: Vec<_> = s
        .runs()
        .iter()
        .map(|r| (r.to.as_str(), r.outcome(), r.failed_verb()))
        .collect();
    assert_eq!(
        said,
        [
            ("max", "cancelled", Some("was cancelled")),
            ("sarah", "timed out", Some("timed out")),
            ("carol", "failed", Some("failed")),
        ]
    );
}

#[test]
fn a_reply_names_its_outcome_replied_or_incomplete() {
    let mut s = session();
    s.apply(&Fact::human("go [NEXT: max, sarah]", Millis(1)))
        .unwrap();
    drain(&mut s);
    s.apply(&Fact::replied("max", "done", Millis(2))).unwrap();
    s.apply(&Fact::Replied {
        to: "sarah".into(),
        text: "half".into(),
        at: Millis(3),
        incomplete: Some("max turns".into()),
        usage: None,
    })
    .unwrap();
    let said: Vec<_> = s
        .runs()
        .iter()
        .map(|r| (r.outcome(), r.failed_verb()))
        .collect();
    assert_eq!(said, [("replied", None), ("incomplete", None)]);
}

/// One reading of the cap for every view: "reached" is exactly when the conversation gives no
/// agent the next message, whatever the sum's rounding (0.1 + 0.2 is past 0.3 in dollars as
/// floats: the conversation's own sum decides, not a view's).
#[test]
fn the_cap_standing_says_reached_exactly_when_the_conversation_stops_deliveries() {
    for (cap, costs) in [
        (0.3, &[0.1, 0.2, 0.01][..]),
        (0.5, &[0.25, 0.25, 0.01]),
        (0.5, &[0.6, 0.01]),
        (1.0, &[0.1, 0.2, 0.3, 0.4, 0.01]),
    ] {
        let mut s = session();
        s.apply(&Fact::set_settings(TeamSettings {
            max_cost_usd: Usd::new(cap),
            ..TeamSettings::default()
        }))
        .unwrap();
        drain(&mut s);
        for (i, cost) in costs.iter().enumerate() {
            let standing = s.cap_standing().expect("the team sets a cap");
            let at = Millis(2 * i as u64 + 1);
            s.apply(&Fact::human("go [NEXT: max]", at)).unwrap();
            let given = delivery(&drain(&mut s)).is_some();
            assert_eq!(
                given,
                !standing.reached(),
                "cap {cap}, runs {costs:?}, before run {i}: {standing:?}"
            );
            assert_eq!(s.cap_left(), Some(standing.left()));
            if !given {
                break;
            }
            s.apply(&Fact::replied("max", "ok", Millis(at.0 + 1)).with_usage(usage(*cost)))
                .unwrap();
            drain(&mut s);
        }
        assert!(
            s.cap_standing().unwrap().reached(),
            "cap {cap}, runs {costs:?}: the last run reaches it"
        );
    }
}

#[test]
fn the_cost_cap_stops_further_deliveries_with_a_notice_until_it_is_raised() {
    let mut s = session();
    let capped = TeamSettings {
        max_cost_usd: Usd::new(0.5),
        ..TeamSettings::default()
    };
    s.apply(&Fact::set_settings(capped)).unwrap();
    s.apply(&Fact::human("go [NEXT: max]", Millis(1))).unwrap();
    drain(&mut s);
    // What a run may still spend: the whole cap, then nothing once it is passed.
    assert_eq!(s.cap_left(), Usd::new(0.5));
    s.apply(&Fact::replied("max", "over to you [NEXT: sarah]", Millis(2)).with_usage(usage(0.6)))
        .unwrap();
    assert_eq!(s.cap_left(), Usd::new(0.0));
    let actions = drain(&mut s);
    assert!(delivery(&actions).is_none(), "{actions:?}");
    let notice = actions
        .iter()
        .find_map(|a| match a {
            Action::Notice(n) => Some(n.to_string()),
            _ => None,
        })
        .expect("a notice says why");
    assert_eq!(
        notice,
        "cost cap reached: the runs cost $0.6000 of the team's max cost $0.50 (the last run \
         passed the cap by $0.1000: a run that starts under the cap is not stopped by it); \
         dropped the pending deliveries to sarah; raise \"max cost $\" (maxCostUsd) in the \
         team's settings to go on"
    );
    // A human asking again is refused the same way; a raised cap lets the next one run.
    s.apply(&Fact::human("again [NEXT: sarah]", Millis(3)))
        .unwrap();
    assert!(delivery(&drain(&mut s)).is_none());
    s.apply(&Fact::set_settings(TeamSettings {
        max_cost_usd: Usd::new(5.0),
        ..TeamSettings::default()
    }))
    .unwrap();
    s.apply(&Fact::human("now [NEXT: sarah]", Millis(4)))
        .unwrap();
    assert_eq!(
        delivery(&drain(&mut s)).map(|d| d.to.as_str()),
        Some("sarah")
    );
    assert_eq!(s.cap_left().map(|c| c.display()), Some("$4.40".into()));
    // Per member, in the order they first ran; together the session's total.
    s.apply(&Fact::replied("sarah", "done", Millis(5)).with_usage(usage(0.25)))
        .unwrap();
    drain(&mut s);
    let by_member: Vec<_> = s
        .usage_by_member()
        .into_iter()
        .map(|(m, spend)| (m, spend.runs, spend.cost()))
        .collect();
    assert_eq!(
        by_member,
        [
            ("max".to_string(), 1, Some("$0.6000".to_string())),
            ("sarah".to_string(), 1, Some("$0.2500".to_string()))
        ]
    );
    assert_eq!(s.usage(None).cost(), Some("$0.8500".to_string()));
    // A cap lowered below what was spent stops the next run, and no run passed it.
    s.apply(&Fact::set_settings(TeamSettings {
        max_cost_usd: Usd::new(0.25),
        ..TeamSettings::default()
    }))
    .unwrap();
    s.apply(&Fact::human("later [NEXT: max]", Millis(6)))
        .unwrap();
    let lowered = drain(&mut s)
        .iter()
        .find_map(|a| match a {
            Action::Notice(n) => Some(n.to_string()),
            _ => None,
        })
        .expect("a notice says why");
    assert!(
        lowered.starts_with(
            "cost cap reached: the runs cost $0.8500 of the team's max cost $0.25; dropped"
        ),
        "{lowered}"
    );
    // The log replays to the same stop.
    let again = Session::import(&s.export()).unwrap();
    assert_eq!(again.messages(), s.messages());
}

#[test]
fn a_prompt_crossing_into_warning_or_critical_raises_one_notice_not_one_per_prompt() {
    let mut s = session();
    s.apply(&Fact::set_settings(TeamSettings {
        max_bytes: 400,
        ..TeamSettings::default()
    }))
    .unwrap();
    let crossings = |actions: &[Action]| -> Vec<String> {
        actions
            .iter()
            .filter_map(|a| match a {
                Action::Notice(n) if n.to_string().starts_with("budget ") => Some(n.to_string()),
                _ => None,
            })
            .collect()
    };
    let mut seen = Vec::new();
    for i in 0..6 {
        s.apply(&Fact::human(
            format!("{} [NEXT: sarah]", "word ".repeat(20 + i)),
            Millis(2 * i as u64),
        ))
        .unwrap();
        seen.extend(crossings(&drain(&mut s)));
        s.apply(&Fact::replied("sarah", "ok", Millis(2 * i as u64 + 1)))
            .unwrap();
        drain(&mut s);
    }
    // The prompts grow past 75% and then 90% of 400 bytes: one notice per crossing, not one
    // per prompt past it.
    assert_eq!(seen.len(), 2, "{seen:?}");
    assert!(
        seen[0].starts_with("budget warning: sarah's prompt is "),
        "{seen:?}"
    );
    assert!(
        seen[1].starts_with("budget critical: sarah's prompt is "),
        "{seen:?}"
    );
}

#[test]
fn a_members_extra_sections_from_the_team_are_in_its_prompt_and_the_explain() {
    let mut team = team();
    team.members[2].extra_sections = vec![agent_chatter::team::ExtraSection {
        name: "plan".into(),
        content: "1. parse 2. test".into(),
        priority: 1,
        compactable: true,
    }];
    let mut s = Session::new();
    s.apply(&Fact::set_team(team)).unwrap();
    s.apply(&Fact::human("go [NEXT: sarah]", Millis(1)))
        .unwrap();
    let d = delivery(&drain(&mut s)).expect("sarah").clone();
    assert!(
        d.prompt.prompt.contains("1. parse 2. test"),
        "{}",
        d.prompt.prompt
    );
    assert!(d.prompt.explain.sections.iter().any(|x| x.name == "plan"));
    // The session file carries them: the replay gives the same bytes.
    let mut again = Session::import(&s.export()).unwrap();
    let redelivered = delivery(&drain(&mut again)).expect("sarah again").clone();
    assert_eq!(redelivered.prompt, d.prompt);
}

// --- retry ---------------------------------------------------------------------------------

/// Max was asked, and his run failed; the session waits for Kailai.
fn max_failed() -> Session {
    let mut s = session();
    s.apply(&Fact::human("Plan it [NEXT: max]", Millis(1)))
        .unwrap();
    drain(&mut s);
    s.apply(&Fact::failed("max", "timeout", Millis(2))).unwrap();
    drain(&mut s);
    s
}

#[test]
fn a_retry_delivers_the_failed_message_again_to_the_same_member() {
    let mut s = max_failed();
    let first = s
        .preview("max", Some(0), &PreviewOverrides::default())
        .unwrap();
    assert!(s.can_retry("max"));
    s.apply(&Fact::Retry {
        to: "max".into(),
        at: Millis(3),
    })
    .unwrap();
    let d = delivery(&drain(&mut s)).cloned().expect("delivered again");
    assert_eq!(d.to, "max");
    assert_eq!(
        s.messages()[s.store().position(&d.message).unwrap()].content,
        "Plan it [NEXT: max]"
    );
    assert_eq!(d.prompt.prompt, first.prompt);
    assert_eq!(
        s.conversation().in_flight().map(|f| f.to.as_str()),
        Some("max")
    );
    s.apply(&Fact::replied("max", "Planned. [DONE]", Millis(4)))
        .unwrap();
    assert_eq!(s.messages().last().unwrap().content, "Planned. [DONE]");
}

#[test]
fn a_retried_session_replays_to_the_same_state() {
    let mut s = max_failed();
    s.apply(&Fact::Retry {
        to: "max".into(),
        at: Millis(3),
    })
    .unwrap();
    let now: Vec<Action> = drain(&mut s);
    let mut copy = Session::import(&s.export()).unwrap();
    assert!(s.export().contains(r#"{"type":"retry","to":"max","at":3}"#));
    assert_eq!(drain(&mut copy), now);
    assert_eq!(copy.export(), s.export());
}

#[test]
fn a_retry_is_refused_when_the_last_run_did_not_fail() {
    let mut s = session();
    s.apply(&Fact::human("Plan it [NEXT: max]", Millis(1)))
        .unwrap();
    drain(&mut s);
    s.apply(&Fact::replied("max", "Done. [DONE]", Millis(2)))
        .unwrap();
    let before = s.export();
    let err = s
        .apply(&Fact::Retry {
            to: "max".into(),
            at: Millis(3),
        })
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "Max's last run did not fail, so there is nothing to retry; to ask Max again, write a \
         message with [NEXT: max]"
    );
    assert_eq!(s.export(), before);
}

#[test]
fn a_retry_is_refused_while_the_member_is_already_running() {
    let mut s = max_failed();
    s.apply(&Fact::Retry {
        to: "max".into(),
        at: Millis(3),
    })
    .unwrap();
    assert!(!s.can_retry("max"));
    let err = s
        .apply(&Fact::Retry {
            to: "max".into(),
            at: Millis(4),
        })
        .unwrap_err();
    assert!(
        err.to_string()
            .starts_with("Max is already running or queued"),
        "{err}"
    );
}

#[test]
fn a_log_that_went_past_its_cap_through_a_team_change_still_replays_as_written() {
    // Written before a team change carried the spend: max ran again after it, over the cap.
    let mut capped = team();
    capped.settings.max_cost_usd = Usd::new(0.5);
    let log = vec![
        Fact::set_team(capped.clone()),
        Fact::human("go [NEXT: max]", Millis(1)),
        Fact::replied("max", "done", Millis(2)).with_usage(usage(0.6)),
        Fact::set_team(capped),
        Fact::human("again [NEXT: max]", Millis(3)),
        Fact::replied("max", "second", Millis(4)).with_usage(usage(0.1)),
    ];
    let s = Session::replay(log.clone()).expect("replays");
    assert_eq!(s.facts(), log.as_slice());
    assert_eq!(s.usage(None).runs, 2);
    // Replayed as it was written: the cap counted from the team change, as then.
    assert_eq!(s.conversation().spent(), Usd::new(0.1).unwrap());
}

// --- machine settings (docs/architecture.md §14c) ----------------------------------------

/// The test team with every kind of machine setting a team file may give a member.
fn team_with_machine_settings() -> Team {
    load_team(
        r#"{"id": "crew", "name": "Crew", "members": [
        {"id": "kailai", "name": "kailai", "displayName": "Kailai", "kind": "human"},
        {"id": "max", "name": "max", "displayName": "Max", "kind": "ai", "agentType": "claude",
         "systemInstruction": "You are Max, you plan.", "baseDir": "/home/me/secret-project",
         "env": {"ANTHROPIC_API_KEY": "sk-ant-secret"}, "additionalArgs": ["--verbose"],
         "model": "opus", "permissionMode": "full", "timeoutMs": 90000},
        {"id": "sarah", "name": "sarah", "displayName": "Sarah", "kind": "ai", "agentType": "codex",
         "systemInstruction": "You are Sarah, you write the code.",
         "env": {"OPENAI_API_KEY": "sk-openai-secret"}},
        {"id": "carol", "name": "carol", "displayName": "Carol", "kind": "ai", "agentType": "gemini"}
    ]}"#,
    )
    .expect("valid team")
}

const SECRETS: [&str; 4] = [
    "sk-ant-secret",
    "sk-openai-secret",
    "/home/me/secret-project",
    "--verbose",
];

#[test]
fn a_teams_run_settings_and_working_directories_never_enter_the_log() {
    let team = team_with_machine_settings();
    assert!(team.has_machine_settings());
    let scenario = scenario::load_scenario(
        &json!({"team": serde_json::to_value(&team).unwrap(), "messages": []}).to_string(),
    )
    .unwrap();
    for fact in [
        Fact::set_team(team),
        Fact::LoadScenario {
            scenario: Box::new(scenario),
        },
    ] {
        assert!(fact.has_machine_settings());
        let mut s = Session::new();
        s.apply(&fact).unwrap();
        let file = s.export();
        for secret in SECRETS {
            assert!(!file.contains(secret), "{secret} is in the log: {file}");
        }
        assert!(!s.team().unwrap().has_machine_settings());
        assert!(!s.facts()[0].has_machine_settings());
    }
}

#[test]
fn an_old_log_holding_run_settings_is_cleaned_on_replay_and_its_prompts_are_unchanged() {
    // A log as a bridge wrote it before the rule: the setTeam fact holds env values and paths.
    let old_team = serde_json::to_value(team_with_machine_settings()).unwrap();
    assert!(old_team.to_string().contains("sk-ant-secret"));
    let human = "[TEAM_TASK: Build a login page] Max, plan it. [NEXT: max]";
    let old_log = json!({"format": SESSION_FORMAT, "facts": [
        {"type": "setTeam", "team": old_team},
        {"type": "human", "text": human, "sender": null, "at": 1},
    ]})
    .to_string();
    let mut replayed = Session::import(&old_log).unwrap();
    for secret in SECRETS {
        assert!(
            !replayed.export().contains(secret),
            "{secret} survived replay"
        );
    }
    // The prompt is the one the settings-bearing team gives, byte for byte.
    let delivered = delivery(&drain(&mut replayed))
        .cloned()
        .expect("max is due");
    let with_settings = scenario::load_scenario(
        &json!({"team": old_team, "messages": [{"from": "kailai", "content": human}]}).to_string(),
    )
    .unwrap();
    let expected = scenario::preview(&with_settings, "max").unwrap();
    assert_eq!(delivered.prompt.prompt, expected.prompt);
    assert_eq!(delivered.prompt.system_flag, expected.system_flag);
}
