//! Snapshot v1 export/import, validated fully before anything changes (DESIGN §11, seed 001
//! §2.4, §4.9, §4.10).
//!
//! A snapshot is `{"version": 1, "messages": [...], "teamTask": "..." | null, "timestamp":
//! <ms>}`, the messages in the camelCase JSON of [`Message`]. [`import`] reads every field by
//! hand so an error names its JSON path (`messages[3].speaker.id: missing`), checks every
//! message, and only then replaces the store: a bad snapshot leaves the current state as it
//! was (the seed's import replaces first and can leave half a state behind).
//!
//! Decisions:
//! - A team task above [`MAX_TEAM_TASK_BYTES`] is cut at a character boundary, as when a
//!   marker sets it (§6), and the cut is reported in [`Imported::team_task_truncated`]; it
//!   is not a reason to refuse the whole conversation.
//! - A message above [`MAX_MESSAGE_BYTES`] is refused (the store never holds one).
//! - Message ids must be non-empty and unique; the id counter then continues after the
//!   highest `msg-N` (§4).
//! - The peer's message shape (agent-chatter-core 1.1.8: speaker `{id, name, displayName,
//!   type}`, `timestamp` as an ISO date or milliseconds, routing `{rawNextMarkers,
//!   parsedAddressees?, resolvedAddressees: [{identifier, memberId, memberName}],
//!   parentMessageId?, intent?}`) is read too, so its snapshots import; addressees that did
//!   not resolve (`memberId: null`) are left out of `resolved`, as ours are.

use crate::hash::HashMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use thiserror::Error;

mod fast;

use crate::context::{Store, TeamTaskTruncated, MAX_TEAM_TASK_BYTES};
use crate::json::{self, Obj, Path};
use crate::json::{FieldError, JsonSyntaxError};
use crate::message::Intent;
use crate::message::{
    Addressee, Message, MessageId, Millis, Routing, Speaker, SpeakerKind, MAX_MESSAGE_BYTES,
};
use crate::peer::message::{intent_named, raw_next_marker_addressees};

/// The snapshot format version this code writes and reads.
pub const SNAPSHOT_VERSION: u32 = 1;

/// The state of a conversation's store (seed 001 §2.4): messages, team task, when it was taken.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Snapshot {
    /// Always [`SNAPSHOT_VERSION`].
    pub version: u32,
    pub messages: Vec<Message>,
    /// `null` when there is no team task.
    pub team_task: Option<String>,
    /// When the snapshot was taken, supplied by the host (the core reads no clock).
    pub timestamp: Millis,
}

/// What [`import`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Imported {
    pub messages: usize,
    /// Set when the team task was longer than 5 KiB and was cut.
    pub team_task_truncated: Option<TeamTaskTruncated>,
}

