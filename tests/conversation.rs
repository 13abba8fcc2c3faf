//! The conversation routing state machine (docs/architecture.md §6, §19 (seed 004)), driven through
//! the harness in `tests/support`: scripted agents, bounded driving, recorded actions.

mod support;

use agent_chatter::context::{Store, MAX_TEAM_TASK_BYTES};
use agent_chatter::conversation::{
    Action, Conversation, HumanInput, InputError, Notice, ResumeError, RoutingState, Status,
    MAX_PER_PARENT, MAX_QUEUED,
};
use agent_chatter::explain::{DedupReason, Fate};
use agent_chatter::markers::Intent;
use agent_chatter::message::{MessageId, Millis, SpeakerKind, MAX_MESSAGE_BYTES};
use agent_chatter::snapshot;
use agent_chatter::team::{DeliveryPolicy, Team};
use support::{ai_member, team, Harness};

fn multi() -> Harness {
    Harness::new(team("team.json"))
}

fn solo() -> Harness {
    Harness::new(team("single_human_team.json"))
}

fn msg(n: u64) -> MessageId {
    MessageId::from_seq(n)
}

// ------------------------------------------- docs/architecture.md §19 (seed 004) routing scenarios

/// docs/architecture.md §19 (seed 004 R3 §4 scenario 1) (human → AI → AI → human), scheduled by
/// routing v3 (docs/architecture.md §6 wins over the seed's plain FIFO): sarah, addressed by max's
/// reply, answers it before carol and bob take their turns on the human's message.
#[test]
fn seed004_scenario1_human_ai_ai_human() {
    let mut h = multi();
    h.reply("max", "Analysis ready [NEXT:sarah]")
        .reply("sarah", "Threat model noted")
        .reply("carol", "Requirements done")
        .reply("sarah", "Done [DONE]");

    h.say("[FROM:kailai] Design auth [NEXT:max][NEXT:carol][NEXT:bob]")
        .unwrap();
    assert_eq!(h.delivered_to(), ["max", "sarah", "carol"]);
    assert_eq!(h.awaited(), ["bob"]);
    assert_eq!(h.conv.waiting_for(), Some("bob"));
    assert_eq!(h.conv.status(), Status::AwaitingHuman);

    h.say("[FROM:bob] Looks good [NEXT:sarah]").unwrap();
    assert_eq!(h.delivered_to(), ["max", "sarah", "carol", "sarah"]);
    assert_eq!(h.finished_count(), 1);
    assert_eq!(h.conv.status(), Status::Completed);
    assert_eq!(h.conv.waiting_for(), None);
    assert!(h.conv.pending().is_empty());
    let speakers: Vec<&str> = h.transcript().iter().map(|(s, _)| *s).collect();
    assert_eq!(
        speakers,
        ["kailai", "max", "sarah", "carol", "bob", "sarah"]
    );
}

/// docs/architecture.md §19 (seed 004 R3 §4 scenario 2): an AI→AI chain with no human in between,
/// ended by `[DONE]`.
#[test]
fn seed004_scenario2_ai_chain_without_human() {
    let mut h = multi();
    h.reply("max", "Report ready [NEXT:carol]")
        .reply("carol", "Summary complete [NEXT:sarah]")
        .reply("sarah", "All done [DONE]");
    h.say("[FROM:kailai] Analyze codebase [NEXT:max]").unwrap();
    assert_eq!(h.delivered_to(), ["max", "carol", "sarah"]);
    assert!(h.awaited().is_empty());
    assert_eq!(h.finished_count(), 1);
    assert_eq!(h.conv.waiting_for(), None);
}

/// docs/architecture.md §19 (seed 004 R3 §4 scenario 3): no `[NEXT]` → wait for the first human,
/// whose next message needs no `[FROM]` even in a multi-human team.
#[test]
fn seed004_scenario3_no_next_waits_for_first_human() {
    let mut h = multi();
    h.say("[FROM:kailai] Start project").unwrap();
    assert!(h.deliveries().is_empty());
    assert_eq!(h.awaited(), ["kailai"]);
    let id = h.say("Here is the brief").unwrap();
    assert_eq!(h.message(&id).speaker.id, "kailai");
}

// ------------------------------------------- senders (docs/architecture.md §19 (seed 004 REQ-2/3))

#[test]
fn single_human_needs_no_from() {
    let mut h = solo();
    let id = h.say("Hello team").unwrap();
    assert_eq!(h.message(&id).speaker.id, "kailai");
    assert_eq!(
        h.message(&id).content,
        "Hello team",
        "no [FROM] is injected into the content"
    );
}

#[test]
fn single_human_may_still_write_from() {
    let mut h = solo();
    let id = h.say("[FROM: Kailai] Hello").unwrap();
    assert_eq!(h.message(&id).speaker.id, "kailai");
}

#[test]
fn multi_human_first_message_without_from_is_refused_with_catalogue_text() {
    let mut h = multi();
    let err = h.say("Hello").unwrap_err();
    assert_eq!(
        err.to_string(),
        "Multiple human members detected. Please specify sender with [FROM:xxx]\n\
         Available members: kailai, bob\n\n\
         Example: [FROM:kailai] Your message here"
    );
}

#[test]
fn from_naming_nobody_lists_the_humans() {
    let mut h = multi();
    let err = h.say("[FROM:alice] Hi").unwrap_err();
    assert_eq!(
        err.to_string(),
        "Member 'alice' not found.\nAvailable human members: kailai, bob"
    );
}

#[test]
fn from_naming_an_ai_is_refused() {
    let mut h = multi();
    let err = h.say("[FROM:max] Hi").unwrap_err();
    assert_eq!(
        err.to_string(),
        "Cannot use [FROM:max]. Max is an AI agent.\n[FROM:xxx] is only for human members."
    );
}

