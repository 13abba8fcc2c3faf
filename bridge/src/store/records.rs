//! What is kept beside the facts, none of it a fact (docs/architecture.md §14, §14c): the
//! outputs of runs the conversation could not record whole, the digest of each delivery, the
//! run in flight (so a run the bridge never saw end is recorded as interrupted), and the team
//! file each session's machine settings are read from.

use std::path::PathBuf;

use agent_chatter::activity::RunActivity;
use rusqlite::{params, OptionalExtension};

use super::{Sent, Store, StoreError};

/// A run whose start is recorded and whose outcome is not (see [`RUNS_SCHEMA`](super::schema::RUNS_SCHEMA)).
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

/// The team file a session's machine settings come from, and the SHA-256 of its bytes when
/// they were read (so a file changed since is said at start).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TeamFile {
    pub path: PathBuf,
    pub sha256: String,
}

impl Store {
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

    /// Keeps what `member`'s run for `message` did (agents over ACP): replaces what was kept
    /// for that delivery (a retry of it is the same delivery, shown as its last run).
    pub(crate) fn record_activity(
        &self,
        session: i64,
        run: &RunActivity,
    ) -> Result<(), StoreError> {
        // Our own types: they always serialise.
        let items = serde_json::to_string(&run.items).unwrap_or_default();
        self.writable()?.conn.execute(
            "INSERT OR REPLACE INTO activity (session_id, message, member, items) VALUES (?1, ?2, ?3, ?4)",
            params![session, run.message, run.to, items],
        )?;
        Ok(())
    }

    /// The activity kept for `session`, in the order its runs were kept; a row that does not
    /// read (a newer version's items) is left out.
    pub fn activity(&self, session: i64) -> Result<Vec<RunActivity>, StoreError> {
        let db = self.db();
        let mut stmt = db.conn.prepare(
            "SELECT message, member, items FROM activity WHERE session_id = ?1 ORDER BY rowid",
        )?;
        let rows = stmt.query_map([session], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
            ))
        })?;
        let mut runs = Vec::new();
        for row in rows {
            let (message, to, items) = row?;
            if let Ok(items) = serde_json::from_str(&items) {
                runs.push(RunActivity { message, to, items });
            }
        }
        Ok(runs)
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

    /// Notes that `member`'s run for `message` of `session` started at `started_ms`: until
    /// its outcome's fact is appended, the row says a run is in flight (see [`RUNS_SCHEMA`](super::schema::RUNS_SCHEMA)).
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

    /// The run in flight in `session` by its row (see [`RUNS_SCHEMA`](super::schema::RUNS_SCHEMA)), if any.
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
}
