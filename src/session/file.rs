//! The session as files (docs/architecture.md §6b): its own file, `{"format":
//! "agent-chatter-session/1", "facts": [...]}`, written by [`Session::export`] and read by
//! [`Session::import`]; and the files derived from it, a snapshot (§11) and a scenario (§11b).
//!
//! ## The one reader
//!
//! The text is read in one pass into the shapes below: keys are matched without being copied,
//! strings are borrowed from the text where JSON lets them be, and only what other readers take
//! (a `setTeam`'s team and settings, a `loadScenario`'s scenario) or what an error must name
//! becomes a `serde_json::Value`. Then every fact is checked and built, in order. A session of
//! 10⁴ messages used to become a `Value` tree first, a third of the import's time natively and
//! more in wasm, where allocation is dear.
//!
//! The rules are those of every JSON reader here ([`crate::json`]): `null` counts as absent, a
//! repeated key's last value wins, unknown keys are ignored, and an error names the fact index
//! and field (`facts[3].at: expected a non-negative integer, found the string "noon"`).

use std::borrow::Cow;

use serde::de::{self, Deserialize, Deserializer};
use serde::{Serialize, Serializer};
use serde_json::Value;

use super::{Fact, Failure, Session, SessionFileError};
use crate::config;
use crate::json::fields::{json_object, required, Field, List, Read};
use crate::json::{self, FieldError, JsonSyntaxError, Path};
use crate::message::{Message, Millis};
use crate::scenario::Scenario;
use crate::snapshot::{self, Snapshot};
use crate::team;
use crate::usage::Usage;

/// The `format` of a session file this version reads and writes.
pub const SESSION_FORMAT: &str = "agent-chatter-session/1";

/// Files: the session's own, and those derived from it.
impl Session {
    /// The session file: `{"format": "agent-chatter-session/1", "facts": [...]}` (the bytes
    /// of this type's `Serialize`, through [`facts_json`] and [`session_file`], which a host
    /// storing a log in parts uses too: one serializer for both in the page's wasm).
    pub fn export(&self) -> String {
        session_file(&facts_json(&self.facts))
    }

    /// Reads a session file and replays it into a new session. A file that is not JSON, of
    /// another format, with a malformed fact, or whose facts do not replay gives an error
    /// naming the fact index and field; the caller's session stays as it was. The new
    /// session's pending actions are what the host must do now (module doc).
    pub fn import(json_text: &str) -> Result<Session, SessionFileError> {
        Self::replay(facts(json_text)?)
    }

    /// The messages and team task as a snapshot v1 (§11), stamped `now`.
    pub fn snapshot(&self, now: Millis) -> Snapshot {
        snapshot::export(self.store(), now)
    }

    /// The session as a scenario (§11b): the team with the settings in force, every message
    /// with its sender and resolved addressees, and the team task. Previewing the scenario
    /// gives the bytes [`Self::preview`] gives for the last message (unless that member was
    /// delivered it with a parent outside its window; see the module doc). A message no
    /// prompt shows (a cancelled run's notice, [`crate::context::Store::is_withheld`]) is left
    /// out, so the scenario's windows are the session's. Members who left (`memberLeft`) are
    /// in its team, where they stood: a scenario has no "left", and their messages name them.
    /// `None` before `setTeam`.
    pub fn to_scenario(&self) -> Option<Scenario> {
        // Members who left are in it: the history's messages name them.
        let team = self.with_left_members(self.team()?.clone());
        let history = self.shown_history(self.messages().len());
        Some(Scenario::from_history(
            team,
            &history,
            self.store().team_task(),
        ))
    }

    /// The first `len` messages but those no prompt shows (a cancelled run's notice,
    /// [`crate::context::Store::is_withheld`]): the history a scenario of the session holds,
    /// so that its prompts are the session's.
    pub fn shown_history(&self, len: usize) -> Cow<'_, [Message]> {
        let store = self.store();
        let messages = &store.messages()[..len.min(store.len())];
        if store
            .withheld()
            .first()
            .is_none_or(|&first| first >= messages.len())
        {
            return Cow::Borrowed(messages);
        }
        let shown = messages
            .iter()
            .enumerate()
            .filter(|&(pos, _)| !store.is_withheld(pos))
            .map(|(_, m)| m.clone())
            .collect();
        Cow::Owned(shown)
    }
}

/// `facts` as a JSON array, as a session file holds them.
pub fn facts_json(facts: &[Fact]) -> String {
    serde_json::to_string(facts).expect("facts serialize")
}

/// The session file holding `facts`, a JSON array of facts (as [`facts_json`] writes it):
/// what [`Session::export`] writes, and what a host that stores a log in parts puts together
/// for [`Session::import`].
pub fn session_file(facts: &str) -> String {
    format!("{{\"format\":\"{SESSION_FORMAT}\",\"facts\":{facts}}}")
}

/// Serializes a session as its file (the same JSON as [`Session::export`]).
impl Serialize for Session {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut st = s.serialize_struct("Session", 2)?;
        st.serialize_field("format", SESSION_FORMAT)?;
        st.serialize_field("facts", &self.facts)?;
        st.end()
    }
}