#[test]
fn from_matches_fuzzily() {
    let mut h = Harness::new(team("team.json"));
    let id = h.say("[FROM:  BOB ] Hi").unwrap();
    assert_eq!(h.message(&id).speaker.id, "bob");
}

#[test]
fn multi_human_reply_is_attributed_to_the_awaited_human() {
    let mut h = multi();
    h.reply("max", "Bob, your call [NEXT: bob]");
    h.say("[FROM:kailai] Plan it [NEXT:max]").unwrap();
    assert_eq!(h.conv.waiting_for(), Some("bob"));
    let id = h.say("Approved").unwrap();
    assert_eq!(h.message(&id).speaker.id, "bob");
}

#[test]
fn buzz_in_with_from_overrides_the_awaited_human() {
    let mut h = multi();
    h.reply("max", "Here's my analysis [NEXT:bob]");
    h.say("[FROM:kailai] Let's discuss the new feature [NEXT:max]")
        .unwrap();
    assert_eq!(h.conv.waiting_for(), Some("bob"));
    let id = h.say("[FROM:kailai] Wait, I have more context").unwrap();
    assert_eq!(h.message(&id).speaker.id, "kailai");
    // Bob's turn was taken; with nothing queued the first human is awaited again.
    assert_eq!(h.awaited(), ["bob", "kailai"]);
}

#[test]
fn explicit_sender_id_wins_over_from() {
    let mut h = multi();
    let id = h.say_as("bob", "[FROM:kailai] Hi").unwrap();
    assert_eq!(h.message(&id).speaker.id, "bob");
}

#[test]
fn unknown_explicit_sender_is_refused() {
    let mut h = multi();
    let err = h.say_as("zed", "Hi").unwrap_err();
    assert_eq!(
        err.to_string(),
        "Sender id 'zed' is not a member of the team; the member ids are: kailai, bob, max, carol, sarah"
    );
}

#[test]
fn first_message_from_an_ai_is_rejected() {
    let mut h = multi();
    let err = h.say_as("max", "I'll start").unwrap_err();
    assert_eq!(
        err.to_string(),
        "First message must be from a human member (max is an AI agent)"
    );
    assert!(h.conv.store().is_empty());
    assert_eq!(h.conv.status(), Status::Idle);
    // An agent reply with no delivery in flight cannot start it either.
    let err = h.answer("max", "I'll start").unwrap_err();
    assert_eq!(
        err,
        InputError::NotInFlight {
            member: "max".into(),
            expected: None
        }
    );
    assert!(h.conv.store().is_empty());
}

#[test]
fn ai_cannot_speak_as_human_input_later() {
    let mut h = solo();
    h.say("Hi").unwrap();
    let err = h.say_as("max", "Me too").unwrap_err();
    assert_eq!(
        err,
        InputError::AiAsHuman {
            member: "max".into()
        }
    );
}

#[test]
fn input_without_team_is_refused() {
    let mut conv = Conversation::new();
    let err = conv
        .handle_human_input(HumanInput::text("Hi"), Millis(1))
        .unwrap_err();
    assert_eq!(err, InputError::NoTeam);
    assert_eq!(conv.poll_action(), None);
}

// ------------------------------------------------------------------ failed inputs change nothing

#[test]
fn a_failed_input_leaves_the_store_unchanged() {
    let mut h = multi();
    h.say("[FROM:kailai] Start [TEAM_TASK: Build auth]")
        .unwrap();
    h.take_log();
    let before = (
        h.conv.store().clone(),
        h.conv.status(),
        h.conv.waiting_for().map(String::from),
    );

    // Sender error: the team task marker in the refused text must not apply.
    let err = h
        .say("[FROM:alice] [TEAM_TASK: Something else] Hi [NEXT: max]")
        .unwrap_err();
    assert!(matches!(err, InputError::UnknownFrom { .. }));
    // Huge input: refused with its size.
    let huge = "a".repeat(MAX_MESSAGE_BYTES + 1);
    let err = h.say(&huge).unwrap_err();
    assert_eq!(
        err,
        InputError::TooLarge {
            bytes: MAX_MESSAGE_BYTES + 1,
            max: MAX_MESSAGE_BYTES
        }
    );
    assert!(err
        .to_string()
        .contains(&(MAX_MESSAGE_BYTES + 1).to_string()));

    let after = (
        h.conv.store().clone(),
        h.conv.status(),
        h.conv.waiting_for().map(String::from),
    );
    assert_eq!(before, after);
    assert_eq!(h.conv.store().team_task(), Some("Build auth"));
    assert!(
        h.log.is_empty(),
        "a refused input emits nothing: {:?}",
        h.log
    );
}

#[test]
fn a_reply_from_a_member_not_in_flight_is_refused_and_changes_nothing() {
    let mut h = solo();
    h.say("Go [NEXT: max]").unwrap(); // max has no script: stays in flight
    let len = h.conv.store().len();
    let err = h.answer("carol", "I'm not asked").unwrap_err();
    assert_eq!(
        err,
        InputError::NotInFlight {
            member: "carol".into(),
            expected: Some("max".into())
        }
    );
    assert_eq!(
        err.to_string(),
        "No delivery to 'carol' is in flight; the reply awaited is from 'max'"
    );
    assert_eq!(h.conv.store().len(), len);
    assert_eq!(h.conv.in_flight().map(|f| f.to.as_str()), Some("max"));
    // The right member's reply is accepted afterwards.
    h.answer("max", "Done").unwrap();
    assert_eq!(h.conv.in_flight(), None);
}

