//! The session's log under storage faults and a second bridge (issue #28, points 2 and 4):
//! real `agent-chatter serve` processes, a real SQLite file, a real socket.

mod support;

use agent_chatter::protocol::{Command, Event};
use agent_chatter::session::{Fact, Failure};
use serde_json::json;
use support::{cancel, human, is_delivering, retry, team, Bridge};

/// The facts' kinds, in order.
fn kinds(facts: &[Fact]) -> Vec<&'static str> {
    facts.iter().map(Fact::kind).collect()
}

/// A second connection on the bridge's database file, as another program would open it.
fn db_of(bridge: &Bridge) -> rusqlite::Connection {
    let conn = rusqlite::Connection::open(bridge.dir.path().join("sessions.db")).unwrap();
    conn.busy_timeout(std::time::Duration::from_secs(5))
        .unwrap();
    conn
}

/// Issue #28.2: an agent's outcome that cannot be written (here a trigger fails every
/// `replied`/`failed` row while a `fault` row exists, as a full disk would) is reported to
/// the page, kept, and written once the database takes it again; the conversation then goes
/// on: the next message is delivered.
#[tokio::test]
async fn an_outcome_that_cannot_be_written_is_written_later_and_the_conversation_goes_on() {
    let bridge = Bridge::start(Bridge::new_dir(&team(None), "claude-stream.sh"), None);
    let (mut page, _) = bridge.join().await;
    let db = db_of(&bridge);
    db.execute_batch(
        "CREATE TABLE fault (x INTEGER);
         INSERT INTO fault VALUES (1);
         CREATE TRIGGER fail_outcomes BEFORE INSERT ON facts
         WHEN EXISTS (SELECT 1 FROM fault)
              AND json_extract(NEW.fact, '$.type') IN ('replied', 'failed')
         BEGIN SELECT RAISE(ABORT, 'disk I/O error (injected)'); END;",
    )
    .unwrap();

    page.send_command(human("[NEXT: max] hi")).await;
    let message = page.until_error().await;
    assert!(
        message.contains("the outcome of max's run could not be written")
            && message.contains("disk I/O error (injected)")
            && message.contains("written again"),
        "{message}"
    );
    // Meanwhile max's run has ended, and cancel says why its outcome is not there yet.
    page.send_command(cancel("max")).await;
    let error = page.until_error().await;
    assert!(
        error.contains("max's run has ended; its outcome could not be written"),
        "{error}"
    );

    // The disk takes writes again: the reply is stored, as the next fact.
    db.execute_batch("DELETE FROM fault").unwrap();
    let replied = page.until_replied().await;
    assert_eq!(replied.seq, 3, "{replied:?}");
    assert!(replied.text.starts_with("Relay héllo"), "{replied:?}");

    // And the conversation goes on: the next message is delivered and answered.
    page.send_command(human("[NEXT: max] again")).await;
    page.wait_for(is_delivering).await;
    let again = page.until_replied().await;
    assert_eq!(again.seq, 5, "{again:?}");

    // The log as stored replays to the same conversation.
    let kinds: Vec<String> = db
        .prepare("SELECT json_extract(fact, '$.type') FROM facts ORDER BY seq")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(kinds, ["setTeam", "human", "replied", "human", "replied"]);
}

