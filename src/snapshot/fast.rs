//! The fast path of snapshot import: the whole text read at once into typed structs (strings
//! decoded straight into their final `String`s), instead of a `serde_json::Value` tree walked
//! field by field. On a 10⁴-message snapshot most of the import time was building and dropping
//! that tree.
//!
//! It applies exactly the rules of the field-by-field reader in the parent module (the same
//! conversion helpers, `null` counting as absent as there), and it only ever *accepts*: any
//! input it does not read cleanly (a wrong type, a duplicate key, a failed check) makes it
//! return `None`, and the field-by-field reader runs instead and produces the error with its
//! JSON path. So errors, and the rare accepted oddities (a repeated key), come from one place.

use crate::hash::HashMap;
use std::borrow::Cow;

use serde::de::{self, Deserializer, Visitor};
use serde::Deserialize;

use super::{check_message, iso_8601_millis, Snapshot, SNAPSHOT_VERSION};
use crate::json::Path;
use crate::message::Intent;
use crate::message::{Addressee, Message, MessageId, Millis, Routing, Speaker, SpeakerKind};
use crate::peer::message::{intent_named, raw_next_marker_addressees};

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct SnapshotIn<'a> {
    version: Option<u64>,
    messages: Option<Vec<MessageIn<'a>>>,
    #[serde(borrow)]
    team_task: Option<Cow<'a, str>>,
    timestamp: Option<u64>,
}

#[derive(Deserialize)]
struct MessageIn<'a> {
    id: Option<String>,
    #[serde(borrow)]
    speaker: Option<SpeakerIn<'a>>,
    content: Option<String>,
    #[serde(borrow)]
    routing: Option<RoutingIn<'a>>,
    at: Option<u64>,
    timestamp: Option<PeerTimestamp>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct SpeakerIn<'a> {
    id: Option<String>,
    name: Option<String>,
    display_name: Option<String>,
    #[serde(borrow)]
    kind: Option<Cow<'a, str>>,
    #[serde(rename = "type", borrow)]
    peer_type: Option<Cow<'a, str>>,
}

/// Our routing keys and the peer's, all optional; which set is read follows the parent's rule.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RoutingIn<'a> {
    #[serde(borrow)]
    raw_next: Option<Vec<AddresseeIn<'a>>>,
    resolved: Option<Vec<String>>,
    resolved_names: Option<Vec<String>>,
    is_done: Option<bool>,
    parent: Option<String>,
    #[serde(borrow)]
    intent: Option<Cow<'a, str>>,
    #[serde(borrow)]
    raw_next_markers: Option<Vec<Cow<'a, str>>>,
    #[serde(borrow)]
    parsed_addressees: Option<Vec<AddresseeIn<'a>>>,
    resolved_addressees: Option<Vec<ResolvedIn>>,
    parent_message_id: Option<String>,
}

#[derive(Deserialize)]
struct AddresseeIn<'a> {
    name: Option<String>,
    #[serde(borrow)]
    intent: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ResolvedIn {
    member_id: Option<String>,
    member_name: Option<String>,
}

/// The peer's message `timestamp`: milliseconds or an ISO 8601 date (parent's `peer_timestamp`).
struct PeerTimestamp(Millis);

impl<'de> Deserialize<'de> for PeerTimestamp {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = PeerTimestamp;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("milliseconds or an ISO 8601 date")
            }
            fn visit_u64<E: de::Error>(self, ms: u64) -> Result<PeerTimestamp, E> {
                Ok(PeerTimestamp(Millis(ms)))
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<PeerTimestamp, E> {
                iso_8601_millis(s)
                    .map(|ms| PeerTimestamp(Millis(ms)))
                    .ok_or_else(|| E::custom("not an ISO 8601 date"))
            }
        }
        deserializer.deserialize_any(V)
    }
}

/// The snapshot in `json` when it reads cleanly and passes every check; `None` otherwise (the
/// caller then runs the field-by-field reader, which names the problem).
pub(super) fn read(json: &str) -> Option<Snapshot> {
    let input: SnapshotIn<'_> = serde_json::from_str(json).ok()?;
    if input.version != Some(u64::from(SNAPSHOT_VERSION)) {
        return None;
    }
    let items = input.messages?;
    // Every check first, borrowing the ids; then the strings move into the messages.
    let messages_path = Path::Root.key("messages");
    let mut seen = HashMap::with_capacity_and_hasher(items.len(), Default::default());
    for (i, m) in items.iter().enumerate() {
        let (id, content) = (m.id.as_deref()?, m.content.as_deref()?);
        check_message(&messages_path, i, id, content, &mut seen).ok()?;
    }
    drop(seen);
    let messages = items.into_iter().map(message).collect::<Option<Vec<_>>>()?;
    Some(Snapshot {
        version: SNAPSHOT_VERSION,
        messages,
        team_task: input.team_task.map(Cow::into_owned),
        timestamp: Millis(input.timestamp.unwrap_or(0)),
    })
}