/// A snapshot that cannot be imported; the store is unchanged.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum SnapshotError {
    #[error(transparent)]
    Syntax(#[from] JsonSyntaxError),
    #[error(transparent)]
    Field(#[from] FieldError),
    #[error("version: expected 1, found {found}")]
    Version { found: String },
    #[error("{path}: duplicate {id:?}, first used by {first}")]
    DuplicateId {
        path: String,
        id: String,
        first: String,
    },
    #[error("{path}: {bytes} bytes, the limit is {limit}")]
    TooLarge {
        path: String,
        bytes: usize,
        limit: usize,
    },
}

/// The store's state as a snapshot taken at `now` (seed 001 §4.9).
pub fn export(store: &Store, now: Millis) -> Snapshot {
    Snapshot {
        version: SNAPSHOT_VERSION,
        messages: store.messages().to_vec(),
        team_task: store.team_task().map(str::to_string),
        timestamp: now,
    }
}

/// Replaces the store with the snapshot in `value`, after validating all of it (seed 001
/// §4.10, DESIGN §11). On error the store is untouched.
pub fn import(store: &mut Store, value: &Value) -> Result<Imported, SnapshotError> {
    let snapshot = Snapshot::from_value(value)?;
    Ok(restore(store, snapshot))
}

/// [`import`] from JSON text; a syntax error names line and column.
pub fn import_str(store: &mut Store, json: &str) -> Result<Imported, SnapshotError> {
    Ok(restore(store, Snapshot::from_json(json)?))
}

/// [`import`] for a snapshot already in memory (built in code, or deserialized with serde):
/// checks the version, ids, speakers and sizes the same way.
pub fn import_snapshot(store: &mut Store, snapshot: Snapshot) -> Result<Imported, SnapshotError> {
    if snapshot.version != SNAPSHOT_VERSION {
        return Err(SnapshotError::Version {
            found: snapshot.version.to_string(),
        });
    }
    let root = Path::Root;
    let messages_path = root.key("messages");
    let mut seen = HashMap::with_capacity_and_hasher(snapshot.messages.len(), Default::default());
    for (i, m) in snapshot.messages.iter().enumerate() {
        let path = messages_path.index(i);
        let speaker_path = path.key("speaker");
        if m.speaker.id.trim().is_empty() {
            return Err(speaker_path.key("id").invalid("empty").into());
        }
        check_message(&messages_path, i, m.id.as_str(), &m.content, &mut seen)?;
    }
    Ok(restore(store, snapshot))
}

fn restore(store: &mut Store, snapshot: Snapshot) -> Imported {
    let count = snapshot.messages.len();
    let (team_task, team_task_truncated) = cap_team_task(snapshot.team_task);
    store.replace(snapshot.messages, team_task);
    Imported {
        messages: count,
        team_task_truncated,
    }
}

fn cap_team_task(task: Option<String>) -> (Option<String>, Option<TeamTaskTruncated>) {
    match task {
        None => (None, None),
        Some(t) if t.is_empty() => (None, None),
        Some(mut t) => {
            let cut = crate::text::floor_char_boundary(&t, MAX_TEAM_TASK_BYTES);
            if cut < t.len() {
                let from = t.len();
                t.truncate(cut);
                (Some(t), Some(TeamTaskTruncated { from, to: cut }))
            } else {
                (Some(t), None)
            }
        }
    }
}

impl Snapshot {
    /// Reads and validates a snapshot (ours or the peer's message shape) without touching any
    /// store.
    pub fn from_value(value: &Value) -> Result<Snapshot, SnapshotError> {
        let root = Path::Root;
        let obj = json::object(value, root)?;
        match obj.required("version")? {
            v if v.as_u64() == Some(u64::from(SNAPSHOT_VERSION)) => {}
            Value::String(s) => {
                return Err(SnapshotError::Version {
                    found: format!("{s:?}"),
                })
            }
            other => {
                return Err(SnapshotError::Version {
                    found: json::describe(other),
                })
            }
        }
        let messages_path = root.key("messages");
        let items = json::array(obj.required("messages")?, &messages_path)?;
        let mut seen = HashMap::with_capacity_and_hasher(items.len(), Default::default());
        let mut messages = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            messages.push(message(item, &messages_path, i, &mut seen)?);
        }
        let team_task = obj.opt_str("teamTask")?.map(str::to_string);
        let timestamp = Millis(obj.opt_u64("timestamp")?.unwrap_or(0));
        Ok(Snapshot {
            version: SNAPSHOT_VERSION,
            messages,
            team_task,
            timestamp,
        })
    }

    /// [`Snapshot::from_value`] from JSON text. A clean snapshot is read in one typed pass
    /// (module `snapshot::fast`, same rules); anything else goes field by field, so errors
    /// name the field.
    pub fn from_json(json: &str) -> Result<Snapshot, SnapshotError> {
        match fast::read(json) {
            Some(snapshot) => Ok(snapshot),
            None => Snapshot::from_value(&json::parse(json)?),
        }
    }
}

/// The checks shared by both import paths: a non-empty unique id, content within the limit.
/// `seen` maps each id to the index of its message; paths are rendered only for an error.
fn check_message<'a>(
    messages: &Path<'_>,
    i: usize,
    id: &'a str,
    content: &str,
    seen: &mut HashMap<&'a str, usize>,
) -> Result<(), SnapshotError> {
    let path = messages.index(i);
    let id_path = path.key("id");
    if id.trim().is_empty() {
        return Err(id_path.invalid("empty").into());
    }
    if let Some(&first) = seen.get(id) {
        return Err(SnapshotError::DuplicateId {
            path: id_path.to_string(),
            id: id.to_string(),
            first: messages.index(first).to_string(),
        });
    }
    if content.len() > MAX_MESSAGE_BYTES {
        return Err(SnapshotError::TooLarge {
            path: path.key("content").to_string(),
            bytes: content.len(),
            limit: MAX_MESSAGE_BYTES,
        });
    }
    seen.insert(id, i);
    Ok(())
}

