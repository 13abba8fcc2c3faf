//! What a file the user opens is, and what the page does with it (docs/architecture.md §13
//! "files").
//!
//! One "open" button takes any of our files; the kind is recognised from its shape, so a user
//! never has to say which. Every reader is the core's, so errors name the field and nothing
//! changes until the whole file has been read.

use agent_chatter::config;
use agent_chatter::scenario::{self, Scenario};
use agent_chatter::session::Session;
use agent_chatter::snapshot::Snapshot;
use agent_chatter::team::Team;
use serde::de::{Deserializer, IgnoredAny};
use serde::Deserialize;
use serde_json::Value;

/// A file the page can open.
#[derive(Debug)]
pub enum Opened {
    /// A session file: the page continues it.
    Session(Box<Session>),
    /// A team config (ours or the peer's cli-config): it replaces the team in use.
    Team(Team),
    /// A scenario, or a snapshot read with the team in use: opened as a `loadScenario` fact,
    /// so its prompts are the scenario's and the conversation can go on from it.
    Scenario(Box<Scenario>),
}

/// The kinds of file, as the user knows them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    Session,
    Scenario,
    Snapshot,
    Team,
}

impl FileKind {
    pub fn label(self) -> &'static str {
        match self {
            FileKind::Session => "session file",
            FileKind::Scenario => "scenario",
            FileKind::Snapshot => "snapshot",
            FileKind::Team => "team config",
        }
    }
}

/// Recognises a file by its top-level keys: `format`/`facts` → session, `team` + `messages` →
/// scenario, `messages` + `version` → snapshot, anything else → a team config.
pub fn kind_of(value: &Value) -> FileKind {
    TopLevel::of_value(value).kind()
}

/// [`kind_of`] from the file's text, reading only its top-level keys (their values are
/// skipped, not built), so the reader of the kind found parses the text once. Valid JSON of
/// another shape (not an object, a repeated key) is read whole, as [`kind_of`] reads it.
fn kind_of_text(text: &str) -> Result<FileKind, serde_json::Error> {
    let whole = || serde_json::from_str::<Value>(text).map(|value| kind_of(&value));
    // serde reads a struct from an array too: only an object is read key by key.
    if !text.trim_start().starts_with('{') {
        return whole();
    }
    match serde_json::from_str::<TopLevel>(text) {
        Ok(top) => Ok(top.kind()),
        Err(e) if e.classify() == serde_json::error::Category::Data => whole(),
        Err(e) => Err(e),
    }
}

/// The top-level keys a file is recognised by: which are there (whatever their value, `null`
/// too), and the `format` name.
#[derive(Default, Deserialize)]
struct TopLevel {
    #[serde(default, deserialize_with = "present")]
    facts: bool,
    #[serde(default, deserialize_with = "present")]
    team: bool,
    #[serde(default, deserialize_with = "present")]
    messages: bool,
    #[serde(default, deserialize_with = "present")]
    version: bool,
    #[serde(default, deserialize_with = "present")]
    timestamp: bool,
    #[serde(default)]
    format: Option<Value>,
}

fn present<'de, D: Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
    IgnoredAny::deserialize(d).map(|_| true)
}

impl TopLevel {
    fn of_value(value: &Value) -> Self {
        let has = |key: &str| value.get(key).is_some();
        TopLevel {
            facts: has("facts"),
            team: has("team"),
            messages: has("messages"),
            version: has("version"),
            timestamp: has("timestamp"),
            format: value.get("format").cloned(),
        }
    }

    fn kind(&self) -> FileKind {
        let session_format = self
            .format
            .as_ref()
            .and_then(Value::as_str)
            .is_some_and(|f| f.starts_with("agent-chatter-session"));
        if self.facts || session_format {
            FileKind::Session
        } else if self.messages && self.team {
            FileKind::Scenario
        } else if self.messages && (self.version || self.timestamp) {
            FileKind::Snapshot
        } else {
            FileKind::Team
        }
    }
}

