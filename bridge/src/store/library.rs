//! The session library (docs/architecture.md §14, "the library"): a session's name and when
//! it was last written, the search index of its facts' texts (FTS5), and searches: bounded in
//! length and time, answering each session once with its best fact and a marked snippet, run
//! on a reader of their own so no fact waits on one.

use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Duration;

use agent_chatter::session::Fact;
use rusqlite::{params, Connection, OpenFlags, OptionalExtension};

use super::{SearchHit, Store, StoreError};

impl Store {
    /// Names `session` (the caller checked the name: `protocol::session_name`).
    /// A name is not a write of the conversation: the session keeps its place in the list.
    pub(crate) fn rename(&self, session: i64, name: &str) -> Result<(), StoreError> {
        let changed = self.writable()?.conn.execute(
            "UPDATE sessions SET name = ?2 WHERE id = ?1",
            params![session, name],
        )?;
        if changed == 0 {
            return Err(StoreError::NoSuchSession(session));
        }
        Ok(())
    }

    /// The session written last (the newest of those written at the same time), if any.
    pub fn latest(&self) -> Result<Option<i64>, StoreError> {
        Ok(self
            .db()
            .conn
            .query_row(
                "SELECT id FROM sessions ORDER BY coalesce(updated_ms, created_ms) DESC, id DESC LIMIT 1",
                [],
                |r| r.get(0),
            )
            .optional()?)
    }

    /// `ms` (since the epoch) as this machine's local date and time, `2026-11-26 14:02`.
    pub fn local_time(&self, ms: i64) -> Result<String, StoreError> {
        Ok(self.db().conn.query_row(
            "SELECT strftime('%Y-%m-%d %H:%M', ?1 / 1000, 'unixepoch', 'localtime')",
            [ms],
            |r| r.get(0),
        )?)
    }

    /// The sessions whose texts match `query` ([`search_in`]), on the store's own connection:
    /// for `sessions --search`. The bridge searches on a [`Reader`], so no fact waits.
    pub fn search(&self, query: &str) -> Result<Vec<SearchHit>, StoreError> {
        search_in(&self.db().conn, query)
    }

    /// A reader of this store's file for searches, on a connection of its own (see [`Reader`]).
    pub(crate) fn reader(&self) -> Reader {
        Reader {
            path: self.db().path.clone(),
            conn: Mutex::new(None),
        }
    }
}

/// How long one search may take before it is stopped: the library answers as the user types,
/// and a query that needs longer is not one a user can wait for.
const SEARCH_BUDGET: Duration = Duration::from_secs(2);

/// Searches on a read-only connection of their own (docs/architecture.md §14, "the library"):
/// a slow query never holds the session's thread, so no delivery or fact waits on it. One
/// search runs at a time; each is bounded ([`search_in`]).
pub(crate) struct Reader {
    path: PathBuf,
    conn: Mutex<Option<Connection>>,
}

impl Reader {
    /// [`search_in`] on this reader's connection, opened at its first search.
    pub(crate) fn search(&self, query: &str) -> Result<Vec<SearchHit>, StoreError> {
        self.with(|conn| search_in(conn, query))
    }

    /// `read` on this reader's connection, opened at its first use; one read at a time.
    pub(super) fn with<T>(
        &self,
        read: impl FnOnce(&Connection) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let mut conn = self.conn.lock().unwrap_or_else(|e| e.into_inner());
        if conn.is_none() {
            let opened = Connection::open_with_flags(
                &self.path,
                OpenFlags::SQLITE_OPEN_READ_ONLY
                    | OpenFlags::SQLITE_OPEN_NOFOLLOW
                    | OpenFlags::SQLITE_OPEN_NO_MUTEX,
            )
            .map_err(|source| StoreError::Open {
                path: self.path.clone(),
                source,
            })?;
            *conn = Some(opened);
        }
        match conn.as_ref() {
            Some(conn) => read(conn),
            None => Err(StoreError::Unusable {
                path: self.path.clone(),
                why: "its connection could not be opened".into(),
            }),
        }
    }
}

