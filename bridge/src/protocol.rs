//! The page ⇄ bridge protocol (DESIGN §14b): JSON text frames `{"v": 1, "type": …, …}` on
//! `/api/ws`. One reader for commands, with errors that say what was wrong in the frame; the
//! events are plain serde.

use agent_chatter::session::Fact;
use serde::Serialize;
use serde_json::Value;

use crate::store::SessionInfo;

/// The protocol version this bridge speaks.
pub const VERSION: u64 = 1;
/// The largest frame accepted (a message is at most 1 MiB; a fact holding a team or a
/// scenario can be bigger, but not this big).
pub const MAX_FRAME_BYTES: usize = 16 * 1024 * 1024;

/// Page → bridge.
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    Hello {
        token: String,
    },
    /// Only `setTeam`, `setSettings`, `human` and `loadScenario`: replies and failures come
    /// from the agents the bridge runs, never from the page.
    Apply {
        fact: Box<Fact>,
    },
    Cancel {
        to: String,
    },
    ListSessions,
    OpenSession {
        id: i64,
    },
    NewSession,
}

/// Bridge → page.
#[derive(Debug, Clone, Serialize)]
#[serde(
    tag = "type",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum Event {
    Session {
        id: i64,
        facts: Vec<Fact>,
        /// The digest of every delivery made in this session so far (an addition to DESIGN
        /// §14b: the page verifies past deliveries too, not only the running one).
        sent: Vec<crate::store::Sent>,
    },
    Fact {
        seq: i64,
        fact: Fact,
    },
    Delivering {
        to: String,
        /// The message shown as its `[MESSAGE]` (an addition to DESIGN §14b, see `sent`).
        message: String,
        prompt_sha256: String,
        bytes: usize,
    },
    Output {
        to: String,
        delta: String,
    },
    Sessions {
        list: Vec<SessionInfo>,
    },
    /// How each AI member is answered on this machine (sent after `session`; an addition to
    /// DESIGN §14b so the page shows what `agent-chatter agents` shows).
    Agents {
        list: Vec<AgentReport>,
    },
    Error {
        message: String,
    },
}

impl Event {
    /// The frame text: the event with `"v": 1`.
    pub fn to_frame(&self) -> String {
        let mut value = serde_json::to_value(self).unwrap_or(Value::Null);
        if let Value::Object(map) = &mut value {
            map.insert("v".to_string(), Value::from(VERSION));
        }
        value.to_string()
    }
}

/// One AI member's agent on this machine.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentReport {
    pub member: String,
    /// True when its command is installed and runs; false when the simulator answers.
    pub runs: bool,
    /// The command line (program and arguments), when one is configured.
    pub command: Option<String>,
}

/// Reads one command frame; the error names what is wrong, in the page developer's terms.
pub fn decode(frame: &str) -> Result<Command, String> {
    let value: Value = serde_json::from_str(frame).map_err(|e| {
        format!(
            "frame is not JSON (line {}, column {})",
            e.line(),
            e.column()
        )
    })?;
    let obj = value.as_object().ok_or("frame must be a JSON object")?;
    match obj.get("v").and_then(Value::as_u64) {
        Some(VERSION) => {}
        Some(v) => {
            return Err(format!(
                "v: protocol version {v} is not spoken here (expected {VERSION})"
            ))
        }
        None => return Err(format!("v: missing (expected {VERSION})")),
    }
    let kind = obj
        .get("type")
        .and_then(Value::as_str)
        .ok_or("type: missing or not a string")?;
    let string = |key: &str| {
        obj.get(key)
            .and_then(Value::as_str)
            .map(str::to_string)
            .ok_or_else(|| format!("{kind}.{key}: missing or not a string"))
    };
    Ok(match kind {
        "hello" => Command::Hello { token: string("token")? },
        "apply" => {
            let raw = obj.get("fact").ok_or("apply.fact: missing")?;
            let fact: Fact = serde_json::from_value(raw.clone())
                .map_err(|e| format!("apply.fact: {e}"))?;
            match fact {
                Fact::Replied { .. } | Fact::Failed { .. } => {
                    return Err(format!(
                        "apply.fact: a {} fact comes from the agent the bridge runs, never from the page",
                        fact.kind()
                    ))
                }
                fact => Command::Apply { fact: Box::new(fact) },
            }
        }
        "cancel" => Command::Cancel { to: string("to")? },
        "listSessions" => Command::ListSessions,
        "openSession" => Command::OpenSession {
            id: obj
                .get("id")
                .and_then(Value::as_i64)
                .ok_or("openSession.id: missing or not an integer")?,
        },
        "newSession" => Command::NewSession,
        other => {
            return Err(format!(
                "type: unknown command {other:?} (expected hello, apply, cancel, listSessions, openSession or newSession)"
            ))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_decode() {
        assert_eq!(
            decode(r#"{"v":1,"type":"hello","token":"t"}"#),
            Ok(Command::Hello { token: "t".into() })
        );
        assert_eq!(
            decode(r#"{"v":1,"type":"openSession","id":3}"#),
            Ok(Command::OpenSession { id: 3 })
        );
        assert!(matches!(
            decode(
                r#"{"v":1,"type":"apply","fact":{"type":"human","text":"hi","sender":null,"at":1}}"#
            ),
            Ok(Command::Apply { .. })
        ));
    }

    #[test]
    fn bad_frames_say_what_is_wrong() {
        let cases = [
            ("{", "frame is not JSON (line 1, column 1)"),
            ("[]", "frame must be a JSON object"),
            (r#"{"type":"hello"}"#, "v: missing (expected 1)"),
            (r#"{"v":2,"type":"hello"}"#, "v: protocol version 2 is not spoken here (expected 1)"),
            (r#"{"v":1}"#, "type: missing or not a string"),
            (r#"{"v":1,"type":"hello"}"#, "hello.token: missing or not a string"),
            (r#"{"v":1,"type":"shout"}"#, "type: unknown command \"shout\" (expected hello, apply, cancel, listSessions, openSession or newSession)"),
            (r#"{"v":1,"type":"apply","fact":{"type":"replied","to":"max","text":"x","at":1}}"#, "apply.fact: a replied fact comes from the agent the bridge runs, never from the page"),
        ];
        for (frame, want) in cases {
            assert_eq!(decode(frame).unwrap_err(), want, "{frame}");
        }
        let err = decode(r#"{"v":1,"type":"apply","fact":{"type":"human"}}"#).unwrap_err();
        assert!(
            err.starts_with("apply.fact: ") && err.contains("text"),
            "{err}"
        );
    }

    #[test]
    fn events_carry_the_version() {
        let frame = Event::Error {
            message: "x".into(),
        }
        .to_frame();
        let value: Value = serde_json::from_str(&frame).unwrap();
        assert_eq!(value["v"], 1);
        assert_eq!(value["type"], "error");
        let frame = Event::Delivering {
            to: "max".into(),
            message: "msg-1".into(),
            prompt_sha256: "ab".into(),
            bytes: 3,
        }
        .to_frame();
        assert!(frame.contains(r#""promptSha256":"ab""#), "{frame}");
        assert!(frame.contains(r#""message":"msg-1""#), "{frame}");
    }
}
