//! The session's log under storage faults and a second bridge (issue #28, points 2 and 4):
//! real `agent-chatter serve` processes, a real SQLite file, a real socket.

mod support;

use serde_json::json;
use support::{team, Bridge};

fn human(text: &str) -> serde_json::Value {
    json!({"v": 1, "type": "apply", "fact": {"type": "human", "text": text, "sender": null, "at": 1}})
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
    let (mut page, _) = bridge.hello().await;
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

    page.send(human("[NEXT: max] hi")).await;
    let error = page.until(|e| e["type"] == "error").await;
    let message = error["message"].as_str().unwrap();
    assert!(
        message.contains("the outcome of max's run could not be written")
            && message.contains("disk I/O error (injected)")
            && message.contains("written again"),
        "{message}"
    );
    // Meanwhile max's run has ended, and cancel says why its outcome is not there yet.
    page.send(json!({"v": 1, "type": "cancel", "to": "max"}))
        .await;
    let error = page.until(|e| e["type"] == "error").await;
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("max's run has ended; its outcome could not be written"),
        "{error}"
    );

    // The disk takes writes again: the reply is stored, as the next fact.
    db.execute_batch("DELETE FROM fault").unwrap();
    let replied = page.until_fact("replied").await;
    assert_eq!(replied["seq"], 3, "{replied}");
    assert!(
        replied["fact"]["text"]
            .as_str()
            .unwrap()
            .starts_with("Relay héllo"),
        "{replied}"
    );

    // And the conversation goes on: the next message is delivered and answered.
    page.send(human("[NEXT: max] again")).await;
    page.until(|e| e["type"] == "delivering").await;
    let again = page.until_fact("replied").await;
    assert_eq!(again["seq"], 5, "{again}");

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
