//! The session library over the bridge (issue #25): names, search, fork, resuming the session
//! written last and one token per database, with real `agent-chatter serve` processes on a
//! real SQLite file.

mod support;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};

use agent_chatter::protocol::{Command as Frame, Event, Forked, SearchHit, SessionInfo};
use agent_chatter::session::Fact;
use serde_json::json;
use support::{bin, human, team, Bridge, Client, Replied};

/// `serve --simulate` on the files in `d` with `args` (no `--team` unless given); its stderr
/// goes to `d/stderr-N`.
fn serve(d: &Path, args: &[&str]) -> Bridge {
    let n = std::fs::read_dir(d).unwrap().count();
    let stderr = std::fs::File::create(d.join(format!("stderr-{n}"))).unwrap();
    let mut child = Command::new(bin())
        .args(["serve", "--port", "0", "--simulate", "--db"])
        .arg(d.join("sessions.db"))
        .arg("--dist")
        .arg(d.join("dist"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(stderr)
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let rest = line
        .trim()
        .strip_prefix("http://127.0.0.1:")
        .unwrap_or_else(|| panic!("first line: {line:?}\n{}", last_stderr(d)));
    let (port, token) = rest.split_once("/#token=").unwrap();
    Bridge {
        dir: tempfile::tempdir().unwrap(),
        child,
        port: port.parse().unwrap(),
        token: token.to_string(),
    }
}

/// What the last `serve` started on `d` wrote on stderr.
fn last_stderr(d: &Path) -> String {
    let mut logs: Vec<_> = std::fs::read_dir(d)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.to_string_lossy().contains("stderr-"))
        .collect();
    logs.sort_by_key(|p| std::fs::metadata(p).unwrap().modified().unwrap());
    logs.last()
        .map(|p| std::fs::read_to_string(p).unwrap())
        .unwrap_or_default()
}

/// A directory with the page, the test team (`team.json`) and no agents file.
fn dir() -> tempfile::TempDir {
    Bridge::new_dir(&team(None), "claude-stream.sh")
}

fn with_team(d: &Path) -> String {
    d.join("team.json").display().to_string()
}

/// A conversation of three facts in the open session: the team, `text` to max, max's reply.
async fn talk(page: &mut Client, text: &str) -> Replied {
    page.send_command(human(&format!("[NEXT: max] {text}")))
        .await;
    page.until_replied().await
}

/// The list of the next `sessions` event.
async fn until_sessions(page: &mut Client) -> Vec<SessionInfo> {
    match page.wait_for(|e| matches!(e, Event::Sessions { .. })).await {
        Event::Sessions { list } => list,
        _ => unreachable!(),
    }
}

async fn sessions(page: &mut Client) -> Vec<SessionInfo> {
    page.send_command(Frame::ListSessions).await;
    until_sessions(page).await
}

/// The answer to `searchSessions` for `query`: its query and hits, after checking that it is
/// `searchResults` (not an error).
async fn search_answer(page: &mut Client, query: &str) -> (String, Vec<SearchHit>) {
    page.send_command(Frame::SearchSessions {
        query: query.into(),
    })
    .await;
    match page
        .wait_for(|e| matches!(e, Event::SearchResults { .. } | Event::Error { .. }))
        .await
    {
        Event::SearchResults { query, hits } => (query, hits),
        other => panic!("{query}: {other:?}"),
    }
}

/// The hits of `searchSessions` for `query` (see [`search_answer`]).
async fn search(page: &mut Client, query: &str) -> Vec<SearchHit> {
    search_answer(page, query).await.1
}

fn rename(id: i64, name: &str) -> Frame {
    Frame::RenameSession {
        id,
        name: name.into(),
    }
}

#[tokio::test]
async fn a_restart_without_flags_resumes_the_session_written_last_with_the_same_token() {
    let d = dir();
    let first = serve(d.path(), &["--team", &with_team(d.path())]);
    let (mut page, session) = first.join().await;
    let id = session.id;
    talk(&mut page, "draft the notes").await;
    // Another session, then back to the first: it is the one written last.
    page.send_command(Frame::NewSession).await;
    page.until_session().await;
    page.send_command(Frame::OpenSession { id }).await;
    page.until_session().await;
    page.send_command(human("[NEXT: max] and again")).await;
    page.until_replied().await;
    let token = first.token.clone();
    drop(page);
    drop(first);

    let second = serve(d.path(), &[]);
    assert_eq!(second.token, token, "the token is the database's");
    assert!(
        last_stderr(d.path()).contains(&format!(
            "resuming session #{id} \"relay\", 5 facts; --new starts a new one"
        )),
        "{}",
        last_stderr(d.path())
    );
    // The old URL's token still opens it: the same session, every fact kept.
    let (_page, session) = second.join().await;
    assert_eq!(session.id, id);
    assert_eq!(session.facts.len(), 5);
    drop(second);

    // --new starts a new session with the demo team, on the same token.
    let third = serve(d.path(), &["--new"]);
    assert_eq!(third.token, token);
    let (_page, session) = third.join().await;
    assert_ne!(session.id, id);
    assert_eq!(session.facts.len(), 1);
}

#[tokio::test]
async fn a_database_with_no_session_starts_one_with_the_demo_team() {
    let d = dir();
    let bridge = serve(d.path(), &[]);
    let (_page, session) = bridge.join().await;
    assert_eq!(session.facts[0].kind(), "setTeam");
    assert!(!last_stderr(d.path()).contains("resuming"));
}

#[tokio::test]
async fn a_rename_is_sent_to_every_page_and_kept_across_a_restart() {
    let d = dir();
    let bridge = serve(d.path(), &["--team", &with_team(d.path())]);
    let (mut page, session) = bridge.join().await;
    let (mut other, _) = bridge.join().await;
    let id = session.id;
    page.send_command(rename(id, "  Release notes  ")).await;
    let list = until_sessions(&mut other).await;
    assert_eq!(list[0].name, "Release notes");
    assert_eq!(list[0].title, "relay");

    for (name, error) in [
        (
            "   ",
            "rename: a session's name cannot be empty".to_string(),
        ),
        (
            &"x".repeat(121),
            "rename: a session's name is at most 120 characters (this one has 121)".to_string(),
        ),
    ] {
        page.send_command(rename(id, name)).await;
        assert_eq!(page.until_error().await, error);
    }
    page.send_command(rename(99, "x")).await;
    assert_eq!(
        page.until_error().await,
        "rename: session 99 does not exist"
    );
    drop((page, other));
    drop(bridge);

    let listed = Command::new(bin())
        .args(["sessions", "--db"])
        .arg(d.path().join("sessions.db"))
        .output()
        .unwrap();
    let listed = String::from_utf8_lossy(&listed.stdout);
    assert!(
        listed.starts_with(&format!("{id}  Release notes  1 facts  created ")),
        "{listed}"
    );
    let bridge = serve(d.path(), &[]);
    let (mut page, _) = bridge.join().await;
    assert_eq!(sessions(&mut page).await[0].name, "Release notes");
}

#[tokio::test]
async fn search_finds_a_replys_word_in_another_session_ignoring_case() {
    let d = dir();
    let bridge = serve(d.path(), &["--team", &with_team(d.path())]);
    let (mut page, session) = bridge.join().await;
    let first = session.id;
    let reply = talk(&mut page, "hello").await.text;
    let word = reply
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.len() >= 4 && !"hello".contains(&w.to_lowercase()))
        .max_by_key(|w| w.len())
        .unwrap_or_else(|| panic!("no word in {reply:?}"))
        .to_string();
    page.send_command(Frame::NewSession).await;
    page.until_session().await;

    // `search_answer` checks the answer is `searchResults`.
    let (query, found) = search_answer(&mut page, &word.to_uppercase()).await;
    assert_eq!(query, word.to_uppercase());
    let hit = found
        .iter()
        .find(|h| h.seq == 3)
        .unwrap_or_else(|| panic!("{word}: {found:?}"));
    assert_eq!(hit.session, first);
    assert_eq!(hit.name, "relay");
    let marked: Vec<&str> = hit
        .snippet
        .iter()
        .filter(|p| p.hit)
        .map(|p| p.text.as_str())
        .collect();
    assert!(
        marked.iter().all(|m| m.eq_ignore_ascii_case(&word)) && !marked.is_empty(),
        "{hit:?}"
    );
}

