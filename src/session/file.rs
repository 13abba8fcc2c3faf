//! The one reader of the session file (`{"format": "agent-chatter-session/1", "facts": [...]}`).
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
use std::fmt;

use serde::de::value::{MapAccessDeserializer, SeqAccessDeserializer};
use serde::de::{self, Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use super::{Fact, SessionFileError, SESSION_FORMAT};
use crate::config;
use crate::json::{self, FieldError, JsonSyntaxError, Path};
use crate::message::Millis;

/// The arms of a visitor that keep a value it does not read as a `Value` through `$wrap`, to
/// name it in an error: numbers, booleans and `null` always, and the kinds listed (`str`,
/// `seq`, `map`) that the visitor does not read itself.
macro_rules! kept_as_value {
    ($wrap:path $(, $kind:ident)*) => {
        fn visit_bool<E: de::Error>(self, b: bool) -> Result<Self::Value, E> {
            Ok($wrap(Value::Bool(b)))
        }
        fn visit_i64<E: de::Error>(self, n: i64) -> Result<Self::Value, E> {
            Ok($wrap(Value::from(n)))
        }
        fn visit_u64<E: de::Error>(self, n: u64) -> Result<Self::Value, E> {
            Ok($wrap(Value::from(n)))
        }
        fn visit_f64<E: de::Error>(self, n: f64) -> Result<Self::Value, E> {
            Ok($wrap(Value::from(n)))
        }
        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok($wrap(Value::Null))
        }
        $(kept_as_value!(@ $kind $wrap);)*
    };
    (@ str $wrap:path) => {
        fn visit_str<E: de::Error>(self, s: &str) -> Result<Self::Value, E> {
            Ok($wrap(Value::String(s.to_owned())))
        }
    };
    (@ seq $wrap:path) => {
        fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
            Value::deserialize(SeqAccessDeserializer::new(seq)).map($wrap)
        }
    };
    (@ map $wrap:path) => {
        fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
            Value::deserialize(MapAccessDeserializer::new(map)).map($wrap)
        }
    };
}

/// Reads the facts of a session file; nothing is replayed yet.
pub(super) fn facts(json_text: &str) -> Result<Vec<Fact>, SessionFileError> {
    let root: Read<Root<'_>> = serde_json::from_str(json_text).map_err(JsonSyntaxError::from)?;
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
        Some(Field::Other(v)) => {
            return Err(SessionFileError::Format {
                found: json::describe(&v),
            })
        }
    }
    let facts_path = path.key("facts");
    let items = match facts {
        None => return Err(facts_path.missing().into()),
        Some(List::Items(items)) => items,
        Some(List::Other(v)) => return Err(facts_path.wrong_type("an array", &v).into()),
    };
    items
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
        match field {
            None => Err(path.key(key).missing()),
            Some(field) => field.string(&path.key(key)).map(Cow::into_owned),
        }
    };
    let at = |field: Option<Field<'_>>| -> Result<Millis, FieldError> {
        let path = path.key("at");
        match field {
            None => Err(path.missing()),
            Some(Field::Other(v)) => json::unsigned(&v, &path).map(Millis),
            Some(Field::Str(s)) => {
                Err(path.wrong_type("a non-negative integer", &Value::String(s.into_owned())))
            }
        }
    };
    let kind = text("type", f.kind)?;
    Ok(match kind.as_str() {
        "setTeam" => {
            let team = f.team.ok_or_else(|| path.key("team").missing())?;
            Fact::SetTeam {
                team: Box::new(config::team_at(&team, &path.key("team"))?),
                settings: match f.settings {
                    None => None,
                    Some(v) => Some(Box::new(config::settings_at(&v, &path.key("settings"))?)),
                },
            }
        }
        "setSettings" => {
            let settings = f.settings.ok_or_else(|| path.key("settings").missing())?;
            Fact::set_settings(config::settings_at(&settings, &path.key("settings"))?)
        }
        "human" => Fact::Human {
            text: text("text", f.text)?,
            sender: match f.sender {
                None => None,
                Some(field) => Some(field.string(&path.key("sender"))?.into_owned()),
            },
            at: at(f.at)?,
        },
        "replied" => Fact::Replied {
            to: text("to", f.to)?,
            text: text("text", f.text)?,
            at: at(f.at)?,
        },
        "failed" => Fact::Failed {
            to: text("to", f.to)?,
            reason: text("reason", f.reason)?,
            at: at(f.at)?,
        },
        "loadScenario" => {
            let scenario = f.scenario.ok_or_else(|| path.key("scenario").missing())?;
            Fact::LoadScenario {
                scenario: Box::new(crate::scenario::scenario_from_value(&scenario).map_err(
                    |error| SessionFileError::Scenario {
                        path: path.key("scenario").to_string(),
                        error,
                    },
                )?),
            }
        }
        other => {
            return Err(path
                .key("type")
                .invalid(format!(
                    "unknown fact type {other:?} (expected setTeam, setSettings, human, replied, failed or loadScenario)"
                ))
                .into())
        }
    })
}

