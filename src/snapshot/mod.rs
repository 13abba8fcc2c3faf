//! Snapshot v1 export/import, validated fully before anything changes (docs/architecture.md §11,
//! §19 (seed 001 §2.4, §4.9, §4.10)).
//!
//! A snapshot is `{"version": 1, "messages": [...], "teamTask": "..." | null, "timestamp":
//! <ms>}`, the messages in the camelCase JSON of [`Message`]. One reader (module `read`) takes
//! every way in — JSON text ([`import_str`], [`Snapshot::from_json`]), a parsed `Value`
//! ([`import`], [`Snapshot::from_value`]) and serde (`serde_json::from_str::<Snapshot>`) — so
//! they accept the same documents and name the same field in an error
//! (`messages[3].speaker.id: missing`). Every message is checked before the store is
//! replaced: a bad snapshot leaves the current state as it was (the seed's import replaces
//! first and can leave half a state behind).
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

use serde::{Deserialize, Serialize};
use serde_json::Value;
use thiserror::Error;

mod read;

use crate::context::{Store, TeamTaskTruncated, MAX_TEAM_TASK_BYTES};
use crate::hash::HashMap;
use crate::json::Path;
use crate::json::{FieldError, JsonSyntaxError};
use crate::message::{Message, Millis, MAX_MESSAGE_BYTES};

/// The snapshot format version this code writes and reads.
pub const SNAPSHOT_VERSION: u32 = 1;

/// The state of a conversation's store (docs/architecture.md §19 (seed 001 §2.4)): messages, team
/// task, when it was taken.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Snapshot {
    /// Always 1 ([`SNAPSHOT_VERSION`]).
    #[cfg_attr(feature = "ts", ts(type = "1"))]
    pub version: u32,
    pub messages: Vec<Message>,
    /// `null` when there is no team task.
    pub team_task: Option<String>,
    /// When the snapshot was taken (ms since 1970), supplied by the host (the core reads no
    /// clock).
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
    #[error("{path}: over the 1 MiB limit ({limit} bytes), found {bytes} bytes")]
    TooLarge {
        path: String,
        bytes: usize,
        limit: usize,
    },
}

/// The store's state as a snapshot taken at `now` (docs/architecture.md §19 (seed 001 §4.9)).
pub fn export(store: &Store, now: Millis) -> Snapshot {
    Snapshot {
        version: SNAPSHOT_VERSION,
        messages: store.messages().to_vec(),
        team_task: store.team_task().map(str::to_string),
        timestamp: now,
    }
}

/// Replaces the store with the snapshot in `value`, after validating all of it
/// (docs/architecture.md §19 (seed 001 §4.10), docs/architecture.md §11). On error the store is
/// untouched.
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
    let messages = Path::Root.key("messages");
    // Each message's checks in the reader's order; the ids before a problem (and the
    // problem's own, once its id was checked) are checked for duplicates first.
    let ids = |n: usize| snapshot.messages[..n].iter().map(|m| m.id.as_str());
    for (i, m) in snapshot.messages.iter().enumerate() {
        let path = messages.index(i);
        let before_duplicates = check_id(&path.key("speaker").key("id"), &m.speaker.id)
            .and_then(|()| check_id(&path.key("id"), m.id.as_str()));
        if let Err(error) = before_duplicates {
            return Err(first_problem(&messages, ids(i), error.into()));
        }
        if let Err(error) = check_size(&messages, i, &m.content) {
            return Err(first_problem(&messages, ids(i + 1), error));
        }
    }
    check_duplicates(&messages, ids(snapshot.messages.len()))?;
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
        // A `Value` is always well-formed JSON: reading it into fields cannot fail.
        let fields = read::fields(value).map_err(JsonSyntaxError::from)?;
        read::snapshot(fields)
    }

    /// [`Snapshot::from_value`] from JSON text; a syntax error names line and column.
    pub fn from_json(json: &str) -> Result<Snapshot, SnapshotError> {
        let mut deserializer = serde_json::Deserializer::from_str(crate::json::without_bom(json));
        let fields = read::fields(&mut deserializer).map_err(JsonSyntaxError::from)?;
        deserializer.end().map_err(JsonSyntaxError::from)?;
        read::snapshot(fields)
    }
}

/// Snapshots read through serde (`serde_json::from_str::<Snapshot>`) take the one reader and
/// its checks too; the error is its message.
impl<'de> Deserialize<'de> for Snapshot {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        read::snapshot(read::fields(d)?).map_err(serde::de::Error::custom)
    }
}

// The checks shared by the reader and [`import_snapshot`], in the order they apply to each
// message: a non-empty id, an id not used before, content within the limit. Paths are
// rendered only for an error.
//
// The duplicate check runs over all ids at once, after the other checks, with a table sized
// for them (growing one while reading cost a snapshot's import a fifth of its time); the
// first duplicate still wins over a later problem, as if checked message by message.

/// A message's or a speaker's id at `path`: not empty once trimmed.
fn check_id(path: &Path<'_>, id: &str) -> Result<(), FieldError> {
    if id.trim().is_empty() {
        return Err(path.invalid("empty"));
    }
    Ok(())
}

fn check_size(messages: &Path<'_>, i: usize, content: &str) -> Result<(), SnapshotError> {
    if content.len() > MAX_MESSAGE_BYTES {
        return Err(SnapshotError::TooLarge {
            path: messages.index(i).key("content").to_string(),
            bytes: content.len(),
            limit: MAX_MESSAGE_BYTES,
        });
    }
    Ok(())
}

/// The problem to report when message checks failed with `error`: a duplicate among the ids
/// checked before it (in order), which comes first in the document, or else `error`.
fn first_problem<'a>(
    messages: &Path<'_>,
    checked_ids: impl Iterator<Item = &'a str>,
    error: SnapshotError,
) -> SnapshotError {
    check_duplicates(messages, checked_ids)
        .err()
        .unwrap_or(error)
}

/// The first id, in order, that an earlier message already uses.
fn check_duplicates<'a>(
    messages: &Path<'_>,
    ids: impl Iterator<Item = &'a str>,
) -> Result<(), SnapshotError> {
    let mut seen = HashMap::with_capacity_and_hasher(ids.size_hint().0, Default::default());
    for (i, id) in ids.enumerate() {
        if let Some(first) = seen.insert(id, i) {
            return Err(SnapshotError::DuplicateId {
                path: messages.index(i).key("id").to_string(),
                id: id.to_string(),
                first: messages.index(first).to_string(),
            });
        }
    }
    Ok(())
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