/// A failure's reason is searchable (which run was stopped, which hit a limit), in files
/// written before it was too: their failures are indexed again when the file is opened.
#[tokio::test]
async fn search_finds_a_failures_reason_also_in_a_file_indexed_before_reasons_were() {
    let d = dir();
    let bridge = serve(d.path(), &["--team", &with_team(d.path())]);
    let (mut page, session) = bridge.join().await;
    let first = session.id;
    page.send_command(human("[NEXT: max] take your time")).await;
    page.wait_for(|e| matches!(e, Event::Delivering { .. }))
        .await;
    page.send_command(Frame::Cancel { to: "max".into() }).await;
    assert_eq!(page.until_failed().await.seq, 3);
    let found = search(&mut page, "STOPPED").await;
    assert!(
        found.iter().any(|h| h.session == first && h.seq == 3),
        "{found:?}"
    );
    drop(page);
    drop(bridge);

    // As a version before this one indexed it: the failure without text.
    let db = rusqlite::Connection::open(d.path().join("sessions.db")).unwrap();
    db.execute_batch(
        "DELETE FROM fact_text WHERE rowid = (SELECT rowid FROM facts WHERE seq = 3);
         INSERT INTO fact_text (rowid, text) SELECT rowid, '' FROM facts WHERE seq = 3;",
    )
    .unwrap();
    drop(db);
    let again = serve(d.path(), &[]);
    let (mut page, _) = again.join().await;
    let found = search(&mut page, "stopped").await;
    assert!(
        found.iter().any(|h| h.session == first && h.seq == 3),
        "{found:?}"
    );
}

