//! Sessions in SQLite (docs/architecture.md §6b, §14): one row per fact, appended in its own
//! transaction and committed before the actions it causes run, so a killed bridge resumes with
//! every fact it acted on. The file is marked with our `application_id`; a file that is another
//! program's database, or not a database at all, is refused and never written to.
//!
//! The file is the user's sessions, so it is kept from others and from accidents: created
//! owner-only (0600, in a 0700 directory when one is made), never reached through a symbolic
//! link, refused at start when it cannot be written, and written back to its path when it is
//! deleted while in use (see [`Store::open`]).

use std::fs::OpenOptions;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::Duration;

use agent_chatter::session::Fact;

use crate::agents::machine::TeamFile;
use rusqlite::{params, Connection, OpenFlags, OptionalExtension, TransactionBehavior, MAIN_DB};
use thiserror::Error;

/// `PRAGMA application_id` of our files: "ACHT".
const APPLICATION_ID: i64 = 0x4143_4854;
/// `PRAGMA user_version`: the schema this version writes.
const SCHEMA_VERSION: i64 = 1;

const SCHEMA: &str = "
CREATE TABLE sessions (
    id         INTEGER PRIMARY KEY,
    title      TEXT NOT NULL,
    created_ms INTEGER NOT NULL
);
CREATE TABLE facts (
    session_id INTEGER NOT NULL REFERENCES sessions(id),
    seq        INTEGER NOT NULL,
    fact       TEXT NOT NULL,
    PRIMARY KEY (session_id, seq)
);
CREATE TABLE outputs (
    session_id INTEGER NOT NULL REFERENCES sessions(id),
    member     TEXT NOT NULL,
    at_ms      INTEGER NOT NULL,
    output     BLOB NOT NULL
);
";

/// What the bridge sent: the SHA-256 of each delivery's exact bytes, by message and member,
/// so a page can show, for any past delivery, that its preview is what the agent got. Not a
/// fact (the facts replay to the same bytes); added to files of schema 1 when they are opened,
/// which older versions, reading only their own tables, do not mind.
const SENT_SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS sent (
    session_id INTEGER NOT NULL REFERENCES sessions(id),
    message    TEXT NOT NULL,
    member     TEXT NOT NULL,
    sha256     TEXT NOT NULL,
    PRIMARY KEY (session_id, message, member)
);
";

/// The agent run in flight in each session, from its start until its outcome's fact is stored
/// (in the same transaction as that fact): a row left behind names a run the bridge never saw
/// end, which the next open records as interrupted instead of running it again unasked
/// (docs/architecture.md §14c "Interrupted runs"). `stopped` says why it was cut short when
/// the bridge knew (the session was left); NULL: the bridge itself stopped. Not a fact; added
/// to older files when they are opened.
const RUNS_SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS runs (
    session_id INTEGER PRIMARY KEY,
    member     TEXT NOT NULL,
    message    TEXT NOT NULL,
    started_ms INTEGER NOT NULL,
    stopped    TEXT
);
";

/// Who runs each session: one row per session a bridge holds open, renewed while it lives
/// (see [`Store::lease`]). Not a fact; added to older files when they are opened.
const LEASE_SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS leases (
    session_id INTEGER PRIMARY KEY,
    holder     TEXT NOT NULL,
    pid        INTEGER NOT NULL,
    expires_ms INTEGER NOT NULL
);
";

/// The team file each session's machine settings come from (docs/architecture.md §14c): its
/// path and the SHA-256 of its bytes when it was deployed. On resume the file is read again,
/// never the settings from here (the log holds none). Not a fact; added to older files when
/// they are opened.
const TEAM_FILES_SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS team_files (
    session_id INTEGER PRIMARY KEY,
    path       TEXT NOT NULL,
    sha256     TEXT NOT NULL
);
";

/// The session library (docs/architecture.md §14): a session's own name (NULL: its title)
/// and when it was last written (NULL: when it was created), and the search index of its
/// texts, one row per fact whose rowid is the fact's (`protocol::searchable_text`; empty for
/// a fact with none). Added to older files when they are opened, their facts indexed then;
/// kept in step with `facts` in the same transactions.
const LIBRARY_SCHEMA: &str = "
CREATE VIRTUAL TABLE IF NOT EXISTS fact_text USING fts5(
    text,
    tokenize = 'unicode61 remove_diacritics 2'
);
";

/// How long a lease lasts unless renewed: a holder that stops renewing (hung, suspended, or
/// on another machine and dead) loses its sessions after this long.
pub const LEASE_MS: i64 = 10_000;
/// How often a bridge renews its leases.
const LEASE_RENEW: Duration = Duration::from_secs(3);

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
    #[error("search: stopped after {0} s (a query of many short or starred words can take long): search for fewer or longer words")]
    SearchTooSlow(u64),
    #[error("session {session}, fact {seq}: stored fact does not read: {message}")]
    BadFact {
        session: i64,
        seq: i64,
        message: String,
    },
}

pub use agent_chatter::protocol::{SearchHit, Sent, SessionInfo};

/// A run whose start is recorded and whose outcome is not (see [`RUNS_SCHEMA`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RunInFlight {
    /// The member (its id) it ran.
    pub member: String,
    /// The message (its id) it answers.
    pub message: String,
    /// When it started (ms since the epoch).
    pub started_ms: i64,
    /// Why the bridge stopped it, when it did; `None`: the bridge itself stopped.
    pub stopped: Option<String>,
}

/// An agent's output kept whole (or its first and last MiB) because the conversation could
/// not record it as a message: who ran, when, and the bytes it printed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeptOutput {
    /// The member (its id) whose run printed it.
    pub member: String,
    /// When the run ended (ms since the epoch).
    pub at_ms: i64,
    /// What it printed on stdout.
    pub output: Vec<u8>,
}

