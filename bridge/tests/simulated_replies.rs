//! A simulated reply never drives a real (paid) agent unless the user chose simulation
//! (docs/architecture.md §14): in the demo team a member whose CLI is not installed is answered
//! by the simulator; a delivery its reply addresses to a member whose CLI is installed fails by
//! name instead of running, unannounced; a person's message to that member runs it, and so
//! does a retry the person asks for (they decided to run it on that reply).

mod support;

use agent_chatter::protocol::Event;
use agent_chatter::session::{Fact, Failure};
use serde_json::json;
use support::{fixture, human, is_delivering, retry, team, Bridge};

/// The demo team as shipped: Max's and Carol's CLIs missing here, Sarah's a fake Codex.
fn demo_dir() -> tempfile::TempDir {
    let demo: serde_json::Value =
        serde_json::from_str(include_str!("../../src/demo-team.json")).unwrap();
    let dir = Bridge::new_dir(&demo, "claude-stream.sh");
    let agents = json!({"agents": {
        "max": {"command": "agent-chatter-test-no-such-claude"},
        "sarah": {"command": fixture("codex-stream.sh").display().to_string()},
        "carol": {"command": "agent-chatter-test-no-such-gemini"},
    }});
    std::fs::write(dir.path().join("agents.json"), agents.to_string()).unwrap();
    dir
}

#[tokio::test]
async fn a_stand_in_reply_does_not_run_a_real_agent_and_a_persons_message_does() {
    let bridge = Bridge::start_logged(demo_dir(), None, &[]);
    // Said at start, before the address.
    assert!(
        bridge.stderr().contains(
            "agent-chatter: the demo team: the built-in simulator stands in for Max, Carol (CLI \
             not installed here); a simulated reply does not run a real agent, a message of \
             yours does"
        ),
        "{}",
        bridge.stderr()
    );
    let (mut page, _) = bridge.join().await;
    page.send_command(human("[NEXT: max] draft it")).await;
    let max = page.until_replied().await;
    assert_eq!(max.to, "max");
    assert!(
        max.text.contains("(simulated)") && max.text.contains("[NEXT: sarah]"),
        "{}",
        max.text
    );
    let events = page.collect_until_fact_kind("failed").await;
    assert!(!events.iter().any(is_delivering), "announced: {events:?}");
    let Some(Event::Fact {
        fact:
            Fact::Failed {
                to,
                reason,
                failure,
                ..
            },
        ..
    }) = events.last()
    else {
        unreachable!()
    };
    assert_eq!((to.as_str(), *failure), ("sarah", Some(Failure::CannotRun)));
    assert!(
        reason.starts_with(
            "sarah: not run: Sarah was addressed by Max's simulated reply (Max's CLI is not \
             installed here, so the built-in simulator stood in), and a real run on a made-up \
             reply could cost money; send Sarah a message yourself to go on, retry Sarah to run \
             it on that reply anyway"
        ),
        "{reason}"
    );
    // A retry asked for runs her on Max's reply: a person decided.
    page.send_command(retry("sarah", 10)).await;
    page.wait_for(is_delivering).await;
    let retried = page.until_replied().await;
    assert_eq!(retried.to, "sarah");
    // A person's message to her runs her CLI.
    page.send_command(human("[NEXT: sarah] review it")).await;
    let sarah = page.until_replied().await;
    assert_eq!(sarah.to, "sarah");
    assert!(sarah.text.starts_with("Reviewed"), "{}", sarah.text);
}

/// A member the user made simulated (`agentType: "simulated"`) was chosen: its reply runs the
/// real agent it addresses.
#[tokio::test]
async fn a_reply_of_a_member_chosen_as_simulated_runs_the_real_agent_it_addresses() {
    let mut chosen = team(None);
    chosen["members"][2]["systemInstruction"] = json!("You are Sarah.");
    let bridge = Bridge::start(Bridge::new_dir(&chosen, "claude-stream.sh"), None);
    let (mut page, _) = bridge.join().await;
    // Sarah (simulated) passes to the next AI member, Max, whose CLI runs.
    page.send_command(human("[NEXT: sarah] go")).await;
    let sarah = page.until_replied().await;
    assert_eq!(sarah.to, "sarah");
    assert!(sarah.text.contains("[NEXT: max]"), "{}", sarah.text);
    page.wait_for(is_delivering).await;
    let max = page.until_replied().await;
    assert_eq!(max.to, "max");
}