#[tokio::test]
async fn sessions_search_lists_the_matching_facts_in_the_terminal() {
    let d = dir();
    let bridge = serve(d.path(), &["--team", &with_team(d.path())]);
    let (mut page, session) = bridge.join().await;
    let id = session.id;
    talk(&mut page, "Draft the Changelog").await;
    drop(page);
    drop(bridge);
    let out = Command::new(bin())
        .args(["sessions", "--search", "changelog", "--db"])
        .arg(d.path().join("sessions.db"))
        .output()
        .unwrap();
    let listed = String::from_utf8_lossy(&out.stdout);
    // The session once, with its best fact (the message, or the simulator's reply quoting it).
    let lines: Vec<&str> = listed.lines().collect();
    assert_eq!(lines.len(), 1, "{listed}");
    assert!(
        lines[0].starts_with(&format!("{id}  relay  #")) && lines[0].contains("«Changelog»"),
        "{listed}"
    );
}

/// Issue #45.9: a search that starts with `-` is text, never read as a flag.
#[tokio::test]
async fn sessions_search_takes_a_query_that_starts_with_a_dash() {
    let d = dir();
    let bridge = serve(d.path(), &["--team", &with_team(d.path())]);
    let (mut page, _) = bridge.join().await;
    talk(&mut page, "Draft the Changelog").await;
    drop(page);
    drop(bridge);
    for query in ["- x", "-changelog"] {
        let out = Command::new(bin())
            .args(["sessions", "--search", query, "--db"])
            .arg(d.path().join("sessions.db"))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{query}: {stderr}");
        assert!(!stderr.contains("unexpected argument"), "{query}: {stderr}");
    }
}

