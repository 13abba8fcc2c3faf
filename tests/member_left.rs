//! A member leaves the team from now on (`memberLeft`, docs/architecture.md §6b): the team
//! changes at the end of the log and the history does not. Their messages and runs stay
//! theirs, queued deliveries to them go, a later `[NEXT]` naming them matches no one (as any
//! unknown name), the prompts of the others for earlier messages are byte for byte the same,
//! and a log with the fact replays to the same session.

use agent_chatter::config::load_team;
use agent_chatter::conversation::{Action, Notice};
use agent_chatter::message::Millis;
use agent_chatter::session::{Fact, PreviewOverrides, Session, SessionError};
use agent_chatter::testing::crew;
use agent_chatter::transcript::Format;
use proptest::prelude::*;

fn left(member: &str, at: u64) -> Fact {
    Fact::MemberLeft {
        member: member.into(),
        at: Millis(at),
    }
}

/// Applies `fact`, returning the actions it caused.
fn apply(session: &mut Session, fact: &Fact) -> Result<Vec<Action>, SessionError> {
    session.apply(fact)?;
    Ok(std::iter::from_fn(|| session.poll_action()).collect())
}

/// Kailai asked Max, who answered and handed over to Bob, who answered and asked Sarah and
/// Max; Sarah runs now, Max is queued after her.
fn talked() -> Session {
    let mut session = Session::new();
    for fact in [
        Fact::set_team(crew()),
        Fact::human("Plan the release [NEXT: max]", Millis(1)),
        Fact::replied("max", "A plan. [NEXT: bob]", Millis(2)),
        Fact::replied("bob", "Reviewed. [NEXT: sarah, max]", Millis(3)),
    ] {
        apply(&mut session, &fact).expect("the fact fits");
    }
    session
}

#[test]
fn a_member_who_has_spoken_leaves_and_their_messages_and_runs_stay_theirs() {
    let mut session = talked();
    let before = session.messages().to_vec();
    let runs = session.runs().to_vec();
    let actions = apply(&mut session, &left("bob", 4)).expect("bob may leave");
    assert!(session.team().unwrap().member("bob").is_none());
    assert_eq!(session.messages(), &before[..], "the history is unchanged");
    assert_eq!(session.messages()[2].speaker.display_name, "Bob");
    assert_eq!(session.runs(), &runs[..], "bob's run is still bob's");
    assert_eq!(
        session.display_name("bob"),
        Some("Bob"),
        "named from who they were"
    );
    assert_eq!(session.left_members().len(), 1);
    assert_eq!(session.left_members()[0].after, 3);
    let notice = actions.iter().find_map(|a| match a {
        Action::Notice(n @ Notice::MemberLeft { .. }) => Some(session.describe(n)),
        _ => None,
    });
    assert_eq!(
        notice.as_deref(),
        Some("Bob left the team at #3: their messages stay theirs; they get no more messages")
    );
    for format in [Format::Markdown, Format::Html] {
        let transcript = format.render(&session, None);
        assert!(
            transcript.contains("Bob"),
            "{format:?} names Bob: {transcript}"
        );
    }
}

/// The page's notice of the leave (`Session::describe`), from the actions `fact` caused.
fn left_notice(session: &mut Session, fact: &Fact) -> String {
    let actions = apply(session, fact).expect("the member may leave");
    let notice = actions.iter().find_map(|a| match a {
        Action::Notice(n @ Notice::MemberLeft { .. }) => Some(n.clone()),
        _ => None,
    });
    session.describe(&notice.expect("a notice that the member left"))
}

/// `text` cut into what comes before `first` and after it, and the part after that before
/// `second`: where a line stands between two headings.
fn between<'t>(text: &'t str, first: &str, second: &str) -> &'t str {
    let from = text
        .find(first)
        .unwrap_or_else(|| panic!("no {first:?} in {text}"));
    let rest = &text[from..];
    let to = rest
        .find(second)
        .unwrap_or_else(|| panic!("no {second:?} in {rest}"));
    &rest[..to]
}