/// The session database.
pub struct Store {
    db: Arc<Mutex<Db>>,
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

/// A lease holder: the machine's boot, the process (its pid and start time, so a reused pid
/// is told apart), a random part (two stores in one process are two holders) and its PID
/// namespace (a container sharing the folder numbers its processes apart: its pid means
/// nothing here).
struct Holder {
    token: String,
    pid: i64,
}

impl Holder {
    fn new() -> Holder {
        let pid = std::process::id();
        let mut random = [0u8; 8];
        let _ = getrandom::fill(&mut random);
        let random: String = random.iter().map(|b| format!("{b:02x}")).collect();
        Holder {
            token: format!(
                "{}/{pid}/{}/{random}/{}",
                boot_id().unwrap_or_default(),
                start_time(pid as i64).unwrap_or_default(),
                pid_namespace().unwrap_or_default()
            ),
            pid: pid as i64,
        }
    }
}

/// This machine's boot (Linux), to know that a holder's pid is one of this machine's.
fn boot_id() -> Option<String> {
    std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

/// This process's PID namespace (`pid:[4026531836]`), so a holder's pid is known to be one
/// this process can look up.
fn pid_namespace() -> Option<String> {
    std::fs::read_link("/proc/self/ns/pid")
        .ok()
        .map(|link| link.to_string_lossy().into_owned())
        .filter(|s| !s.is_empty() && !s.contains('/'))
}

/// When process `pid` started, in clock ticks since boot, unless it is gone or a zombie.
fn start_time(pid: i64) -> Option<String> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    // After the name: state (field 3), …, starttime (field 22).
    (fields.first() != Some(&"Z")).then(|| fields.get(19).map(|s| s.to_string()))?
}

/// Whether the holder named `token` is a process of this machine and PID namespace that is
/// gone (killed, ended): its lease is then free at once, not only when it expires. A holder on
/// another machine or in another PID namespace (a container sharing the folder) cannot be
/// looked up: it is never taken for gone, and keeps its lease while it renews it.
fn holder_is_gone(token: &str) -> bool {
    let mut parts = token.split('/');
    let (Some(boot), Some(pid), Some(start)) = (parts.next(), parts.next(), parts.next()) else {
        return false;
    };
    // Holders written before namespaces were named have four parts: taken as this one's.
    if let Some(namespace) = parts.nth(1) {
        if Some(namespace) != pid_namespace().as_deref() {
            return false;
        }
    }
    let Ok(pid) = pid.parse::<i64>() else {
        return false;
    };
    match boot_id() {
        Some(here) if here == boot && !start.is_empty() => {
            start_time(pid).as_deref() != Some(start)
        }
        _ => false,
    }
}

/// How often an idle bridge checks that its database file is still there.
const WATCH_EVERY: Duration = Duration::from_secs(1);

impl Store {
    /// Opens (or creates) the database at `path`. A file that is not ours is refused untouched;
    /// so is one SQLite could not write (read-only, immutable, in a directory that cannot be
    /// written), and a symbolic link. A new file is created 0600, and its directory, when it
    /// is missing, 0700.
    ///
    /// While the store is open, its file is checked before each write and every second: a file
    /// deleted (or replaced) meanwhile is written back from the open connection, at its path
    /// (or beside it, `PATH.recovered-MS`, when another file now stands there), and the store
    /// goes on with the new file, saying so on stderr. Otherwise every fact committed since
    /// the deletion would vanish with the unlinked file when the bridge stops.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        prepare(path)?;
        let conn = connect(path)?;
        let file = identity(path).map_err(|why| StoreError::Unusable {
            path: path.to_path_buf(),
            why,
        })?;
        let db = Arc::new(Mutex::new(Db {
            conn,
            path: path.to_path_buf(),
            file,
            lost: None,
            me: Holder::new(),
            renewed: std::time::Instant::now(),
        }));
        watch(Arc::downgrade(&db));
        Ok(Store { db })
    }

