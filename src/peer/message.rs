//! The peer's message shapes (`ConversationMessage`, `SpeakerInfo`, `MessageRouting`,
//! `ResolvedAddressee`, the long intent names), as serde types, and their conversion to and
//! from the core's [`Message`]. The npm binding reads `addMessage`'s argument and writes
//! stored messages with them, so it only converts (docs/architecture.md §12).
//!
//! Conversion rules (documented for npm users in the README):
//! - speaker `{id, name, displayName, type}` ↔ the core's `Speaker` (`type` ↔ `kind`);
//!   `displayName` defaults to `name`.
//! - routing: `parsedAddressees` (or, without them, each `rawNextMarkers` entry read as a
//!   `[NEXT]` value) ↔ the core's `raw_next`; a resolved addressee (`memberId` not `null`) ↔ one
//!   `resolved` id with its name (`memberName`, else `identifier`); unresolved ones are left out,
//!   as the core does for unknown names. `parentMessageId`, `intent` (`P1_INTERRUPT`, … or
//!   `P1`, …) ↔ `parent`, `intent`. On output `identifier` is the member name and
//!   `rawNextMarkers` lists one name per entry.
//! - `timestamp` is milliseconds here; the binding turns it into a JS `Date` on output.

use crate::markers::{self, Intent};
use crate::message::{Addressee, Message, MessageId, Routing, Speaker, SpeakerKind};
use serde::{Deserialize, Serialize};

use super::json_writer::JsonWriter;

/// The peer's `SpeakerInfo`. `displayName` defaults to `name` on input.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "ts", ts(rename = "SpeakerInfo"))]
pub struct PeerSpeaker {
    pub id: String,
    pub name: String,
    #[serde(default)]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub display_name: Option<String>,
    #[serde(rename = "type")]
    pub kind: SpeakerKind,
}

/// The peer's routing intent, in its long form (`P1_INTERRUPT`, …), typed as the peer types it;
/// the short forms (`P1`, …) and any case are also read, as in snapshots.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(
    feature = "ts",
    ts(
        rename = "RoutingIntent",
        type = r#""P1_INTERRUPT" | "P2_REPLY" | "P3_EXTEND""#
    )
)]
pub enum PeerIntent {
    #[serde(rename = "P1_INTERRUPT")]
    Interrupt,
    #[serde(rename = "P2_REPLY")]
    Reply,
    #[serde(rename = "P3_EXTEND")]
    Extend,
}

impl<'de> Deserialize<'de> for PeerIntent {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = std::borrow::Cow::<'de, str>::deserialize(d)?;
        intent_named(&name).map(PeerIntent::from).ok_or_else(|| {
            serde::de::Error::custom(format!(
                "expected P1_INTERRUPT, P2_REPLY, P3_EXTEND (or P1, P2, P3), found {name:?}"
            ))
        })
    }
}

/// An intent by name: `P1`…`P3`, or the peer's long forms (`P1_INTERRUPT`, `P2_REPLY`,
/// `P3_EXTEND`), ASCII case-insensitive. The one reading of the peer's intent names, for
/// messages and snapshots alike.
pub(crate) fn intent_named(s: &str) -> Option<Intent> {
    match s.get(..2)?.to_ascii_uppercase().as_str() {
        "P1" if s.len() == 2 || s.eq_ignore_ascii_case("P1_INTERRUPT") => Some(Intent::P1),
        "P2" if s.len() == 2 || s.eq_ignore_ascii_case("P2_REPLY") => Some(Intent::P2),
        "P3" if s.len() == 2 || s.eq_ignore_ascii_case("P3_EXTEND") => Some(Intent::P3),
        _ => None,
    }
}

impl From<PeerIntent> for Intent {
    fn from(i: PeerIntent) -> Self {
        match i {
            PeerIntent::Interrupt => Intent::P1,
            PeerIntent::Reply => Intent::P2,
            PeerIntent::Extend => Intent::P3,
        }
    }
}

