//! A large output through a real `agent-chatter serve` (docs/architecture.md §14c): the page
//! gets it in bounded frames, and the database keeps its first and last MiB with the count of
//! what was dropped between.

mod support;

use agent_chatter::protocol::Event;
use agent_chatter::session::Fact;
use serde_json::json;
use support::{fixture, human, team, Bridge};

#[tokio::test]
async fn a_huge_output_reaches_the_page_in_bounded_frames_and_its_ends_are_kept() {
    let dir = Bridge::new_dir(&team(None), "big-output.sh");
    // Read as plain text, which streams as it comes.
    let agents = json!({"agents": {"max": {
        "command": fixture("big-output.sh").display().to_string(),
        "output": "command"
    }}});
    std::fs::write(dir.path().join("agents.json"), agents.to_string()).unwrap();
    let bridge = Bridge::start(dir, None);
    let (mut page, _) = bridge.join().await;
    page.send_command(human("[NEXT: max] write a lot")).await;
    let events = page.collect_until_fact_kind("failed").await;
    let deltas: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            Event::Output { delta, .. } => Some(delta.as_str()),
            _ => None,
        })
        .collect();
    // (A page that falls behind skips frames: how many arrive depends on its pace.)
    assert!(!deltas.is_empty());
    assert!(deltas.iter().all(|d| d.len() <= 64 * 1024));
    assert!(deltas.iter().map(|d| d.len()).sum::<usize>() <= 5_000_001);
    let Some(Event::Fact {
        fact: Fact::Failed { reason, .. },
        ..
    }) = events.last()
    else {
        panic!("not failed: {:?}", events.last())
    };
    assert!(
        reason.starts_with("reply of 5000001 bytes is above the 1048576 byte message limit")
            && reason.ends_with(
                "its output (5000001 bytes) is kept in part in the session database \
                 (`agent-chatter outputs` prints it): the first and the last 1048576 bytes; the \
                 2902849 bytes between were dropped"
            ),
        "{reason}"
    );
    let db = rusqlite::Connection::open(bridge.dir.path().join("sessions.db")).unwrap();
    let kept: Vec<u8> = db
        .query_row("SELECT output FROM outputs WHERE member = 'max'", [], |r| {
            r.get(0)
        })
        .unwrap();
    let marker = b"\n[agent-chatter: 2902849 bytes of this output were dropped here]\n";
    assert_eq!(kept.len(), 2 * 1024 * 1024 + marker.len());
    assert_eq!(&kept[1024 * 1024..1024 * 1024 + marker.len()], marker);
    assert!(kept.ends_with(b"xx\n"));
}
