//! Stored conversation messages (docs/architecture.md §4).
//!
//! A message is stored **raw**, exactly as sent, with its parsed routing beside it; the strip
//! functions in [`crate::markers`] are views over the raw text, never applied on store.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

/// Milliseconds since the Unix epoch, supplied by the host: the core never reads a clock.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct Millis(pub u64);

/// A member id as configured in the team (`"max"`, `"kailai"`).
pub type MemberId = String;

/// The text of a message, held once: the fact that brought it and the message it became share
/// one allocation (docs/architecture.md §14, "Memory"). Reads as a `str` (it derefs to one)
/// and is written as a JSON string.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Text(Arc<str>);

impl Text {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::ops::Deref for Text {
    type Target = str;

    fn deref(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for Text {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl std::borrow::Borrow<str> for Text {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl From<String> for Text {
    fn from(text: String) -> Self {
        Text(text.into())
    }
}

impl From<&str> for Text {
    fn from(text: &str) -> Self {
        Text(text.into())
    }
}

impl From<&String> for Text {
    fn from(text: &String) -> Self {
        Text(text.as_str().into())
    }
}

impl From<Text> for String {
    fn from(text: Text) -> Self {
        (*text.0).to_owned()
    }
}

impl PartialEq<str> for Text {
    fn eq(&self, other: &str) -> bool {
        &*self.0 == other
    }
}

impl PartialEq<&str> for Text {
    fn eq(&self, other: &&str) -> bool {
        &*self.0 == *other
    }
}

impl PartialEq<String> for Text {
    fn eq(&self, other: &String) -> bool {
        *self.0 == **other
    }
}

impl std::fmt::Debug for Text {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&*self.0, f)
    }
}

impl std::fmt::Display for Text {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl Serialize for Text {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for Text {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d).map(Text::from)
    }
}

/// A message id: `msg-1`, `msg-2`, … in the order messages were stored.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct MessageId(pub String);

impl MessageId {
    /// The id of the `n`-th stored message (`msg-n`).
    pub fn from_seq(n: u64) -> Self {
        MessageId(format!("msg-{n}"))
    }

    /// The numeric part of a `msg-N` id (`N` decimal digits only, as the peer's `/^msg-(\d+)$/`
    /// reads it: not `msg-+5`), if it has that shape (used to continue the counter after a
    /// snapshot import).
    pub fn seq(&self) -> Option<u64> {
        let digits = self.0.strip_prefix("msg-")?;
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        digits.parse().ok()
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for MessageId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Who spoke. `system` is used for notices the conversation records itself (agent failures):
/// never deduplicated, never a recipient.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "ts", ts(rename = "SpeakerType"))]
pub enum SpeakerKind {
    Human,
    Ai,
    System,
}

impl SpeakerKind {
    /// The names serde reads and writes, in order.
    const NAMES: [&'static str; 3] = ["human", "ai", "system"];
}

/// Read as a string only, so a value of the wrong kind is named with the choices
/// (`expected "human", "ai" or "system", found 5`), where a derived enum says only "expected
/// value" (serde_json's words for any enum given a non-string).
impl<'de> Deserialize<'de> for SpeakerKind {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Name;
        impl serde::de::Visitor<'_> for Name {
            type Value = SpeakerKind;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(&crate::json::choices(SpeakerKind::NAMES))
            }

            fn visit_str<E: serde::de::Error>(self, name: &str) -> Result<SpeakerKind, E> {
                match name {
                    "human" => Ok(SpeakerKind::Human),
                    "ai" => Ok(SpeakerKind::Ai),
                    "system" => Ok(SpeakerKind::System),
                    other => Err(E::unknown_variant(other, &SpeakerKind::NAMES)),
                }
            }
        }
        d.deserialize_str(Name)
    }
}

/// The speaker of a message, copied from the member at the time it spoke so history stays
/// readable after the team changes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Speaker {
    pub id: MemberId,
    pub name: String,
    pub display_name: String,
    pub kind: SpeakerKind,
}

impl Speaker {
    /// The reserved speaker of system notices (id and name `system`).
    pub fn system() -> Self {
        Speaker {
            id: "system".into(),
            name: "system".into(),
            display_name: "system".into(),
            kind: SpeakerKind::System,
        }
    }
}

/// The urgency of a `[NEXT: a !P1]` addressee; default P2.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize,
)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum Intent {
    P1,
    #[default]
    P2,
    P3,
}

impl Intent {
    /// The suffix form without `!`: `"P1"`, `"P2"`, `"P3"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Intent::P1 => "P1",
            Intent::P2 => "P2",
            Intent::P3 => "P3",
        }
    }
}

impl std::fmt::Display for Intent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One `[NEXT: …]` addressee as written, with its intent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "ts", ts(rename = "ParsedAddressee"))]
pub struct Addressee {
    pub name: String,
    pub intent: Intent,
}

/// The routing parsed from a message, stored beside the raw text.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "camelCase", default)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Routing {
    /// Every `[NEXT]` addressee as written, in order.
    pub raw_next: Vec<Addressee>,
    /// The member ids the addressees resolved to (unknown names are left out and reported).
    /// Empty means "everyone" and prints as `all`.
    pub resolved: Vec<MemberId>,
    /// Member names for `resolved`, in the same order, as the context line prints them
    /// (`- from -> to: …`). Kept so history renders the same after the team changes.
    pub resolved_names: Vec<String>,
    /// The message carried `[DONE]`.
    pub is_done: bool,
    /// The message this one answers (a routed delivery's parent).
    pub parent: Option<MessageId>,
    /// The intent this message was delivered with, if it was a routed answer.
    pub intent: Option<Intent>,
}

/// A stored message: raw content plus parsed routing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Message {
    /// `msg-1`, `msg-2`, … in the order messages were stored.
    pub id: MessageId,
    // Shared by every message of that member under one team (written as the record itself).
    pub speaker: Arc<Speaker>,
    /// Exactly what was sent, markers included.
    // The text of the fact it came from, not a copy.
    pub content: Text,
    #[serde(default)]
    pub routing: Routing,
    /// Milliseconds since 1970, as given by the host.
    #[serde(default)]
    pub at: Millis,
}

impl Message {
    /// How `to` prints in a context line: the resolved names joined by `, `, or `all`.
    pub fn to_label(&self) -> String {
        if self.routing.resolved_names.is_empty() {
            "all".to_string()
        } else {
            self.routing.resolved_names.join(", ")
        }
    }
}

/// In TypeScript a text and a message id are a `string` and a time a `number` (ms), as serde
/// writes them: each is declared as the Rust type it stands for is, used inline, never declared.
#[cfg(feature = "ts")]
mod ts {
    use ts_rs::{Config, TS};

    /// `impl TS for $ty` declaring it as `$like` is declared.
    macro_rules! ts_as {
        ($($ty:ty => $like:ty),* $(,)?) => {$(
            impl TS for $ty {
                type WithoutGenerics = Self;
                type OptionInnerType = Self;

                fn name(cfg: &Config) -> String {
                    <$like>::name(cfg)
                }

                fn inline(cfg: &Config) -> String {
                    <$like>::inline(cfg)
                }
            }
        )*};
    }

    // `f64`, not `u64`: ts-rs declares a `u64` as `bigint`; serde writes a time as a number.
    ts_as!(super::Text => String, super::MessageId => String, super::Millis => f64);
}

/// The largest message the core accepts: 1 MiB. Above the default prompt budget (768 KiB), so
/// any message that could be delivered whole can be stored; a larger one is refused with an
/// error naming its size instead of being stored and silently cut later.
pub const MAX_MESSAGE_BYTES: usize = 1024 * 1024;