/// The sessions whose texts match `query`, each with its best matching fact, best first, at
/// most `MAX_SEARCH_HITS` (so one long session cannot hide the others). Each word of the
/// query matches the words that start with it ("webho" finds "webhook"), ignoring case and
/// accents, and a text must hold them all; the query is words, never FTS5's syntax
/// ([`prefix_query`]), so any text is a query. A query longer than the protocol's bounds is
/// refused in words, and one that takes longer than [`SEARCH_BUDGET`] is stopped
/// ([`StoreError::SearchTooSlow`]).
fn search_in(conn: &Connection, query: &str) -> Result<Vec<SearchHit>, StoreError> {
    if query.trim().is_empty() {
        return Ok(Vec::new());
    }
    agent_chatter::library::check_search_query(query).map_err(StoreError::SearchRefused)?;
    let Some(query) = prefix_query(query) else {
        return Ok(Vec::new());
    };
    let found = within_budget(conn, SEARCH_BUDGET, || -> Result<_, StoreError> {
        let mut stmt = conn.prepare(
            // The best fact of each session (FTS5's snippet cannot be asked for in a window
            // query, so that is chosen apart).
            "SELECT f.session_id, coalesce(s.name, s.title), f.seq,
                    snippet(fact_text, 0, char(57344), char(57345), '…', 16)
             FROM fact_text
             JOIN facts f ON f.rowid = fact_text.rowid
             JOIN sessions s ON s.id = f.session_id
             WHERE fact_text MATCH ?1 AND fact_text.rowid IN (
                 SELECT best FROM (
                     SELECT t.rowid AS best, row_number() OVER (
                         PARTITION BY g.session_id ORDER BY t.rank, g.seq
                     ) AS nth
                     FROM fact_text t JOIN facts g ON g.rowid = t.rowid
                     WHERE t.fact_text MATCH ?1
                 ) WHERE nth = 1
             )
             ORDER BY rank, f.session_id DESC
             LIMIT ?2",
        )?;
        let mut run = |query: &str| -> rusqlite::Result<Vec<SearchHit>> {
            stmt.query_map(
                params![query, agent_chatter::library::MAX_SEARCH_HITS as i64],
                |r| {
                    Ok(SearchHit {
                        session: r.get(0)?,
                        name: r.get(1)?,
                        seq: r.get::<_, i64>(2)? as u64,
                        snippet: snippet_parts(&r.get::<_, String>(3)?),
                    })
                },
            )?
            .collect()
        };
        run(&query).map_err(|e| {
            if interrupted(&e) {
                StoreError::SearchTooSlow(SEARCH_BUDGET.as_secs())
            } else {
                e.into()
            }
        })
    });
    found
}

/// `query` as an FTS5 query of prefixes: its words (runs of letters and digits, as the index's
/// tokenizer splits text) each a quoted string followed by `*`, all required. Nothing the
/// user typed is read as FTS5's syntax (`"`, `*`, `-`, `(`, `NEAR`, `OR`, `col:` are
/// separators or quoted words); `None` when the query holds no word.
fn prefix_query(query: &str) -> Option<String> {
    let terms: Vec<String> = query
        .split(|c: char| !c.is_alphanumeric())
        .filter(|word| !word.is_empty())
        .map(|word| format!("\"{word}\"*"))
        .collect();
    (!terms.is_empty()).then(|| terms.join(" "))
}

/// Whether `e` is SQLite's answer to an interrupt.
fn interrupted(e: &rusqlite::Error) -> bool {
    matches!(e, rusqlite::Error::SqliteFailure(f, _) if f.code == rusqlite::ErrorCode::OperationInterrupted)
}

/// Runs `f` on `conn`, interrupting whatever statement it runs once `budget` has passed.
fn within_budget<T>(conn: &Connection, budget: Duration, f: impl FnOnce() -> T) -> T {
    let handle = conn.get_interrupt_handle();
    let (done, finished) = std::sync::mpsc::channel::<()>();
    let watchdog = std::thread::spawn(move || {
        if finished.recv_timeout(budget) == Err(std::sync::mpsc::RecvTimeoutError::Timeout) {
            handle.interrupt();
        }
    });
    let out = f();
    drop(done);
    let _ = watchdog.join();
    out
}

/// The parts of an FTS5 snippet whose matches stand between U+E000 and U+E001 (characters
/// for private use, which no message is expected to hold).
fn snippet_parts(snippet: &str) -> Vec<agent_chatter::protocol::SnippetPart> {
    let mut parts = Vec::new();
    for (i, piece) in snippet.split(['\u{E000}', '\u{E001}']).enumerate() {
        if !piece.is_empty() {
            parts.push(agent_chatter::protocol::SnippetPart {
                text: piece.to_string(),
                hit: i % 2 == 1,
            });
        }
    }
    parts
}