/// Reads the facts of a session file; nothing is replayed yet.
fn facts(json_text: &str) -> Result<Vec<Fact>, SessionFileError> {
    let root: Read<Root<'_>> =
        serde_json::from_str(json::without_bom(json_text)).map_err(JsonSyntaxError::from)?;
    let path = Path::Root;
    let Root { format, facts } = root.object(path)?;
    match format {
        None => return Err(path.key("format").missing().into()),
        Some(Field::Str(f)) if f == SESSION_FORMAT => {}
        Some(Field::Str(f)) => {
            return Err(SessionFileError::Format {
                found: format!("{f:?}"),
            })
        }
        Some(other) => {
            return Err(SessionFileError::Format {
                found: json::describe(&other.into_value()),
            })
        }
    }
    let facts_path = path.key("facts");
    required(facts, &facts_path)?
        .items(&facts_path)?
        .into_iter()
        .enumerate()
        .map(|(i, fact)| fact_at(fact, &facts_path.index(i)))
        .collect()
}

/// One fact read on its own (`serde_json::from_str::<Fact>`), by the same rules.
pub(super) fn fact<'de, D: Deserializer<'de>>(d: D) -> Result<Fact, D::Error> {
    let fact = Read::<FactFields<'de>>::deserialize(d)?;
    fact_at(fact, &Path::Root).map_err(de::Error::custom)
}

/// Builds a fact from its fields, checking each as the reader of every other format does.
fn fact_at(fact: Read<FactFields<'_>>, path: &Path<'_>) -> Result<Fact, SessionFileError> {
    let f = fact.object(*path)?;
    let text = |key: &str, field: Option<Field<'_>>| -> Result<String, FieldError> {
        let path = path.key(key);
        required(field, &path)?.string(&path).map(Cow::into_owned)
    };
    let at = |field: Option<Field<'_>>| -> Result<Millis, FieldError> {
        let path = path.key("at");
        required(field, &path)?.unsigned(&path).map(Millis)
    };
    let usage = |value: Option<Value>| -> Result<Option<Box<Usage>>, FieldError> {
        value
            .filter(|v| !v.is_null())
            .map(|v| crate::usage::usage_at(&v, &path.key("usage")).map(Box::new))
            .transpose()
    };
    let kind = text("type", f.kind)?;
    Ok(match kind.as_str() {
        "setTeam" => {
            let team = required(f.team, &path.key("team"))?;
            Fact::SetTeam {
                team: std::sync::Arc::new(config::team_at(&team, &path.key("team"))?),
                settings: match f.settings {
                    None => None,
                    Some(v) => Some(Box::new(team::settings_at(&v, &path.key("settings"))?)),
                },
            }
        }
        "setSettings" => {
            let settings = required(f.settings, &path.key("settings"))?;
            Fact::set_settings(team::settings_at(&settings, &path.key("settings"))?)
        }
        "human" => Fact::Human {
            text: text("text", f.text)?.into(),
            sender: match f.sender {
                None => None,
                Some(field) => Some(field.string(&path.key("sender"))?.into_owned()),
            },
            at: at(f.at)?,
        },
        "replied" => Fact::Replied {
            to: text("to", f.to)?,
            text: text("text", f.text)?.into(),
            at: at(f.at)?,
            incomplete: match f.incomplete {
                None => None,
                Some(field) => Some(field.string(&path.key("incomplete"))?.into_owned()),
            },
            usage: usage(f.usage)?,
        },
        "failed" => Fact::Failed {
            to: text("to", f.to)?,
            reason: text("reason", f.reason)?,
            at: at(f.at)?,
            failure: match f.failure {
                None => None,
                Some(field) => {
                    let path = path.key("failure");
                    let name = field.string(&path)?;
                    Some(json::one_of(&name, &Failure::ALL, &path)?)
                }
            },
            usage: usage(f.usage)?,
        },
        "retry" => Fact::Retry {
            to: text("to", f.to)?,
            at: at(f.at)?,
        },
        "loadScenario" => {
            let scenario = required(f.scenario, &path.key("scenario"))?;
            Fact::LoadScenario {
                scenario: Box::new(crate::scenario::scenario_from_value(&scenario).map_err(
                    |error| SessionFileError::Scenario {
                        path: path.key("scenario").to_string(),
                        error,
                    },
                )?),
            }
        }
        "memberLeft" => Fact::MemberLeft {
            member: text("member", f.member)?,
            at: at(f.at)?,
        },
        other => {
            return Err(path
                .key("type")
                .invalid(format!(
                    "unknown fact type {other:?} (expected setTeam, setSettings, human, replied, failed, retry, loadScenario or memberLeft)"
                ))
                .into())
        }
    })
}

json_object! {
    /// The session file's top level.
    struct Root<'de> {
        "format" => format: Field<'de>,
        "facts" => facts: List<Read<FactFields<'de>>>,
    }
}

json_object! {
    /// A fact's fields, before its type says which it needs.
    struct FactFields<'de> {
        "type" => kind: Field<'de>,
        "text" => text: Field<'de>,
        "sender" => sender: Field<'de>,
        "to" => to: Field<'de>,
        "member" => member: Field<'de>,
        "reason" => reason: Field<'de>,
        "at" => at: Field<'de>,
        "team" => team: Value,
        "settings" => settings: Value,
        "scenario" => scenario: Value,
        "incomplete" => incomplete: Field<'de>,
        "failure" => failure: Field<'de>,
        "usage" => usage: Value,
    }
}