/// `serve` on the files of `bridge` (its database), opening session `id`, as a second bridge
/// would be started: (exit code, stderr), or `None` as the code when it started and was
/// killed after 10 s.
fn second_serve(dir: &std::path::Path, id: i64) -> (Option<i32>, String) {
    let mut child = std::process::Command::new(support::bin())
        .args(["serve", "--port", "0", "--session", &id.to_string()])
        .arg("--db")
        .arg(dir.join("sessions.db"))
        .arg("--dist")
        .arg(dir.join("dist"))
        .arg("--agents")
        .arg(dir.join("agents.json"))
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let end = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while child.try_wait().unwrap().is_none() && std::time::Instant::now() < end {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let _ = child.kill();
    let out = child.wait_with_output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The `type` of every stored fact of the bridge's database, in order.
fn stored_kinds(db: &rusqlite::Connection) -> Vec<String> {
    db.prepare("SELECT json_extract(fact, '$.type') FROM facts ORDER BY session_id, seq")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

/// Issue #28.4: one session has one runner. While a bridge runs a session (its agent working),
/// a second bridge asked to open it refuses to start, naming the holder's process, and a
/// second bridge on another session cannot switch to it: the pending delivery runs once.
#[tokio::test]
async fn a_second_bridge_never_runs_a_session_another_one_holds() {
    let first = Bridge::start(Bridge::new_dir(&team(None), "hang.sh"), None);
    let (mut page, session) = first.join().await;
    let id = session.id;
    page.send_command(human("[NEXT: max] take your time")).await;
    page.wait_for(is_delivering).await;

    let (code, stderr) = second_serve(first.dir.path(), id);
    assert_eq!(code, Some(1), "{stderr}");
    let holder = format!(
        "session {id} is open in another agent-chatter (process {}",
        first.child.id()
    );
    assert!(stderr.contains(&holder), "{stderr}");

    // A bridge on a session of its own is welcome, but cannot open the held one.
    let second = first.beside(None);
    let (mut other, _) = second.join().await;
    other.send_command(Command::OpenSession { id }).await;
    let error = other.until_error().await;
    assert!(error.contains(&holder), "{error}");

    // max was delivered once, and still runs in the first bridge only.
    page.no_fact_for_half_a_second().await;
    let db = db_of(&first);
    let kinds = stored_kinds(&db);
    assert_eq!(kinds, ["setTeam", "human", "setTeam"], "{kinds:?}");
    page.send_command(cancel("max")).await;
    assert_eq!(page.until_failed().await.seq, 3);
}

/// Issue #28.4: a holder killed by SIGKILL leaves its session to the next bridge at once (its
/// process is gone), which records the run cut short as interrupted (docs/architecture.md
/// §14c) and runs it again when retried; a holder that stops renewing (SIGSTOP)
/// loses it when its lease expires, and once it runs again it can no longer write it.
#[tokio::test]
async fn a_dead_holders_session_is_taken_over_and_an_expired_lease_too() {
    let first = Bridge::start(Bridge::new_dir(&team(None), "hang.sh"), None);
    let (mut page, session) = first.join().await;
    let id = session.id;
    page.send_command(human("[NEXT: max] take your time")).await;
    page.wait_for(is_delivering).await;

    // SIGKILL: nothing is released, yet the next bridge takes the session over at once; the
    // run cut short is recorded as interrupted, and the user's retry runs it again.
    let dir = first.kill();
    let second = Bridge::start(dir, Some(id));
    let (mut page, session) = second.join().await;
    assert!(
        matches!(
            &session.facts[2],
            Fact::Failed {
                failure: Some(Failure::Interrupted),
                ..
            }
        ),
        "{:?}",
        kinds(&session.facts)
    );
    page.send_command(retry("max", 5)).await;
    page.wait_for(is_delivering).await;

    // Stopped, the holder is alive but renews nothing: refused until its lease expires.
    let pid = second.child.id() as i32;
    // SAFETY: signals a child process this test started.
    unsafe { libc::kill(pid, libc::SIGSTOP) };
    let stopped = std::time::Instant::now();
    let (code, stderr) = second_serve(second.dir.path(), id);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "session {id} is open in another agent-chatter (process {pid}"
        )),
        "{stderr}"
    );
    let third = loop {
        std::thread::sleep(std::time::Duration::from_millis(500));
        let started = std::panic::catch_unwind(|| {
            // A bridge on the second's files, opening the session.
            second.beside(Some(id))
        });
        if let Ok(third) = started {
            break third;
        }
        assert!(
            stopped.elapsed() < std::time::Duration::from_secs(20),
            "the lease never expired"
        );
    };
    assert!(
        stopped.elapsed() >= std::time::Duration::from_secs(7),
        "taken over {:?} after the holder stopped, before its lease expired",
        stopped.elapsed()
    );
    // The second's run, cut short for the third, is recorded as interrupted there.
    let (mut page3, session3) = third.join().await;
    assert!(
        matches!(
            &session3.facts[4],
            Fact::Failed {
                failure: Some(Failure::Interrupted),
                ..
            }
        ),
        "{:?}",
        kinds(&session3.facts)
    );

    // The old holder runs again: what it would write is refused, naming the new one.
    // SAFETY: as above.
    unsafe { libc::kill(pid, libc::SIGCONT) };
    page.send_command(human("[FROM: kailai] still here?")).await;
    let error = page.until_error().await;
    assert!(
        error.contains(&format!(
            "session {id} is open in another agent-chatter (process {}",
            third.child.id()
        )),
        "{error}"
    );
    // Retried, the delivery runs in the third bridge, which alone records its end.
    page3.send_command(retry("max", 6)).await;
    page3.wait_for(is_delivering).await;
    page3.send_command(cancel("max")).await;
    assert_eq!(page3.until_failed().await.seq, 7);
    assert_eq!(
        stored_kinds(&db_of(&second)),
        ["setTeam", "human", "failed", "retry", "failed", "retry", "failed"]
    );
}