impl From<Intent> for PeerIntent {
    fn from(i: Intent) -> Self {
        match i {
            Intent::P1 => PeerIntent::Interrupt,
            Intent::P2 => PeerIntent::Reply,
            Intent::P3 => PeerIntent::Extend,
        }
    }
}

/// The peer's `ResolvedAddressee`: an addressee of `[NEXT]` and the member it resolved to
/// (`null`: no member).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "ts", ts(rename = "ResolvedAddressee"))]
pub struct PeerResolvedAddressee {
    pub identifier: String,
    #[serde(default)]
    pub member_id: Option<String>,
    #[serde(default)]
    pub member_name: Option<String>,
}

/// The peer's `MessageRouting` (v3.1), plus our `isDone`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "ts", ts(rename = "MessageRouting"))]
pub struct PeerRouting {
    pub raw_next_markers: Vec<String>,
    #[serde(deserialize_with = "crate::objects::objects")]
    pub resolved_addressees: Vec<PeerResolvedAddressee>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub parsed_addressees: Option<Vec<Addressee>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub parent_message_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub intent: Option<PeerIntent>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    #[cfg_attr(feature = "ts", ts(as = "Option<_>", optional))]
    pub is_done: bool,
}

/// The argument of `addMessage`: the peer's `Omit<ConversationMessage, 'id'>` (its
/// `timestamp` is read by the binding, which also accepts a `Date`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct NewPeerMessage {
    #[serde(deserialize_with = "crate::objects::object")]
    pub speaker: PeerSpeaker,
    pub content: String,
    #[serde(default, deserialize_with = "crate::objects::optional_object")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub routing: Option<PeerRouting>,
}

impl NewPeerMessage {
    /// The core's speaker, content and routing for this message.
    pub fn into_core(self) -> (Speaker, String, Routing) {
        let speaker = Speaker {
            display_name: self
                .speaker
                .display_name
                .unwrap_or_else(|| self.speaker.name.clone()),
            id: self.speaker.id,
            name: self.speaker.name,
            kind: self.speaker.kind,
        };
        let routing = self.routing.map(PeerRouting::into_core).unwrap_or_default();
        (speaker, self.content, routing)
    }
}

impl PeerRouting {
    /// The core's routing (see the module doc for the rules).
    pub fn into_core(self) -> Routing {
        let raw_next = match self.parsed_addressees {
            Some(parsed) => parsed,
            None => self
                .raw_next_markers
                .iter()
                .flat_map(|raw| raw_next_marker_addressees(raw))
                .collect(),
        };
        let (resolved, resolved_names) = self
            .resolved_addressees
            .into_iter()
            .filter_map(|a| {
                let id = a.member_id?;
                Some((id, a.member_name.unwrap_or(a.identifier)))
            })
            .unzip();
        Routing {
            raw_next,
            resolved,
            resolved_names,
            is_done: self.is_done,
            parent: self.parent_message_id.map(MessageId),
            intent: self.intent.map(Intent::from),
        }
    }

    /// The peer's form of a core routing; `None` when the message carries no routing at all.
    #[cfg(test)]
    pub(crate) fn from_core(routing: &Routing) -> Option<Self> {
        if *routing == Routing::default() {
            return None;
        }
        let resolved_addressees = routing
            .resolved
            .iter()
            .zip(&routing.resolved_names)
            .map(|(id, name)| PeerResolvedAddressee {
                identifier: name.clone(),
                member_id: Some(id.clone()),
                member_name: Some(name.clone()),
            })
            .collect();
        Some(PeerRouting {
            raw_next_markers: routing.raw_next.iter().map(|a| a.name.clone()).collect(),
            resolved_addressees,
            parsed_addressees: Some(routing.raw_next.clone()),
            parent_message_id: routing.parent.as_ref().map(|p| p.0.clone()),
            intent: routing.intent.map(PeerIntent::from),
            is_done: routing.is_done,
        })
    }
}

