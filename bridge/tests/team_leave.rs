//! A member leaves the team from now on through the bridge (docs/architecture.md §6b, §14b):
//! the page's `leaveTeam{session, member}` becomes a `memberLeft` fact stamped by the bridge,
//! committed to the database and sent to every page like any fact; the log keeps it across a
//! restart, and a member the team does not have, another session than the open one, or the
//! fact sent through `apply` are refused in words.

mod support;

use agent_chatter::protocol::{Command, Event};
use agent_chatter::session::{Fact, Session};
use support::{apply, human, team, Bridge};

fn leave(session: i64, member: &str) -> Command {
    Command::LeaveTeam {
        session,
        member: member.into(),
    }
}

#[tokio::test]
async fn a_member_who_spoke_leaves_from_now_on_and_the_log_keeps_it_after_a_restart() {
    let bridge = Bridge::start(Bridge::new_dir(&team(None), "claude-stream.sh"), None);
    let (mut page, opened) = bridge.join().await;
    page.send_command(human("[NEXT: max] go")).await;
    let replied = page.until_replied().await;
    assert_eq!(replied.to, "max");

    page.send_command(leave(opened.id, "max")).await;
    let (seq, fact) = page.until_fact_kind("memberLeft").await;
    assert!(
        matches!(&fact, Fact::MemberLeft { member, at } if member == "max" && at.0 > 0),
        "stamped by the bridge's clock: {fact:?}"
    );
    // Who is answered how: max is no longer listed.
    let agents = page.wait_for(|e| matches!(e, Event::Agents { .. })).await;
    let Event::Agents { list } = agents else {
        unreachable!()
    };
    assert!(list.iter().all(|a| a.member != "max"), "{list:?}");

    // A later [NEXT: max] reaches no one: the message is stored, nothing runs.
    page.send_command(human("[NEXT: max] once more")).await;
    page.until_fact_kind("human").await;
    page.no_fact_for_half_a_second().await;

    let dir = bridge.kill();
    let bridge = Bridge::start(dir, Some(opened.id));
    let (_, reopened) = bridge.join().await;
    assert_eq!(reopened.id, opened.id);
    assert!(
        matches!(&reopened.facts[seq as usize - 1], Fact::MemberLeft { member, .. } if member == "max"),
        "{:?}",
        reopened.facts
    );
    let session = Session::replay(reopened.facts).expect("the stored log replays");
    assert!(session.team().unwrap().member("max").is_none());
    let max_said = &session.messages()[1];
    assert_eq!(
        (max_said.speaker.id.as_str(), max_said.content.as_str()),
        ("max", replied.text.as_str()),
        "max's reply stays max's"
    );
    assert_eq!(session.left_members()[0].member.id, "max");
}

#[tokio::test]
async fn a_leave_that_cannot_be_is_refused_naming_the_member_or_the_session() {
    let bridge = Bridge::start(Bridge::new_dir(&team(None), "claude-stream.sh"), None);
    let (mut page, opened) = bridge.join().await;

    page.send_command(leave(opened.id, "zed")).await;
    assert_eq!(
        page.until_error().await,
        "\"zed\" is not a member of the team, so \"zed\" cannot leave it"
    );

    page.send_command(leave(opened.id + 7, "max")).await;
    let error = page.until_error().await;
    assert!(
        error.starts_with(&format!(
            "leaveTeam: session {} is not the session open here (session {})",
            opened.id + 7,
            opened.id
        )),
        "{error}"
    );

    page.send_command(apply(Fact::MemberLeft {
        member: "max".into(),
        at: agent_chatter::message::Millis(1),
    }))
    .await;
    let error = page.until_error().await;
    assert!(error.contains("leaveTeam{session, member}"), "{error}");
    // Nothing of it reached the log.
    page.no_fact_for_half_a_second().await;
    let (_, again) = bridge.join().await;
    assert_eq!(again.facts.len(), opened.facts.len());
}