#[test]
fn an_outcome_reported_before_its_delivery_was_polled_withdraws_that_delivery() {
    let mut conv = Conversation::with_team(team("single_human_team.json"));
    conv.handle_human_input(HumanInput::text("Go [NEXT: max]"), Millis(1))
        .unwrap();
    // The host answers before polling: max's delivery is done, only sarah's is left to run.
    conv.handle_agent_replied("max", "Done. [NEXT: sarah]".into(), Millis(2))
        .unwrap();
    let delivered: Vec<String> = std::iter::from_fn(|| conv.poll_action())
        .filter_map(|a| match a {
            Action::Deliver(d) => Some(d.to),
            _ => None,
        })
        .collect();
    assert_eq!(delivered, ["sarah"]);
    // The same for a failure.
    conv.handle_agent_failed("sarah", "timeout".into(), Millis(3))
        .unwrap();
    assert!(!std::iter::from_fn(|| conv.poll_action())
        .any(|a| matches!(a, Action::Deliver(d) if d.to == "sarah")));
}

#[test]
fn a_huge_reply_is_refused_and_stays_in_flight() {
    let mut h = solo();
    h.say("Go [NEXT: max]").unwrap();
    let err = h
        .answer("max", &"x".repeat(MAX_MESSAGE_BYTES + 1))
        .unwrap_err();
    assert!(matches!(err, InputError::TooLarge { .. }));
    assert_eq!(h.conv.store().len(), 1);
    assert!(h.conv.in_flight().is_some());
}

// ------------------------------------------------------------------ storage

#[test]
fn replies_are_stored_raw_with_routing_beside_them() {
    let mut h = solo();
    let raw = "  Plan:\n\n    1. login   \n[NEXT: carol !P1]\n";
    h.reply("max", raw);
    let first = h.say("Go [NEXT: max]").unwrap();
    let reply = h.conv.store().messages()[1].clone();
    assert_eq!(reply.content, raw);
    assert_eq!(reply.speaker.kind, SpeakerKind::Ai);
    assert_eq!(reply.routing.resolved, ["carol"]);
    assert_eq!(reply.routing.resolved_names, ["carol"]);
    assert_eq!(reply.routing.parent, Some(first));
    assert_eq!(reply.routing.intent, Some(Intent::P2));
    assert_eq!(reply.routing.raw_next.len(), 1);
    assert_eq!(reply.routing.raw_next[0].intent, Intent::P1);
}

#[test]
fn message_ids_count_up_from_msg_1() {
    let mut h = solo();
    h.reply("max", "ok");
    h.say("Go [NEXT: max]").unwrap();
    let ids: Vec<&str> = h
        .conv
        .store()
        .messages()
        .iter()
        .map(|m| m.id.as_str())
        .collect();
    assert_eq!(ids, ["msg-1", "msg-2"]);
}

// ------------------------------------------------------------------ team task

#[test]
fn team_task_can_be_set_by_an_ai() {
    let mut h = solo();
    h.reply(
        "max",
        "I'll create a PRD. [TEAM_TASK:Design OAuth2-based authentication]",
    );
    h.say("[TEAM_TASK:Design user authentication system] Let's start [NEXT:max]")
        .unwrap();
    assert_eq!(
        h.conv.store().team_task(),
        Some("Design OAuth2-based authentication")
    );
}

#[test]
fn empty_team_task_marker_clears_it() {
    let mut h = solo();
    h.say("[TEAM_TASK: Ship it] go").unwrap();
    assert_eq!(h.conv.store().team_task(), Some("Ship it"));
    h.say("[TEAM_TASK:] never mind").unwrap();
    assert_eq!(h.conv.store().team_task(), None);
}

#[test]
fn team_task_over_5_kib_is_truncated_with_a_notice() {
    let mut h = solo();
    // 'é' is 2 bytes: 5121 bytes of them cannot be cut at exactly 5120 + 1 mid-char.
    let task = format!("x{}", "é".repeat(2600));
    h.say(&format!("[TEAM_TASK: {task}] go")).unwrap();
    let stored = h.conv.store().team_task().unwrap();
    assert!(stored.len() <= MAX_TEAM_TASK_BYTES);
    assert!(task.starts_with(stored));
    assert!(h.notices().contains(&&Notice::TeamTaskTruncated {
        from: task.len(),
        to: stored.len()
    }));
}

// ------------------------------------------------------------------ done

#[test]
fn done_drops_the_queue_finishes_and_the_next_human_message_reopens() {
    let mut h = solo();
    h.reply("max", "That settles it [DONE]")
        .reply("carol", "back again");
    h.say("Decide [NEXT: max, carol, sarah]").unwrap();
    assert_eq!(h.delivered_to(), ["max"]);
    assert_eq!(h.finished_count(), 1);
    assert_eq!(h.conv.status(), Status::Completed);
    assert!(h.conv.pending().is_empty());
    assert!(h.message(&msg(2)).routing.is_done);

    h.say("One more thing [NEXT: carol]").unwrap();
    assert_eq!(h.delivered_to(), ["max", "carol"]);
    assert_eq!(h.conv.status(), Status::AwaitingHuman);
}

#[test]
fn done_from_a_human_finishes_too() {
    let mut h = solo();
    h.say("We're done [DONE]").unwrap();
    assert_eq!(h.log, vec![Action::Finished]);
    assert_eq!(h.conv.status(), Status::Completed);
}

#[test]
fn next_in_a_done_message_is_ignored_with_a_notice() {
    let mut h = solo();
    h.reply("max", "Finished [DONE] [NEXT: carol]");
    h.say("Go [NEXT: max]").unwrap();
    assert_eq!(h.delivered_to(), ["max"]);
    assert!(h.notices().contains(&&Notice::NextIgnoredAfterDone {
        message: msg(2),
        names: vec!["carol".into()]
    }));
    assert!(h.message(&msg(2)).routing.resolved.is_empty());
}