/// Adds the fact at `rowid` of `facts` to the search index.
pub(super) fn index(
    tx: &rusqlite::Transaction<'_>,
    rowid: i64,
    fact: &Fact,
) -> Result<(), StoreError> {
    tx.execute(
        "INSERT INTO fact_text (rowid, text) VALUES (?1, ?2)",
        params![
            rowid,
            agent_chatter::library::searchable_text(fact).unwrap_or_default()
        ],
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use agent_chatter::message::Millis;

    use super::*;
    use crate::store::schema::LIBRARY_SCHEMA;
    use crate::store::testing::{fact, team};

    #[test]
    fn the_bundled_sqlite_has_fts5() {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(LIBRARY_SCHEMA).unwrap();
    }

    #[test]
    fn a_search_too_long_or_of_too_many_words_is_refused_in_words() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("s.db")).unwrap();
        for (query, says) in [
            (
                "note ".repeat(1000),
                "5000 characters long; search for at most 200",
            ),
            ("k* ".repeat(40), "40 words; search for at most 16"),
        ] {
            let err = store.search(&query).unwrap_err().to_string();
            assert!(err.contains(says), "{err}");
        }
        assert!(store.search(&"k* ".repeat(16)).is_ok());
    }

    #[test]
    fn a_statement_past_its_budget_is_stopped() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("s.db")).unwrap();
        let db = store.db();
        let endless = || {
            db.conn.query_row(
                "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c",
                [],
                |r| r.get::<_, i64>(0),
            )
        };
        let err = within_budget(&db.conn, Duration::from_millis(100), endless).unwrap_err();
        assert!(interrupted(&err), "{err}");
        // The connection goes on: the next statement is not interrupted.
        let one: i64 = db.conn.query_row("SELECT 1", [], |r| r.get(0)).unwrap();
        assert_eq!(one, 1);
    }

    #[test]
    fn a_reader_searches_while_a_write_is_in_progress() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("s.db")).unwrap();
        let a = store.create_session("A", 1, &team()).unwrap();
        store
            .append(a, 2, &fact("[NEXT: max] the webhook"))
            .unwrap();
        let reader = store.reader();
        let db = store.db();
        db.conn.execute_batch("BEGIN IMMEDIATE;").unwrap();
        let hits = reader.search("webhook").unwrap();
        db.conn.execute_batch("ROLLBACK;").unwrap();
        assert_eq!(hits.len(), 1, "{hits:?}");
    }

    #[test]
    fn search_finds_a_replys_word_in_any_session_ignoring_case() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("s.db")).unwrap();
        let a = store.create_session("A", 1, &team()).unwrap();
        store.append(a, 2, &fact("[NEXT: max] hello")).unwrap();
        let b = store.create_session("B", 2, &team()).unwrap();
        store.append(b, 2, &fact("[NEXT: max] go")).unwrap();
        store
            .append(
                b,
                3,
                &Fact::replied("max", "The Changelog is done.", Millis(3)),
            )
            .unwrap();
        let hits = store.search("CHANGELOG").unwrap();
        assert_eq!(hits.len(), 1, "{hits:?}");
        assert_eq!(
            (hits[0].session, hits[0].name.as_str(), hits[0].seq),
            (b, "B", 3)
        );
        let marked: Vec<_> = hits[0].snippet.iter().filter(|p| p.hit).collect();
        assert_eq!(marked.len(), 1);
        assert_eq!(marked[0].text, "Changelog");
        assert_eq!(
            hits[0]
                .snippet
                .iter()
                .map(|p| p.text.as_str())
                .collect::<String>(),
            "The Changelog is done."
        );
    }

    #[test]
    fn search_gives_each_matching_session_once_with_its_best_fact() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("s.db")).unwrap();
        let a = store.create_session("A", 1, &team()).unwrap();
        for seq in 2..=60 {
            store.append(a, seq, &fact("release notes")).unwrap();
        }
        store
            .append(a, 61, &fact("release release release notes"))
            .unwrap();
        let b = store.create_session("B", 2, &team()).unwrap();
        store.append(b, 2, &fact("release day")).unwrap();
        let hits = store.search("release").unwrap();
        let found: Vec<_> = hits.iter().map(|h| (h.session, h.seq)).collect();
        assert_eq!(found, [(a, 61), (b, 2)]);
    }

    #[test]
    fn a_query_with_search_operators_or_quotes_is_searched_not_refused() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("s.db")).unwrap();
        let a = store.create_session("A", 1, &team()).unwrap();
        store
            .append(a, 2, &fact("we use c++ and \"NEAR\" words"))
            .unwrap();
        for query in [
            "\"",
            "c++",
            "NEAR(",
            "words OR",
            "col:x",
            "-",
            "'",
            "\"NEAR\" words",
        ] {
            assert!(store.search(query).is_ok(), "{query}");
        }
        assert_eq!(store.search("c++").unwrap().len(), 1);
        assert!(store.search("   ").unwrap().is_empty());
    }

    #[test]
    fn a_word_finds_the_words_that_start_with_it_and_every_word_is_needed() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("s.db")).unwrap();
        let a = store.create_session("A", 1, &team()).unwrap();
        store
            .append(a, 2, &fact("[NEXT: max] fix the Webhook retries"))
            .unwrap();
        let b = store.create_session("B", 2, &team()).unwrap();
        store.append(b, 2, &fact("[NEXT: max] a web page")).unwrap();
        let sessions =
            |q: &str| -> Vec<i64> { store.search(q).unwrap().iter().map(|h| h.session).collect() };
        assert_eq!(sessions("webho"), [a]);
        assert_eq!(sessions("WEBHO retr"), [a]);
        assert_eq!(sessions("webho page"), Vec::<i64>::new());
        assert_eq!(
            sessions("ebhook"),
            Vec::<i64>::new(),
            "a prefix, not any part"
        );
        let mut both = sessions("web");
        both.sort_unstable();
        assert_eq!(both, [a, b]);
        // The word found is marked whole.
        let hit = &store.search("webho").unwrap()[0];
        let marked: Vec<_> = hit.snippet.iter().filter(|p| p.hit).collect();
        assert_eq!(marked.len(), 1);
        assert_eq!(marked[0].text, "Webhook");
    }

    #[test]
    fn fts5_syntax_in_a_query_is_searched_as_words_never_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("s.db")).unwrap();
        let a = store.create_session("A", 1, &team()).unwrap();
        store
            .append(a, 2, &fact("[NEXT: max] the webhook NEAR the gateway"))
            .unwrap();
        for (query, finds) in [
            ("\"webho", true),
            ("webho\"", true),
            ("\"webhook gateway\"", true),
            ("we\"bho", false),
            ("webho*", true),
            ("*webho", true),
            ("-webho", true),
            ("webho -gateway", true),
            ("NEAR(webho gate", true),
            ("NEAR(webho, gate)", true),
            ("webho NEAR", true),
            ("(webho", true),
            ("webho))", true),
            ("webho OR", false),
            ("text:webho", false),
            ("^webho", true),
            ("webho AND NOT", false),
            ("*", false),
            ("\"", false),
            ("-", false),
            ("()", false),
            ("\"\"\"", false),
        ] {
            let hits = store
                .search(query)
                .unwrap_or_else(|e| panic!("{query:?} gave an error: {e}"));
            assert_eq!(hits.len(), usize::from(finds), "{query:?}: {hits:?}");
        }
    }

    #[test]
    fn a_query_becomes_quoted_prefixes() {
        assert_eq!(prefix_query("webho").as_deref(), Some("\"webho\"*"));
        assert_eq!(
            prefix_query(" a\"b  NEAR( ").as_deref(),
            Some("\"a\"* \"b\"* \"NEAR\"*")
        );
        assert_eq!(prefix_query("* - \" ()"), None);
    }

    #[test]
    fn a_rename_is_kept_and_the_latest_session_is_the_one_written_last() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.db");
        let (a, b) = {
            let mut store = Store::open(&path).unwrap();
            let a = store.create_session("Crew", 1, &team()).unwrap();
            let b = store.create_session("Crew", 2, &team()).unwrap();
            assert_eq!(store.latest().unwrap(), Some(b));
            store.append(a, 2, &fact("later")).unwrap();
            store.rename(a, "Release notes").unwrap();
            assert!(matches!(
                store.rename(77, "x"),
                Err(StoreError::NoSuchSession(77))
            ));
            (a, b)
        };
        let store = Store::open(&path).unwrap();
        assert_eq!(store.latest().unwrap(), Some(a));
        let list = store.list().unwrap();
        assert_eq!(list[0].id, a);
        assert_eq!(list[0].name, "Release notes");
        assert_eq!(list[1].id, b);
        assert_eq!(list[1].name, "Crew");
    }

    #[test]
    fn deleting_a_session_takes_its_texts_out_of_the_search() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("s.db")).unwrap();
        let a = store.create_session("A", 1, &team()).unwrap();
        store.append(a, 2, &fact("ephemeral")).unwrap();
        store.delete_session(a).unwrap();
        assert!(store.search("ephemeral").unwrap().is_empty());
    }
}