    /// Opens the database at `path` to read it only (`export`, `sessions`, `outputs`). Refused
    /// as [`Store::open`] refuses them: a symbolic link (the file or its `-wal`, `-shm` or
    /// `-journal` file), a file that is not ours or not a database, one written by a newer
    /// version; and one from before the session library, which only a bridge brings up to date.
    /// Nothing is written: no schema, no lease, no watch of the file, so a read-only file (0444)
    /// is read as well. While no bridge has it open (no `-wal` file beside it, so every fact is
    /// in the file itself) it is read as immutable, and SQLite creates no `-wal` or `-shm` file
    /// either; should a bridge start writing meanwhile, this store sees the file as it was.
    pub fn open_read_only(path: &Path) -> Result<Store, StoreError> {
        let unusable = |why: String| StoreError::Unusable {
            path: path.to_path_buf(),
            why,
        };
        let open_err = |source| StoreError::Open {
            path: path.to_path_buf(),
            source,
        };
        let mut in_use = false;
        for (file, suffix) in std::iter::once((path.to_path_buf(), ""))
            .chain(COMPANIONS.map(|suffix| (beside(path, suffix), suffix)))
        {
            let what = if suffix.is_empty() {
                "it".to_string()
            } else {
                format!("its {suffix} file {}", file.display())
            };
            match std::fs::symlink_metadata(&file) {
                Ok(meta) if meta.file_type().is_symlink() => {
                    return Err(unusable(format!(
                        "{what} is a symbolic link; the session database and its -wal and -shm \
                         files must be plain files (give the link's target as --db)"
                    )))
                }
                Ok(meta) if !meta.is_file() => {
                    return Err(unusable(format!("{what} is not a regular file")))
                }
                Ok(_) => in_use |= suffix == "-wal",
                Err(e) if e.kind() == std::io::ErrorKind::NotFound && !suffix.is_empty() => {}
                Err(e) => return Err(unusable(crate::files::reason(&e))),
            }
        }
        let file = identity(path).map_err(unusable)?;
        // A URI, for its parameters: the path with every byte but the plainest escaped.
        use std::os::unix::ffi::OsStrExt;
        let mut uri = String::from("file:");
        for &b in path.as_os_str().as_bytes() {
            if b.is_ascii_alphanumeric() || b"/._-~".contains(&b) {
                uri.push(char::from(b));
            } else {
                uri.push_str(&format!("%{b:02X}"));
            }
        }
        uri.push_str(if in_use {
            "?mode=ro"
        } else {
            "?mode=ro&immutable=1"
        });
        let conn = Connection::open_with_flags(
            &uri,
            OpenFlags::SQLITE_OPEN_READ_ONLY
                | OpenFlags::SQLITE_OPEN_URI
                | OpenFlags::SQLITE_OPEN_NOFOLLOW
                | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(open_err)?;
        let app_id: i64 = conn
            .query_row("PRAGMA application_id", [], |r| r.get(0))
            .map_err(open_err)?;
        let version: i64 = conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .map_err(open_err)?;
        if app_id != APPLICATION_ID {
            return Err(StoreError::Foreign {
                path: path.to_path_buf(),
                found: app_id,
            });
        }
        if version > SCHEMA_VERSION {
            return Err(StoreError::Newer {
                path: path.to_path_buf(),
                found: version,
            });
        }
        let library: i64 = conn
            .query_row(
                "SELECT (SELECT count(*) FROM pragma_table_info('sessions') WHERE name = 'name')
                      + (SELECT count(*) FROM sqlite_master WHERE name = 'fact_text')",
                [],
                |r| r.get(0),
            )
            .map_err(open_err)?;
        if library < 2 {
            return Err(unusable(
                "it was written by an older agent-chatter; `serve` or `chat` brings it up to \
                 date when it opens it, and it can then be read here"
                    .into(),
            ));
        }
        Ok(Store {
            db: Arc::new(Mutex::new(Db {
                conn,
                path: path.to_path_buf(),
                file,
                lost: None,
                me: Holder::new(),
                renewed: std::time::Instant::now(),
            })),
        })
    }

    fn db(&self) -> MutexGuard<'_, Db> {
        self.db.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The database, checked to be the file at its path (see [`Store::open`]), for a write.
    fn writable(&self) -> Result<MutexGuard<'_, Db>, StoreError> {
        let mut db = self.db();
        db.check()?;
        Ok(db)
    }

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
                agent_chatter::protocol::fork_name(&name, number)
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
        tx.commit()?;
        Ok(id)
    }

    /// Remembers `file` as the team file whose machine settings `session` runs with (none:
    /// forgets it), so a resume reads it again (docs/architecture.md §14c).
    pub(crate) fn remember_team_file(
        &self,
        session: i64,
        file: Option<&TeamFile>,
    ) -> Result<(), StoreError> {
        let db = self.writable()?;
        match file {
            Some(file) => db.conn.execute(
                "INSERT INTO team_files (session_id, path, sha256) VALUES (?1, ?2, ?3)
                 ON CONFLICT(session_id) DO UPDATE SET path = ?2, sha256 = ?3",
                params![session, file.path.to_string_lossy(), file.sha256],
            )?,
            None => db
                .conn
                .execute("DELETE FROM team_files WHERE session_id = ?1", [session])?,
        };
        Ok(())
    }

    /// The team file `session` runs with, as [`Self::remember_team_file`] kept it.
    pub(crate) fn team_file(&self, session: i64) -> Result<Option<TeamFile>, StoreError> {
        Ok(self
            .db()
            .conn
            .query_row(
                "SELECT path, sha256 FROM team_files WHERE session_id = ?1",
                [session],
                |r| {
                    Ok(TeamFile {
                        path: PathBuf::from(r.get::<_, String>(0)?),
                        sha256: r.get(1)?,
                    })
                },
            )
            .optional()?)
    }

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

    /// Takes (or renews) the lease on `session`: this store runs it from now on, and no other
    /// bridge will ([`StoreError::Held`]) while this one lives. The lease is renewed every few
    /// seconds while the store is open; a holder that is gone (a process of this machine that
    /// ended, even by SIGKILL) loses it at once, one that stops renewing after [`LEASE_MS`].
    pub(crate) fn lease(&self, session: i64) -> Result<(), StoreError> {
        let mut db = self.writable()?;
        let Db { conn, me, .. } = &mut *db;
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        claim(&tx, me, session)?;
        tx.commit()?;
        Ok(())
    }

    /// Gives up the lease on `session` (if this store holds it).
    pub(crate) fn release(&self, session: i64) {
        let db = self.db();
        if let Err(e) = db.conn.execute(
            "DELETE FROM leases WHERE session_id = ?1 AND holder = ?2",
            params![session, db.me.token],
        ) {
            eprintln!("agent-chatter: warning: the lease on session {session} was not given up: {e}; it expires within {} s", LEASE_MS / 1000);
        }
    }

    /// Deletes `session` and everything kept for it, in one transaction.
    pub(crate) fn delete_session(&mut self, session: i64) -> Result<(), StoreError> {
        let mut db = self.writable()?;
        let tx = db.conn.transaction()?;
        tx.execute(
            "DELETE FROM fact_text WHERE rowid IN (SELECT rowid FROM facts WHERE session_id = ?1)",
            [session],
        )?;
        for table in ["facts", "sent", "outputs", "leases", "runs", "team_files"] {
            tx.execute(
                &format!("DELETE FROM {table} WHERE session_id = ?1"),
                [session],
            )?;
        }
        tx.execute("DELETE FROM sessions WHERE id = ?1", [session])?;
        tx.commit()?;
        Ok(())
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
            params![session, crate::hub::now().0 as i64],
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

    /// Keeps an agent's whole output (e.g. a reply above the message limit), so nothing it
    /// said is lost even when the conversation records less.
    pub(crate) fn keep_output(
        &self,
        session: i64,
        member: &str,
        at_ms: i64,
        output: &[u8],
    ) -> Result<(), StoreError> {
        self.writable()?.conn.execute(
            "INSERT INTO outputs (session_id, member, at_ms, output) VALUES (?1, ?2, ?3, ?4)",
            params![session, member, at_ms, output],
        )?;
        Ok(())
    }

    /// The outputs kept for `session` (see [`Store::keep_output`]), oldest first.
    pub fn outputs(&self, session: i64) -> Result<Vec<KeptOutput>, StoreError> {
        let db = self.db();
        let mut stmt = db.conn.prepare(
            "SELECT member, at_ms, output FROM outputs WHERE session_id = ?1 ORDER BY rowid",
        )?;
        let rows = stmt.query_map([session], |r| {
            Ok(KeptOutput {
                member: r.get(0)?,
                at_ms: r.get(1)?,
                output: r.get(2)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Notes the digest of what was sent to `member` for `message` of `session` (a delivery
    /// made again on resume sends the same bytes, and replaces the row).
    pub(crate) fn record_sent(
        &self,
        session: i64,
        message: &str,
        member: &str,
        sha256: &str,
    ) -> Result<(), StoreError> {
        self.writable()?.conn.execute(
            "INSERT OR REPLACE INTO sent (session_id, message, member, sha256) VALUES (?1, ?2, ?3, ?4)",
            params![session, message, member, sha256],
        )?;
        Ok(())
    }

    /// Notes that `member`'s run for `message` of `session` started at `started_ms`: until
    /// its outcome's fact is appended, the row says a run is in flight (see [`RUNS_SCHEMA`]).
    pub(crate) fn run_started(
        &self,
        session: i64,
        member: &str,
        message: &str,
        started_ms: i64,
    ) -> Result<(), StoreError> {
        self.writable()?.conn.execute(
            "INSERT OR REPLACE INTO runs (session_id, member, message, started_ms) VALUES (?1, ?2, ?3, ?4)",
            params![session, member, message, started_ms],
        )?;
        Ok(())
    }

    /// Notes why the run in flight in `session` was stopped by the bridge without an outcome
    /// (`its session was left`), for the fact its next open records.
    /// How many runs it noted (0 or 1).
    pub(crate) fn run_stopped(&self, session: i64, why: &str) -> Result<usize, StoreError> {
        Ok(self.writable()?.conn.execute(
            "UPDATE runs SET stopped = ?2 WHERE session_id = ?1",
            params![session, why],
        )?)
    }

    /// Forgets the record of a run in flight in `session` that is stale: it names another
    /// delivery than the one due, so its conversation moved on without it.
    pub(crate) fn run_dropped(&self, session: i64) -> Result<(), StoreError> {
        self.writable()?
            .conn
            .execute("DELETE FROM runs WHERE session_id = ?1", [session])?;
        Ok(())
    }

    /// The run in flight in `session` by its row (see [`RUNS_SCHEMA`]), if any.
    pub(crate) fn run_in_flight(&self, session: i64) -> Result<Option<RunInFlight>, StoreError> {
        let db = self.db();
        Ok(db
            .conn
            .query_row(
                "SELECT member, message, started_ms, stopped FROM runs WHERE session_id = ?1",
                [session],
                |r| {
                    Ok(RunInFlight {
                        member: r.get(0)?,
                        message: r.get(1)?,
                        started_ms: r.get(2)?,
                        stopped: r.get(3)?,
                    })
                },
            )
            .optional()?)
    }

    /// Every digest noted by [`Self::record_sent`] for `session`.
    pub(crate) fn sent(&self, session: i64) -> Result<Vec<Sent>, StoreError> {
        let db = self.db();
        let mut stmt = db.conn.prepare(
            "SELECT message, member, sha256 FROM sent WHERE session_id = ?1 ORDER BY rowid",
        )?;
        let rows = stmt.query_map([session], |r| {
            Ok(Sent {
                message: r.get(0)?,
                to: r.get(1)?,
                prompt_sha256: r.get(2)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
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
                    .and_then(|fact| agent_chatter::protocol::first_message(&[fact])),
                facts: r.get(5)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
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
fn index(tx: &rusqlite::Transaction<'_>, rowid: i64, fact: &Fact) -> Result<(), StoreError> {
    tx.execute(
        "INSERT INTO fact_text (rowid, text) VALUES (?1, ?2)",
        params![
            rowid,
            agent_chatter::protocol::searchable_text(fact).unwrap_or_default()
        ],
    )?;
    Ok(())
}

/// Brings a file written before the session library (or by a version without it) up to it:
/// the `sessions` columns it lacks, and every fact not yet in the search index (a row of a
/// fact since deleted is dropped). Facts that do not read are indexed as text-less.
fn library(conn: &Connection) -> rusqlite::Result<()> {
    let has_name: bool = conn.query_row(
        "SELECT count(*) FROM pragma_table_info('sessions') WHERE name = 'name'",
        [],
        |r| r.get::<_, i64>(0).map(|n| n > 0),
    )?;
    if !has_name {
        conn.execute_batch(
            "ALTER TABLE sessions ADD COLUMN name TEXT;
             ALTER TABLE sessions ADD COLUMN updated_ms INTEGER;",
        )?;
    }
    conn.execute_batch(LIBRARY_SCHEMA)?;
    let tx = conn.unchecked_transaction()?;
    tx.execute(
        "DELETE FROM fact_text WHERE rowid NOT IN (SELECT rowid FROM facts)",
        [],
    )?;
    // Failures were indexed without text before their reasons were searchable: indexed
    // again below. (A failure is the only fact whose text may be empty.)
    tx.execute(
        "DELETE FROM fact_text WHERE text = '' AND rowid IN
            (SELECT rowid FROM facts WHERE json_extract(fact, '$.type') = 'failed')",
        [],
    )?;
    {
        let mut missing = tx.prepare(
            "SELECT rowid, fact FROM facts WHERE rowid NOT IN (SELECT rowid FROM fact_text)",
        )?;
        let mut insert = tx.prepare("INSERT INTO fact_text (rowid, text) VALUES (?1, ?2)")?;
        let mut rows = missing.query([])?;
        while let Some(row) = rows.next()? {
            let json: String = row.get(1)?;
            let text = serde_json::from_str::<Fact>(&json)
                .ok()
                .and_then(|fact| agent_chatter::protocol::searchable_text(&fact));
            insert.execute(params![row.get::<_, i64>(0)?, text.unwrap_or_default()])?;
        }
    }
    tx.commit()
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

/// Takes or renews `me`'s lease on `session` in `tx`, unless another holder has it: one that
/// is alive and renewed it less than [`LEASE_MS`] ago.
fn claim(tx: &rusqlite::Transaction<'_>, me: &Holder, session: i64) -> Result<(), StoreError> {
    let now = crate::hub::now().0 as i64;
    let held: Option<(String, i64, i64)> = tx
        .query_row(
            "SELECT holder, pid, expires_ms FROM leases WHERE session_id = ?1",
            [session],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .optional()?;
    if let Some((holder, pid, expires_ms)) = held {
        if holder != me.token && expires_ms > now && !holder_is_gone(&holder) {
            return Err(StoreError::Held {
                session,
                pid,
                left_s: (expires_ms - now + 999) / 1000,
            });
        }
    }
    tx.execute(
        "INSERT OR REPLACE INTO leases (session_id, holder, pid, expires_ms) VALUES (?1, ?2, ?3, ?4)",
        params![session, me.token, me.pid, now + LEASE_MS],
    )?;
    Ok(())
}

/// `path` with `suffix` appended to its file name (`s.db` → `s.db-wal`).
fn beside(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_os_string();
    name.push(suffix);
    PathBuf::from(name)
}

/// The files SQLite keeps beside a database.
const COMPANIONS: [&str; 3] = ["-wal", "-shm", "-journal"];

/// Checks, before SQLite touches anything, that the database at `path` and the files SQLite
/// keeps beside it are plain files this process can write, and creates the database (0600,
/// its directory 0700 when missing) if it does not exist. SQLite itself would follow a
/// symbolic link, silently open an unwritable file read-only, and die of SIGBUS on a `-shm`
/// it cannot extend (an immutable one).
fn prepare(path: &Path) -> Result<(), StoreError> {
    let unusable = |why: String| StoreError::Unusable {
        path: path.to_path_buf(),
        why,
    };
    let mut missing_companion = false;
    for (file, suffix) in std::iter::once((path.to_path_buf(), ""))
        .chain(COMPANIONS.map(|suffix| (beside(path, suffix), suffix)))
    {
        let what = if suffix.is_empty() {
            "it".to_string()
        } else {
            format!("its {suffix} file {}", file.display())
        };
        match std::fs::symlink_metadata(&file) {
            Ok(meta) if meta.file_type().is_symlink() => {
                return Err(unusable(format!(
                    "{what} is a symbolic link; the session database and its -wal and -shm files \
                     must be plain files (give the link's target as --db)"
                )))
            }
            Ok(meta) if !meta.is_file() => {
                return Err(unusable(format!("{what} is not a regular file")))
            }
            // Asked, not opened: closing a descriptor of a file would drop every SQLite lock
            // this process holds on it.
            Ok(meta) => {
                owned_by_me_alone(&file, &what, &meta).map_err(unusable)?;
                access(&file, libc::W_OK).map_err(|e| {
                    unusable(format!(
                        "{what} cannot be written ({}); the bridge writes every fact there",
                        not_writable(&e)
                    ))
                })?
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                missing_companion |= suffix == "-wal" || suffix == "-shm";
            }
            Err(e) => return Err(unusable(crate::files::reason(&e))),
        }
    }
    let dir = crate::files::parent_dir(path);
    if !path.exists() {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&dir)
            .map_err(|e| {
                unusable(format!(
                    "cannot create its directory {}: {}",
                    dir.display(),
                    crate::files::reason(&e)
                ))
            })?;
        OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW)
            .open(path)
            .map_err(|e| unusable(format!("cannot be created: {}", not_writable(&e))))?;
    }
    if missing_companion && access(&dir, libc::W_OK | libc::X_OK).is_err() {
        return Err(unusable(format!(
            "its directory {} cannot be written, and SQLite keeps its -wal and -shm files there",
            dir.display()
        )));
    }
    Ok(())
}

/// Checks that `file` (the database or a file SQLite keeps beside it, `what` in messages) is
/// its owner's alone, like the token: it is trusted as this user's (its teams say which files
/// are read again on resume), so one another user owns or can write is refused, saying why
/// and what to do; one others can only read is made 0600, with a line saying so.
fn owned_by_me_alone(file: &Path, what: &str, meta: &std::fs::Metadata) -> Result<(), String> {
    // SAFETY: geteuid cannot fail.
    let me = unsafe { libc::geteuid() };
    if meta.uid() != me {
        return Err(format!(
            "{what} belongs to another user (uid {}), who can read and change your sessions: \
             choose a database of your own with --db (a new file is made owner-only)",
            meta.uid()
        ));
    }
    let mode = meta.mode() & 0o777;
    if mode & 0o022 != 0 {
        return Err(format!(
            "{what} can be changed by other users (mode {mode:04o}), so your sessions may have \
             been changed by someone else: if no one else could have written it, run `chmod 600 \
             {}` and start again; otherwise choose another --db",
            file.display()
        ));
    }
    if mode & 0o077 != 0 {
        std::fs::set_permissions(file, std::fs::Permissions::from_mode(0o600)).map_err(|e| {
            format!(
                "{what} is readable by other users (mode {mode:04o}) and cannot be made 0600: {}",
                crate::files::reason(&e)
            )
        })?;
        eprintln!(
            "agent-chatter: {}: was readable by other users (mode {mode:04o}); made 0600 (owner only)",
            file.display()
        );
    }
    Ok(())
}

/// Why a file cannot be opened for writing, in the user's words.
fn not_writable(e: &std::io::Error) -> String {
    match e.raw_os_error() {
        Some(libc::EACCES) => "permission denied: it is read-only for this user".into(),
        Some(libc::EPERM) => "operation not permitted: it is immutable or append-only".into(),
        Some(libc::EROFS) => "the file system is read-only".into(),
        _ => crate::files::reason(e),
    }
}

/// Whether this process may access `path` as `mode` says (`access(2)`: it answers for the
/// real user, and says no to an immutable file or a read-only file system, root included).
fn access(path: &Path, mode: libc::c_int) -> std::io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let path = std::ffi::CString::new(path.as_os_str().as_bytes())
        .map_err(|_| std::io::Error::from(std::io::ErrorKind::InvalidInput))?;
    // SAFETY: access only reads the NUL-terminated path.
    if unsafe { libc::access(path.as_ptr(), mode) } == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// The SQLite connection on the database at `path`, which [`prepare`] has checked or made:
/// our schema on a new file, our marks checked on an old one.
fn connect(path: &Path) -> Result<Connection, StoreError> {
    let open_err = |source| StoreError::Open {
        path: path.to_path_buf(),
        source,
    };
    let conn = Connection::open_with_flags(
        path,
        // The file exists (prepare made it): SQLite creates none but its -wal and -shm.
        OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_NOFOLLOW
            | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(open_err)?;
    // Reading the header is the first access: a non-database file fails here, unchanged.
    let app_id: i64 = conn
        .query_row("PRAGMA application_id", [], |r| r.get(0))
        .map_err(open_err)?;
    let version: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .map_err(open_err)?;
    // SQLite opens a file it may not write read-only, without a word: say it now, not at
    // the first fact.
    if conn.is_readonly(MAIN_DB).unwrap_or(false) {
        return Err(StoreError::Unusable {
            path: path.to_path_buf(),
            why: "SQLite can only read it (read-only file or file system)".into(),
        });
    }
    let tables: i64 = conn
        .query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get(0))
        .map_err(open_err)?;
    if app_id == 0 && tables == 0 {
        // A new file: ours from now on.
        conn.execute_batch(&format!(
                "PRAGMA journal_mode=WAL; BEGIN; {SCHEMA} PRAGMA application_id={APPLICATION_ID}; PRAGMA user_version={SCHEMA_VERSION}; COMMIT;"
            ))
            .map_err(open_err)?;
    } else if app_id != APPLICATION_ID {
        return Err(StoreError::Foreign {
            path: path.to_path_buf(),
            found: app_id,
        });
    } else if version > SCHEMA_VERSION {
        return Err(StoreError::Newer {
            path: path.to_path_buf(),
            found: version,
        });
    } else {
        // Setting the version it has is a write: one that cannot be made fails here.
        conn.execute_batch(&format!(
            "PRAGMA journal_mode=WAL; PRAGMA user_version={version};"
        ))
        .map_err(open_err)?;
    }
    // Each append is durable before the bridge acts on it. The page cache stays small:
    // the bridge only appends and reads a log back at start, so a big cache buys nothing
    // and would show as memory growing with the session.
    conn.execute_batch("PRAGMA synchronous=FULL; PRAGMA foreign_keys=ON; PRAGMA cache_size=-256;")
        .map_err(open_err)?;
    conn.execute_batch(SENT_SCHEMA).map_err(open_err)?;
    conn.execute_batch(LEASE_SCHEMA).map_err(open_err)?;
    conn.execute_batch(RUNS_SCHEMA).map_err(open_err)?;
    conn.execute_batch(TEAM_FILES_SCHEMA).map_err(open_err)?;
    library(&conn).map_err(open_err)?;
    let cleaned = clean_machine_settings(&conn).map_err(open_err)?;
    if cleaned > 0 {
        eprintln!(
            "agent-chatter: {}: removed the members' run settings (env values, arguments, \
             working directories) from {cleaned} stored team{} written by an older version; \
             they are read from the team file on this machine from now on",
            path.display(),
            if cleaned == 1 { "" } else { "s" }
        );
    }
    Ok(conn)
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
            Some(conn) => search_in(conn, query),
            None => Ok(Vec::new()),
        }
    }
}

/// The sessions whose texts match `query`, each with its best matching fact, best first, at
/// most `MAX_SEARCH_HITS` (so one long session cannot hide the others). Words match whole
/// words, ignoring case and accents; a query the FTS5 syntax cannot read (`"`, `-`, `OR` at
/// its end, …) is searched as one phrase, so any text is a query. A query longer than the
/// protocol's bounds is refused in words, and one that takes longer than [`SEARCH_BUDGET`] is
/// stopped ([`StoreError::SearchTooSlow`]).
fn search_in(conn: &Connection, query: &str) -> Result<Vec<SearchHit>, StoreError> {
    if query.trim().is_empty() {
        return Ok(Vec::new());
    }
    agent_chatter::protocol::check_search_query(query).map_err(StoreError::SearchRefused)?;
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
                params![query, agent_chatter::protocol::MAX_SEARCH_HITS as i64],
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
        match run(query) {
            Ok(hits) => Ok(hits),
            Err(e) if interrupted(&e) => Err(StoreError::SearchTooSlow(SEARCH_BUDGET.as_secs())),
            // Not FTS5's syntax: the text as a phrase (a quote inside doubled).
            Err(_) => run(&format!("\"{}\"", query.replace('"', "\"\""))).map_err(|e| {
                if interrupted(&e) {
                    StoreError::SearchTooSlow(SEARCH_BUDGET.as_secs())
                } else {
                    e.into()
                }
            }),
        }
    });
    found
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

/// Rewrites every stored team fact (`setTeam`, `loadScenario`) that holds machine settings
/// without them, and says how many it rewrote (docs/architecture.md §14c: logs written before
/// the rule are cleaned when opened). The prompts they give are unchanged: no prompt depends
/// on run settings or working directories. The old bytes are overwritten in the file
/// (`secure_delete`) and the WAL emptied, so no copy of a value is left behind.
fn clean_machine_settings(conn: &Connection) -> rusqlite::Result<usize> {
    let mut stmt = conn.prepare(
        "SELECT rowid, fact FROM facts
         WHERE json_valid(fact) AND json_extract(fact, '$.type') IN ('setTeam', 'loadScenario')",
    )?;
    let rows = stmt.query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?)))?;
    let mut rewrites = Vec::new();
    for row in rows {
        let (rowid, json) = row?;
        // A fact that does not read is left for `facts` to name; it is not ours to change.
        let Ok(mut fact) = serde_json::from_str::<Fact>(&json) else {
            continue;
        };
        if fact.strip_machine_settings() {
            if let Ok(clean) = serde_json::to_string(&fact) {
                rewrites.push((rowid, clean));
            }
        }
    }
    drop(stmt);
    if rewrites.is_empty() {
        return Ok(0);
    }
    conn.execute_batch("PRAGMA secure_delete=ON;")?;
    conn.execute_batch("BEGIN IMMEDIATE;")?;
    let written = (|| {
        for (rowid, clean) in &rewrites {
            conn.execute(
                "UPDATE facts SET fact = ?2 WHERE rowid = ?1",
                params![rowid, clean],
            )?;
        }
        conn.execute_batch("COMMIT;")
    })();
    if let Err(e) = written {
        let _ = conn.execute_batch("ROLLBACK;");
        return Err(e);
    }
    conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))?;
    Ok(rewrites.len())
}

/// The device and inode of the file at `path` (not following a link).
fn identity(path: &Path) -> Result<(u64, u64), String> {
    std::fs::symlink_metadata(path)
        .map(|m| (m.dev(), m.ino()))
        .map_err(|e| crate::files::reason(&e))
}

/// Checks every [`WATCH_EVERY`] that the database file is still there (see [`Db::check`]),
/// until the store is dropped.
fn watch(db: Weak<Mutex<Db>>) {
    let spawned = std::thread::Builder::new()
        .name("agent-chatter-db-watch".into())
        .spawn(move || loop {
            std::thread::sleep(WATCH_EVERY);
            let Some(db) = db.upgrade() else { return };
            let mut db = db.lock().unwrap_or_else(|e| e.into_inner());
            if db.check().is_err() {
                return;
            }
            db.renew();
        });
    if let Err(e) = spawned {
        eprintln!("agent-chatter: warning: the database is checked only when written: {e}");
    }
}

impl Db {
    /// Renews this store's leases every [`LEASE_RENEW`].
    fn renew(&mut self) {
        if self.renewed.elapsed() < LEASE_RENEW {
            return;
        }
        self.renewed = std::time::Instant::now();
        let until = crate::hub::now().0 as i64 + LEASE_MS;
        if let Err(e) = self.conn.execute(
            "UPDATE leases SET expires_ms = ?1 WHERE holder = ?2",
            params![until, self.me.token],
        ) {
            eprintln!("agent-chatter: warning: the session's lease was not renewed: {e}");
        }
    }

    /// `Ok` when the connection's file is still the one at its path. When it was deleted or
    /// replaced, what the connection holds is written to a new file, at the path (or beside
    /// it when another file stands there), and the store goes on with that file.
    fn check(&mut self) -> Result<(), StoreError> {
        if let Some(why) = &self.lost {
            return Err(StoreError::Lost {
                path: self.path.clone(),
                why: why.clone(),
            });
        }
        let now = identity(&self.path).ok();
        if now == Some(self.file) {
            return Ok(());
        }
        let (happened, target) = match now {
            None => ("deleted (or moved away)", self.path.clone()),
            Some(_) => (
                "replaced by another file",
                beside(&self.path, &format!(".recovered-{}", crate::hub::now().0)),
            ),
        };
        let was = self.path.clone();
        match self.rewrite(&target) {
            Ok(placed) => {
                eprintln!(
                    "agent-chatter: warning: the session database {} was {happened} while in use; \
                     its sessions were written back to {}, which the bridge goes on with",
                    was.display(),
                    placed.display()
                );
                Ok(())
            }
            Err(why) => {
                eprintln!(
                    "agent-chatter: error: the session database {} was {happened} while in use, \
                     and its sessions could not be written back to {}: {why}; no fact can be \
                     kept now: stop the bridge",
                    was.display(),
                    target.display()
                );
                self.lost = Some(why.clone());
                Err(StoreError::Lost { path: was, why })
            }
        }
    }

    /// Copies the open database into a new file at `target` (or, should another file stand
    /// there by then, beside it) and reopens the store on it. The copy is made under another
    /// name and linked into place whole.
    fn rewrite(&mut self, target: &Path) -> Result<PathBuf, String> {
        let copy = beside(target, &format!(".rewriting-{}", std::process::id()));
        let name = copy
            .to_str()
            .ok_or_else(|| format!("{} is not a UTF-8 path", copy.display()))?;
        let _ = std::fs::remove_file(&copy);
        // Owner-only, as a new database is (VACUUM INTO takes an empty file).
        OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&copy)
            .map_err(|e| format!("{}: {}", copy.display(), crate::files::reason(&e)))?;
        if let Err(e) = self.conn.execute("VACUUM INTO ?1", [name]) {
            let _ = std::fs::remove_file(&copy);
            return Err(e.to_string());
        }
        // Closed before the copy is opened: closing removes the -wal and -shm files by name,
        // which would by then be the copy's.
        let unlinked = std::mem::replace(
            &mut self.conn,
            Connection::open_in_memory().map_err(|e| e.to_string())?,
        );
        if let Err((_, e)) = unlinked.close() {
            return Err(format!("{e} (a copy is in {})", copy.display()));
        }
        // A link never replaces a file: if one appeared at `target` meanwhile, it stays.
        let placed = if std::fs::hard_link(&copy, target).is_ok() {
            let _ = std::fs::remove_file(&copy);
            target.to_path_buf()
        } else {
            let aside = beside(target, &format!(".recovered-{}", crate::hub::now().0));
            std::fs::rename(&copy, &aside).map_err(|e| {
                format!(
                    "{} (a copy is in {})",
                    crate::files::reason(&e),
                    copy.display()
                )
            })?;
            aside
        };
        self.conn = connect(&placed).map_err(|e| e.to_string())?;
        self.file = identity(&placed)?;
        self.path = placed.clone();
        Ok(placed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_chatter::message::Millis;

    fn fact(text: &str) -> Fact {
        Fact::human(text, Millis(1))
    }

    #[test]
    fn a_file_from_before_digests_were_kept_gets_their_table_and_keeps_its_facts() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.db");
        let id = {
            let mut store = Store::open(&path).unwrap();
            let id = store.create_session("old", 5, &fact("a")).unwrap();
            // As a file written by the version before: no `sent` table.
            store.db().conn.execute_batch("DROP TABLE sent").unwrap();
            id
        };
        let store = Store::open(&path).unwrap();
        assert_eq!(store.facts(id).unwrap(), [fact("a")]);
        store.record_sent(id, "msg-1", "max", "ab").unwrap();
        // Made again on resume: the same row, replaced.
        store.record_sent(id, "msg-1", "max", "cd").unwrap();
        assert_eq!(
            store.sent(id).unwrap(),
            [Sent {
                message: "msg-1".into(),
                to: "max".into(),
                prompt_sha256: "cd".into()
            }]
        );
    }

    /// A file as the versions before the session library wrote it: the schema of that time,
    /// no name, no `updated_ms`, no search index.
    fn old_file(path: &Path, facts: &[Fact]) {
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

    fn team() -> Fact {
        Fact::set_team(agent_chatter::demo::team())
    }

    #[test]
    fn a_file_from_before_the_session_library_keeps_its_facts_and_is_listed_and_searched() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.db");
        let facts = [team(), fact("Draft the changelog")];
        old_file(&path, &facts);
        let store = Store::open(&path).unwrap();
        assert_eq!(store.facts(1).unwrap(), facts);
        let list = store.list().unwrap();
        assert_eq!(
            list,
            [SessionInfo {
                id: 1,
                name: "Old crew".into(),
                title: "Old crew".into(),
                created_at: 5,
                updated_at: 5,
                first_message: Some("Draft the changelog".into()),
                facts: 2,
            }]
        );
        let hits = store.search("changelog").unwrap();
        assert_eq!((hits.len(), hits[0].session, hits[0].seq), (1, 1, 2));
        drop(store);
        // Opened again, nothing is indexed twice.
        let store = Store::open(&path).unwrap();
        assert_eq!(store.search("changelog").unwrap().len(), 1);
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
        let first = agent_chatter::protocol::first_message(&[Fact::LoadScenario {
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
    fn the_bundled_sqlite_has_fts5() {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(LIBRARY_SCHEMA).unwrap();
    }

    // --- the database is its owner's alone (issue #45.2) -----------------------------------

    fn mode_of(path: &Path) -> u32 {
        std::fs::metadata(path).unwrap().mode() & 0o777
    }

    #[test]
    fn a_database_or_companion_others_can_write_is_refused_and_left_alone() {
        for suffix in ["", "-wal", "-shm"] {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("s.db");
            drop(Store::open(&path).unwrap());
            let file = beside(&path, suffix);
            std::fs::write(&file, b"").ok();
            std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o666)).unwrap();
            let err = Store::open(&path).err().expect("refused").to_string();
            assert!(
                err.contains("can be changed by other users (mode 0666)"),
                "{suffix}: {err}"
            );
            assert!(err.contains("chmod 600"), "{err}");
            assert_eq!(mode_of(&file), 0o666, "left as it was");
        }
    }

    #[test]
    fn an_empty_database_another_user_created_is_refused() {
        // SAFETY: geteuid cannot fail.
        if unsafe { libc::geteuid() } != 0 {
            eprintln!("skipped: only root can make a file another user's (CI runs as root)");
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.db");
        std::fs::write(&path, b"").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        std::os::unix::fs::chown(&path, Some(65534), Some(65534)).unwrap();
        let err = Store::open(&path).err().expect("refused").to_string();
        assert!(err.contains("belongs to another user (uid 65534)"), "{err}");
        assert_eq!(
            std::fs::metadata(&path).unwrap().len(),
            0,
            "nothing written"
        );
    }

    #[test]
    fn an_old_database_others_can_read_is_made_owner_only() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.db");
        let id = {
            let mut store = Store::open(&path).unwrap();
            store.create_session("A", 1, &team()).unwrap()
        };
        for suffix in ["", "-wal", "-shm"] {
            let file = beside(&path, suffix);
            if file.exists() {
                std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
            }
        }
        let store = Store::open(&path).unwrap();
        assert_eq!(mode_of(&path), 0o600);
        for suffix in ["-wal", "-shm"] {
            let file = beside(&path, suffix);
            if file.exists() {
                assert_eq!(mode_of(&file), 0o600, "{suffix}");
            }
        }
        assert_eq!(store.facts(id).unwrap().len(), 1, "its facts are kept");
    }

    // --- the lease across PID namespaces (issue #45.9) -------------------------------------

    #[test]
    fn a_holder_in_another_pid_namespace_is_never_taken_for_gone() {
        let boot = boot_id().expect("Linux");
        let here = pid_namespace().expect("Linux");
        // A pid no process of this namespace has: gone, were it this namespace's.
        let dead = "999999999";
        let table = [
            (format!("{boot}/{dead}/1234/ab/{here}"), true),
            (format!("{boot}/{dead}/1234/ab/pid:[1]"), false),
            (format!("{boot}/{dead}/1234/ab"), true),
            (format!("another-boot/{dead}/1234/ab/{here}"), false),
        ];
        for (token, gone) in table {
            assert_eq!(holder_is_gone(&token), gone, "{token}");
        }
    }

    // --- old logs are cleaned of machine settings (issue #45.1) ----------------------------

    #[test]
    fn team_facts_written_with_run_settings_are_cleaned_when_the_database_is_opened() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.db");
        let mut team = agent_chatter::demo::team();
        team.members[1]
            .run
            .env
            .insert("ANTHROPIC_API_KEY".into(), "sk-old-secret".into());
        team.members[1].base_dir = Some("/home/me/old-project".into());
        let old = serde_json::to_string(&Fact::set_team(team.clone())).unwrap();
        assert!(old.contains("sk-old-secret"));
        let id = {
            let mut store = Store::open(&path).unwrap();
            let id = store.create_session("A", 1, &fact("placeholder")).unwrap();
            // As an older version stored it: the team with its settings.
            store
                .db()
                .conn
                .execute(
                    "UPDATE facts SET fact = ?1 WHERE session_id = ?2",
                    params![old, id],
                )
                .unwrap();
            id
        };
        let store = Store::open(&path).unwrap();
        let facts = store.facts(id).unwrap();
        assert!(!facts[0].has_machine_settings());
        team.strip_machine_settings();
        assert_eq!(facts[0], Fact::set_team(team));
        drop(store);
        let bytes: Vec<u8> = ["", "-wal"]
            .iter()
            .filter_map(|s| std::fs::read(beside(&path, s)).ok())
            .flatten()
            .collect();
        let text = String::from_utf8_lossy(&bytes);
        assert!(
            !text.contains("sk-old-secret"),
            "a value is left in the file"
        );
        assert!(
            !text.contains("/home/me/old-project"),
            "a path is left in the file"
        );
    }

    // --- search is bounded (issue #45.3) ----------------------------------------------------

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

    #[test]
    fn deleting_a_session_takes_its_texts_out_of_the_search() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("s.db")).unwrap();
        let a = store.create_session("A", 1, &team()).unwrap();
        store.append(a, 2, &fact("ephemeral")).unwrap();
        store.delete_session(a).unwrap();
        assert!(store.search("ephemeral").unwrap().is_empty());
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
    fn a_foreign_database_is_refused_and_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("other.db");
        {
            let conn = Connection::open(&path).unwrap();
            conn.execute_batch("CREATE TABLE notes (x TEXT); INSERT INTO notes VALUES ('mine');")
                .unwrap();
        }
        let before = std::fs::read(&path).unwrap();
        let err = Store::open(&path).err().unwrap().to_string();
        assert!(
            err.contains("not an agent-chatter session database"),
            "{err}"
        );
        assert_eq!(std::fs::read(&path).unwrap(), before);
    }

    #[test]
    fn a_file_that_is_not_a_database_is_refused_and_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("notes.txt");
        std::fs::write(&path, "these are my notes, not a database at all, and long enough to have a header ....................................................................................").unwrap();
        let before = std::fs::read(&path).unwrap();
        let err = Store::open(&path).err().unwrap().to_string();
        assert!(
            err.contains("cannot be used as a session database"),
            "{err}"
        );
        assert_eq!(std::fs::read(&path).unwrap(), before);
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
}
