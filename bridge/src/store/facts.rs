//! The fact log (docs/architecture.md §6b, §14): a session made with its first fact, each
//! fact appended in its own transaction (checked against the log it was made on and the
//! session's lease), read back in order, forked, listed and deleted.

use agent_chatter::session::Fact;
use rusqlite::{params, OptionalExtension, TransactionBehavior};

use super::lease::claim;
use super::library::index;
use super::{Db, SessionInfo, Store, StoreError};
use crate::clock::now;

impl Store {
    /// A new session whose log starts with `first` (its `setTeam`).
    pub(crate) fn create_session(
        &mut self,
        title: &str,
        now_ms: i64,
        first: &Fact,
    ) -> Result<i64, StoreError> {
        let json = serde_json::to_string(first).map_err(|e| StoreError::BadFact {
            session: 0,
            seq: 1,
            message: e.to_string(),
        })?;
        // One transaction: a crash never leaves a session without its first fact (its team),
        // which would not resume.
        let mut db = self.writable()?;
        let tx = db.conn.transaction()?;
        tx.execute(
            "INSERT INTO sessions (title, created_ms, updated_ms) VALUES (?1, ?2, ?2)",
            params![title, now_ms],
        )?;
        let id = tx.last_insert_rowid();
        tx.execute(
            "INSERT INTO facts (session_id, seq, fact) VALUES (?1, 1, ?2)",
            params![id, json],
        )?;
        index(&tx, tx.last_insert_rowid(), first)?;
        tx.commit()?;
        Ok(id)
    }

    /// Appends `fact` to `session` as its fact number `seq` (from 1: the caller's log length
    /// with it) and commits. The log must hold `seq - 1` facts: when another bridge on the same
    /// file has appended meanwhile, the fact was checked against an older state, so it is
    /// refused ([`StoreError::Conflict`]) rather than interleaved into a log that no longer
    /// replays.
    pub(crate) fn append(&mut self, session: i64, seq: i64, fact: &Fact) -> Result<(), StoreError> {
        let json = serde_json::to_string(fact).map_err(|e| StoreError::BadFact {
            session,
            seq,
            message: e.to_string(),
        })?;
        // Immediate: the count read below and the insert are one step for other processes.
        let mut db = self.writable()?;
        let Db { conn, me, .. } = &mut *db;
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let exists: Option<i64> = tx
            .query_row("SELECT id FROM sessions WHERE id = ?1", [session], |r| {
                r.get(0)
            })
            .optional()?;
        if exists.is_none() {
            return Err(StoreError::NoSuchSession(session));
        }
        // Only the session's holder writes it: one that lost its lease (it was stopped for
        // longer than the lease, and another bridge took the session over) is refused.
        claim(&tx, me, session)?;
        let stored: i64 = tx.query_row(
            "SELECT coalesce(max(seq), 0) FROM facts WHERE session_id = ?1",
            [session],
            |r| r.get(0),
        )?;
        if stored != seq - 1 {
            return Err(StoreError::Conflict {
                session,
                expected: seq - 1,
                stored,
            });
        }
        tx.execute(
            "INSERT INTO facts (session_id, seq, fact) VALUES (?1, ?2, ?3)",
            params![session, seq, json],
        )?;
        index(&tx, tx.last_insert_rowid(), fact)?;
        // A run's record ends with its outcome's fact, in one step (see [`RUNS_SCHEMA`]); a
        // new team ends its conversation, and the run with it (never recorded or made again).
        if matches!(
            fact,
            Fact::Replied { .. }
                | Fact::Failed { .. }
                | Fact::SetTeam { .. }
                | Fact::LoadScenario { .. }
        ) {
            tx.execute("DELETE FROM runs WHERE session_id = ?1", [session])?;
        }
        tx.execute(
            "UPDATE sessions SET updated_ms = ?2 WHERE id = ?1",
            params![session, now().0 as i64],
        )?;
        // A session is called by its team until renamed (`name` NULL: its `title`), so a
        // new team renames the one never renamed too.
        let team = match fact {
            Fact::SetTeam { team, .. } => Some(&team.name),
            Fact::LoadScenario { scenario } => Some(&scenario.team.name),
            _ => None,
        };
        if let Some(team) = team {
            tx.execute(
                "UPDATE sessions SET title = ?2 WHERE id = ?1",
                params![session, team],
            )?;
        }
        tx.commit()?;
        Ok(())
    }