fn message<'v>(
    value: &'v Value,
    messages: &Path<'_>,
    i: usize,
    seen: &mut HashMap<&'v str, usize>,
) -> Result<Message, SnapshotError> {
    let path = &messages.index(i);
    let obj = json::object(value, *path)?;
    let id = obj.str("id")?;
    let speaker = speaker(obj.required("speaker")?, &path.key("speaker"))?;
    let content = obj.str("content")?;
    check_message(messages, i, id, content, seen)?;
    let id = MessageId(id.to_string());
    let routing = match obj.get("routing") {
        None => Routing::default(),
        Some(v) => routing(json::object(v, path.key("routing"))?)?,
    };
    let at = match (obj.get("at"), obj.get("timestamp")) {
        (Some(v), _) => Millis(json::unsigned(v, &path.key("at"))?),
        (None, Some(v)) => peer_timestamp(v, &path.key("timestamp"))?,
        (None, None) => Millis(0),
    };
    Ok(Message {
        id,
        speaker,
        content: content.to_string(),
        routing,
        at,
    })
}

fn speaker(value: &Value, path: &Path<'_>) -> Result<Speaker, FieldError> {
    let obj = json::object(value, *path)?;
    let id = obj.non_empty_str("id")?;
    let name = obj.str("name")?;
    let display_name = obj.opt_str("displayName")?.unwrap_or(name);
    // Ours says `kind`, the peer `type`.
    let key = if obj.get("kind").is_none() && obj.get("type").is_some() {
        "type"
    } else {
        "kind"
    };
    let kind = match obj.str(key)? {
        "human" => SpeakerKind::Human,
        "ai" => SpeakerKind::Ai,
        "system" => SpeakerKind::System,
        other => {
            let reason = format!("expected \"human\", \"ai\" or \"system\", found {other:?}");
            return Err(path.key(key).invalid(reason));
        }
    };
    Ok(Speaker {
        id: id.to_string(),
        name: name.to_string(),
        display_name: display_name.to_string(),
        kind,
    })
}

fn routing(obj: Obj<'_, '_>) -> Result<Routing, FieldError> {
    let peer = obj.get("rawNextMarkers").is_some() || obj.get("resolvedAddressees").is_some();
    if peer {
        return peer_routing(obj);
    }
    let mut routing = Routing::default();
    if let Some(v) = obj.get("rawNext") {
        let path = obj.path.key("rawNext");
        for (i, item) in json::array(v, &path)?.iter().enumerate() {
            let at = path.index(i);
            let a = json::object(item, at)?;
            let intent = match a.opt_str("intent")? {
                None => Intent::default(),
                Some(s) => intent_named(s).ok_or_else(|| {
                    a.path
                        .key("intent")
                        .invalid(format!("expected \"P1\", \"P2\" or \"P3\", found {s:?}"))
                })?,
            };
            routing.raw_next.push(Addressee {
                name: a.str("name")?.to_string(),
                intent,
            });
        }
    }
    routing.resolved = strings(&obj, "resolved")?;
    routing.resolved_names = match obj.get("resolvedNames") {
        Some(_) => strings(&obj, "resolvedNames")?,
        None => routing.resolved.clone(),
    };
    if routing.resolved_names.len() != routing.resolved.len() {
        return Err(obj.path.key("resolvedNames").invalid(format!(
            "{} names for {} resolved ids; they must pair up",
            routing.resolved_names.len(),
            routing.resolved.len()
        )));
    }
    routing.is_done = obj.opt_bool("isDone")?.unwrap_or(false);
    routing.parent = obj.opt_str("parent")?.map(|p| MessageId(p.to_string()));
    routing.intent = match obj.opt_str("intent")? {
        None => None,
        Some(s) => Some(intent_named(s).ok_or_else(|| {
            obj.path
                .key("intent")
                .invalid(format!("expected \"P1\", \"P2\" or \"P3\", found {s:?}"))
        })?),
    };
    Ok(routing)
}

/// The peer's routing: `rawNextMarkers` (or, when present, `parsedAddressees` with intents),
/// `resolvedAddressees`, `parentMessageId`, `intent` (`P1_INTERRUPT`, `P2_REPLY`, `P3_EXTEND`).
fn peer_routing(obj: Obj<'_, '_>) -> Result<Routing, FieldError> {
    let mut routing = Routing::default();
    if let Some(v) = obj.get("parsedAddressees") {
        let path = obj.path.key("parsedAddressees");
        for (i, item) in json::array(v, &path)?.iter().enumerate() {
            let a = json::object(item, path.index(i))?;
            let intent = a
                .opt_str("intent")?
                .and_then(intent_named)
                .unwrap_or_default();
            routing.raw_next.push(Addressee {
                name: a.str("name")?.to_string(),
                intent,
            });
        }
    } else {
        for raw in strings(&obj, "rawNextMarkers")? {
            routing.raw_next.extend(raw_next_marker_addressees(&raw));
        }
    }
    if let Some(v) = obj.get("resolvedAddressees") {
        let path = obj.path.key("resolvedAddressees");
        for (i, item) in json::array(v, &path)?.iter().enumerate() {
            let a = json::object(item, path.index(i))?;
            if let Some(id) = a.opt_str("memberId")? {
                let name = a.opt_str("memberName")?.unwrap_or(id);
                routing.resolved.push(id.to_string());
                routing.resolved_names.push(name.to_string());
            }
        }
    }
    routing.is_done = obj.opt_bool("isDone")?.unwrap_or(false);
    routing.parent = obj
        .opt_str("parentMessageId")?
        .map(|p| MessageId(p.to_string()));
    routing.intent = obj.opt_str("intent")?.and_then(intent_named);
    Ok(routing)
}

