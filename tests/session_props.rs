//! Replay is exact (docs/architecture.md §6b): any sequence of facts applied to one session, and
//! the same facts exported at any cut, imported and continued, give identical messages, actions and
//! prompt bytes for every member.

use agent_chatter::config::load_team;
use agent_chatter::conversation::Action;
use agent_chatter::message::Millis;
use agent_chatter::session::{Fact, PreviewOverrides, Session};
use agent_chatter::team::{DeliveryPolicy, Team, TeamSettings};
use proptest::prelude::*;

const MEMBERS: [&str; 5] = ["kailai", "bo", "max", "sarah", "carol"];

fn team(parent_policy: bool) -> Team {
    let mut team = load_team(
        r#"{"name": "t", "members": [
        {"name": "kailai", "kind": "human"},
        {"name": "bo", "kind": "human"},
        {"name": "max", "kind": "ai", "agentType": "claude", "systemInstruction": "Plan."},
        {"name": "sarah", "kind": "ai", "agentType": "codex", "windowSize": 2},
        {"name": "carol", "kind": "ai", "agentType": "gemini"}]}"#,
    )
    .unwrap();
    if parent_policy {
        team.settings.delivery = DeliveryPolicy::Parent;
    }
    team
}

/// Text pieces: markers addressing members, team tasks, DONE, DROP, plain words.
fn text() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop::sample::select(vec![
            "[NEXT: max]",
            "[NEXT: sarah, carol !P1]",
            "[NEXT: carol!P3]",
            "[NEXT: kailai]",
            "[NEXT: bo]",
            "[NEXT: zed]",
            "[FROM: bo]",
            "[TEAM_TASK: ship it]",
            "[TEAM_TASK:]",
            "[DONE]",
            "[DROP: sarah!P1]",
            "[DROP: ALL]",
            "word ",
            "界 ",
            "\n",
        ]),
        0..6,
    )
    .prop_map(|p| p.concat())
}

/// One step: what kind of fact the host produces next, and its text.
#[derive(Debug, Clone)]
enum Step {
    Human(String, Option<usize>),
    Reply(String),
    Fail,
    /// A fact the session must refuse (a reply from someone not running).
    WrongReply(usize),
    Window(usize),
    /// Open the session's own scenario (as a user re-opens an exported case).
    Load,
    /// Run a member's failed delivery again (refused unless its last run failed).
    Retry(usize),
    /// A member leaves the team from now on (refused while they run, or for the last human).
    Leave(usize),
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        3 => (text(), prop::option::of(0..2usize)).prop_map(|(t, s)| Step::Human(t, s)),
        5 => text().prop_map(Step::Reply),
        1 => Just(Step::Fail),
        1 => (0..5usize).prop_map(Step::WrongReply),
        1 => (0..4usize).prop_map(Step::Window),
        1 => Just(Step::Load),
        1 => (0..5usize).prop_map(Step::Retry),
        1 => (0..5usize).prop_map(Step::Leave),
    ]
}

/// The fact a host would produce for `step` in `session`'s state.
fn fact_for(session: &Session, step: &Step, at: u64) -> Fact {
    let running = session.conversation().in_flight().map(|f| f.to.clone());
    match (step, running) {
        (Step::Reply(text), Some(to)) => Fact::replied(to, text.clone(), Millis(at)),
        (Step::Fail, Some(to)) => Fact::failed(to, "timeout", Millis(at)),
        (Step::WrongReply(i), _) => Fact::replied(MEMBERS[*i], "out of turn", Millis(at)),
        (Step::Window(w), _) => {
            let mut settings = session
                .settings()
                .cloned()
                .unwrap_or_else(TeamSettings::default);
            settings.window_size = *w;
            Fact::set_settings(settings)
        }
        (Step::Human(text, _), _) | (Step::Reply(text), None) => Fact::Human {
            text: text.clone().into(),
            sender: match step {
                Step::Human(_, Some(i)) => Some(MEMBERS[*i].to_string()),
                _ => None,
            },
            at: Millis(at),
        },
        (Step::Fail, None) => Fact::failed("max", "nothing runs", Millis(at)),
        (Step::Retry(i), _) => Fact::Retry {
            to: MEMBERS[*i].to_string(),
            at: Millis(at),
        },
        (Step::Leave(i), _) => Fact::MemberLeft {
            member: MEMBERS[*i].to_string(),
            at: Millis(at),
        },
        (Step::Load, _) => match session.to_scenario() {
            Some(scenario) => Fact::LoadScenario {
                scenario: Box::new(scenario),
            },
            None => Fact::human("no team yet", Millis(at)),
        },
    }
}