/// Reads `text` (from the file `name`) as what it is; the error names the file, its kind and
/// what was wrong where. `team` is the team in use (a snapshot has none of its own).
pub fn open(name: &str, text: &str, team: Option<&Team>) -> Result<Opened, String> {
    let kind = kind_of_text(text).map_err(|e| {
        format!(
            "{name}: not JSON (line {}, column {}): fix the file and open it again",
            e.line(),
            e.column()
        )
    })?;
    let failed = |e: &dyn std::fmt::Display| {
        format!("{name} ({}): {e}; the page is unchanged", kind.label())
    };
    match kind {
        FileKind::Session => Session::import(text)
            .map(|s| Opened::Session(Box::new(s)))
            .map_err(|e| failed(&e)),
        FileKind::Team => config::load_team(text)
            .map(Opened::Team)
            .map_err(|e| failed(&e)),
        FileKind::Scenario => scenario::load_scenario(text)
            .map(|s| Opened::Scenario(Box::new(s)))
            .map_err(|e| failed(&e)),
        FileKind::Snapshot => {
            let snapshot = Snapshot::from_json(text).map_err(|e| failed(&e))?;
            let team =
                team.ok_or_else(|| failed(&"a snapshot holds no team: open a team config first"))?;
            let scenario = Scenario::from_history(
                team.clone(),
                &snapshot.messages,
                snapshot.team_task.as_deref(),
            );
            // Check every speaker against the team now, so the error names the snapshot's message.
            scenario.to_store().map_err(|e| failed(&e))?;
            Ok(Opened::Scenario(Box::new(scenario)))
        }
    }
}

/// `compact` JSON, as `serde_json::to_string` writes it, laid out as
/// `serde_json::to_string_pretty` lays it out (two-space indents, `"key": value`, `[]` and
/// `{}` when empty): the files the page saves are pretty, but a second (pretty) serializer of
/// every type it saves would weigh on its wasm (docs/architecture.md §18).
pub fn pretty(compact: &str) -> String {
    fn newline(out: &mut Vec<u8>, depth: usize) {
        out.push(b'\n');
        out.extend(std::iter::repeat_n(b' ', 2 * depth));
    }
    let bytes = compact.as_bytes();
    let mut out = Vec::with_capacity(bytes.len() * 2);
    let (mut depth, mut in_string, mut escaped) = (0, false, false);
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        i += 1;
        if in_string {
            out.push(b);
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => {
                in_string = true;
                out.push(b);
            }
            b'{' | b'[' => {
                out.push(b);
                let close = if b == b'{' { b'}' } else { b']' };
                if bytes.get(i) == Some(&close) {
                    out.push(close);
                    i += 1;
                } else {
                    depth += 1;
                    newline(&mut out, depth);
                }
            }
            b'}' | b']' => {
                depth -= 1;
                newline(&mut out, depth);
                out.push(b);
            }
            b',' => {
                out.push(b);
                newline(&mut out, depth);
            }
            b':' => out.extend_from_slice(b": "),
            _ => out.push(b),
        }
    }
    // Only ASCII was added between whole characters: still UTF-8.
    String::from_utf8(out).unwrap_or_else(|_| compact.to_string())
}