fn strings(obj: &Obj<'_, '_>, key: &str) -> Result<Vec<String>, FieldError> {
    let Some(v) = obj.get(key) else {
        return Ok(Vec::new());
    };
    let path = obj.path.key(key);
    json::array(v, &path)?
        .iter()
        .enumerate()
        .map(|(i, s)| json::string(s, &path.index(i)).map(str::to_string))
        .collect()
}

/// The peer's message `timestamp`: milliseconds, or a JavaScript `Date` as JSON writes it
/// (`2025-01-15T10:30:00.000Z`, ISO 8601 with `Z` or a `±HH:MM` offset).
fn peer_timestamp(value: &Value, path: &Path<'_>) -> Result<Millis, FieldError> {
    match value {
        Value::Number(_) => json::unsigned(value, path).map(Millis),
        Value::String(s) => iso_8601_millis(s).map(Millis).ok_or_else(|| {
            path.invalid(format!(
                "{s:?} is not an ISO 8601 date such as \"2025-01-15T10:30:00.000Z\""
            ))
        }),
        other => Err(path.wrong_type("milliseconds or an ISO 8601 date", other)),
    }
}

/// Milliseconds since the epoch of `YYYY-MM-DDTHH:MM:SS[.fff](Z|±HH:MM)`; `None` if it is not
/// that or lies before 1970.
fn iso_8601_millis(s: &str) -> Option<u64> {
    let b = s.as_bytes();
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        let part = s.get(r)?;
        part.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| part.parse().ok())?
    };
    if b.len() < 20
        || b[4] != b'-'
        || b[7] != b'-'
        || !matches!(b[10], b'T' | b't' | b' ')
        || b[13] != b':'
        || b[16] != b':'
    {
        return None;
    }
    let (year, month, day) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (hour, minute, second) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&month)
        || !(1..=31).contains(&day)
        || hour > 23
        || minute > 59
        || second > 60
    {
        return None;
    }
    let mut rest = &s[19..];
    let mut millis = 0i64;
    if let Some(frac) = rest.strip_prefix('.') {
        let digits = frac.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return None;
        }
        let first3 = &frac[..digits.min(3)];
        millis = first3.parse::<i64>().ok()? * 10i64.pow(3 - first3.len() as u32);
        rest = &frac[digits..];
    }
    let offset_minutes = match rest {
        "Z" | "z" => 0,
        _ if rest.len() == 6 && rest.as_bytes()[3] == b':' => {
            let sign = match rest.as_bytes()[0] {
                b'+' => 1,
                b'-' => -1,
                _ => return None,
            };
            let h: i64 = rest.get(1..3)?.parse().ok()?;
            let m: i64 = rest.get(4..6)?.parse().ok()?;
            sign * (h * 60 + m)
        }
        _ => return None,
    };
    // Days from civil (H. Hinnant's algorithm), proleptic Gregorian.
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let secs = days * 86_400 + hour * 3600 + minute * 60 + second - offset_minutes * 60;
    u64::try_from(secs.checked_mul(1000)?.checked_add(millis)?).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso_dates_as_javascript_writes_them() {
        let cases = [
            ("1970-01-01T00:00:00.000Z", Some(0)),
            ("2025-01-15T10:30:00.000Z", Some(1_736_937_000_000)),
            ("2025-01-15T10:30:00Z", Some(1_736_937_000_000)),
            ("2025-01-15T12:30:00.5+02:00", Some(1_736_937_000_500)),
            ("2024-02-29T00:00:00.000Z", Some(1_709_164_800_000)),
            ("1969-12-31T23:59:59.000Z", None),
            ("2025-13-01T00:00:00.000Z", None),
            ("2025-01-15", None),
            ("2025-01-15T10:30:00.000", None),
            ("2025-01-15T10:30:00.Z", None),
            ("２０２５-01-15T10:30:00.000Z", None),
        ];
        for (text, expected) in cases {
            assert_eq!(iso_8601_millis(text), expected, "{text}");
        }
    }
}