#[tokio::test]
async fn a_query_with_search_operators_or_quotes_is_answered_not_refused() {
    let d = dir();
    let bridge = serve(d.path(), &["--team", &with_team(d.path())]);
    let (mut page, _) = bridge.join().await;
    talk(&mut page, "we ship c++ \"quoted\" notes").await;
    for query in [
        "\"",
        "c++",
        "notes OR",
        "NEAR(",
        "a:b",
        "-",
        "\"quoted\" notes*",
    ] {
        // `search` checks the answer is `searchResults`.
        search(&mut page, query).await;
    }
    // Searched as the phrase `c`: the message (and the simulator's reply quoting it).
    let answer = search(&mut page, "c++").await;
    assert!(answer.iter().any(|h| h.seq == 2), "{answer:?}");
}

#[tokio::test]
async fn a_fork_has_the_first_n_facts_and_the_original_is_unchanged() {
    let d = dir();
    let bridge = serve(d.path(), &["--team", &with_team(d.path())]);
    let (mut page, session) = bridge.join().await;
    let (mut other, _) = bridge.join().await;
    let original = session.id;
    talk(&mut page, "first").await;
    talk(&mut page, "second").await;
    page.send_command(Frame::OpenSession { id: original }).await;
    let before: Vec<Fact> = page.until_session().await.facts;
    assert_eq!(before.len(), 5);

    page.send_command(Frame::ForkSession {
        id: original,
        upto: 3,
    })
    .await;
    // Every page follows to the fork, told it is one: of the original, at message #2.
    let fork = other.until_session_where(|id| id != original).await;
    assert_eq!(fork.facts, before[..3]);
    assert_eq!(
        fork.forked,
        Some(Forked {
            from: original,
            at: 2
        })
    );
    let list = until_sessions(&mut other).await;
    let listed = list.iter().find(|s| s.id == fork.id).unwrap().clone();
    // Named by the message (#2, the reply to "first"), not the fact (3: the team is fact 1).
    assert_eq!(listed.name, "relay (fork at #2)");
    assert_eq!(listed.facts, 3);

    page.send_command(Frame::OpenSession { id: original }).await;
    let again = page.until_session_where(|id| id == original).await;
    assert_eq!(again.facts, before);
    assert_eq!(again.forked, None, "opening a session is no fork");
    page.send_command(Frame::OpenSession { id: fork.id }).await;
    let reopened = page.until_session_where(|id| id == fork.id).await;
    assert_eq!(reopened.forked, None, "nor is opening a fork made earlier");
}

#[tokio::test]
async fn a_fork_keeps_the_digests_of_what_was_sent_up_to_its_last_message() {
    let d = dir();
    let bridge = serve(d.path(), &["--team", &with_team(d.path())]);
    let (mut page, session) = bridge.join().await;
    let original = session.id;
    talk(&mut page, "first").await;
    talk(&mut page, "second").await;
    page.send_command(Frame::OpenSession { id: original }).await;
    let sent = page.until_session().await.sent;
    let upto_msg_2: Vec<_> = sent
        .iter()
        .filter(|s| ["msg-1", "msg-2"].contains(&s.message.as_str()))
        .cloned()
        .collect();
    assert!(
        !upto_msg_2.is_empty(),
        "the first message was delivered: {sent:?}"
    );
    assert!(sent.len() > upto_msg_2.len(), "later ones too: {sent:?}");

    // Fact 3 is the reply to "first": message #2.
    page.send_command(Frame::ForkSession {
        id: original,
        upto: 3,
    })
    .await;
    let fork = page.until_session_where(|id| id != original).await;
    assert_eq!(
        fork.sent, upto_msg_2,
        "only the digests of messages #1 and #2"
    );
}