/// The transcript says who left and when, at its place in the conversation (after the last
/// message stored then, before the next), in the words the page's notice uses; JSON carries
/// the fact (who, after how many messages) and the same words.
#[test]
fn the_transcript_says_when_a_member_left_in_the_pages_words() {
    let mut session = talked();
    let words = left_notice(&mut session, &left("max", 4));
    assert_eq!(
        words,
        "Max left the team at #3: their messages stay theirs; they get no more messages \
         (1 queued delivery to them dropped)"
    );
    apply(&mut session, &Fact::replied("sarah", "Done.", Millis(5))).unwrap();

    let md = Format::Markdown.render(&session, None);
    let md_words = words.replace('#', "\\#");
    assert_eq!(md.matches(&md_words).count(), 1, "once: {md}");
    assert!(
        between(&md, "## #3 Bob", "## #4 Sarah").contains(&format!("\n*{md_words}*\n")),
        "between #3 and #4: {md}"
    );
    let html = Format::Html.render(&session, None);
    assert_eq!(html.matches(&words).count(), 1, "once: {html}");
    assert!(
        between(&html, "id=\"m3\"", "id=\"m4\"").contains(&format!(
            "</article>\n<p class=\"member-left\">{words}</p>\n"
        )),
        "between #3 and #4: {html}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&Format::Json.render(&session, None)).unwrap();
    assert_eq!(
        json["membersLeft"],
        serde_json::json!([{"member": "max", "name": "Max", "after": 3, "notice": words}])
    );
}

/// One who leaves before the first message is said before it; a transcript without a leave
/// says none.
#[test]
fn a_member_who_left_before_the_first_message_is_said_before_it() {
    let mut session = Session::new();
    apply(&mut session, &Fact::set_team(crew())).unwrap();
    let before_leaving = Format::Markdown.render(&session, None);
    let words = left_notice(&mut session, &left("sarah", 1));
    assert_eq!(
        words,
        "Sarah left the team before the first message: their messages stay theirs; they get no \
         more messages"
    );
    apply(&mut session, &Fact::human("Hello [NEXT: max]", Millis(2))).unwrap();
    let md = Format::Markdown.render(&session, None);
    assert!(between(&md, "- members:", "## #1 Kailai").contains(&format!("\n*{words}*\n")));
    let html = Format::Html.render(&session, None);
    assert!(between(&html, "</ul>", "id=\"m1\"")
        .contains(&format!("<p class=\"member-left\">{words}</p>")));
    assert!(!before_leaving.contains("left the team"));
    let json: serde_json::Value =
        serde_json::from_str(&Format::Json.render(&talked(), None)).unwrap();
    assert!(json.get("membersLeft").is_none(), "none when no one left");
}

#[test]
fn deliveries_queued_to_a_member_who_leaves_are_dropped() {
    let mut session = talked();
    // Sarah runs; Max is queued.
    assert_eq!(session.conversation().in_flight().unwrap().to, "sarah");
    assert!(session
        .conversation()
        .pending()
        .iter()
        .any(|q| q.to == "max"));
    let actions = apply(&mut session, &left("max", 4)).unwrap();
    assert!(session.conversation().pending().is_empty());
    assert!(actions.iter().any(|a| matches!(a,
        Action::Notice(Notice::MemberLeft { member, dropped: 1, .. }) if member == "max")));
    // Sarah's answer goes on; nothing is delivered to Max.
    let actions = apply(&mut session, &Fact::replied("sarah", "Done.", Millis(5))).unwrap();
    assert!(!actions
        .iter()
        .any(|a| matches!(a, Action::Deliver(d) if d.to == "max")));
}

/// Routing does what it does with any name that matches no member: a notice, no delivery.
#[test]
fn a_later_next_naming_a_member_who_left_reaches_no_one_as_an_unknown_name_does() {
    let mut session = talked();
    apply(&mut session, &left("bob", 4)).unwrap();
    apply(&mut session, &Fact::replied("sarah", "Done.", Millis(5))).unwrap();
    apply(&mut session, &Fact::replied("max", "Done.", Millis(6))).unwrap();
    let actions = apply(&mut session, &Fact::human("Again? [NEXT: bob]", Millis(7))).unwrap();
    let last = session.messages().last().unwrap().id.clone();
    assert!(
        actions.contains(&Action::Notice(Notice::UnresolvedAddressees {
            message: last,
            names: vec!["bob".into()],
        }))
    );
    assert!(!actions.iter().any(|a| matches!(a, Action::Deliver(_))));
    let unknown = apply(&mut session, &Fact::human("[NEXT: zed]", Millis(8))).unwrap();
    assert!(unknown
        .iter()
        .any(|a| matches!(a, Action::Notice(Notice::UnresolvedAddressees { .. }))));
}

#[test]
fn a_wait_for_a_human_who_leaves_is_over() {
    let team = load_team(
        r#"{"name": "Two", "members": [
        {"name": "kailai", "kind": "human"},
        {"name": "dana", "kind": "human"},
        {"name": "max", "kind": "ai", "agentType": "claude"}]}"#,
    )
    .unwrap();
    let mut session = Session::new();
    apply(&mut session, &Fact::set_team(team)).unwrap();
    apply(
        &mut session,
        &Fact::human("[FROM: kailai] Over to Dana [NEXT: dana]", Millis(1)),
    )
    .unwrap();
    assert_eq!(session.conversation().waiting_for(), Some("dana"));
    let actions = apply(&mut session, &left("dana", 2)).unwrap();
    assert_eq!(session.conversation().waiting_for(), Some("kailai"));
    assert!(actions.contains(&Action::AwaitHuman {
        member: "kailai".into()
    }));
}