/// The session file name for downloads: `<team>-session.json`.
pub fn file_name(team: Option<&Team>, what: &str) -> String {
    let stem: String = team
        .map(|t| t.name.as_str())
        .unwrap_or("agent-chatter")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    format!("{}-{what}.json", stem.trim_matches('-'))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn files_are_recognised_by_their_top_level_keys() {
        let cases = [
            (
                json!({"format": "agent-chatter-session/1", "facts": []}),
                FileKind::Session,
            ),
            (
                json!({"format": "agent-chatter-session/9"}),
                FileKind::Session,
            ),
            (json!({"team": {}, "messages": []}), FileKind::Scenario),
            (json!({"messages": [], "version": 1}), FileKind::Snapshot),
            (json!({"schemaVersion": "1.2", "team": {}}), FileKind::Team),
            (json!({"name": "t", "members": []}), FileKind::Team),
        ];
        for (value, kind) in cases {
            assert_eq!(kind_of(&value), kind, "{value}");
        }
    }

    #[test]
    fn the_kind_read_from_the_text_is_the_kind_of_its_value() {
        let texts = [
            r#"{"format": "agent-chatter-session/1", "facts": []}"#,
            r#"{"facts": null}"#,
            r#"{"format": null, "messages": [], "version": 1}"#,
            r#"{"team": {}, "messages": [{"x": [1, {"y": null}]}]}"#,
            r#"{"messages": [], "timestamp": 5, "extra": "\u00e9"}"#,
            r#"{"messages": [], "messages": [], "version": 1}"#,
            r#"{"format": "other", "format": "agent-chatter-session/1"}"#,
            r#"{"name": "t", "members": []}"#,
            r#"[1, 2]"#,
            r#""text""#,
        ];
        for text in texts {
            let value: Value = serde_json::from_str(text).expect("JSON");
            assert_eq!(kind_of_text(text).expect("JSON"), kind_of(&value), "{text}");
        }
        assert!(kind_of_text("{").is_err());
        assert!(kind_of_text("{} x").is_err());
    }

    #[test]
    fn a_broken_file_names_itself_and_the_field() {
        let err = open(
            "team.json",
            r#"{"name": "t", "members": [{"name": "max", "kind": "ai"}]}"#,
            None,
        )
        .unwrap_err();
        assert!(err.starts_with("team.json (team config): "), "{err}");
        assert!(err.contains("members[0]"), "{err}");
        let err = open("x.json", "{", None).unwrap_err();
        assert!(err.contains("not JSON (line 1"), "{err}");
        let err = open(
            "s.json",
            r#"{"format": "agent-chatter-session/2", "facts": []}"#,
            None,
        )
        .unwrap_err();
        assert!(err.contains("session file"), "{err}");
    }

    fn peer_files(dir: &str) -> Vec<(String, String)> {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../tests/fixtures/peer")
            .join(dir);
        let mut files: Vec<(String, String)> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .map(|p| {
                (
                    p.file_name().unwrap().to_string_lossy().into_owned(),
                    std::fs::read_to_string(&p).unwrap(),
                )
            })
            .collect();
        files.sort();
        assert!(!files.is_empty(), "no files under {}", dir.display());
        files
    }

    #[test]
    fn every_valid_peer_config_opens_as_a_team() {
        for (name, text) in peer_files("valid") {
            assert!(
                matches!(open(&name, &text, None), Ok(Opened::Team(_))),
                "{name}"
            );
        }
    }

    #[test]
    fn every_invalid_peer_config_is_refused_naming_the_file() {
        for (name, text) in peer_files("invalid") {
            let err = open(&name, &text, None).unwrap_err();
            assert!(err.starts_with(&format!("{name} (team config): ")), "{err}");
            assert!(err.ends_with("the page is unchanged"), "{err}");
        }
    }

    #[test]
    fn a_snapshot_opens_with_the_team_in_use_and_names_a_stranger() {
        let team = agent_chatter::demo::team();
        let snapshot = r#"{"version": 1, "timestamp": 0, "teamTask": "t", "messages": [
            {"id": "msg-1", "speaker": {"id": "kailai", "name": "kailai", "displayName": "Kailai", "kind": "human"},
             "content": "hi [NEXT: max]", "routing": {"resolved": ["max"], "resolvedNames": ["max"]}}]}"#;
        match open("s.json", snapshot, Some(&team)) {
            Ok(Opened::Scenario(s)) => assert_eq!(s.messages.len(), 1),
            other => panic!("{other:?}"),
        }
        let stranger = snapshot.replace(r#""id": "kailai""#, r#""id": "zed""#);
        let err = open("s.json", &stranger, Some(&team)).unwrap_err();
        assert!(err.contains("messages[0].from"), "{err}");
        let err = open("s.json", snapshot, None).unwrap_err();
        assert!(err.contains("open a team config first"), "{err}");
    }

    #[test]
    fn saved_files_are_laid_out_as_serde_json_lays_them_out() {
        let team = agent_chatter::demo::team();
        let scenario = scenario::load_scenario(include_str!("../../examples/demo-scenario.json"))
            .expect("the demo scenario");
        let tricky =
            serde_json::json!({"a": [], "b": {}, "c": [[], {"d": "x,:{}[]\\\"y"}], "e": -1.5e-7});
        let cases = [
            (
                serde_json::to_string(&team),
                serde_json::to_string_pretty(&team),
            ),
            (
                serde_json::to_string(&scenario),
                serde_json::to_string_pretty(&scenario),
            ),
            (
                serde_json::to_string(&tricky),
                serde_json::to_string_pretty(&tricky),
            ),
            (Ok("[]".into()), Ok("[]".into())),
        ];
        for (compact, want) in cases {
            assert_eq!(pretty(&compact.unwrap()), want.unwrap());
        }
    }

    #[test]
    fn file_names_come_from_the_team_name() {
        let team = agent_chatter::demo::team();
        assert_eq!(
            file_name(Some(&team), "session"),
            "release-notes-crew-session.json"
        );
        assert_eq!(file_name(None, "scenario"), "agent-chatter-scenario.json");
    }
}