/// The addressees of one `rawNextMarkers` entry: a marker value (`a, b !P1`, read by the
/// core's marker grammar, [`markers::parse_addressees`]) or a whole marker (`[NEXT: a]`, read
/// with [`markers::parse`]). The one reading of that field, for messages and snapshots alike.
pub(crate) fn raw_next_marker_addressees(raw: &str) -> Vec<Addressee> {
    let trimmed = raw.trim();
    if trimmed.starts_with('[') {
        markers::parse(trimmed).next
    } else {
        markers::parse_addressees(trimmed).collect()
    }
}

/// A stored message in the peer's `ConversationMessage` shape (`timestamp` in ms; the binding
/// makes it a `Date`), written straight from the core's message as JSON text: a snapshot of
/// 10⁴ messages read for the npm `importSnapshot` copies no string and builds no intermediate
/// value (the peer module's JSON writer). Keys in the peer's order: `id, timestamp, speaker, content,
/// routing?`; `routing` is left out when the message carries none (as in the peer).
#[derive(Debug, Clone, Copy)]
pub(crate) struct PeerMessage<'a>(pub &'a Message);

impl PeerMessage<'_> {
    /// Appends this message's JSON to `w`.
    pub(crate) fn write_json(&self, w: &mut JsonWriter) {
        let m = self.0;
        w.raw("{\"id\":");
        w.string(&m.id.0);
        w.raw(",\"timestamp\":");
        w.number(m.at.0);
        w.raw(",\"speaker\":{\"id\":");
        w.string(&m.speaker.id);
        w.raw(",\"name\":");
        w.string(&m.speaker.name);
        w.raw(",\"displayName\":");
        w.string(&m.speaker.display_name);
        w.raw(",\"type\":");
        w.raw(match m.speaker.kind {
            SpeakerKind::Human => "\"human\"",
            SpeakerKind::Ai => "\"ai\"",
            SpeakerKind::System => "\"system\"",
        });
        w.raw("},\"content\":");
        w.string(&m.content);
        if m.routing != Routing::default() {
            w.raw(",\"routing\":");
            write_routing(w, &m.routing);
        }
        w.raw("}");
    }

    /// This message's JSON text.
    #[cfg(test)]
    pub(crate) fn to_json(self) -> String {
        let mut w = JsonWriter::with_capacity(json_capacity(std::slice::from_ref(self.0)));
        self.write_json(&mut w);
        w.finish()
    }
}

/// `PeerRouting::from_core` written as JSON: the same keys and values, without copying the
/// names into an owned value first.
fn write_routing(w: &mut JsonWriter, r: &Routing) {
    w.raw("{\"rawNextMarkers\":[");
    for (i, a) in r.raw_next.iter().enumerate() {
        if i > 0 {
            w.raw(",");
        }
        w.string(&a.name);
    }
    w.raw("],\"resolvedAddressees\":[");
    for (i, (id, name)) in r.resolved.iter().zip(&r.resolved_names).enumerate() {
        if i > 0 {
            w.raw(",");
        }
        w.raw("{\"identifier\":");
        w.string(name);
        w.raw(",\"memberId\":");
        w.string(id);
        w.raw(",\"memberName\":");
        w.string(name);
        w.raw("}");
    }
    w.raw("],\"parsedAddressees\":[");
    for (i, a) in r.raw_next.iter().enumerate() {
        if i > 0 {
            w.raw(",");
        }
        w.raw("{\"name\":");
        w.string(&a.name);
        w.raw(",\"intent\":");
        w.string(a.intent.as_str());
        w.raw("}");
    }
    w.raw("]");
    if let Some(parent) = &r.parent {
        w.raw(",\"parentMessageId\":");
        w.string(&parent.0);
    }
    if let Some(intent) = r.intent {
        w.raw(",\"intent\":");
        w.string(match PeerIntent::from(intent) {
            PeerIntent::Interrupt => "P1_INTERRUPT",
            PeerIntent::Reply => "P2_REPLY",
            PeerIntent::Extend => "P3_EXTEND",
        });
    }
    if r.is_done {
        w.raw(",\"isDone\":true");
    }
    w.raw("}");
}

