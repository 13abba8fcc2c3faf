//! A large output through a real `agent-chatter serve` (docs/architecture.md §14c): the page
//! gets it in bounded frames, and the database keeps its first and last MiB with the count of
//! what was dropped between.

mod support;

use agent_chatter::protocol::{Command, Event};
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

/// The `runDetails` answer for `to`'s run of session `session` that ended at `at`, or the
/// error the bridge sent instead.
async fn run_details(
    page: &mut support::Client,
    session: i64,
    to: &str,
    at: u64,
) -> Result<agent_chatter::protocol::RunDetails, String> {
    page.send_command(Command::RunDetails {
        session,
        to: to.into(),
        at,
    })
    .await;
    match page
        .wait_for(|e| matches!(e, Event::RunDetails(_) | Event::Error { .. }))
        .await
    {
        Event::RunDetails(details) => Ok(details),
        Event::Error { message } => Err(message),
        _ => unreachable!(),
    }
}

#[tokio::test]
async fn a_runs_details_say_its_argv_model_and_kept_output_and_a_bad_question_is_named() {
    let mut team = team(None);
    team["members"][1]["model"] = json!("opus-e2e");
    team["members"][1]["env"] = json!({"E2E_SECRET": "never-in-run-details"});
    let dir = Bridge::new_dir(&team, "claude-fails-costless.sh");
    let agents = json!({"agents": {"max": {
        "command": fixture("claude-fails-costless.sh").display().to_string(),
        "args": ["-p"]
    }}});
    std::fs::write(dir.path().join("agents.json"), agents.to_string()).unwrap();
    let bridge = Bridge::start(dir, None);
    let (mut page, opened) = bridge.join().await;
    page.send_command(human("[NEXT: max] count the notes"))
        .await;
    let events = page.collect_until_fact_kind("failed").await;
    let Some(Event::Fact {
        fact: Fact::Failed { at, usage, .. },
        ..
    }) = events.last()
    else {
        panic!("not failed: {:?}", events.last())
    };
    // Its `$0` is nothing counted: recorded as no cost.
    assert_eq!(usage.as_ref().and_then(|u| u.cost_usd), None, "{usage:?}");
    let details = run_details(&mut page, opened.id, "max", at.0)
        .await
        .unwrap();
    assert_eq!(details.model.as_deref(), Some("claude-e2e-1"));
    assert_eq!(details.configured_model.as_deref(), Some("opus-e2e"));
    let program = fixture("claude-fails-costless.sh").display().to_string();
    assert_eq!(details.argv[0], program);
    assert!(
        details.argv.contains(&"-p".to_string()),
        "{:?}",
        details.argv
    );
    assert!(
        details.argv.contains(&"opus-e2e".to_string()),
        "{:?}",
        details.argv
    );
    let frame = agent_chatter::protocol::encode_event(&Event::RunDetails(details.clone()));
    assert!(!frame.contains("never-in-run-details") && !frame.contains("E2E_SECRET"));
    let output = details.output.unwrap();
    assert!(output.contains("Looking at the notes"), "{output}");
    assert_eq!(details.output_bytes, output.len() as u64);

    // The whole output of that one run, in a terminal: `outputs --at`.
    let outputs = |at: u64| {
        std::process::Command::new(support::bin())
            .args(["outputs", &opened.id.to_string(), "--member", "max", "--at"])
            .arg(at.to_string())
            .arg("--db")
            .arg(bridge.dir.path().join("sessions.db"))
            .output()
            .unwrap()
    };
    let out = outputs(at.0);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), output);
    let out = outputs(5);
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains(&format!(
            "session {} keeps no output of max of a run that ended at 5",
            opened.id
        )),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // What was wrong, named: a session that is not there, a run that is not, a member with none.
    let wrong = |e: Result<_, String>| e.unwrap_err();
    assert_eq!(
        wrong(run_details(&mut page, 99, "max", at.0).await),
        format!(
            "runDetails: session 99 is not the session open here (session {}): a page reads the runs of the session it has open",
            opened.id
        )
    );
    assert_eq!(
        wrong(run_details(&mut page, opened.id, "max", 5).await),
        format!(
            "runDetails: session {} has no run of max that ended at 5: max's runs ended at {} (the latest first)",
            opened.id, at.0
        )
    );
    assert_eq!(
        wrong(run_details(&mut page, opened.id, "kailai", at.0).await),
        format!(
            "runDetails: session {} has no run of kailai that ended at {}: kailai has no ended run in it",
            opened.id, at.0
        )
    );
    // Another session than the one open: its runs are not read, though they exist.
    page.send_command(Command::NewSession).await;
    let second = page.until_session().await;
    assert_eq!(
        wrong(run_details(&mut page, opened.id, "max", at.0).await),
        format!(
            "runDetails: session {} is not the session open here (session {}): a page reads the runs of the session it has open",
            opened.id, second.id
        )
    );
    // A frame missing its run's time is refused by the reader, naming the field.
    page.send(json!({"v": 1, "type": "runDetails", "session": opened.id, "to": "max"}))
        .await;
    assert_eq!(
        page.until_error().await,
        "runDetails.at: missing or not a time in ms since the epoch"
    );
}
