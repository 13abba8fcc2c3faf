//! The one reader of snapshots: ours and the peer's message shapes, from JSON text, from a
//! `serde_json::Value`, or through serde (`serde_json::from_str::<Snapshot>`), all by the same
//! rules and with the same errors.
//!
//! The document is read in one pass into the field structs below ([`crate::json::fields`]):
//! a value of the wrong type is kept until a rule reads it, so a key the rules ignore may hold
//! anything (the peer's `type` when ours says `kind`, its `timestamp` beside our `at`, the
//! other shape's routing keys) and an error names the field's path, as a reader over a
//! `Value` would. Each message is checked and built as it is read, and the ids are checked for
//! duplicates once, at the end, in a table sized for them; either way the first problem in the
//! document is the one reported. A 10⁴-message snapshot costs one parse, not a `Value` tree
//! built and walked.

use std::borrow::Cow;
use std::fmt;

use serde::de::{Deserializer, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::Value;

use super::{
    check_duplicates, check_id, check_size, first_problem, iso_8601_millis, Snapshot,
    SnapshotError, SNAPSHOT_VERSION,
};
use crate::json::fields::{
    json_object, kept_as_value, required, skip_rest, Field, InPlace, List, Read, Strings,
};
use crate::json::{self, FieldError, Path};
use crate::message::{
    Addressee, Intent, Message, MessageId, Millis, Routing, Speaker, SpeakerKind,
};
use crate::peer::message::{intent_named, raw_next_marker_addressees};

/// Reads a snapshot from anything serde can deserialize (JSON text, a `Value`); `Err` only
/// for what the deserializer itself refuses (JSON syntax), checks come after.
pub(super) fn fields<'de, D: Deserializer<'de>>(
    d: D,
) -> Result<Read<SnapshotFields<'de>>, D::Error> {
    Read::deserialize(d)
}

/// Checks the fields read and builds the snapshot; the first problem, in document order, is
/// the error.
pub(super) fn snapshot(root: Read<SnapshotFields<'_>>) -> Result<Snapshot, SnapshotError> {
    let path = Path::Root;
    let s = root.object(path)?;
    match required(s.version, &path.key("version"))? {
        Field::U64(v) if v == u64::from(SNAPSHOT_VERSION) => {}
        Field::Str(found) => {
            return Err(SnapshotError::Version {
                found: format!("{found:?}"),
            })
        }
        other => {
            return Err(SnapshotError::Version {
                found: json::describe(&other.into_value()),
            })
        }
    }
    let messages = required(s.messages, &path.key("messages"))?.built()?;
    let team_task = s
        .team_task
        .map(|t| t.string(&path.key("teamTask")))
        .transpose()?
        .map(Cow::into_owned);
    let timestamp = s
        .timestamp
        .map(|t| t.unsigned(&path.key("timestamp")))
        .transpose()?
        .unwrap_or(0);
    Ok(Snapshot {
        version: SNAPSHOT_VERSION,
        messages,
        team_task,
        timestamp: Millis(timestamp),
    })
}

/// A message that failed a check: the error, and its id when the id was already checked (a
/// duplicate of it is then the earlier problem).
struct Failed<'de> {
    error: SnapshotError,
    checked_id: Option<Cow<'de, str>>,
}