    /// Every fact of `session`, in order.
    pub fn facts(&self, session: i64) -> Result<Vec<Fact>, StoreError> {
        let db = self.db();
        let exists: Option<i64> = db
            .conn
            .query_row("SELECT id FROM sessions WHERE id = ?1", [session], |r| {
                r.get(0)
            })
            .optional()?;
        if exists.is_none() {
            return Err(StoreError::NoSuchSession(session));
        }
        let mut stmt = db
            .conn
            .prepare("SELECT seq, fact FROM facts WHERE session_id = ?1 ORDER BY seq")?;
        let rows = stmt.query_map([session], |r| {
            Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?))
        })?;
        let mut facts = Vec::new();
        for row in rows {
            let (seq, json) = row?;
            let fact = serde_json::from_str(&json).map_err(|e| StoreError::BadFact {
                session,
                seq,
                message: e.to_string(),
            })?;
            facts.push(fact);
        }
        Ok(facts)
    }

    /// A new session, named `name`, whose log is the first `upto` facts of `session` (which
    /// is unchanged): "continue from here". Refused, naming the fact, when `session` has no
    /// fact `upto`.
    pub(crate) fn fork(&mut self, session: i64, upto: u64, now_ms: i64) -> Result<i64, StoreError> {
        let mut db = self.writable()?;
        let tx = db.conn.transaction()?;
        let (name, facts): (String, i64) = tx
            .query_row(
                "SELECT coalesce(name, title), (SELECT count(*) FROM facts WHERE session_id = ?1)
                 FROM sessions WHERE id = ?1",
                [session],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()?
            .ok_or(StoreError::NoSuchSession(session))?;
        if upto == 0 || upto > facts as u64 {
            return Err(StoreError::NoSuchFact {
                session,
                name,
                seq: upto,
                facts,
            });
        }
        // Named by the message the page numbers (#n), not by the fact: the log also holds
        // team and settings facts the user never sees numbered.
        let number = last_message_number(&tx, session, upto)?;
        tx.execute(
            "INSERT INTO sessions (title, created_ms, name, updated_ms)
             SELECT title, ?2, ?3, ?2 FROM sessions WHERE id = ?1",
            params![
                session,
                now_ms,
                agent_chatter::library::fork_name(&name, number)
            ],
        )?;
        let id = tx.last_insert_rowid();
        tx.execute(
            "INSERT INTO facts (session_id, seq, fact)
             SELECT ?2, seq, fact FROM facts WHERE session_id = ?1 AND seq <= ?3 ORDER BY seq",
            params![session, id, upto as i64],
        )?;
        tx.execute(
            "INSERT INTO fact_text (rowid, text)
             SELECT copy.rowid, t.text FROM facts copy
             JOIN facts f ON f.session_id = ?1 AND f.seq = copy.seq
             JOIN fact_text t ON t.rowid = f.rowid
             WHERE copy.session_id = ?2",
            params![session, id],
        )?;
        // The digests of what was sent for the messages the fork holds (msg-1 … msg-n), so
        // its past deliveries still show as verified.
        tx.execute(
            "INSERT INTO sent (session_id, message, member, sha256)
             SELECT ?2, message, member, sha256 FROM sent
             WHERE session_id = ?1 AND message LIKE 'msg-%'
               AND CAST(substr(message, 5) AS INTEGER) BETWEEN 1 AND ?3",
            params![session, id, number as i64],
        )?;
        tx.execute(
            "INSERT INTO team_files (session_id, path, sha256)
             SELECT ?2, path, sha256 FROM team_files WHERE session_id = ?1",
            params![session, id],
        )?;
        // And what those deliveries' agents did.
        tx.execute(
            "INSERT INTO activity (session_id, message, member, items)
             SELECT ?2, message, member, items FROM activity
             WHERE session_id = ?1 AND message LIKE 'msg-%'
               AND CAST(substr(message, 5) AS INTEGER) BETWEEN 1 AND ?3",
            params![session, id, number as i64],
        )?;
        tx.commit()?;
        Ok(id)
    }

    /// All sessions, the one written last first.
    pub fn list(&self) -> Result<Vec<SessionInfo>, StoreError> {
        let db = self.db();
        // The first message: the first human fact or opened scenario, read like any fact.
        let mut stmt = db.conn.prepare(
            "SELECT s.id, coalesce(s.name, s.title), s.title, s.created_ms,
                    coalesce(s.updated_ms, s.created_ms),
                    (SELECT count(*) FROM facts f WHERE f.session_id = s.id),
                    (SELECT f.fact FROM facts f WHERE f.session_id = s.id
                       AND (json_extract(f.fact, '$.type') = 'human'
                            OR json_array_length(f.fact, '$.scenario.messages') > 0)
                     ORDER BY f.seq LIMIT 1)
             FROM sessions s ORDER BY coalesce(s.updated_ms, s.created_ms) DESC, s.id DESC",
        )?;
        let rows = stmt.query_map([], |r| {
            let first: Option<String> = r.get(6)?;
            Ok(SessionInfo {
                id: r.get(0)?,
                name: r.get(1)?,
                title: r.get(2)?,
                created_at: r.get(3)?,
                updated_at: r.get(4)?,
                first_message: first
                    .and_then(|json| serde_json::from_str::<Fact>(&json).ok())
                    .and_then(|fact| agent_chatter::library::first_message(&[fact])),
                facts: r.get(5)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Deletes `session` and everything kept for it, in one transaction: its search texts,
    /// then the rows of every table with a `session_id` column (found in the file, so a table
    /// added later is not left holding rows that name a deleted session), then the session.
    pub(crate) fn delete_session(&mut self, session: i64) -> Result<(), StoreError> {
        let mut db = self.writable()?;
        let tx = db.conn.transaction()?;
        tx.execute(
            "DELETE FROM fact_text WHERE rowid IN (SELECT rowid FROM facts WHERE session_id = ?1)",
            [session],
        )?;
        for table in tables_with_sessions(&tx)? {
            tx.execute(
                &format!("DELETE FROM \"{table}\" WHERE session_id = ?1"),
                [session],
            )?;
        }
        tx.execute("DELETE FROM sessions WHERE id = ?1", [session])?;
        tx.commit()?;
        Ok(())
    }
}

/// The tables of the file that keep rows per session (a `session_id` column), by name.
fn tables_with_sessions(conn: &rusqlite::Connection) -> Result<Vec<String>, StoreError> {
    let mut stmt = conn.prepare(
        "SELECT m.name FROM sqlite_master AS m, pragma_table_info(m.name) AS c
         WHERE m.type = 'table' AND c.name = 'session_id' ORDER BY m.name",
    )?;
    let names = stmt.query_map([], |r| r.get::<_, String>(0))?;
    Ok(names.collect::<Result<_, _>>()?)
}

/// The number (#n, as the page shows it) of the last message the facts `1..=upto` of `session`
/// make; 0 when they make none (a fork of the team alone).
fn last_message_number(
    tx: &rusqlite::Transaction<'_>,
    session: i64,
    upto: u64,
) -> Result<u64, StoreError> {
    let mut stmt =
        tx.prepare("SELECT seq, fact FROM facts WHERE session_id = ?1 AND seq <= ?2 ORDER BY seq")?;
    let rows = stmt.query_map(params![session, upto as i64], |r| {
        Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?))
    })?;
    let mut facts = Vec::new();
    for row in rows {
        let (seq, json) = row?;
        facts.push(
            serde_json::from_str::<Fact>(&json).map_err(|e| StoreError::BadFact {
                session,
                seq,
                message: e.to_string(),
            })?,
        );
    }
    let replayed =
        agent_chatter::session::Session::replay(facts).map_err(|e| StoreError::BadFact {
            session,
            seq: upto as i64,
            message: e.to_string(),
        })?;
    Ok(replayed.messages().len() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::records::TeamFile;
    use crate::store::run_details::RunNote;
    use crate::store::testing::{fact, team};
    use agent_chatter::activity::RunActivity;

    /// Fills every table that keeps rows per session for `session`, as a run of it would.
    fn keep_all(store: &mut Store, session: i64) {
        store.append(session, 2, &fact("more")).unwrap();
        store.record_sent(session, "msg-1", "max", "ab").unwrap();
        store.keep_output(session, "max", 7, b"out").unwrap();
        store.lease(session).unwrap();
        store.run_started(session, "max", "msg-1", 6).unwrap();
        let file = TeamFile {
            path: "/t/team.json".into(),
            sha256: "cd".into(),
        };
        store.remember_team_file(session, Some(&file)).unwrap();
        let activity = RunActivity {
            message: "msg-1".into(),
            to: "max".into(),
            items: Vec::new(),
        };
        store.record_activity(session, &activity).unwrap();
        let note = RunNote {
            argv: vec!["claude".into()],
            ..RunNote::default()
        };
        store.record_run_note(session, "max", 7, &note).unwrap();
    }

    /// Rows naming `session`, per table that keeps rows per session, read from the file.
    fn rows_of(path: &std::path::Path, session: i64) -> Vec<(String, i64)> {
        let conn = rusqlite::Connection::open(path).unwrap();
        let tables = tables_with_sessions(&conn).unwrap();
        let mut rows: Vec<(String, i64)> = tables
            .into_iter()
            .map(|t| {
                let sql = format!("SELECT count(*) FROM \"{t}\" WHERE session_id = ?1");
                let n = conn.query_row(&sql, [session], |r| r.get(0)).unwrap();
                (t, n)
            })
            .collect();
        let own: i64 = conn
            .query_row(
                "SELECT count(*) FROM sessions WHERE id = ?1",
                [session],
                |r| r.get(0),
            )
            .unwrap();
        rows.push(("sessions".into(), own));
        rows
    }

    #[test]
    fn deleting_a_session_leaves_no_row_of_it_in_any_table_and_keeps_the_others() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.db");
        let mut store = Store::open(&path).unwrap();
        let gone = store.create_session("Gone", 1, &team()).unwrap();
        let kept = store.create_session("Kept", 2, &team()).unwrap();
        keep_all(&mut store, gone);
        keep_all(&mut store, kept);
        let before = rows_of(&path, gone);
        assert!(
            before.len() >= 9,
            "the tables that keep rows per session: {before:?}"
        );
        for (table, n) in &before {
            assert!(
                *n > 0,
                "the test fills every such table; {table} has no row"
            );
        }

        store.delete_session(gone).unwrap();
        let after = rows_of(&path, gone);
        assert!(after.iter().all(|(_, n)| *n == 0), "left behind: {after:?}");
        assert_eq!(
            rows_of(&path, kept),
            before,
            "the other session is untouched"
        );
        let conn = rusqlite::Connection::open(&path).unwrap();
        let texts: i64 = conn
            .query_row("SELECT count(*) FROM fact_text", [], |r| r.get(0))
            .unwrap();
        assert_eq!(texts, 2, "only the kept session's two facts are searchable");
    }

    #[test]
    fn facts_are_kept_in_order_across_reopen() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.db");
        let id = {
            let mut store = Store::open(&path).unwrap();
            let id = store.create_session("demo", 5, &fact("a")).unwrap();
            store.append(id, 2, &fact("b")).unwrap();
            id
        };
        let store = Store::open(&path).unwrap();
        assert_eq!(store.facts(id).unwrap(), [fact("a"), fact("b")]);
        let list = store.list().unwrap();
        assert_eq!(list.len(), 1);
        assert_eq!((list[0].title.as_str(), list[0].facts), ("demo", 2));
    }

    #[test]
    fn an_unknown_session_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("s.db")).unwrap();
        assert_eq!(
            store.facts(7).unwrap_err().to_string(),
            "session 7 does not exist"
        );
        assert!(matches!(
            store.append(7, 1, &fact("x")),
            Err(StoreError::NoSuchSession(7))
        ));
    }

    #[test]
    fn a_fact_checked_against_an_older_log_is_refused_and_nothing_changes() {
        // Two bridges on one file, both holding session `id` with one fact.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.db");
        let mut first = Store::open(&path).unwrap();
        let id = first.create_session("demo", 5, &fact("a")).unwrap();
        let mut second = Store::open(&path).unwrap();

        first.append(id, 2, &fact("from the first")).unwrap();
        // While the first holds the session (it took its lease with its write), the second
        // may not write it at all.
        let held = second.append(id, 2, &fact("from the second")).unwrap_err();
        assert!(
            matches!(held, StoreError::Held { session, pid, .. } if session == id && pid == i64::from(std::process::id())),
            "{held}"
        );
        first.release(id);
        // Given up, the session is the second's; its fact, checked against the older log, is
        // still refused.
        let err = second.append(id, 2, &fact("from the second")).unwrap_err();
        assert!(matches!(
            err,
            StoreError::Conflict {
                expected: 1,
                stored: 2,
                ..
            }
        ));
        assert_eq!(
            err.to_string(),
            format!("session {id} was changed by another agent-chatter using the same database (it holds 2 facts, this one expected 1); nothing was written")
        );
        assert_eq!(
            second.facts(id).unwrap(),
            [fact("a"), fact("from the first")]
        );
        // Caught up, the second appends after them.
        second.append(id, 3, &fact("from the second")).unwrap();
        assert_eq!(first.facts(id).unwrap().len(), 3);
    }

    #[test]
    fn a_session_opened_from_a_scenario_shows_its_first_message() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("s.db")).unwrap();
        let scenario = agent_chatter::scenario::load_scenario(
            &std::fs::read_to_string(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../examples/demo-scenario.json"
            ))
            .unwrap(),
        )
        .unwrap();
        let first = agent_chatter::library::first_message(&[Fact::LoadScenario {
            scenario: Box::new(scenario.clone()),
        }]);
        assert!(first.is_some());
        let a = store.create_session("A", 1, &team()).unwrap();
        store
            .append(
                a,
                2,
                &Fact::LoadScenario {
                    scenario: Box::new(scenario),
                },
            )
            .unwrap();
        assert_eq!(store.list().unwrap()[0].first_message, first);
    }

    #[test]
    fn a_fork_holds_the_first_n_facts_and_the_original_is_unchanged() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("s.db")).unwrap();
        let a = store.create_session("Crew", 1, &team()).unwrap();
        for (seq, text) in [(2, "one"), (3, "two"), (4, "three")] {
            store.append(a, seq, &fact(text)).unwrap();
        }
        let before = store.facts(a).unwrap();
        let fork = store.fork(a, 3, 9).unwrap();
        assert_eq!(store.facts(fork).unwrap(), before[..3]);
        assert_eq!(store.facts(a).unwrap(), before);
        let list = store.list().unwrap();
        let info = list.iter().find(|s| s.id == fork).unwrap();
        assert_eq!(
            (info.name.as_str(), info.facts, info.created_at),
            ("Crew (fork at #2)", 3, 9)
        );
        // Its texts are searched as its own.
        let hits = store.search("two").unwrap();
        let mut sessions: Vec<_> = hits.iter().map(|h| h.session).collect();
        sessions.sort();
        assert_eq!(sessions, [a, fork]);
        assert!(store
            .search("three")
            .unwrap()
            .iter()
            .all(|h| h.session == a));
    }

    #[test]
    fn forking_at_a_fact_that_does_not_exist_names_it() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("s.db")).unwrap();
        let a = store.create_session("Crew", 1, &team()).unwrap();
        for upto in [0, 2] {
            assert_eq!(
                store.fork(a, upto, 9).unwrap_err().to_string(),
                format!("session {a} \"Crew\" has no fact #{upto} (it has 1)")
            );
        }
        assert_eq!(
            store.fork(77, 1, 9).unwrap_err().to_string(),
            "session 77 does not exist"
        );
        assert_eq!(store.list().unwrap().len(), 1);
    }

    #[test]
    fn a_session_never_renamed_is_called_by_its_new_team_and_a_renamed_one_keeps_its_name() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("s.db")).unwrap();
        let plain = store.create_session("Crew", 1, &team()).unwrap();
        let named = store.create_session("Crew", 2, &team()).unwrap();
        store.rename(named, "Mine").unwrap();
        let mut big = agent_chatter::demo::team();
        big.name = "Big team".into();
        for id in [plain, named] {
            store.append(id, 2, &Fact::set_team(big.clone())).unwrap();
        }
        let names: Vec<(i64, String)> = store
            .list()
            .unwrap()
            .into_iter()
            .map(|s| (s.id, s.name))
            .collect();
        assert!(
            names.contains(&(plain, "Big team".to_string())),
            "{names:?}"
        );
        assert!(names.contains(&(named, "Mine".to_string())), "{names:?}");
    }
}