/// An object read into `T`, or whatever else stood there (kept to name it in the error).
enum Read<T> {
    Object(T),
    Other(Value),
}

impl<T> Read<T> {
    fn object(self, path: Path<'_>) -> Result<T, FieldError> {
        match self {
            Read::Object(t) => Ok(t),
            Read::Other(v) => Err(path.wrong_type("an object", &v)),
        }
    }
}

/// The keys of an object, read one by one: `T` takes the value of each.
trait Fields<'de>: Default {
    fn read<A: MapAccess<'de>>(&mut self, key: &str, map: &mut A) -> Result<(), A::Error>;
}

impl<'de, T: Fields<'de>> Deserialize<'de> for Read<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T>(std::marker::PhantomData<T>);
        impl<'de, T: Fields<'de>> Visitor<'de> for V<T> {
            type Value = Read<T>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON value")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Read<T>, A::Error> {
                let mut fields = T::default();
                // Keys are strings in JSON; read as values, they are borrowed like them.
                while let Some(key) = map.next_key::<Field<'de>>()? {
                    let key = match &key {
                        Field::Str(key) => key.as_ref(),
                        Field::Other(_) => "",
                    };
                    fields.read(key, &mut map)?;
                }
                Ok(Read::Object(fields))
            }
            kept_as_value!(Read::Other, str, seq);
        }
        d.deserialize_any(V(std::marker::PhantomData))
    }
}

/// A value where a string is expected: the string (borrowed from the text where it can be),
/// or whatever else stood there, kept to name it in the error.
enum Field<'de> {
    Str(Cow<'de, str>),
    Other(Value),
}

impl<'de> Field<'de> {
    fn string(self, path: &Path<'_>) -> Result<Cow<'de, str>, FieldError> {
        match self {
            Field::Str(s) => Ok(s),
            Field::Other(v) => Err(path.wrong_type("a string", &v)),
        }
    }
}

impl<'de> Deserialize<'de> for Field<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Field<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON value")
            }
            fn visit_borrowed_str<E: de::Error>(self, s: &'de str) -> Result<Field<'de>, E> {
                Ok(Field::Str(Cow::Borrowed(s)))
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Field<'de>, E> {
                Ok(Field::Str(Cow::Owned(s.to_owned())))
            }
            fn visit_string<E: de::Error>(self, s: String) -> Result<Field<'de>, E> {
                Ok(Field::Str(Cow::Owned(s)))
            }
            kept_as_value!(Field::Other, seq, map);
        }
        d.deserialize_any(V)
    }
}

/// `null` counts as absent: a `None` read for a key replaces an earlier value, as the last
/// value of a repeated key wins.
fn next<'de, T: Deserialize<'de>, A: MapAccess<'de>>(map: &mut A) -> Result<Option<T>, A::Error> {
    map.next_value::<Option<T>>()
}

/// The session file's top level.
#[derive(Default)]
struct Root<'de> {
    format: Option<Field<'de>>,
    facts: Option<List<'de>>,
}

impl<'de> Fields<'de> for Root<'de> {
    fn read<A: MapAccess<'de>>(&mut self, key: &str, map: &mut A) -> Result<(), A::Error> {
        match key {
            "format" => self.format = next(map)?,
            "facts" => self.facts = next(map)?,
            _ => {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(())
    }
}

/// The `facts` array, or whatever else stood there.
enum List<'de> {
    Items(Vec<Read<FactFields<'de>>>),
    Other(Value),
}

impl<'de> Deserialize<'de> for List<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = List<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON value")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<List<'de>, A::Error> {
                let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0));
                while let Some(item) = seq.next_element()? {
                    items.push(item);
                }
                Ok(List::Items(items))
            }
            kept_as_value!(List::Other, str, map);
        }
        d.deserialize_any(V)
    }
}

/// A fact's fields, before its type says which it needs.
#[derive(Default)]
struct FactFields<'de> {
    kind: Option<Field<'de>>,
    text: Option<Field<'de>>,
    sender: Option<Field<'de>>,
    to: Option<Field<'de>>,
    reason: Option<Field<'de>>,
    at: Option<Field<'de>>,
    team: Option<Value>,
    settings: Option<Value>,
    scenario: Option<Value>,
}

impl<'de> Fields<'de> for FactFields<'de> {
    fn read<A: MapAccess<'de>>(&mut self, key: &str, map: &mut A) -> Result<(), A::Error> {
        match key {
            "type" => self.kind = next(map)?,
            "text" => self.text = next(map)?,
            "sender" => self.sender = next(map)?,
            "to" => self.to = next(map)?,
            "reason" => self.reason = next(map)?,
            "at" => self.at = next(map)?,
            "team" => self.team = next(map)?,
            "settings" => self.settings = next(map)?,
            "scenario" => self.scenario = next(map)?,
            _ => {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(())
    }
}
