//! The tables of a session database, and bringing a file an older version wrote up to them
//! (docs/architecture.md §14): the tables added since, the library's columns and search index,
//! and team facts cleaned of machine settings.

use std::path::Path;

use agent_chatter::session::Fact;
use rusqlite::{params, Connection};

/// `PRAGMA application_id` of our files: "ACHT".
pub(super) const APPLICATION_ID: i64 = 0x4143_4854;
/// `PRAGMA user_version`: the schema this version writes.
pub(super) const SCHEMA_VERSION: i64 = 1;

pub(super) const SCHEMA: &str = "
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

/// What each run of an agent over ACP did (docs/architecture.md §14d): its tool calls, plan, thoughts,
/// context fill and approval decisions, as JSON (`Vec<agent_chatter::activity::Activity>`),
/// keyed as its digest is. Shown and exported, never a fact: it reaches no prompt. Added to
/// older files when they are opened.
const ACTIVITY_SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS activity (
    session_id INTEGER NOT NULL REFERENCES sessions(id),
    message    TEXT NOT NULL,
    member     TEXT NOT NULL,
    items      TEXT NOT NULL,
    PRIMARY KEY (session_id, message, member)
);
";

/// What is kept of each ended run beside its fact (`run_details.rs`): its argv (a JSON list
/// of strings, never an environment variable) and the model, named by the CLI and
/// configured, keyed as its kept output is (member, the time of its outcome's fact). Not a
/// fact; added to older files when they are opened.
const RUN_DETAILS_SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS run_details (
    session_id       INTEGER NOT NULL REFERENCES sessions(id),
    member           TEXT NOT NULL,
    at_ms            INTEGER NOT NULL,
    argv             TEXT NOT NULL,
    model            TEXT,
    configured_model TEXT,
    PRIMARY KEY (session_id, member, at_ms)
);
";

/// The session library (docs/architecture.md §14): a session's own name (NULL: its title)
/// and when it was last written (NULL: when it was created), and the search index of its
/// texts, one row per fact whose rowid is the fact's (`protocol::searchable_text`; empty for
/// a fact with none). Added to older files when they are opened, their facts indexed then;
/// kept in step with `facts` in the same transactions.
pub(super) const LIBRARY_SCHEMA: &str = "
CREATE VIRTUAL TABLE IF NOT EXISTS fact_text USING fts5(
    text,
    tokenize = 'unicode61 remove_diacritics 2'
);
";

/// Brings the open file at `path` (ours, of a schema this version reads) up to this version's
/// tables: each added since schema 1, the library's, and team facts without machine settings,
/// saying on stderr how many were cleaned.
pub(super) fn bring_up_to_date(conn: &Connection, path: &Path) -> rusqlite::Result<()> {
    conn.execute_batch(SENT_SCHEMA)?;
    conn.execute_batch(LEASE_SCHEMA)?;
    conn.execute_batch(RUNS_SCHEMA)?;
    conn.execute_batch(TEAM_FILES_SCHEMA)?;
    conn.execute_batch(ACTIVITY_SCHEMA)?;
    conn.execute_batch(RUN_DETAILS_SCHEMA)?;
    add_library(conn)?;
    let cleaned = clean_machine_settings(conn)?;
    if cleaned > 0 {
        eprintln!(
            "agent-chatter: {}: removed the members' run settings (env values, arguments, \
             working directories) from {cleaned} stored team{} written by an older version; \
             they are read from the team file on this machine from now on",
            path.display(),
            if cleaned == 1 { "" } else { "s" }
        );
    }
    Ok(())
}

/// Brings a file written before the session library (or by a version without it) up to it:
/// the `sessions` columns it lacks, and every fact not yet in the search index (a row of a
/// fact since deleted is dropped). Facts that do not read are indexed as text-less.
fn add_library(conn: &Connection) -> rusqlite::Result<()> {
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
                .and_then(|fact| agent_chatter::library::searchable_text(&fact));
            insert.execute(params![row.get::<_, i64>(0)?, text.unwrap_or_default()])?;
        }
    }
    tx.commit()
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::testing::{fact, old_file, team};
    use crate::store::{Sent, SessionInfo, Store};

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
            .filter_map(|s| std::fs::read(format!("{}{s}", path.display())).ok())
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
}