fn message(m: MessageIn<'_>) -> Option<Message> {
    let at = match (m.at, m.timestamp) {
        (Some(ms), _) => Millis(ms),
        (None, Some(PeerTimestamp(ms))) => ms,
        (None, None) => Millis(0),
    };
    Some(Message {
        id: MessageId(m.id?),
        speaker: speaker(m.speaker?)?,
        content: m.content?,
        routing: match m.routing {
            None => Routing::default(),
            Some(r) => routing(r)?,
        },
        at,
    })
}

fn speaker(s: SpeakerIn<'_>) -> Option<Speaker> {
    let id = s.id.filter(|id| !id.trim().is_empty())?;
    let name = s.name?;
    // Ours says `kind`, the peer `type`.
    let kind = match (s.kind, s.peer_type) {
        (None, Some(t)) => t,
        (k, _) => k?,
    };
    let kind = match kind.as_ref() {
        "human" => SpeakerKind::Human,
        "ai" => SpeakerKind::Ai,
        "system" => SpeakerKind::System,
        _ => return None,
    };
    Some(Speaker {
        id,
        display_name: s.display_name.unwrap_or_else(|| name.clone()),
        name,
        kind,
    })
}

fn routing(r: RoutingIn<'_>) -> Option<Routing> {
    if r.raw_next_markers.is_some() || r.resolved_addressees.is_some() {
        return peer_routing(r);
    }
    let mut routing = Routing::default();
    for a in r.raw_next.unwrap_or_default() {
        let intent = match a.intent {
            None => Intent::default(),
            Some(s) => intent_named(&s)?,
        };
        routing.raw_next.push(Addressee {
            name: a.name?,
            intent,
        });
    }
    routing.resolved = r.resolved.unwrap_or_default();
    routing.resolved_names = match r.resolved_names {
        Some(names) => names,
        None => routing.resolved.clone(),
    };
    if routing.resolved_names.len() != routing.resolved.len() {
        return None;
    }
    routing.is_done = r.is_done.unwrap_or(false);
    routing.parent = r.parent.map(MessageId);
    routing.intent = match r.intent {
        None => None,
        Some(s) => Some(intent_named(&s)?),
    };
    Some(routing)
}

fn peer_routing(r: RoutingIn<'_>) -> Option<Routing> {
    let mut routing = Routing::default();
    if let Some(parsed) = r.parsed_addressees {
        for a in parsed {
            let name = a.name?;
            let intent = a
                .intent
                .as_deref()
                .and_then(intent_named)
                .unwrap_or_default();
            routing.raw_next.push(Addressee { name, intent });
        }
    } else {
        for raw in r.raw_next_markers.unwrap_or_default() {
            routing.raw_next.extend(raw_next_marker_addressees(&raw));
        }
    }
    for a in r.resolved_addressees.unwrap_or_default() {
        if let Some(id) = a.member_id {
            routing
                .resolved_names
                .push(a.member_name.unwrap_or_else(|| id.clone()));
            routing.resolved.push(id);
        }
    }
    routing.is_done = r.is_done.unwrap_or(false);
    routing.parent = r.parent_message_id.map(MessageId);
    routing.intent = r.intent.as_deref().and_then(intent_named);
    Some(routing)
}

#[cfg(test)]
mod tests {
    use super::read;
    use crate::snapshot::{Snapshot, SnapshotError};

    /// The field-by-field reader: the reference the fast path must agree with.
    fn field_reader(json: &str) -> Result<Snapshot, SnapshotError> {
        Snapshot::from_value(&crate::json::parse(json)?)
    }

    fn fixture(path: &str) -> String {
        let full = format!("{}/tests/fixtures/{path}", env!("CARGO_MANIFEST_DIR"));
        std::fs::read_to_string(&full).unwrap_or_else(|e| panic!("{full}: {e}"))
    }