/// What is refused, and the words: each names the member and what to do.
#[test]
fn a_leave_that_cannot_be_is_refused_in_words_and_changes_nothing() {
    let cases: [(&str, &str); 3] = [
        (
            "zed",
            "\"zed\" is not a member of the team, so \"zed\" cannot leave it",
        ),
        (
            "sarah",
            "Sarah is running: wait for Sarah's answer or cancel the run, then remove Sarah \
             from the team",
        ),
        (
            "kailai",
            "Kailai cannot leave: the team without Kailai would not be valid",
        ),
    ];
    for (member, words) in cases {
        let mut session = talked();
        let before = session.export();
        let refused = session.apply(&left(member, 9)).unwrap_err();
        assert!(
            refused.to_string().starts_with(words),
            "{member}: {refused}"
        );
        assert_eq!(session.can_leave(member), Err(refused));
        assert_eq!(session.export(), before, "{member}: nothing changed");
    }
    assert_eq!(
        Session::new().apply(&left("max", 1)),
        Err(SessionError::NoTeam)
    );
}

#[test]
fn a_session_file_with_a_member_leaving_reads_back_and_bad_input_is_named() {
    let mut session = talked();
    apply(&mut session, &left("bob", 4)).unwrap();
    let file = session.export();
    assert!(
        file.contains(r#"{"type":"memberLeft","member":"bob","at":4}"#),
        "{file}"
    );
    let back = Session::import(&file).unwrap();
    assert_eq!(back.export(), file);
    assert_eq!(back.messages(), session.messages());
    assert_eq!(back.left_members(), session.left_members());

    let with = |fact: &str| file.replace(r#"{"type":"memberLeft","member":"bob","at":4}"#, fact);
    let error = |fact: &str| Session::import(&with(fact)).unwrap_err().to_string();
    assert_eq!(
        error(r#"{"type":"memberLeft","at":4}"#),
        "facts[4].member: missing"
    );
    assert!(
        error(r#"{"type":"memberLeft","member":7,"at":4}"#).starts_with("facts[4].member: "),
        "{}",
        error(r#"{"type":"memberLeft","member":7,"at":4}"#)
    );
    assert_eq!(
        error(r#"{"type":"memberLeft","member":"zoe","at":4}"#),
        "facts[4] (memberLeft): does not replay: \"zoe\" is not a member of the team, so \
         \"zoe\" cannot leave it"
    );
}

#[test]
fn the_session_as_a_scenario_keeps_who_left_where_they_stood() {
    let mut session = talked();
    apply(&mut session, &left("bob", 4)).unwrap();
    let scenario = session.to_scenario().unwrap();
    let ids: Vec<&str> = scenario
        .team
        .members
        .iter()
        .map(|m| m.id.as_str())
        .collect();
    assert_eq!(ids, ["kailai", "max", "sarah", "bob"]);
    assert!(
        scenario.to_store().is_ok(),
        "its messages name members it has"
    );
}

/// Steps after the team is set: what a host produces next.
#[derive(Debug, Clone)]
enum Step {
    Human(&'static str),
    Reply(&'static str),
    Fail,
    Leave(usize),
}

const TEXTS: [&str; 7] = [
    "[NEXT: max]",
    "[NEXT: sarah, bob]",
    "[NEXT: bob !P1] go",
    "[NEXT: kailai]",
    "[TEAM_TASK: ship] [NEXT: max, sarah]",
    "plain words",
    "[DONE]",
];
const WHO: [&str; 4] = ["kailai", "max", "sarah", "bob"];

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        3 => prop::sample::select(TEXTS.to_vec()).prop_map(Step::Human),
        5 => prop::sample::select(TEXTS.to_vec()).prop_map(Step::Reply),
        1 => Just(Step::Fail),
        1 => (0..WHO.len()).prop_map(Step::Leave),
    ]
}

fn fact_for(session: &Session, step: &Step, at: u64) -> Fact {
    let running = session.conversation().in_flight().map(|f| f.to.clone());
    match (step, running) {
        (Step::Reply(text), Some(to)) => Fact::replied(to, *text, Millis(at)),
        (Step::Fail, Some(to)) => Fact::failed(to, "timeout", Millis(at)),
        (Step::Leave(i), _) => left(WHO[*i], at),
        (Step::Human(text) | Step::Reply(text), _) => Fact::human(*text, Millis(at)),
        (Step::Fail, None) => Fact::human("[NEXT: sarah]", Millis(at)),
    }
}

/// Every prompt (and system flag) of every AI member still in the team, for each of the
/// first `len` messages.
fn prompts(session: &Session, len: usize) -> Vec<(String, usize, String, Option<String>)> {
    let team = session.team().unwrap();
    let mut out = Vec::new();
    for m in team.members.iter().filter(|m| m.is_ai()) {
        for at in 0..len {
            let p = session
                .preview(&m.id, Some(at), &PreviewOverrides::default())
                .unwrap();
            out.push((m.id.clone(), at, p.prompt, p.system_flag));
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    /// Each accepted `memberLeft` leaves the others' prompts for earlier messages byte for
    /// byte as they were; the whole log replays (and reads back from its file) to the same
    /// session.
    #[test]
    fn a_leave_changes_no_earlier_prompt_and_replays_exactly(
        steps in prop::collection::vec(step(), 1..30),
    ) {
        let mut session = Session::new();
        apply(&mut session, &Fact::set_team(crew())).unwrap();
        let mut caused = Vec::new();
        for (i, step) in steps.iter().enumerate() {
            let fact = fact_for(&session, step, i as u64 + 1);
            let before = session.clone();
            let len = session.messages().len();
            match apply(&mut session, &fact) {
                Ok(actions) => {
                    if matches!(fact, Fact::MemberLeft { .. }) {
                        let gone = session.team().unwrap().members.len();
                        prop_assert_eq!(gone + 1, before.team().unwrap().members.len());
                        let after = prompts(&session, len);
                        let had: Vec<_> = prompts(&before, len).into_iter()
                            .filter(|(id, ..)| session.team().unwrap().member(id).is_some())
                            .collect();
                        prop_assert_eq!(after, had);
                        prop_assert_eq!(session.messages(), before.messages());
                    }
                    caused.push(actions);
                }
                Err(_) => prop_assert_eq!(session.export(), before.export()),
            }
        }
        let mut replayed = Session::replay(session.facts()).unwrap();
        let imported = Session::import(&session.export()).unwrap();
        prop_assert_eq!(replayed.messages(), session.messages());
        prop_assert_eq!(imported.export(), session.export());
        prop_assert_eq!(replayed.left_members(), session.left_members());
        prop_assert_eq!(replayed.team(), session.team());
        let len = session.messages().len();
        prop_assert_eq!(prompts(&replayed, len), prompts(&session, len));
        // What is pending now is what the original has pending.
        let now: Vec<Action> = std::iter::from_fn(|| replayed.poll_action()).collect();
        for action in now {
            if let Action::Deliver(d) = action {
                let emitted = caused.iter().flatten().any(|a| matches!(a, Action::Deliver(o) if *o == d));
                prop_assert!(emitted, "a redelivery differs from the original delivery");
            }
        }
    }
}
