//! What is kept of each ended run beside its fact (docs/architecture.md §14b `runDetails`):
//! the program and arguments it was started with and the model, its CLI's word and the
//! configured one; read back with the run's kept output, cut to what a frame carries. A run is
//! named by its member and the time of its outcome's fact (the kept output's `at_ms` too).

use agent_chatter::protocol::{RunDetails, MAX_DETAILS_OUTPUT_BYTES};
use rusqlite::{params, Connection, OptionalExtension};

use super::library::Reader;
use super::{Store, StoreError};

/// What the bridge notes of a run when it ends. Never an environment variable: the argv is
/// the program and its arguments only.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct RunNote {
    pub argv: Vec<String>,
    /// The model the CLI's stream named.
    pub model: Option<String>,
    /// The model the member's run settings asked for.
    pub configured_model: Option<String>,
}

impl Store {
    /// Keeps `note` for `member`'s run in `session` whose outcome's fact has the time `at_ms`.
    pub(crate) fn record_run_note(
        &self,
        session: i64,
        member: &str,
        at_ms: i64,
        note: &RunNote,
    ) -> Result<(), StoreError> {
        // A list of strings always serialises.
        let argv = serde_json::to_string(&note.argv).unwrap_or_default();
        self.writable()?.conn.execute(
            "INSERT OR REPLACE INTO run_details (session_id, member, at_ms, argv, model, configured_model)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![session, member, at_ms, argv, note.model, note.configured_model],
        )?;
        Ok(())
    }

    /// [`details_in`] on this store's connection (the CLI's `outputs --at`).
    pub fn run_details(&self, session: i64, to: &str, at: u64) -> Result<RunDetails, StoreError> {
        details_in(&self.db().conn, session, to, at)
    }
}

impl Reader {
    /// [`details_in`] on the reader's connection, off the session's thread.
    pub(crate) fn run_details(
        &self,
        session: i64,
        to: &str,
        at: u64,
    ) -> Result<RunDetails, StoreError> {
        self.with(|conn| details_in(conn, session, to, at))
    }
}

/// What is known of `to`'s run in `session` that ended at `at`: its note, if one was kept, and
/// its kept output cut to [`MAX_DETAILS_OUTPUT_BYTES`]. A session that does not exist, or a
/// run it does not hold (no `replied` or `failed` fact of `to` at `at`), is an error naming
/// what was asked and what there is.
pub(crate) fn details_in(
    conn: &Connection,
    session: i64,
    to: &str,
    at: u64,
) -> Result<RunDetails, StoreError> {
    let bad = |why: String| Err(StoreError::RunDetails(why));
    let exists: Option<i64> = conn
        .query_row("SELECT id FROM sessions WHERE id = ?1", [session], |r| {
            r.get(0)
        })
        .optional()?;
    if exists.is_none() {
        return bad(format!("session {session} does not exist"));
    }
    let ends = run_ends(conn, session, to)?;
    if !ends.contains(&(at as i64)) {
        let runs = match ends.as_slice() {
            [] => format!("{to} has no ended run in it"),
            ends => {
                let last: Vec<String> = ends.iter().rev().take(5).map(i64::to_string).collect();
                format!(
                    "{to}'s runs ended at {} (the latest first)",
                    last.join(", ")
                )
            }
        };
        return bad(format!(
            "session {session} has no run of {to} that ended at {at}: {runs}"
        ));
    }
    let note = conn
        .query_row(
            "SELECT argv, model, configured_model FROM run_details
             WHERE session_id = ?1 AND member = ?2 AND at_ms = ?3",
            params![session, to, at as i64],
            |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, Option<String>>(1)?,
                    r.get::<_, Option<String>>(2)?,
                ))
            },
        )
        .optional()?;
    let (argv, model, configured_model) = note.unwrap_or_default();
    let output: Option<Vec<u8>> = conn
        .query_row(
            "SELECT output FROM outputs WHERE session_id = ?1 AND member = ?2 AND at_ms = ?3
             ORDER BY rowid DESC LIMIT 1",
            params![session, to, at as i64],
            |r| r.get(0),
        )
        .optional()?;
    let output_bytes = output.as_ref().map_or(0, |o| o.len() as u64);
    Ok(RunDetails {
        session,
        to: to.to_string(),
        at,
        model,
        configured_model,
        argv: hide_secrets(serde_json::from_str(&argv).unwrap_or_default()),
        output: output.map(|o| cut(&o)),
        output_bytes,
    })
}

/// What stands in for a hidden argument.
const HIDDEN: &str = "<hidden>";

/// `argv` with the value of every option whose name says it holds a secret (`key`, `token`,
/// `secret`, `password`, as `--api-key sk-…` or `--api-key=sk-…`) replaced by [`HIDDEN`]: the
/// command is shown and copied in the page, and a pasted command must not carry a member's
/// credentials out of the machine's agents file.
fn hide_secrets(argv: Vec<String>) -> Vec<String> {
    let secret = |name: &str| {
        let name = name.trim_start_matches('-').to_ascii_lowercase();
        ["key", "token", "secret", "password"]
            .iter()
            .any(|w| name.contains(w))
    };
    let mut hide_next = false;
    argv.into_iter()
        .map(|arg| {
            if std::mem::take(&mut hide_next) && !arg.starts_with('-') {
                return HIDDEN.to_string();
            }
            if !arg.starts_with('-') {
                return arg;
            }
            match arg.split_once('=') {
                Some((name, _)) if secret(name) => format!("{name}={HIDDEN}"),
                Some(_) => arg,
                None => {
                    hide_next = secret(&arg);
                    arg
                }
            }
        })
        .collect()
}