#[test]
fn a_reply_arriving_after_done_is_stored_not_routed() {
    let mut h = solo();
    h.say("Go [NEXT: max]").unwrap(); // max stays in flight
    h.say("Actually, stop [DONE]").unwrap();
    assert_eq!(h.conv.status(), Status::Completed);
    let id = h.answer("max", "Here anyway [NEXT: carol]").unwrap();
    assert_eq!(h.message(&id).content, "Here anyway [NEXT: carol]");
    assert!(h
        .notices()
        .contains(&&Notice::NotRoutedAfterDone { message: id }));
    assert_eq!(h.delivered_to(), ["max"]);
    assert_eq!(h.conv.status(), Status::Completed);
}

// ------------------------------------------------------------------ chains and policies

#[test]
fn three_agent_chain_runs_in_order_each_answering_the_previous() {
    let mut h = solo();
    h.reply("max", "Max's analysis [NEXT: sarah]")
        .reply("sarah", "Sarah's review [NEXT: carol]")
        .reply("carol", "Carol's summary");
    h.say("Kick off [NEXT: max]").unwrap();
    assert_eq!(
        h.delivered_messages(),
        [
            ("max", "Kick off [NEXT: max]"),
            ("sarah", "Max's analysis [NEXT: sarah]"),
            ("carol", "Sarah's review [NEXT: carol]"),
        ]
    );
    let parents: Vec<_> = h.deliveries().iter().map(|d| d.parent.clone()).collect();
    assert_eq!(parents, [Some(msg(1)), Some(msg(2)), Some(msg(3))]);
    assert_eq!(h.awaited(), ["kailai"]);
}

fn parallel(policy: DeliveryPolicy) -> Harness {
    let mut t = team("single_human_team.json");
    t.settings.delivery = policy;
    let mut h = Harness::new(t);
    h.reply("max", "Max: use OAuth")
        .reply("carol", "Carol: agreed");
    h.say("Which auth? [NEXT: max, carol]").unwrap();
    h
}

/// Latest: carol gets max's answer as [MESSAGE], addressed by the human's message. Parent:
/// each agent gets the message that addressed it.
#[test]
fn each_policy_gives_each_agent_its_message_and_the_one_that_addressed_it() {
    let cases = [
        (DeliveryPolicy::Latest, [("max", 1, 1), ("carol", 2, 1)]),
        (DeliveryPolicy::Parent, [("max", 1, 1), ("carol", 1, 1)]),
    ];
    for (policy, want) in cases {
        let h = parallel(policy);
        let seen: Vec<_> = h
            .deliveries()
            .iter()
            .map(|d| (d.to.as_str(), d.message.clone(), d.parent.clone()))
            .collect();
        let want: Vec<_> = want
            .iter()
            .map(|&(to, message, parent)| (to, msg(message), Some(msg(parent))))
            .collect();
        assert_eq!(seen, want, "{policy:?}");
    }
}

#[test]
fn a_human_delivery_pauses_the_queue_until_they_answer() {
    let mut h = multi();
    h.reply("carol", "after bob");
    h.say("[FROM:kailai] Bob first, then Carol [NEXT: bob, carol]")
        .unwrap();
    assert!(h.deliveries().is_empty());
    assert_eq!(h.awaited(), ["bob"]);
    assert_eq!(h.conv.pending().len(), 1);
    h.say("Fine by me").unwrap();
    assert_eq!(h.delivered_to(), ["carol"]);
}

#[test]
fn a_human_may_speak_while_an_agent_runs() {
    let mut h = solo();
    h.say("Go [NEXT: max]").unwrap(); // in flight
    h.say("Also ask carol [NEXT: carol]").unwrap();
    assert_eq!(h.delivered_to(), ["max"], "one delivery at a time");
    h.reply("carol", "ok");
    h.answer("max", "done").unwrap();
    assert_eq!(h.delivered_to(), ["max", "carol"]);
}

// ------------------------------------------------------------------ queue rules

#[test]
fn p1_jumps_the_queue() {
    let mut h = solo();
    h.reply("max", "ok")
        .reply("carol", "ok")
        .reply("sarah", "ok");
    h.say("Everyone [NEXT: max, carol, sarah !P1]").unwrap();
    assert_eq!(h.delivered_to(), ["sarah", "max", "carol"]);
    assert_eq!(h.deliveries()[0].intent, Intent::P1);
}

#[test]
fn p3_waits_for_p2() {
    let mut h = solo();
    h.reply("max", "ok").reply("carol", "ok");
    h.say("Both [NEXT: max !P3, carol]").unwrap();
    assert_eq!(h.delivered_to(), ["carol", "max"]);
}

#[test]
fn drop_removes_one_members_pending_deliveries() {
    let mut h = solo();
    h.reply("max", "No need for carol [DROP: carol]")
        .reply("sarah", "ok");
    h.say("Go [NEXT: max, carol, sarah]").unwrap();
    assert_eq!(h.delivered_to(), ["max", "sarah"]);
    assert!(h.notices().contains(&&Notice::Dropped {
        message: msg(2),
        removed: vec!["carol".into()]
    }));
}

#[test]
fn drop_with_an_intent_suffix_drops_that_member() {
    let mut h = solo();
    h.reply("max", "Carol is not needed [DROP: carol!P1]")
        .reply("sarah", "ok");
    h.say("Go [NEXT: max, carol, sarah]").unwrap();
    assert_eq!(h.delivered_to(), ["max", "sarah"]);
    assert!(!h
        .notices()
        .iter()
        .any(|n| matches!(n, Notice::UnresolvedDropTargets { .. })));
}

