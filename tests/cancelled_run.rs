//! Which failures the other agents read (docs/architecture.md §14c): every failure's notice enters
//! their later prompts as one short line, but a run the user cancelled is not news to them: no
//! line of it enters any prompt, and the human's next message says what comes next.

use agent_chatter::config::load_team;
use agent_chatter::conversation::{Action, Delivery};
use agent_chatter::explain::Fate;
use agent_chatter::message::Millis;
use agent_chatter::scenario;
use agent_chatter::session::{Fact, Failure, PreviewOverrides, Session};

fn session() -> Session {
    let team = load_team(
        r#"{"id": "crew", "name": "Crew", "members": [
        {"id": "kailai", "name": "kailai", "displayName": "Kailai", "kind": "human"},
        {"id": "max", "name": "max", "displayName": "Max", "kind": "ai", "agentType": "claude"},
        {"id": "sarah", "name": "sarah", "displayName": "Sarah", "kind": "ai", "agentType": "codex",
         "windowSize": 2},
        {"id": "carol", "name": "carol", "displayName": "Carol", "kind": "ai", "agentType": "gemini"}
    ]}"#,
    )
    .expect("valid team");
    let mut s = Session::new();
    s.apply(&Fact::set_team(team)).expect("team");
    s
}

fn next_delivery(s: &mut Session) -> Option<Delivery> {
    std::iter::from_fn(|| s.poll_action()).find_map(|a| match a {
        Action::Deliver(d) => Some(*d),
        _ => None,
    })
}

fn failed(to: &str, failure: Option<Failure>, at: u64) -> Fact {
    Fact::Failed {
        to: to.into(),
        reason: "the whole reason, for the people".into(),
        at: Millis(at),
        failure,
        usage: None,
    }
}

#[test]
fn each_kind_of_failure_says_whether_its_notice_appears_in_a_later_prompt() {
    // The spec, kind by kind: does the next agent's prompt hold `max failed: {words}`?
    let table = [
        (Some(Failure::Timeout), true),
        (Some(Failure::Cancelled), false),
        (Some(Failure::Crashed), true),
        (Some(Failure::AgentError), true),
        (Some(Failure::EmptyReply), true),
        (Some(Failure::TooLarge), true),
        (Some(Failure::CutOff), true),
        (Some(Failure::CannotRun), true),
        (Some(Failure::Interrupted), true),
        // An older log's failure, with its reason and no kind.
        (None, true),
    ];
    assert_eq!(
        table.len(),
        Failure::ALL.len() + 1,
        "every kind is in the table"
    );
    for (failure, appears) in table {
        if let Some(kind) = failure {
            assert_eq!(kind.reaches_prompts(), appears, "{kind:?}");
        }
        let mut s = session();
        s.apply(&Fact::human("go [NEXT: max, sarah]", Millis(1)))
            .unwrap();
        assert_eq!(next_delivery(&mut s).unwrap().to, "max");
        s.apply(&failed("max", failure, 2)).unwrap();
        let line = match failure {
            Some(kind) => format!("max failed: {}", kind.words()),
            None => "max failed: the whole reason, for the people".to_string(),
        };
        assert_eq!(s.messages()[1].content.as_str(), line, "the people see it");
        assert_eq!(
            s.run_at(1).unwrap().reaches_prompts(),
            appears,
            "{failure:?}"
        );
        // Sarah answers the message before it; Carol, her reply after it.
        assert_eq!(next_delivery(&mut s).expect("sarah is next").to, "sarah");
        s.apply(&Fact::replied("sarah", "on it [NEXT: carol]", Millis(3)))
            .unwrap();
        let carol = next_delivery(&mut s).expect("carol is next");
        assert_eq!(
            carol.prompt.prompt.contains(&line),
            appears,
            "{failure:?}: {}",
            carol.prompt.prompt
        );
        let fate = carol.prompt.explain.fate_of(1);
        assert_eq!(fate == Fate::Withheld, !appears, "{failure:?}: {fate:?}");
    }
}

#[test]
fn a_cancel_then_a_new_human_message_gives_a_prompt_without_the_cancel_line() {
    let mut s = session();
    s.apply(&Fact::human(
        "Max, plan the login page. [NEXT: max]",
        Millis(1),
    ))
    .unwrap();
    assert_eq!(next_delivery(&mut s).unwrap().to, "max");
    s.apply(&Fact::Failed {
        to: "max".into(),
        reason: "cancelled by the user: the agent was stopped".into(),
        at: Millis(2),
        failure: Some(Failure::Cancelled),
        usage: None,
    })
    .unwrap();
    assert!(
        next_delivery(&mut s).is_none(),
        "nothing runs after a cancel"
    );
    s.apply(&Fact::human(
        "Sarah, you plan it instead. [NEXT: sarah]",
        Millis(3),
    ))
    .unwrap();
    let sarah = next_delivery(&mut s).expect("sarah is next");
    let prompt = &sarah.prompt.prompt;
    assert!(!prompt.contains("cancel"), "{prompt}");
    assert!(!prompt.contains("failed"), "{prompt}");
    // Her window of 2 is the two messages the agents read: the cancel takes no place in it.
    assert!(prompt.contains("Max, plan the login page."), "{prompt}");
    assert!(prompt.contains("Sarah, you plan it instead."), "{prompt}");
    assert_eq!(sarah.prompt.explain.fate_of(1), Fate::Withheld);
    // The people still see the cancel, in its words.
    assert_eq!(
        s.messages()[1].content.as_str(),
        "max failed: cancelled by the user"
    );
    // The session as a scenario previews the same bytes: its history leaves the cancel out.
    let scenario = s.to_scenario().unwrap();
    assert_eq!(scenario.messages.len(), 2);
    let text = serde_json::to_string(&scenario).unwrap();
    let loaded = scenario::load_scenario(&text).expect("the scenario reloads");
    assert_eq!(
        scenario::preview(&loaded, "sarah").unwrap().prompt,
        s.preview("sarah", None, &PreviewOverrides::default())
            .unwrap()
            .prompt
    );
}