/// The times of `to`'s outcome facts (`replied`, `failed`) in `session`, oldest first.
fn run_ends(conn: &Connection, session: i64, to: &str) -> Result<Vec<i64>, StoreError> {
    let mut stmt = conn.prepare(
        "SELECT json_extract(fact, '$.at') FROM facts
         WHERE session_id = ?1 AND json_extract(fact, '$.type') IN ('replied', 'failed')
           AND json_extract(fact, '$.to') = ?2
         ORDER BY seq",
    )?;
    let rows = stmt.query_map(params![session, to], |r| r.get::<_, Option<i64>>(0))?;
    Ok(rows
        .collect::<Result<Vec<_>, _>>()?
        .into_iter()
        .flatten()
        .collect())
}

/// `output` as text (bytes that are not UTF-8 replaced), cut to its first
/// [`MAX_DETAILS_OUTPUT_BYTES`] at a character's end.
fn cut(output: &[u8]) -> String {
    let text = String::from_utf8_lossy(&output[..output.len().min(MAX_DETAILS_OUTPUT_BYTES + 4)]);
    let end = agent_chatter::text::floor_char_boundary(&text, MAX_DETAILS_OUTPUT_BYTES);
    text[..end].to_string()
}

#[cfg(test)]
mod tests {
    #[test]
    fn an_options_secret_value_is_hidden_and_the_rest_kept() {
        let argv = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        // (argv, shown)
        let cases: [(&[&str], &[&str]); 5] = [
            (
                &["claude", "-p", "--model", "opus"],
                &["claude", "-p", "--model", "opus"],
            ),
            (
                &["x", "--api-key", "sk-1", "-p"],
                &["x", "--api-key", "<hidden>", "-p"],
            ),
            (
                &["x", "--API_TOKEN=abc", "--model=m"],
                &["x", "--API_TOKEN=<hidden>", "--model=m"],
            ),
            (
                &["x", "--secret-file", "/s", "--password", "pw"],
                &["x", "--secret-file", "<hidden>", "--password", "<hidden>"],
            ),
            // A flag with no value after it hides nothing.
            (
                &["x", "--token", "--verbose"],
                &["x", "--token", "--verbose"],
            ),
        ];
        for (given, shown) in cases {
            assert_eq!(hide_secrets(argv(given)), argv(shown), "{given:?}");
        }
    }

    use agent_chatter::message::Millis;
    use agent_chatter::session::Fact;

    use super::*;

    fn store_with_runs() -> (tempfile::TempDir, Store, i64) {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("s.db")).unwrap();
        let id = store
            .create_session("crew", 1, &super::super::testing::team())
            .unwrap();
        store
            .append(id, 2, &Fact::failed("max", "crashed", Millis(50)))
            .unwrap();
        (dir, store, id)
    }

    #[test]
    fn a_run_reads_back_with_its_note_and_output_cut() {
        let (_dir, store, id) = store_with_runs();
        let note = RunNote {
            argv: vec!["claude".into(), "-p".into()],
            model: Some("claude-x".into()),
            configured_model: Some("opus".into()),
        };
        store.record_run_note(id, "max", 50, &note).unwrap();
        let big = vec![b'a'; MAX_DETAILS_OUTPUT_BYTES + 10];
        store.keep_output(id, "max", 50, &big).unwrap();
        let got = store.run_details(id, "max", 50).unwrap();
        assert_eq!(got.argv, note.argv);
        assert_eq!(got.model.as_deref(), Some("claude-x"));
        assert_eq!(got.configured_model.as_deref(), Some("opus"));
        assert_eq!(got.output.unwrap().len(), MAX_DETAILS_OUTPUT_BYTES);
        assert_eq!(got.output_bytes, big.len() as u64);
    }

    #[test]
    fn an_unknown_session_or_run_is_named() {
        let (_dir, store, id) = store_with_runs();
        let err = |s, to: &str, at| store.run_details(s, to, at).unwrap_err().to_string();
        assert_eq!(err(99, "max", 50), "runDetails: session 99 does not exist");
        assert_eq!(
            err(id, "max", 51),
            format!("runDetails: session {id} has no run of max that ended at 51: max's runs ended at 50 (the latest first)")
        );
        assert_eq!(
            err(id, "sarah", 50),
            format!("runDetails: session {id} has no run of sarah that ended at 50: sarah has no ended run in it")
        );
        // A run with nothing kept beside its fact: known, with nothing more to say.
        let bare = store.run_details(id, "max", 50).unwrap();
        assert_eq!((bare.argv.len(), bare.output, bare.model), (0, None, None));
    }
}