#[tokio::test]
async fn forking_at_a_fact_that_does_not_exist_is_refused_naming_it() {
    let d = dir();
    let bridge = serve(d.path(), &["--team", &with_team(d.path())]);
    let (mut page, session) = bridge.join().await;
    let id = session.id;
    page.send_command(Frame::ForkSession { id, upto: 9 }).await;
    assert_eq!(
        page.until_error().await,
        format!("fork: session {id} \"relay\" has no fact #9 (it has 1)")
    );
    assert_eq!(sessions(&mut page).await.len(), 1, "no session was made");
}

#[test]
fn a_token_file_other_users_can_read_is_refused_saying_how_to_fix_it() {
    use std::os::unix::fs::PermissionsExt;
    let d = dir();
    drop(serve(d.path(), &[]));
    let token = d.path().join("sessions.db.token");
    assert_eq!(
        std::fs::metadata(&token).unwrap().permissions().mode() & 0o777,
        0o600
    );
    std::fs::set_permissions(&token, std::fs::Permissions::from_mode(0o644)).unwrap();
    let out = Command::new(bin())
        .args(["serve", "--port", "0", "--simulate", "--db"])
        .arg(d.path().join("sessions.db"))
        .arg("--dist")
        .arg(d.path().join("dist"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("can be read or changed by other users (mode 0644)")
            && stderr.contains(&format!("chmod 600 {}", token.display())),
        "{stderr}"
    );
    assert!(out.stdout.is_empty(), "no URL was printed");
}

#[tokio::test]
async fn a_database_from_before_the_library_is_resumed_with_its_facts() {
    let d = dir();
    let db = d.path().join("sessions.db");
    let facts = [
        json!({"type": "setTeam", "team": team(None)}),
        json!({"type": "human", "text": "[FROM: kailai] old words", "sender": null, "at": 1}),
    ];
    {
        let conn = rusqlite::Connection::open(&db).unwrap();
        conn.execute_batch(
            "CREATE TABLE sessions (id INTEGER PRIMARY KEY, title TEXT NOT NULL, created_ms INTEGER NOT NULL);
             CREATE TABLE facts (session_id INTEGER NOT NULL REFERENCES sessions(id), seq INTEGER NOT NULL, fact TEXT NOT NULL, PRIMARY KEY (session_id, seq));
             CREATE TABLE outputs (session_id INTEGER NOT NULL REFERENCES sessions(id), member TEXT NOT NULL, at_ms INTEGER NOT NULL, output BLOB NOT NULL);
             PRAGMA application_id = 1094928468; PRAGMA user_version = 1;
             INSERT INTO sessions VALUES (4, 'relay', 5);",
        )
        .unwrap();
        for (i, fact) in facts.iter().enumerate() {
            conn.execute(
                "INSERT INTO facts VALUES (4, ?1, ?2)",
                rusqlite::params![i as i64 + 1, fact.to_string()],
            )
            .unwrap();
        }
    }
    let bridge = serve(d.path(), &[]);
    let (mut page, session) = bridge.join().await;
    assert_eq!(session.id, 4);
    assert_eq!(session.facts.len(), 2);
    let listed = sessions(&mut page).await;
    assert_eq!(
        listed[0].first_message.as_deref(),
        Some("[FROM: kailai] old words")
    );
    let found = search(&mut page, "old words").await;
    assert_eq!(found[0].session, 4, "{found:?}");
}

/// Issue #45.9: a session made and left with nothing done in it is not kept: a page asking
/// for a new session again and again leaves one session, not a list of empty ones.
#[tokio::test]
async fn new_sessions_left_unused_do_not_accumulate() {
    let bridge = Bridge::start(
        Bridge::new_dir(&support::team(None), "claude-stream.sh"),
        None,
    );
    let (mut page, first) = bridge.join().await;
    let mut last = first.id;
    for _ in 0..20 {
        page.send_command(Frame::NewSession).await;
        let id = page.until_session().await.id;
        assert_ne!(id, last);
        last = id;
    }
    let listed = sessions(&mut page).await;
    let ids: Vec<i64> = listed.iter().map(|s| s.id).collect();
    assert_eq!(ids, [last], "{listed:?}");
}