fn message<'de>(
    item: Read<MessageFields<'de>>,
    messages: &Path<'_>,
    i: usize,
) -> Result<Message, Failed<'de>> {
    let path = &messages.index(i);
    let head = || -> Result<_, SnapshotError> {
        let m = item.object(*path)?;
        let id_path = path.key("id");
        let id = required(m.id, &id_path)?.string(&id_path)?;
        let speaker_path = path.key("speaker");
        let speaker = speaker(required(m.speaker, &speaker_path)?, &speaker_path)?;
        let content_path = path.key("content");
        let content = required(m.content, &content_path)?.string(&content_path)?;
        check_id(&id_path, &id)?;
        Ok((id, speaker, content, m.routing, m.at, m.timestamp))
    };
    let (id, speaker, content, routing_fields, at, timestamp) = head().map_err(|error| Failed {
        error,
        checked_id: None,
    })?;
    let tail = || -> Result<_, SnapshotError> {
        check_size(messages, i, &content)?;
        let routing = match routing_fields {
            None => Routing::default(),
            Some(r) => routing(r.object(path.key("routing"))?, &path.key("routing"))?,
        };
        let at = match (at, timestamp) {
            (Some(at), _) => Millis(at.unsigned(&path.key("at"))?),
            (None, Some(timestamp)) => peer_timestamp(timestamp, &path.key("timestamp"))?,
            (None, None) => Millis(0),
        };
        Ok((routing, at))
    };
    match tail() {
        Ok((routing, at)) => Ok(Message {
            id: MessageId(id.into_owned()),
            speaker: speaker.into(),
            content: content.into_owned().into(),
            routing,
            at,
        }),
        Err(error) => Err(Failed {
            error,
            checked_id: Some(id),
        }),
    }
}

fn speaker(value: Read<SpeakerFields<'_>>, path: &Path<'_>) -> Result<Speaker, FieldError> {
    let s = value.object(*path)?;
    let id_path = path.key("id");
    let id = required(s.id, &id_path)?.string(&id_path)?;
    check_id(&id_path, &id)?;
    let name_path = path.key("name");
    let name = required(s.name, &name_path)?.string(&name_path)?;
    let display_name = match s.display_name {
        None => None,
        Some(d) => Some(d.string(&path.key("displayName"))?),
    };
    // Ours says `kind`, the peer `type`; with neither, ours is the one missing.
    let (key, kind) = match (s.kind, s.peer_type) {
        (None, Some(t)) => ("type", Some(t)),
        (kind, _) => ("kind", kind),
    };
    let kind_path = path.key(key);
    let kinds = [
        ("human", SpeakerKind::Human),
        ("ai", SpeakerKind::Ai),
        ("system", SpeakerKind::System),
    ];
    let kind = json::one_of(
        &required(kind, &kind_path)?.string(&kind_path)?,
        &kinds,
        &kind_path,
    )?;
    let name = name.into_owned();
    Ok(Speaker {
        id: id.into_owned(),
        display_name: display_name.map_or_else(|| name.clone(), Cow::into_owned),
        name,
        kind,
    })
}

/// Our routing, or the peer's when it has `rawNextMarkers` or `resolvedAddressees`.
fn routing(r: RoutingFields<'_>, path: &Path<'_>) -> Result<Routing, FieldError> {
    if r.raw_next_markers.is_some() || r.resolved_addressees.is_some() {
        return peer_routing(r, path);
    }
    let mut routing = Routing::default();
    if let Some(raw_next) = r.raw_next {
        let list_path = path.key("rawNext");
        for (i, item) in raw_next.items(&list_path)?.into_iter().enumerate() {
            let at = list_path.index(i);
            let a = item.object(at)?;
            let intent = match a.intent {
                None => Intent::default(),
                Some(s) => our_intent(s, &at.key("intent"))?,
            };
            let name_path = at.key("name");
            let name = required(a.name, &name_path)?.string(&name_path)?;
            routing.raw_next.push(Addressee {
                name: name.into_owned(),
                intent,
            });
        }
    }
    routing.resolved = strings(r.resolved, &path.key("resolved"))?;
    routing.resolved_names = match r.resolved_names {
        Some(names) => strings(Some(names), &path.key("resolvedNames"))?,
        None => routing.resolved.clone(),
    };
    if routing.resolved_names.len() != routing.resolved.len() {
        return Err(path.key("resolvedNames").invalid(format!(
            "{} names for {} resolved ids; they must pair up",
            routing.resolved_names.len(),
            routing.resolved.len()
        )));
    }
    routing.is_done = match r.is_done {
        None => false,
        Some(b) => b.boolean(&path.key("isDone"))?,
    };
    routing.parent = match r.parent {
        None => None,
        Some(p) => Some(MessageId(p.string(&path.key("parent"))?.into_owned())),
    };
    routing.intent = match r.intent {
        None => None,
        Some(s) => Some(our_intent(s, &path.key("intent"))?),
    };
    Ok(routing)
}