#[test]
fn drop_all_empties_the_queue() {
    let mut h = solo();
    h.reply("max", "Stop everything [DROP: ALL]");
    h.say("Go [NEXT: max, carol, sarah]").unwrap();
    assert_eq!(h.delivered_to(), ["max"]);
    assert!(h.conv.pending().is_empty());
    assert_eq!(h.awaited(), ["kailai"]);
}

#[test]
fn drop_applies_before_the_same_messages_next() {
    let mut h = solo();
    h.reply("max", "Carol again, fresh [DROP: carol] [NEXT: carol]")
        .reply("carol", "fresh");
    h.say("Go [NEXT: max, carol]").unwrap();
    assert_eq!(h.delivered_to(), ["max", "carol"]);
    assert_eq!(
        h.deliveries()[1].parent,
        Some(msg(2)),
        "the new item survives, the old one is gone"
    );
}

#[test]
fn unknown_drop_names_are_reported() {
    let mut h = solo();
    h.say("[DROP: zed] hi").unwrap();
    assert!(h.notices().contains(&&Notice::UnresolvedDropTargets {
        message: msg(1),
        names: vec!["zed".into()]
    }));
}

fn big_team(ais: usize) -> Team {
    let mut t = team("single_human_team.json");
    t.members.truncate(1);
    t.members
        .extend((1..=ais).map(|n| ai_member(&format!("a{n}"))));
    t
}

#[test]
fn per_parent_limit_demotes_the_eleventh_to_p3() {
    let mut h = Harness::new(big_team(MAX_PER_PARENT + 1));
    let names: Vec<String> = (1..=MAX_PER_PARENT + 1).map(|n| format!("a{n}")).collect();
    h.say(&format!("All hands [NEXT: {}]", names.join(", ")))
        .unwrap();
    assert!(h.notices().contains(&&Notice::Demoted {
        to: "a11".into(),
        parent: msg(1),
        from: Intent::P2,
        limit: MAX_PER_PARENT
    }));
    let a11 = h
        .conv
        .pending()
        .iter()
        .find(|i| i.to == "a11")
        .map(|i| i.intent);
    assert_eq!(a11, Some(Intent::P3));
}

#[test]
fn the_queue_refuses_the_fifty_first_item() {
    let mut h = solo();
    h.say("Go [NEXT: max]").unwrap(); // max in flight: the queue fills up behind it
    for n in 0..MAX_QUEUED {
        h.say(&format!("point {n} [NEXT: carol]")).unwrap();
    }
    assert_eq!(h.conv.pending().len(), MAX_QUEUED);
    assert!(!h
        .notices()
        .iter()
        .any(|n| matches!(n, Notice::QueueFull { .. })));
    let id = h.say("one too many [NEXT: sarah]").unwrap();
    assert_eq!(h.conv.pending().len(), MAX_QUEUED);
    assert!(h.notices().contains(&&Notice::QueueFull {
        to: "sarah".into(),
        parent: id,
        limit: MAX_QUEUED
    }));
}

#[test]
fn a_duplicate_item_is_not_queued_twice() {
    let mut h = solo();
    h.say("Go [NEXT: max]").unwrap(); // max in flight
    let id = h
        .say("carol please [NEXT: carol] and again [NEXT: carol]")
        .unwrap();
    assert_eq!(h.conv.pending().len(), 1);
    assert!(h.notices().contains(&&Notice::AlreadyQueued {
        to: "carol".into(),
        parent: id.clone(),
        intent: Intent::P2
    }));
    assert_eq!(h.message(&id).routing.resolved, ["carol"]);
}

#[test]
fn unknown_addressees_are_reported_and_the_rest_routed() {
    let mut h = solo();
    h.reply("max", "ok");
    h.say("Go [NEXT: zed, max]").unwrap();
    assert_eq!(h.delivered_to(), ["max"]);
    assert!(h.notices().contains(&&Notice::UnresolvedAddressees {
        message: msg(1),
        names: vec!["zed".into()]
    }));
}

#[test]
fn an_agent_addressing_itself_is_skipped_with_a_notice() {
    let mut h = solo();
    h.reply("max", "Let me think more [NEXT: max]");
    h.say("Go [NEXT: max]").unwrap();
    assert_eq!(h.delivered_to(), ["max"]);
    assert!(h.notices().contains(&&Notice::SelfAddressed {
        message: msg(2),
        member: "max".into()
    }));
    assert_eq!(h.awaited(), ["kailai"]);
}

#[test]
fn runaway_loops_stop_at_max_rounds() {
    let mut t = team("single_human_team.json");
    t.settings.max_rounds = 4;
    let mut h = Harness::new(t);
    h.always("max", "over to carol [NEXT: carol]")
        .always("carol", "back to max [NEXT: max]");
    h.say("Debate [NEXT: max]").unwrap();
    assert_eq!(h.delivered_to(), ["max", "carol", "max", "carol"]);
    assert!(h.notices().contains(&&Notice::RoundLimitReached {
        limit: 4,
        dropped: vec!["max".into()]
    }));
    assert_eq!(h.awaited(), ["kailai"]);
    // A human message starts a fresh budget.
    h.say("Once more [NEXT: max]").unwrap();
    assert_eq!(h.delivered_to().len(), 8);
}

// ------------------------------------------------------------------ failures

