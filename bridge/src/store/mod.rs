//! Sessions in SQLite (docs/architecture.md §6b, §14): one row per fact, appended in its own
//! transaction and committed before the actions it causes run, so a killed bridge resumes with
//! every fact it acted on. The file is marked with our `application_id`; a file that is another
//! program's database, or not a database at all, is refused and never written to.
//!
//! The file is the user's sessions, so it is kept from others and from accidents: created
//! owner-only (0600, in a 0700 directory when one is made), never reached through a symbolic
//! link, refused at start when it cannot be written, and written back to its path when it is
//! deleted while in use (see [`Store::open`]).
//!
//! - `schema.rs`: the tables, and bringing a file an older version wrote up to them.
//! - `file.rs`: the file: checked before SQLite opens it (owner, mode, links), connected,
//!   watched, and written back when it is deleted or replaced while in use.
//! - `lease.rs`: one runner per session (the `leases` table and who holds each).
//! - `facts.rs`: the fact log: a session made, appended to, read, forked, listed, deleted.
//! - `records.rs`: what is kept beside the facts (kept outputs, delivery digests, the run in
//!   flight, the team file).
//! - `run_details.rs`: what is kept of each ended run beside its fact (argv, model), read
//!   back with its kept output for `runDetails`.
//! - `library.rs`: the session library: names, the search index and bounded searches.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};

use rusqlite::Connection;
use thiserror::Error;

mod facts;
mod file;
mod lease;
mod library;
mod records;
mod run_details;
mod schema;

pub use agent_chatter::protocol::{SearchHit, Sent, SessionInfo};
pub use lease::LEASE_MS;
pub(crate) use library::Reader;
pub use records::{KeptOutput, TeamFile};
pub(crate) use run_details::RunNote;

use lease::Holder;
use schema::SCHEMA_VERSION;

/// What went wrong with the session database, in the user's terms.
#[derive(Debug, Error)]
pub enum StoreError {
    #[error("{path}: not an agent-chatter session database (application id {found:#x}); it was not changed — choose another --db file")]
    Foreign { path: PathBuf, found: i64 },
    #[error("{path}: written by a newer agent-chatter (schema {found}, this one reads {SCHEMA_VERSION}); it was not changed")]
    Newer { path: PathBuf, found: i64 },
    #[error("{path}: cannot be used as a session database: {source}; it was not changed")]
    Open {
        path: PathBuf,
        source: rusqlite::Error,
    },
    #[error("{path}: {why}; it was not changed")]
    Unusable { path: PathBuf, why: String },
    #[error("{path} was deleted or replaced while in use, and its sessions could not be written back: {why}; no fact can be kept now: stop the bridge")]
    Lost { path: PathBuf, why: String },
    #[error("session {0} does not exist")]
    NoSuchSession(i64),
    #[error("session {session} \"{name}\" has no fact #{seq} (it has {facts})")]
    NoSuchFact {
        session: i64,
        name: String,
        seq: u64,
        facts: i64,
    },
    #[error("session {session} was changed by another agent-chatter using the same database (it holds {stored} facts, this one expected {expected}); nothing was written")]
    Conflict {
        session: i64,
        expected: i64,
        stored: i64,
    },
    #[error("session {session} is open in another agent-chatter (process {pid}, which holds it for {left_s} s more and renews that while it runs); one session is run by one bridge: stop that one, or open another session")]
    Held { session: i64, pid: i64, left_s: i64 },
    #[error("session database: {0}")]
    Sql(#[from] rusqlite::Error),
    #[error("search: {0}")]
    SearchRefused(String),
    /// A `runDetails` question names a session or a run that is not there.
    #[error("runDetails: {0}")]
    RunDetails(String),
    #[error("search: stopped after {0} s (a query of many short or starred words can take long): search for fewer or longer words")]
    SearchTooSlow(u64),
    #[error("session {session}, fact {seq}: stored fact does not read: {message}")]
    BadFact {
        session: i64,
        seq: i64,
        message: String,
    },
}

/// The connection and the file it was opened on.
struct Db {
    conn: Connection,
    path: PathBuf,
    /// The file's device and inode when it was opened: another pair (or none) at `path`
    /// means it was deleted, moved or replaced.
    file: (u64, u64),
    /// Why nothing can be written any more (the file was deleted and could not be rewritten).
    lost: Option<String>,
    /// This store's name in the `leases` table.
    me: Holder,
    /// When the leases were last renewed.
    renewed: std::time::Instant,
}

/// The session database.
pub struct Store {
    db: Arc<Mutex<Db>>,
}

impl Store {
    fn db(&self) -> MutexGuard<'_, Db> {
        self.db.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The database, checked to be the file at its path (see [`Store::open`]), for a write.
    fn writable(&self) -> Result<MutexGuard<'_, Db>, StoreError> {
        let mut db = self.db();
        db.check()?;
        Ok(db)
    }
}

/// What the tests of the store's parts share.
#[cfg(test)]
mod testing {
    use std::path::Path;

    use agent_chatter::message::Millis;
    use agent_chatter::session::Fact;
    use rusqlite::{params, Connection};

    use super::schema::APPLICATION_ID;

    pub(super) fn fact(text: &str) -> Fact {
        Fact::human(text, Millis(1))
    }

    /// A file as the versions before the session library wrote it: the schema of that time,
    /// no name, no `updated_ms`, no search index.
    pub(super) fn old_file(path: &Path, facts: &[Fact]) {
        let conn = Connection::open(path).unwrap();
        conn.execute_batch(&format!(
            "CREATE TABLE sessions (id INTEGER PRIMARY KEY, title TEXT NOT NULL, created_ms INTEGER NOT NULL);
             CREATE TABLE facts (session_id INTEGER NOT NULL REFERENCES sessions(id), seq INTEGER NOT NULL, fact TEXT NOT NULL, PRIMARY KEY (session_id, seq));
             CREATE TABLE outputs (session_id INTEGER NOT NULL REFERENCES sessions(id), member TEXT NOT NULL, at_ms INTEGER NOT NULL, output BLOB NOT NULL);
             PRAGMA application_id={APPLICATION_ID}; PRAGMA user_version=1;
             INSERT INTO sessions VALUES (1, 'Old crew', 5);"
        ))
        .unwrap();
        for (i, fact) in facts.iter().enumerate() {
            conn.execute(
                "INSERT INTO facts VALUES (1, ?1, ?2)",
                params![i as i64 + 1, serde_json::to_string(fact).unwrap()],
            )
            .unwrap();
        }
    }

    pub(super) fn team() -> Fact {
        Fact::set_team(agent_chatter::demo::team())
    }
}