/// An intent in our routing: `P1`…`P3` or a long form; anything else is an error.
fn our_intent(field: Field<'_>, path: &Path<'_>) -> Result<Intent, FieldError> {
    let s = field.string(path)?;
    intent_named(&s).ok_or_else(|| json::not_one_of(&s, ["P1", "P2", "P3"].into_iter(), path))
}

/// The peer's routing: `rawNextMarkers` (or, when present, `parsedAddressees` with intents),
/// `resolvedAddressees` (unresolved ones, `memberId: null`, left out as ours are),
/// `parentMessageId`, `intent` (`P1_INTERRUPT`, `P2_REPLY`, `P3_EXTEND`; an unknown one is
/// no intent, as the peer treats it).
fn peer_routing(r: RoutingFields<'_>, path: &Path<'_>) -> Result<Routing, FieldError> {
    let mut routing = Routing::default();
    if let Some(parsed) = r.parsed_addressees {
        let list_path = path.key("parsedAddressees");
        for (i, item) in parsed.items(&list_path)?.into_iter().enumerate() {
            let at = list_path.index(i);
            let a = item.object(at)?;
            let intent = match a.intent {
                None => Intent::default(),
                Some(s) => intent_named(&s.string(&at.key("intent"))?).unwrap_or_default(),
            };
            let name_path = at.key("name");
            let name = required(a.name, &name_path)?.string(&name_path)?;
            routing.raw_next.push(Addressee {
                name: name.into_owned(),
                intent,
            });
        }
    } else {
        for raw in strings(r.raw_next_markers, &path.key("rawNextMarkers"))? {
            routing.raw_next.extend(raw_next_marker_addressees(&raw));
        }
    }
    if let Some(resolved) = r.resolved_addressees {
        let list_path = path.key("resolvedAddressees");
        for (i, item) in resolved.items(&list_path)?.into_iter().enumerate() {
            let at = list_path.index(i);
            let a = item.object(at)?;
            let Some(id) = a.member_id else { continue };
            let id = id.string(&at.key("memberId"))?.into_owned();
            let name = match a.member_name {
                None => id.clone(),
                Some(n) => n.string(&at.key("memberName"))?.into_owned(),
            };
            routing.resolved.push(id);
            routing.resolved_names.push(name);
        }
    }
    routing.is_done = match r.is_done {
        None => false,
        Some(b) => b.boolean(&path.key("isDone"))?,
    };
    routing.parent = match r.parent_message_id {
        None => None,
        Some(p) => Some(MessageId(
            p.string(&path.key("parentMessageId"))?.into_owned(),
        )),
    };
    routing.intent = match r.intent {
        None => None,
        Some(s) => intent_named(&s.string(&path.key("intent"))?),
    };
    Ok(routing)
}

/// A list of strings; absent is empty.
fn strings(list: Option<Strings>, path: &Path<'_>) -> Result<Vec<String>, FieldError> {
    list.map_or(Ok(Vec::new()), |list| list.items(path))
}

/// The peer's message `timestamp`: milliseconds, or a JavaScript `Date` as JSON writes it
/// (`2025-01-15T10:30:00.000Z`, ISO 8601 with `Z` or a `±HH:MM` offset).
fn peer_timestamp(field: Field<'_>, path: &Path<'_>) -> Result<Millis, FieldError> {
    match field {
        Field::Str(s) => iso_8601_millis(&s).map(Millis).ok_or_else(|| {
            path.invalid(format!(
                "{s:?} is not an ISO 8601 date such as \"2025-01-15T10:30:00.000Z\""
            ))
        }),
        Field::U64(ms) => Ok(Millis(ms)),
        Field::Other(v) if v.is_number() => json::unsigned(&v, path).map(Millis),
        other => Err(path.wrong_type("milliseconds or an ISO 8601 date", &other.into_value())),
    }
}

json_object! {
    /// A snapshot's top level.
    pub(super) struct SnapshotFields<'de> {
        "version" => version: Field<'de>,
        "messages" => messages: Messages,
        "teamTask" => team_task: Field<'de>,
        "timestamp" => timestamp: Field<'de>,
    }
}