/// A bridge directory whose `max` is `hang.sh` behind a script that notes each start as a line
/// of `agent-starts` in the directory.
fn counting_hang_dir() -> tempfile::TempDir {
    use std::os::unix::fs::PermissionsExt;
    let dir = Bridge::new_dir(&team(None), "hang.sh");
    let script = dir.path().join("counting-hang.sh");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\necho start >> '{}'\nexec '{}'\n",
            dir.path().join("agent-starts").display(),
            support::fixture("hang.sh").display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let agents = json!({"agents": {"max": {"command": script.display().to_string(), "args": []}}});
    std::fs::write(dir.path().join("agents.json"), agents.to_string()).unwrap();
    dir
}

/// How many times the agent of [`counting_hang_dir`] `dir` was started.
fn agent_starts(dir: &std::path::Path) -> usize {
    std::fs::read_to_string(dir.join("agent-starts"))
        .map(|s| s.lines().count())
        .unwrap_or(0)
}

/// docs/architecture.md §14c "Interrupted runs": an agent still running when the bridge is
/// killed is not run again by the next start (that run may have cost money and changed
/// files): its delivery is recorded as failed, kind `interrupted`, saying when it started and
/// that its work and cost are unknown; the user's retry runs it again.
#[tokio::test]
async fn a_run_cut_short_by_a_killed_bridge_is_recorded_as_interrupted_not_made_again() {
    let first = Bridge::start(counting_hang_dir(), None);
    let starts = first.dir.path().to_path_buf();
    let (mut page, session) = first.join().await;
    let id = session.id;
    page.send_command(human("[NEXT: max] take your time")).await;
    page.wait_for(is_delivering).await;
    wait_for_starts(&starts, 1);

    let second = Bridge::start(first.kill(), Some(id));
    let (mut page, session) = second.join().await;
    let facts = &session.facts;
    assert_eq!(facts.len(), 3, "{session:?}");
    let Fact::Failed {
        to,
        reason,
        failure,
        ..
    } = &facts[2]
    else {
        panic!("not failed: {:?}", facts[2])
    };
    assert_eq!(to, "max");
    assert_eq!(*failure, Some(Failure::Interrupted));
    assert!(
        reason.starts_with("interrupted: the bridge stopped while it ran (it started 20")
            && reason.ends_with(
                "UTC), so what the agent did and what the run cost are not known; retry to run it again"
            ),
        "{reason}"
    );
    page.no_fact_for_half_a_second().await;
    assert_eq!(
        agent_starts(&starts),
        1,
        "the interrupted run was made again"
    );

    page.send_command(retry("max", 5)).await;
    page.wait_for(is_delivering).await;
    wait_for_starts(&starts, 2);
    page.send_command(cancel("max")).await;
    let cancelled = page.until_failed().await;
    assert_eq!(cancelled.failure, Some(Failure::Cancelled), "{cancelled:?}");
}

/// Waits (up to 10 s) until the agent of [`counting_hang_dir`] `dir` has started `n` times.
fn wait_for_starts(dir: &std::path::Path, n: usize) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while agent_starts(dir) < n && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert_eq!(agent_starts(dir), n, "the agent's starts");
}

/// Issue #45.9: a clean stop (SIGTERM, as a service manager or Ctrl+C sends) leaves the
/// database checkpointed: no -wal file is left beside it holding the session's last facts.
#[tokio::test]
async fn a_clean_stop_leaves_no_wal_file_behind() {
    let bridge = Bridge::start(Bridge::new_dir(&team(None), "claude-stream.sh"), None);
    let (mut page, _) = bridge.join().await;
    for n in 0..20 {
        let text = format!("[FROM: kailai] note {n}");
        page.send_command(human(&text)).await;
        page.wait_for(
            |e| matches!(e, Event::Fact { fact: Fact::Human { text: t, .. }, .. } if *t == *text),
        )
        .await;
    }
    let wal = bridge.dir.path().join("sessions.db-wal");
    assert!(
        wal.exists(),
        "the WAL holds the facts while the bridge runs"
    );
    let pid = bridge.child.id() as i32;
    // SAFETY: kill only sends a signal to our own child.
    unsafe { libc::kill(pid, libc::SIGTERM) };
    let mut bridge = bridge;
    let status = bridge.child.wait().unwrap();
    assert!(status.code().is_some(), "it stopped by itself: {status:?}");
    let left = std::fs::metadata(&wal).map(|m| m.len()).unwrap_or(0);
    assert_eq!(left, 0, "a -wal of {left} bytes was left");
    let db = db_of(&bridge);
    let humans = stored_kinds(&db).iter().filter(|k| *k == "human").count();
    assert_eq!(humans, 20, "every fact is in the file");
}