/// Stored messages in the peer's shape, as one JSON array (`getMessages`).
#[derive(Debug, Clone, Copy)]
pub struct PeerMessages<'a>(pub &'a [Message]);

impl PeerMessages<'_> {
    /// Appends the array's JSON to `w`.
    pub(crate) fn write_json(&self, w: &mut JsonWriter) {
        w.raw("[");
        for (i, m) in self.0.iter().enumerate() {
            if i > 0 {
                w.raw(",");
            }
            PeerMessage(m).write_json(w);
        }
        w.raw("]");
    }

    /// The array's JSON text.
    pub fn to_json(&self) -> String {
        let mut w = JsonWriter::with_capacity(json_capacity(self.0));
        self.write_json(&mut w);
        w.finish()
    }
}

/// About the JSON size of `messages` in the peer's shape: the contents plus ~300 bytes of ids,
/// speaker and routing each (a close guess spares the copies of a growing buffer).
fn json_capacity(messages: &[Message]) -> usize {
    messages
        .iter()
        .map(|m| m.content.len() + 300)
        .sum::<usize>()
        + 256
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn intents_are_read_short_or_long_in_any_case() {
        let cases = [
            ("P1", Some(Intent::P1)),
            ("p3", Some(Intent::P3)),
            ("P1_INTERRUPT", Some(Intent::P1)),
            ("p2_reply", Some(Intent::P2)),
            ("P3_EXTEND", Some(Intent::P3)),
            ("P4", None),
            ("P1X", None),
            ("", None),
            ("é", None),
        ];
        for (text, expected) in cases {
            assert_eq!(intent_named(text), expected, "{text}");
        }
    }

    #[test]
    fn raw_next_markers_read_values_and_whole_markers() {
        let names = |raw: &str| {
            raw_next_marker_addressees(raw)
                .into_iter()
                .map(|a| (a.name, a.intent))
                .collect::<Vec<_>>()
        };
        assert_eq!(names(" max !P1 "), [("max".to_string(), Intent::P1)]);
        assert_eq!(names("wow!"), [("wow!".to_string(), Intent::P2)]);
        assert_eq!(
            names("a, , b !p3"),
            [("a".to_string(), Intent::P2), ("b".to_string(), Intent::P3)]
        );
        assert_eq!(names("[NEXT: c !P1]"), [("c".to_string(), Intent::P1)]);
    }

    fn new_message(value: serde_json::Value) -> NewPeerMessage {
        serde_json::from_value(value).expect("valid peer message")
    }

    #[test]
    fn peer_speaker_maps_type_to_kind_and_defaults_display_name_to_name() {
        let (speaker, content, routing) = new_message(
            json!({"speaker": {"id": "max", "name": "Max", "type": "ai"}, "content": "hi"}),
        )
        .into_core();
        assert_eq!(speaker.kind, SpeakerKind::Ai);
        assert_eq!(speaker.display_name, "Max");
        assert_eq!(content, "hi");
        assert_eq!(routing, Routing::default());
    }

    #[test]
    fn resolved_addressees_keep_resolved_ones_with_member_name() {
        let routing = new_message(json!({
            "speaker": {"id": "k", "name": "kailai", "displayName": "Kailai", "type": "human"},
            "content": "x",
            "routing": {
                "rawNextMarkers": ["Max, ghost !P1"],
                "resolvedAddressees": [
                    {"identifier": "Max", "memberId": "max", "memberName": "max"},
                    {"identifier": "ghost", "memberId": null, "memberName": null}
                ],
                "parentMessageId": "msg-1",
                "intent": "P1_INTERRUPT"
            }
        }))
        .into_core()
        .2;
        assert_eq!(routing.resolved, vec!["max"]);
        assert_eq!(routing.resolved_names, vec!["max"]);
        assert_eq!(
            routing.raw_next,
            vec![
                Addressee {
                    name: "Max".into(),
                    intent: Intent::P2
                },
                Addressee {
                    name: "ghost".into(),
                    intent: Intent::P1
                },
            ]
        );
        assert_eq!(routing.parent, Some(MessageId("msg-1".into())));
        assert_eq!(routing.intent, Some(Intent::P1));
    }

    #[test]
    fn parsed_addressees_win_over_raw_next_markers() {
        let routing = new_message(json!({
            "speaker": {"id": "k", "name": "k", "type": "human"},
            "content": "x",
            "routing": {"rawNextMarkers": ["a"], "resolvedAddressees": [],
                        "parsedAddressees": [{"name": "b", "intent": "P3"}]}
        }))
        .into_core()
        .2;
        assert_eq!(
            routing.raw_next,
            vec![Addressee {
                name: "b".into(),
                intent: Intent::P3
            }]
        );
    }

    #[test]
    fn a_whole_next_marker_in_raw_next_markers_is_read_too() {
        assert_eq!(
            raw_next_marker_addressees("[NEXT: a !P1]"),
            vec![Addressee {
                name: "a".into(),
                intent: Intent::P1
            }]
        );
    }

    #[test]
    fn routing_roundtrips_through_the_peer_shape() {
        let routing = Routing {
            raw_next: vec![Addressee {
                name: "max".into(),
                intent: Intent::P3,
            }],
            resolved: vec!["max".into()],
            resolved_names: vec!["Max".into()],
            is_done: true,
            parent: Some(MessageId("msg-2".into())),
            intent: Some(Intent::P2),
        };
        let peer = PeerRouting::from_core(&routing).expect("routing present");
        assert_eq!(peer.intent, Some(PeerIntent::Reply));
        assert_eq!(peer.into_core(), routing);
    }

    #[test]
    fn a_stored_message_serializes_its_routing_as_the_owned_peer_routing_does() {
        let routing = Routing {
            raw_next: vec![Addressee {
                name: "Max".into(),
                intent: Intent::P1,
            }],
            resolved: vec!["max".into()],
            resolved_names: vec!["Max".into()],
            is_done: true,
            parent: Some(MessageId("msg-2".into())),
            intent: Some(Intent::P3),
        };
        let m = Message {
            id: MessageId("msg-3".into()),
            speaker: Speaker::system().into(),
            content: "x".into(),
            routing: routing.clone(),
            at: crate::message::Millis(7),
        };
        let v = serde_json::from_str::<serde_json::Value>(&PeerMessage(&m).to_json())
            .expect("valid JSON");
        let owned = serde_json::to_value(PeerRouting::from_core(&routing)).expect("serializes");
        assert_eq!(v["routing"], owned);
        assert_eq!(
            v["routing"]["resolvedAddressees"],
            json!([{"identifier": "Max", "memberId": "max", "memberName": "Max"}])
        );
        assert_eq!(v["routing"]["intent"], "P3_EXTEND");
    }

    #[test]
    fn a_message_without_routing_has_no_routing_key() {
        let m = Message {
            id: MessageId("msg-1".into()),
            speaker: Speaker::system().into(),
            content: "x".into(),
            routing: Routing::default(),
            at: crate::message::Millis(5),
        };
        let v = serde_json::from_str::<serde_json::Value>(&PeerMessage(&m).to_json())
            .expect("valid JSON");
        assert_eq!(
            v,
            json!({"id": "msg-1", "timestamp": 5, "content": "x",
                   "speaker": {"id": "system", "name": "system", "displayName": "system", "type": "system"}})
        );
    }
}