#[test]
fn agent_failure_is_recorded_as_a_system_message_and_the_queue_continues() {
    let mut h = solo();
    h.fail("max", "timeout after 60 s")
        .reply("carol", "I'm here");
    h.say("Both of you [NEXT: max, carol]").unwrap();
    assert_eq!(h.delivered_to(), ["max", "carol"]);
    let failure = h.message(&msg(2));
    assert_eq!(failure.speaker.kind, SpeakerKind::System);
    assert_eq!(failure.speaker.id, "system");
    assert_eq!(failure.content, "max failed: timeout after 60 s");
    assert_eq!(failure.routing.parent, Some(msg(1)));
    // Latest policy: the failure notice is never a [MESSAGE]; carol gets the human's message.
    assert_eq!(h.deliveries()[1].message, msg(1));
    assert_eq!(h.conv.store().len(), 3);
}

#[test]
fn a_failure_for_a_member_not_in_flight_is_refused() {
    let mut h = solo();
    let at = Millis(1);
    let err = h
        .conv
        .handle_agent_failed("max", "boom".into(), at)
        .unwrap_err();
    assert_eq!(
        err,
        InputError::NotInFlight {
            member: "max".into(),
            expected: None
        }
    );
    assert!(h.conv.store().is_empty());
}

// ------------------------------------------------------------------ team setup

#[test]
fn unknown_agent_type_raises_a_notice_on_set_team() {
    let mut t = team("single_human_team.json");
    t.members[1].agent_type = Some("aider".into());
    let mut conv = Conversation::with_team(t);
    assert_eq!(
        conv.poll_action(),
        Some(Action::Notice(Notice::UnknownAgentType {
            member: "max".into(),
            agent_type: "aider".into()
        }))
    );
    assert_eq!(conv.poll_action(), None);
}

#[test]
fn set_team_resets_everything() {
    let mut h = solo();
    h.say("[TEAM_TASK: x] Go [NEXT: max]").unwrap();
    h.conv.set_team(team("team.json"));
    assert!(h.conv.store().is_empty());
    assert_eq!(h.conv.store().team_task(), None);
    assert_eq!(h.conv.status(), Status::Idle);
    assert_eq!(h.conv.in_flight(), None);
    assert_eq!(h.conv.waiting_for(), None);
    assert!(h.conv.pending().is_empty());
    assert_eq!(h.conv.poll_action(), None);
}

// ------------------------------------------------------------------ serialization

#[test]
fn actions_serialize_in_camel_case_and_round_trip() {
    let mut h = solo();
    h.fail("max", "crash");
    h.say("[TEAM_TASK:] Go [NEXT: max, zed]").unwrap();
    assert!(!h.log.is_empty());
    for action in &h.log {
        let json = serde_json::to_string(action).unwrap();
        let back: Action = serde_json::from_str(&json).unwrap();
        assert_eq!(&back, action, "{json}");
    }
    let await_json = serde_json::to_value(Action::AwaitHuman {
        member: "kailai".into(),
    })
    .unwrap();
    assert_eq!(
        await_json,
        serde_json::json!({"type": "awaitHuman", "member": "kailai"})
    );
    let notice = serde_json::to_value(Action::Notice(Notice::UnresolvedAddressees {
        message: msg(1),
        names: vec!["zed".into()],
    }))
    .unwrap();
    assert_eq!(
        notice,
        serde_json::json!({"type": "notice", "kind": "unresolvedAddressees", "message": "msg-1", "names": ["zed"]})
    );
}

// ------------------------------------------------------------------ properties

mod props {
    use super::*;
    use proptest::prelude::*;

    const NAMES: &[&str] = &["kailai", "bob", "max", "carol", "sarah", "zed", "ALL"];

    fn marker() -> impl Strategy<Value = String> {
        prop_oneof![
            4 => (prop::collection::vec((0..NAMES.len(), 0..4u8), 1..4)).prop_map(|v| {
                let names: Vec<String> = v
                    .into_iter()
                    .map(|(n, i)| match i {
                        1 => format!("{} !P1", NAMES[n]),
                        2 => format!("{} !P3", NAMES[n]),
                        _ => NAMES[n].to_string(),
                    })
                    .collect();
                format!("[NEXT: {}]", names.join(", "))
            }),
            1 => Just("[DONE]".to_string()),
            1 => (0..NAMES.len()).prop_map(|n| format!("[DROP: {}]", NAMES[n])),
            1 => (0..NAMES.len()).prop_map(|n| format!("[FROM: {}]", NAMES[n])),
            1 => "[a-z ]{0,12}".prop_map(|t| format!("[TEAM_TASK: {t}]")),
            2 => "[a-z ]{0,20}",
        ]
    }

    fn text() -> impl Strategy<Value = String> {
        prop::collection::vec(marker(), 0..4).prop_map(|parts| parts.join(" "))
    }

    #[derive(Debug, Clone)]
    enum Event {
        /// A human types (sender resolved by the machine, or explicit).
        Human(Option<&'static str>, String),
        /// The agent in flight answers (or, with none in flight, nobody does).
        Reply(String),
        Fail,
        /// The host persists everything and resumes (as after a crash).
        Restart,
    }

    fn event() -> impl Strategy<Value = Event> {
        prop_oneof![
            1 => (prop::option::of(prop::sample::select(vec!["kailai", "bob", "max"])), text())
                .prop_map(|(s, t)| Event::Human(s, t)),
            4 => text().prop_map(Event::Reply),
            1 => Just(Event::Fail),
            1 => Just(Event::Restart),
        ]
    }