    #[test]
    fn clean_snapshots_read_the_same_as_field_by_field() {
        let peer_message = |routing: &str, timestamp: &str| {
            format!(
                r#"{{"version": 1, "teamTask": null, "messages": [{{"id": "msg-1",
                   "speaker": {{"id": "max", "name": "max", "type": "ai"}}, "content": "a \"b\"\n",
                   "timestamp": {timestamp}, "routing": {routing}}}]}}"#
            )
        };
        let mut cases = vec![
            fixture("snapshots/ours-v1.json"),
            fixture("snapshots/peer-v1.json"),
            r#"{"version": 1, "messages": []}"#.to_string(),
            r#"{"version": 1, "messages": [], "teamTask": "ship é", "timestamp": 5, "extra": [1]}"#
                .to_string(),
            r#"{"version": 1, "messages": [{"id": "msg-7", "content": "x", "at": 9,
                "speaker": {"id": "k", "name": "kai", "displayName": null, "kind": "human"},
                "routing": {"rawNext": [{"name": "max", "intent": "P1"}, {"name": "sam"}],
                            "resolved": ["max"], "isDone": true, "parent": "msg-2",
                            "intent": "P3_EXTEND"}}]}"#
                .to_string(),
        ];
        for (routing, timestamp) in [
            (
                r#"{"rawNextMarkers": ["max, ghost !P1"], "resolvedAddressees": [{"identifier": "max", "memberId": "max", "memberName": null}, {"identifier": "ghost", "memberId": null}]}"#,
                "5",
            ),
            (
                r#"{"rawNextMarkers": ["a"], "resolvedAddressees": [], "parsedAddressees": [{"name": "b", "intent": "bogus"}], "intent": "nope", "parentMessageId": "msg-0"}"#,
                r#""2025-01-15T10:30:00.000Z""#,
            ),
            ("null", "null"),
            (
                r#"{"resolvedAddressees": null, "rawNextMarkers": null}"#,
                "7",
            ),
        ] {
            cases.push(peer_message(routing, timestamp));
        }
        for case in &cases {
            let fast = read(case);
            assert!(
                fast.is_some(),
                "the fast path declined a clean snapshot: {case}"
            );
            assert_eq!(fast.map(Ok), Some(field_reader(case)), "{case}");
        }
    }

    #[test]
    fn rejected_snapshots_are_left_to_the_field_reader() {
        let mut cases: Vec<String> = [
            "snapshot-content-not-a-string.json",
            "snapshot-duplicate-ids.json",
            "snapshot-invalid-json.json",
            "snapshot-missing-content.json",
            "snapshot-missing-speaker-id.json",
            "snapshot-unknown-speaker-kind.json",
            "snapshot-unpaired-resolved-names.json",
            "snapshot-version-2.json",
        ]
        .iter()
        .map(|name| fixture(&format!("bad/{name}")))
        .collect();
        let message = |fields: &str| {
            format!(
                r#"{{"version": 1, "messages": [{{"id": "msg-1", "content": "x",
                   "speaker": {{"id": "k", "name": "k", "kind": "human"}}{fields}}}]}}"#
            )
        };
        cases.extend(
            [
                r#", "at": -1"#,
                r#", "at": 1.5"#,
                r#", "timestamp": "yesterday""#,
                r#", "routing": {"rawNext": [{"name": "a", "intent": "P9"}]}"#,
                r#", "routing": {"intent": "P7"}"#,
                r#", "routing": {"parsedAddressees": [{"intent": "P1"}], "rawNextMarkers": []}"#,
                r#", "routing": {"resolvedAddressees": [null]}"#,
                r#", "routing": 3"#,
            ]
            .map(message),
        );
        cases.extend(
            [
                r#"{"version": "1", "messages": []}"#,
                r#"{"version": 1}"#,
                r#"{"version": 1, "messages": [], "timestamp": -3}"#,
                r#"[]"#,
                r#"{"version": 1, "messages": [{"id": " ", "content": "x", "speaker": {"id": "k", "name": "k", "kind": "ai"}}]}"#,
            ]
            .map(String::from),
        );
        for case in &cases {
            assert!(
                field_reader(case).is_err(),
                "the field reader accepts {case}"
            );
            assert_eq!(read(case), None, "{case}");
        }
    }

    #[test]
    fn odd_but_accepted_snapshots_never_read_differently() {
        // Repeated keys and keys of the other format with odd types: the fast path may
        // decline them, but whatever it returns is what the field reader returns.
        let cases = [
            r#"{"version": 1, "version": 1, "messages": []}"#,
            r#"{"version": 1, "messages": [{"id": "msg-1", "id": "msg-2", "content": "x", "speaker": {"id": "k", "name": "k", "kind": "ai"}}]}"#,
            r#"{"version": 1, "messages": [{"id": "m", "content": "x", "at": 4, "timestamp": {}, "speaker": {"id": "k", "name": "k", "kind": "ai", "type": 5}}]}"#,
            r#"{"version": 1, "messages": [{"id": "m", "content": "x", "speaker": {"id": "k", "name": "k", "kind": "ai"}, "routing": {"parsedAddressees": [], "rawNextMarkers": 5, "rawNext": "no"}}]}"#,
        ];
        for case in cases {
            if let Some(fast) = read(case) {
                assert_eq!(field_reader(case), Ok(fast), "{case}");
            }
        }
    }
}