/// The `messages` array, each message checked and built as soon as it is read (so the
/// fields read for one are dropped before the next, instead of a large array of them), or
/// whatever else stood there. After the first problem the rest is only parsed: a syntax error
/// further on still wins, as the text must be JSON before anything in it is read.
pub(super) enum Messages {
    Built(Result<Vec<Message>, SnapshotError>),
    Other(Box<Value>),
}

impl Messages {
    fn built(self) -> Result<Vec<Message>, SnapshotError> {
        match self {
            Messages::Built(messages) => messages,
            Messages::Other(v) => Err(Path::Root.key("messages").wrong_type("an array", &v).into()),
        }
    }
}

impl<'de> Deserialize<'de> for Messages {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Messages;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON value")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Messages, A::Error> {
                let path = Path::Root.key("messages");
                // Only a `Value` gives a hint, and it is the length of an array in memory.
                let mut messages = Vec::with_capacity(seq.size_hint().unwrap_or(0));
                // One slot for every message's fields, filled in place.
                let mut slot = None;
                while seq.next_element_seed(InPlace(&mut slot))?.is_some() {
                    let item = slot
                        .take()
                        .unwrap_or_else(|| Read::Other(Box::new(Value::Null)));
                    match message(item, &path, messages.len()) {
                        Ok(m) => messages.push(m),
                        Err(Failed { error, checked_id }) => {
                            skip_rest(&mut seq)?;
                            let ids = messages.iter().map(|m| m.id.as_str());
                            let ids = ids.chain(checked_id.as_deref());
                            return Ok(Messages::Built(Err(first_problem(&path, ids, error))));
                        }
                    }
                }
                let ids = messages.iter().map(|m| m.id.as_str());
                Ok(Messages::Built(
                    check_duplicates(&path, ids).map(|()| messages),
                ))
            }
            kept_as_value!(bool, i64, u64, f64, unit, str, map);
        }
        impl V {
            fn keep<E>(self, v: Value) -> Result<Messages, E> {
                Ok(Messages::Other(Box::new(v)))
            }
        }
        d.deserialize_any(V)
    }
}

json_object! {
    /// A message: ours (`at`) or the peer's (`timestamp`).
    struct MessageFields<'de> {
        "id" => id: Field<'de>,
        "speaker" => speaker: Read<SpeakerFields<'de>> [in_place],
        "content" => content: Field<'de>,
        "routing" => routing: Read<RoutingFields<'de>> [in_place],
        "at" => at: Field<'de>,
        "timestamp" => timestamp: Field<'de>,
    }
}

json_object! {
    /// A speaker: ours (`kind`) or the peer's (`type`).
    struct SpeakerFields<'de> {
        "id" => id: Field<'de>,
        "name" => name: Field<'de>,
        "displayName" => display_name: Field<'de>,
        "kind" => kind: Field<'de>,
        "type" => peer_type: Field<'de>,
    }
}

json_object! {
    /// Our routing keys and the peer's; which set is read follows [`routing`]'s rule.
    struct RoutingFields<'de> {
        "rawNext" => raw_next: List<Read<AddresseeFields<'de>>>,
        "resolved" => resolved: Strings,
        "resolvedNames" => resolved_names: Strings,
        "isDone" => is_done: Field<'de>,
        "parent" => parent: Field<'de>,
        "intent" => intent: Field<'de>,
        "rawNextMarkers" => raw_next_markers: Strings,
        "parsedAddressees" => parsed_addressees: List<Read<AddresseeFields<'de>>>,
        "resolvedAddressees" => resolved_addressees: List<Read<ResolvedFields<'de>>>,
        "parentMessageId" => parent_message_id: Field<'de>,
    }
}

json_object! {
    /// An addressee of our `rawNext` or the peer's `parsedAddressees`.
    struct AddresseeFields<'de> {
        "name" => name: Field<'de>,
        "intent" => intent: Field<'de>,
    }
}

json_object! {
    /// One of the peer's `resolvedAddressees`.
    struct ResolvedFields<'de> {
        "memberId" => member_id: Field<'de>,
        "memberName" => member_name: Field<'de>,
    }
}