    /// Drains every action; returns the deliveries. Panics on livelock.
    fn drain(conv: &mut Conversation) -> usize {
        let mut deliveries = 0;
        for _ in 0..10_000 {
            match conv.poll_action() {
                None => return deliveries,
                Some(Action::Deliver(_)) => deliveries += 1,
                Some(_) => {}
            }
        }
        panic!("poll_action never drained");
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

        #[test]
        fn random_conversations_stay_within_bounds(
            multi_human in any::<bool>(),
            policy_parent in any::<bool>(),
            max_rounds in 1usize..8,
            events in prop::collection::vec(event(), 1..60),
        ) {
            let mut t = team(if multi_human { "team.json" } else { "single_human_team.json" });
            t.settings.max_rounds = max_rounds;
            t.settings.delivery = if policy_parent { DeliveryPolicy::Parent } else { DeliveryPolicy::Latest };
            let mut conv = Conversation::with_team(t.clone());
            let mut since_human = 0usize;
            let mut at = 0u64;
            for event in events {
                at += 1;
                let before = conv.store().len();
                match event {
                    Event::Human(sender, text) => {
                        let input = HumanInput { text, sender: sender.map(String::from) };
                        match conv.handle_human_input(input, Millis(at)) {
                            Ok(_) => since_human = 0,
                            Err(_) => prop_assert_eq!(conv.store().len(), before, "refused input stored"),
                        }
                    }
                    Event::Reply(text) => {
                        if let Some(to) = conv.in_flight().map(|f| f.to.clone()) {
                            let id = conv.handle_agent_replied(&to, text.clone(), Millis(at)).unwrap();
                            prop_assert_eq!(&conv.store().get(&id).unwrap().content, &text);
                        } else {
                            prop_assert!(conv.handle_agent_replied("max", text, Millis(at)).is_err());
                        }
                    }
                    Event::Fail => {
                        if let Some(to) = conv.in_flight().map(|f| f.to.clone()) {
                            conv.handle_agent_failed(&to, "timeout".into(), Millis(at)).unwrap();
                        }
                    }
                    Event::Restart => {
                        let in_flight = conv.in_flight().cloned();
                        conv = persist_and_resume(&conv, t.clone()).expect("every reachable state resumes");
                        // The in-flight delivery is emitted again: not a new round.
                        let again = drain(&mut conv);
                        prop_assert_eq!(again, usize::from(in_flight.is_some()));
                        prop_assert_eq!(conv.in_flight().map(|f| &f.to), in_flight.as_ref().map(|f| &f.to));
                    }
                }
                since_human += drain(&mut conv);
                prop_assert!(since_human <= max_rounds, "{since_human} AI deliveries > max_rounds {max_rounds}");
                prop_assert!(conv.rounds() <= max_rounds);
                prop_assert!(conv.pending().len() <= MAX_QUEUED);
                // Settled: an agent runs, a human is awaited, the conversation is done, or
                // nothing has started yet.
                let settled = match conv.status() {
                    Status::Running => conv.in_flight().is_some(),
                    Status::AwaitingHuman => conv.waiting_for().is_some() && conv.in_flight().is_none(),
                    Status::Completed => conv.waiting_for().is_none(),
                    Status::Idle => conv.store().is_empty(),
                };
                prop_assert!(settled, "unsettled state {:?}", conv.status());
            }
        }
    }
}

// ------------------------------------------------------------------ prompts built at emission

fn fates(d: &agent_chatter::conversation::Delivery) -> Vec<(String, Fate)> {
    d.prompt
        .explain
        .messages
        .iter()
        // Positions are 0-based; a fresh conversation's ids are `msg-{position + 1}`.
        .map(|m| (format!("msg-{}", m.index + 1), m.fate))
        .collect()
}

#[test]
fn chain_prompts_show_the_previous_answer_once_as_message() {
    let mut h = solo();
    h.reply("max", "Max's analysis [NEXT: sarah]")
        .reply("sarah", "Sarah's review [NEXT: carol]")
        .reply("carol", "Carol's summary");
    h.say("[TEAM_TASK: Auth] Kick off [NEXT: max]").unwrap();
    let carol = h.deliveries()[2].clone();
    assert_eq!(carol.to, "carol");
    assert_eq!(
        carol.prompt.prompt,
        "[TEAM_TASK]\nAuth\n\n[CONTEXT]\n- kailai -> max: Kick off\n- max -> sarah: Max's analysis\n\n[MESSAGE]\nSarah's review"
    );
    assert_eq!(
        fates(&carol),
        [
            ("msg-1".into(), Fate::Included),
            ("msg-2".into(), Fate::Included),
            ("msg-3".into(), Fate::Current)
        ]
    );
}

#[test]
fn an_agent_repeating_itself_is_deduplicated_for_the_next_agent() {
    let mut h = solo();
    h.say("Review this [NEXT: sarah]").unwrap(); // sarah in flight
    h.say("And this too [NEXT: sarah]").unwrap(); // queued behind her
    h.reply("sarah", "Looks fine [NEXT: carol]")
        .reply("carol", "ok");
    h.answer("sarah", "Looks fine").unwrap();
    assert_eq!(h.delivered_to(), ["sarah", "sarah", "carol"]);
    let carol = h.deliveries()[2].clone();
    assert_eq!(carol.message, msg(4));
    assert_eq!(
        fates(&carol),
        [
            ("msg-1".into(), Fate::Included),
            ("msg-2".into(), Fate::Included),
            (
                "msg-3".into(),
                Fate::Deduplicated {
                    reason: DedupReason::SameSpeakerAndContent
                }
            ),
            ("msg-4".into(), Fate::Current),
        ]
    );
    assert_eq!(
        carol.prompt.prompt.matches("Looks fine").count(),
        1,
        "{}",
        carol.prompt.prompt
    );
}

#[test]
fn latest_policy_prompt_shows_the_sibling_answer_as_message() {
    let h = parallel(DeliveryPolicy::Latest);
    let carol = &h.deliveries()[1].prompt.prompt;
    assert_eq!(
        carol,
        "[CONTEXT]\n- kailai -> max, carol: Which auth?\n\n[MESSAGE]\nMax: use OAuth"
    );
}

#[test]
fn parent_policy_prompt_shows_the_addressing_message_and_related_answers() {
    let h = parallel(DeliveryPolicy::Parent);
    let carol = &h.deliveries()[1].prompt.prompt;
    assert!(carol.ends_with("[MESSAGE]\nWhich auth?"), "{carol}");
    assert!(carol.contains("[RELATED_CONTEXT]"), "{carol}");
    assert!(carol.contains("Max: use OAuth"), "{carol}");
}

// ------------------------------------------------------------------ resume after a restart

/// Persists the conversation as a host would (snapshot JSON + routing state JSON) and resumes.
fn persist_and_resume(conv: &Conversation, team: Team) -> Result<Conversation, ResumeError> {
    let snapshot_json = serde_json::to_string(&snapshot::export(conv.store(), Millis(99))).unwrap();
    let state_json = serde_json::to_string(&conv.routing_state()).unwrap();
    let mut store = Store::new();
    snapshot::import_str(&mut store, &snapshot_json).unwrap();
    let state: RoutingState = serde_json::from_str(&state_json).unwrap();
    Conversation::resume(team, store, state, Millis(100))
}

#[test]
fn resume_mid_delivery_emits_the_delivery_again_and_keeps_the_queue() {
    let mut h = solo();
    h.say("Go [NEXT: max, carol]").unwrap(); // max in flight, carol queued
    let before = h.deliveries()[0].clone();
    let mut resumed = persist_and_resume(&h.conv, team("single_human_team.json")).unwrap();
    let Some(Action::Deliver(again)) = resumed.poll_action() else {
        panic!("no delivery re-emitted")
    };
    assert_eq!(
        (&again.to, &again.message, &again.parent),
        (&before.to, &before.message, &before.parent)
    );
    assert_eq!(again.prompt, before.prompt);
    assert_eq!(resumed.poll_action(), None);
    assert_eq!(resumed.in_flight().map(|f| f.since), Some(Millis(100)));

    resumed
        .handle_agent_replied("max", "done".into(), Millis(101))
        .unwrap();
    let next = std::iter::from_fn(|| resumed.poll_action()).find_map(|a| match a {
        Action::Deliver(d) => Some(d.to),
        _ => None,
    });
    assert_eq!(next.as_deref(), Some("carol"));
    assert_eq!(resumed.store().len(), 2);
}

#[test]
fn resume_while_awaiting_a_human_prompts_them_again() {
    let mut h = multi();
    h.reply("max", "Bob? [NEXT: bob]");
    h.say("[FROM:kailai] Go [NEXT: max]").unwrap();
    let mut resumed = persist_and_resume(&h.conv, team("team.json")).unwrap();
    assert_eq!(
        resumed.poll_action(),
        Some(Action::AwaitHuman {
            member: "bob".into()
        })
    );
    let id = resumed
        .handle_human_input(HumanInput::text("Yes"), Millis(101))
        .unwrap();
    assert_eq!(
        resumed.store().get(&id).map(|m| m.speaker.id.as_str()),
        Some("bob")
    );
}

#[test]
fn resume_refuses_a_state_that_does_not_fit_the_team_and_names_the_field() {
    let mut h = multi();
    h.say("[FROM:kailai] Go [NEXT: max, carol]").unwrap();
    let mut t = team("team.json");
    t.members.retain(|m| m.id != "carol");
    let err = persist_and_resume(&h.conv, t).unwrap_err();
    assert_eq!(
        err.to_string(),
        "queue[0].to: 'carol' is not a member of the team"
    );

    let mut state = h.conv.routing_state();
    state.status = Status::AwaitingHuman;
    let err = Conversation::resume(team("team.json"), h.conv.store().clone(), state, Millis(1))
        .unwrap_err();
    assert_eq!(err.path, "status");

    let mut state = h.conv.routing_state();
    state.waiting_for = Some("max".into());
    state.in_flight = None;
    state.status = Status::AwaitingHuman;
    let err = Conversation::resume(team("team.json"), h.conv.store().clone(), state, Millis(1))
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "waitingFor: 'max' is an AI agent, not a human"
    );