/// Applies a fact, returning the actions it caused (none when refused).
fn apply(session: &mut Session, fact: &Fact) -> Option<Vec<Action>> {
    session.apply(fact).ok()?;
    Some(std::iter::from_fn(|| session.poll_action()).collect())
}

fn every_preview(session: &Session) -> Vec<String> {
    let o = PreviewOverrides::default();
    let mut out = Vec::new();
    // A member who left has no preview.
    let members = ["max", "sarah", "carol"];
    let team = session.team();
    for member in members
        .into_iter()
        .filter(|m| team.is_some_and(|t| t.member(m).is_some()))
    {
        for at in (0..session.messages().len()).map(Some).chain([None]) {
            let p = session.preview(member, at, &o).unwrap();
            out.push(p.prompt);
            out.push(p.system_flag.unwrap_or_default());
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn a_session_cut_anywhere_and_continued_gives_the_same_bytes(
        parent_policy in any::<bool>(),
        steps in prop::collection::vec(step(), 1..40),
        cut in any::<prop::sample::Index>(),
    ) {
        // The original: every accepted fact and the actions it caused.
        let mut original = Session::new();
        original.apply(&Fact::set_team(team(parent_policy))).unwrap();
        let _ = std::iter::from_fn(|| original.poll_action()).count();
        let mut accepted = vec![original.facts()[0].clone()];
        let mut caused = vec![Vec::new()];
        for (i, step) in steps.iter().enumerate() {
            let fact = fact_for(&original, step, i as u64 + 1);
            let before = original.export();
            match apply(&mut original, &fact) {
                Some(actions) => {
                    accepted.push(fact);
                    caused.push(actions);
                }
                None => prop_assert_eq!(original.export(), before.clone(), "a refused fact changed the session"),
            }
        }
        prop_assert_eq!(original.facts(), &accepted[..]);

        // Cut, export, import, continue.
        let k = cut.index(accepted.len()) + 1;
        let mut head = Session::replay(&accepted[..k]).unwrap();
        let file = head.export();
        let mut resumed = Session::import(&file).unwrap();
        let resumed_now: Vec<Action> = std::iter::from_fn(|| resumed.poll_action()).collect();
        let head_now: Vec<Action> = std::iter::from_fn(|| head.poll_action()).collect();
        prop_assert_eq!(&resumed_now, &head_now);
        // What the resumed host must do now was emitted by the original before the cut.
        for action in &resumed_now {
            if let Action::Deliver(d) = action {
                let emitted = caused[..k].iter().flatten().any(|a| matches!(a, Action::Deliver(o) if o == d));
                prop_assert!(emitted, "a redelivery differs from the original delivery");
            }
        }
        for (fact, expected) in accepted[k..].iter().zip(&caused[k..]) {
            let actions = apply(&mut resumed, fact);
            prop_assert_eq!(actions.as_ref(), Some(expected));
        }
        prop_assert_eq!(resumed.messages(), original.messages());
        prop_assert_eq!(resumed.store().team_task(), original.store().team_task());
        prop_assert_eq!(resumed.export(), original.export());
        prop_assert_eq!(every_preview(&resumed), every_preview(&original));
    }

    #[test]
    fn preview_at_a_delivered_message_is_the_delivered_prompt(
        parent_policy in any::<bool>(),
        steps in prop::collection::vec(step(), 1..40),
    ) {
        let mut session = Session::new();
        session.apply(&Fact::set_team(team(parent_policy))).unwrap();
        let mut delivered = Vec::new();
        for (i, step) in steps.iter().enumerate() {
            let fact = fact_for(&session, step, i as u64 + 1);
            // Settings changes would make the preview differ from the delivery, and a loaded
            // scenario starts a new history: skip them here.
            if matches!(fact, Fact::SetSettings { .. } | Fact::LoadScenario { .. }) {
                continue;
            }
            for action in apply(&mut session, &fact).unwrap_or_default() {
                if let Action::Deliver(d) = action {
                    delivered.push(d);
                }
            }
        }
        for d in delivered.iter().rev() {
            let at = session.store().position(&d.message).unwrap();
            // A later delivery of the same message to the same member is the one previewed.
            let later = delivered.iter().rev().take_while(|o| !std::ptr::eq(&***o, &**d))
                .any(|o| o.to == d.to && o.message == d.message);
            let gone = session.team().is_none_or(|t| t.member(&d.to).is_none());
            if later || gone {
                continue;
            }
            let p = session.preview(&d.to, Some(at), &PreviewOverrides::default()).unwrap();
            prop_assert_eq!(&p, &d.prompt);
        }
    }
}