    let err = Conversation::resume(
        team("team.json"),
        Store::new(),
        h.conv.routing_state(),
        Millis(1),
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "queue[0].parent: message msg-1 is not in the conversation"
    );
}

#[test]
fn an_ai_from_marker_is_ignored_with_a_notice() {
    let mut h = multi();
    h.reply("max", "[FROM: bob] Speaking for Bob [NEXT: carol]")
        .reply("carol", "ok");
    h.say("[FROM:kailai] Go [NEXT: max]").unwrap();
    assert_eq!(h.message(&msg(2)).speaker.id, "max");
    assert!(h.notices().contains(&&Notice::FromIgnored {
        message: msg(2),
        member: "max".into()
    }));
    assert_eq!(
        h.delivered_to(),
        ["max", "carol"],
        "the rest of the reply still routes"
    );
}

#[test]
fn notices_read_as_sentences_naming_what_happened() {
    use agent_chatter::message::MessageId;
    let cases = [
        (
            Notice::UnresolvedAddressees {
                message: MessageId::from_seq(3),
                names: vec!["zed".into()],
            },
            "[NEXT] in msg-3: no member matches zed; not routed",
        ),
        (
            Notice::RoundLimitReached {
                limit: 50,
                dropped: vec!["max".into()],
            },
            "runaway bound: 50 AI deliveries since the last human message; dropped the pending deliveries to max; a human must speak to continue",
        ),
        (
            Notice::UnknownAgentType {
                member: "bo".into(),
                agent_type: "cursor".into(),
            },
            "bo: agent type \"cursor\" is unknown; its prompts use the plain format",
        ),
    ];
    for (notice, text) in cases {
        assert_eq!(notice.to_string(), text);
    }
}
