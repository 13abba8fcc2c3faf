//! The page ⇄ bridge protocol (docs/architecture.md §14b) as one set of types every side
//! shares: the bridge reads [`Command`]s and writes [`Event`]s, the page and the terminal chat
//! read [`Event`]s and the page writes [`Command`]s. Frames are JSON text
//! `{"v": 1, "type": …, …}`; nothing here does I/O.
//!
//! Commands come from outside the bridge's trust (any page that got past the token), so they
//! are read by [`decode_command`], whose [`FrameError`] names what was wrong in the frame.
//! Events come from the bridge and are read with [`decode_event`].

use serde::{Deserialize, Serialize};
use serde_json::Value;
use thiserror::Error;

use crate::activity::{Activity, ApprovalRequest, DecidedBy, RunActivity};
use crate::session::Fact;
use crate::team::RunSettings;

/// The protocol version spoken here; every frame carries it as `v`.
pub(crate) const VERSION: u64 = 1;

/// The largest frame the bridge accepts (a message is at most 1 MiB; a fact holding a team or
/// a scenario can be bigger, but not this big).
pub const MAX_FRAME_BYTES: usize = 16 * 1024 * 1024;

/// Page → bridge.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(
    tag = "type",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum Command {
    /// The first frame of a connection, with the launch token; anything else first closes it.
    Hello {
        token: String,
    },
    /// Only `setTeam`, `setSettings`, `human`, `retry` and `loadScenario`: replies and
    /// failures come from the agents the bridge runs, never from a page; a member leaves by
    /// `leaveTeam`, which names the session.
    Apply {
        fact: Box<Fact>,
    },
    /// Stop the running delivery to this member.
    Cancel {
        to: String,
    },
    ListSessions,
    OpenSession {
        id: i64,
    },
    NewSession,
    /// Names session `id` (see [`session_name`](crate::library::session_name): trimmed, 1 to
    /// [`MAX_NAME_CHARS`](crate::library::MAX_NAME_CHARS) characters). Every page then gets
    /// `sessions`.
    RenameSession {
        id: i64,
        name: String,
    },
    /// Searches every session's human messages and replies; the answer, `searchResults`, goes
    /// to the page that asked. Any text is a query: words are matched as words (ignoring case
    /// and accents), and a query the search syntax cannot read is searched as a phrase.
    SearchSessions {
        query: String,
    },
    /// "Continue from here": a new session whose log is the first `upto` facts of session
    /// `id` (`upto` is a fact's `seq`, 1-based), named
    /// [`fork_name`](crate::library::fork_name). The bridge opens it as on `openSession`
    /// (every page gets its `session`) and sends `sessions`; session `id` is unchanged.
    ForkSession {
        id: i64,
        upto: u64,
    },
    /// Answers the open approval `request` of the member `to` with the agent's option
    /// `option` (docs/architecture.md §14d); only for the session the page has open.
    AnswerApproval {
        to: String,
        request: String,
        option: String,
    },
    /// What is known of one ended run beyond its fact (docs/architecture.md §14b): the run of
    /// member `to` in session `session` whose outcome's fact has the time `at` (ms since the
    /// epoch). The answer, `runDetails`, goes to the page that asked; an unknown session or
    /// run is an `error` naming it.
    RunDetails {
        session: i64,
        to: String,
        at: u64,
    },
    /// Member `member` (an id) leaves the team of session `session` from now on (a
    /// `memberLeft` fact the bridge stamps with its clock, docs/architecture.md §6b): their
    /// messages stay theirs and they get no more messages. Only for the session the page has
    /// open; every page gets the fact.
    LeaveTeam {
        session: i64,
        member: String,
    },
}

/// Bridge → page (and the terminal chat, which reads the same events).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(
    tag = "type",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum Event {
    /// The whole log of the open session (on connect, on open, and to a page that fell
    /// behind), with the digest of every delivery made in it so far, so a page verifies past
    /// deliveries too.
    Session {
        id: i64,
        facts: Vec<Fact>,
        sent: Vec<Sent>,
        /// The activity of each run of the session that reported any (agents over ACP),
        /// the run in flight's so far included.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        activity: Vec<RunActivity>,
        /// Set when this session is opened because a page forked another (`forkSession`):
        /// every page shown it can say what happened instead of guessing from its name.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        forked: Option<Forked>,
    },
    /// One new fact, committed; `seq` is its 1-based position in the log.
    Fact {
        seq: u64,
        fact: Fact,
    },
    /// A delivery handed to an agent: what it showed as `[MESSAGE]` (`msg-3`), the SHA-256 of
    /// the exact bytes sent (prompt and system flag) and their size.
    Delivering {
        to: String,
        message: String,
        prompt_sha256: String,
        bytes: usize,
    },
    /// Streamed text of the running agent (not stored: only its final text is a fact).
    Output {
        to: String,
        delta: String,
    },
    /// The running agent's CLI is retrying (docs/architecture.md §14c: Claude
    /// `system/api_retry`, Codex `Reconnecting… n/m`): attempt `attempt` of at most `max`,
    /// and why. Shown live, not stored.
    Retrying {
        to: String,
        attempt: u32,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        max: Option<u32>,
        reason: String,
    },
    /// What the running agent did (a tool call's latest state, its plan, a thought, its
    /// context fill, a settled approval): shown and stored with the run, never a fact.
    Activity {
        to: String,
        message: String,
        item: Activity,
    },
    /// The running agent asks whether it may make a tool call: the member *needs you*.
    Approval {
        to: String,
        message: String,
        request: ApprovalRequest,
    },
    /// An approval was answered (by a person, a rule, the timeout, or the run's end).
    ApprovalSettled {
        to: String,
        request: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        option: Option<String>,
        by: DecidedBy,
    },
    Sessions {
        list: Vec<SessionInfo>,
    },
    /// How each AI member is answered on this machine (sent after `session`).
    Agents {
        list: Vec<AgentReport>,
    },
    /// The answer to `searchSessions`: each matching session once, with its best matching
    /// fact, the best first, at most [`MAX_SEARCH_HITS`](crate::library::MAX_SEARCH_HITS).
    SearchResults {
        query: String,
        hits: Vec<SearchHit>,
    },
    /// The answer to `runDetails`.
    RunDetails(RunDetails),
    /// What was wrong with a command; the session is unchanged.
    Error {
        message: String,
    },
}

/// The most of a run's kept output a `runDetails` answer carries (64 KiB); `agent-chatter
/// outputs SESSION --member TO --at AT` prints it whole.
pub const MAX_DETAILS_OUTPUT_BYTES: usize = 64 * 1024;

/// What the bridge knows of one ended run (`runDetails`): never an environment value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunDetails {
    pub session: i64,
    pub to: String,
    pub at: u64,
    /// The model that answered, as the CLI's stream named it (Claude's and Gemini's `init`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The model the member's run settings asked for, when they set one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub configured_model: Option<String>,
    /// The program and its arguments as the run was started (empty when the bridge did not
    /// note them: a simulated run, one from before this was kept). Environment variables are
    /// not in it, names or values.
    #[serde(default)]
    pub argv: Vec<String>,
    /// The run's kept output (what `agent-chatter outputs` prints), as text, cut to its first
    /// [`MAX_DETAILS_OUTPUT_BYTES`]; `None` when none was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<String>,
    /// The kept output's whole size in bytes (more than `output` holds when it was cut).
    #[serde(default)]
    pub output_bytes: u64,
}

/// One stored session, as the session library shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionInfo {
    pub id: i64,
    /// Its name: the user's (`renameSession`), else its team's name when it was created.
    pub name: String,
    /// Its team's name when it was created.
    pub title: String,
    /// When it was created, in ms since the epoch.
    pub created_at: i64,
    /// When its last fact was written (or it was created), in ms since the epoch.
    #[serde(default)]
    pub updated_at: i64,
    /// Its first human message (or, for a session opened from a scenario, the scenario's
    /// first message), cut by [`first_message`](crate::library::first_message).
    #[serde(default)]
    pub first_message: Option<String>,
    /// How many facts its log holds.
    pub facts: i64,
}

/// One match of `searchSessions`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SearchHit {
    /// The session's id.
    pub session: i64,
    /// The session's name.
    pub name: String,
    /// The matching fact's `seq` (1-based) in that session.
    pub seq: u64,
    /// The text around the match, in parts: the matched words are the parts marked `hit`;
    /// `…` stands where text was left out.
    pub snippet: Vec<SnippetPart>,
}

/// A piece of a [`SearchHit`]'s snippet.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SnippetPart {
    pub text: String,
    /// True for matched words.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub hit: bool,
}

/// A session just made by a fork: of session `from`, at its message number `at` (#3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Forked {
    pub from: i64,
    pub at: u64,
}

/// The digest of what one delivery sent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Sent {
    /// The message the delivery showed as `[MESSAGE]` (`msg-3`).
    pub message: String,
    pub to: String,
    pub prompt_sha256: String,
}

/// One AI member's agent on this machine.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentReport {
    pub member: String,
    /// True when its command is installed and runs.
    pub runs: bool,
    /// True when the built-in simulator answers it (chosen: `--simulate`, `agentType:
    /// "simulated"`, or the demo team without the CLI).
    pub simulated: bool,
    /// The command line (program and arguments), when one is configured.
    pub command: Option<String>,
    /// Why it cannot run here and what to do, when neither runs nor is simulated: every
    /// delivery to it fails with this reason.
    pub problem: Option<String>,
    /// Its run settings as the bridge applies them (docs/architecture.md §14c), read only:
    /// they come from files on the bridge's machine, never from the page. Environment values
    /// are not sent, only their names (`env` maps each name to `""`).
    #[serde(default)]
    pub settings: RunSettings,
    /// The working directory it runs in; the bridge's own when absent.
    #[serde(default)]
    pub dir: Option<String>,
    /// Where its settings come from (`team file /home/me/team.json`).
    #[serde(default)]
    pub source: Option<String>,
}

/// A frame that does not read, in the terms of someone writing a page for the bridge.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum FrameError {
    #[error("frame is not JSON (line {line}, column {column})")]
    NotJson { line: usize, column: usize },
    #[error("frame must be a JSON object")]
    NotAnObject,
    #[error("v: missing (expected {VERSION})")]
    NoVersion,
    #[error("v: protocol version {0} is not spoken here (expected {VERSION})")]
    WrongVersion(u64),
    #[error("type: missing or not a string")]
    NoType,
    #[error("type: unknown command {0:?} (expected hello, apply, cancel, listSessions, openSession, newSession, renameSession, searchSessions, forkSession, answerApproval, runDetails or leaveTeam)")]
    UnknownCommand(String),
    #[error("type: unknown event {0:?}")]
    UnknownEvent(String),
    /// A field of a known frame type is missing or of the wrong kind.
    #[error("{kind}.{key}: missing or not {expected}")]
    Field {
        kind: &'static str,
        key: &'static str,
        expected: &'static str,
    },
    #[error("apply.fact: missing")]
    NoFact,
    #[error("apply.fact: {0}")]
    BadFact(String),
    #[error("apply.fact: a {0} fact comes from the agent the bridge runs, never from the page")]
    AgentsFact(&'static str),
    #[error("apply.fact: a member leaves with leaveTeam{{session, member}}, which names the session it is for")]
    LeaveByCommand,
    /// An event frame of a known type whose fields do not read.
    #[error("{kind}: {reason}")]
    BadEvent { kind: String, reason: String },
}

/// The frame text of `command`, with `v`.
pub fn encode_command(command: &Command) -> String {
    frame(command)
}

/// The frame text of `event`, with `v`.
pub fn encode_event(event: &Event) -> String {
    frame(event)
}

fn frame<T: Serialize>(body: &T) -> String {
    #[derive(Serialize)]
    struct Framed<'a, T> {
        v: u64,
        #[serde(flatten)]
        body: &'a T,
    }
    // Every type here serialises (string keys, no non-finite floats): no error to report.
    serde_json::to_string(&Framed { v: VERSION, body }).unwrap_or_default()
}

/// The object, its version checked, and its `type`.
fn envelope(text: &str) -> Result<(serde_json::Map<String, Value>, String), FrameError> {
    let value: Value = serde_json::from_str(text).map_err(|e| FrameError::NotJson {
        line: e.line(),
        column: e.column(),
    })?;
    let Value::Object(obj) = value else {
        return Err(FrameError::NotAnObject);
    };
    match obj.get("v").and_then(Value::as_u64) {
        Some(VERSION) => {}
        Some(v) => return Err(FrameError::WrongVersion(v)),
        None => return Err(FrameError::NoVersion),
    }
    let kind = obj
        .get("type")
        .and_then(Value::as_str)
        .ok_or(FrameError::NoType)?
        .to_string();
    Ok((obj, kind))
}

/// Reads one command frame from a page.
pub fn decode_command(text: &str) -> Result<Command, FrameError> {
    let (mut obj, kind) = envelope(text)?;
    let string = |obj: &serde_json::Map<String, Value>, kind, key| {
        obj.get(key)
            .and_then(Value::as_str)
            .map(str::to_string)
            .ok_or(FrameError::Field {
                kind,
                key,
                expected: "a string",
            })
    };
    let integer = |obj: &serde_json::Map<String, Value>, kind, key| {
        obj.get(key)
            .and_then(Value::as_i64)
            .ok_or(FrameError::Field {
                kind,
                key,
                expected: "an integer",
            })
    };
    let count = |obj: &serde_json::Map<String, Value>, kind, key, expected| {
        obj.get(key)
            .and_then(Value::as_u64)
            .ok_or(FrameError::Field {
                kind,
                key,
                expected,
            })
    };
    Ok(match kind.as_str() {
        "hello" => Command::Hello {
            token: string(&obj, "hello", "token")?,
        },
        "apply" => {
            let raw = obj.remove("fact").ok_or(FrameError::NoFact)?;
            let fact: Fact =
                serde_json::from_value(raw).map_err(|e| FrameError::BadFact(e.to_string()))?;
            match fact {
                Fact::Replied { .. } | Fact::Failed { .. } => {
                    return Err(FrameError::AgentsFact(fact.kind()))
                }
                Fact::MemberLeft { .. } => return Err(FrameError::LeaveByCommand),
                fact => Command::Apply {
                    fact: Box::new(fact),
                },
            }
        }
        "cancel" => Command::Cancel {
            to: string(&obj, "cancel", "to")?,
        },
        "listSessions" => Command::ListSessions,
        "openSession" => Command::OpenSession {
            id: integer(&obj, "openSession", "id")?,
        },
        "newSession" => Command::NewSession,
        "renameSession" => Command::RenameSession {
            id: integer(&obj, "renameSession", "id")?,
            name: string(&obj, "renameSession", "name")?,
        },
        "searchSessions" => Command::SearchSessions {
            query: string(&obj, "searchSessions", "query")?,
        },
        "forkSession" => Command::ForkSession {
            id: integer(&obj, "forkSession", "id")?,
            upto: count(&obj, "forkSession", "upto", "a fact number (1 or more)")?,
        },
        "answerApproval" => Command::AnswerApproval {
            to: string(&obj, "answerApproval", "to")?,
            request: string(&obj, "answerApproval", "request")?,
            option: string(&obj, "answerApproval", "option")?,
        },
        "runDetails" => Command::RunDetails {
            session: integer(&obj, "runDetails", "session")?,
            to: string(&obj, "runDetails", "to")?,
            at: count(&obj, "runDetails", "at", "a time in ms since the epoch")?,
        },
        "leaveTeam" => Command::LeaveTeam {
            session: integer(&obj, "leaveTeam", "session")?,
            member: string(&obj, "leaveTeam", "member")?,
        },
        _ => return Err(FrameError::UnknownCommand(kind)),
    })
}

/// The fields of each event as [`decode_event`] reads them from the frame's text.
mod event_fields {
    use serde::Deserialize;

    use crate::activity::{Activity, ApprovalRequest, DecidedBy, RunActivity};
    use crate::session::Fact;

    use super::{Forked, SearchHit, Sent};

    #[derive(Deserialize)]
    pub(super) struct Session {
        pub(super) id: i64,
        pub(super) facts: Vec<Fact>,
        pub(super) sent: Vec<Sent>,
        #[serde(default)]
        pub(super) activity: Vec<RunActivity>,
        #[serde(default)]
        pub(super) forked: Option<Forked>,
    }
    #[derive(Deserialize)]
    pub(super) struct Doing {
        pub(super) to: String,
        pub(super) message: String,
        pub(super) item: Activity,
    }
    #[derive(Deserialize)]
    pub(super) struct Asking {
        pub(super) to: String,
        pub(super) message: String,
        pub(super) request: ApprovalRequest,
    }
    #[derive(Deserialize)]
    pub(super) struct Settled {
        pub(super) to: String,
        pub(super) request: String,
        #[serde(default)]
        pub(super) option: Option<String>,
        pub(super) by: DecidedBy,
    }
    #[derive(Deserialize)]
    pub(super) struct Committed {
        pub(super) seq: u64,
        pub(super) fact: Fact,
    }
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub(super) struct Delivering {
        pub(super) to: String,
        pub(super) message: String,
        pub(super) prompt_sha256: String,
        pub(super) bytes: usize,
    }
    #[derive(Deserialize)]
    pub(super) struct Output {
        pub(super) to: String,
        pub(super) delta: String,
    }
    #[derive(Deserialize)]
    pub(super) struct Retrying {
        pub(super) to: String,
        pub(super) attempt: u32,
        #[serde(default)]
        pub(super) max: Option<u32>,
        pub(super) reason: String,
    }
    #[derive(Deserialize)]
    pub(super) struct List<T> {
        pub(super) list: Vec<T>,
    }
    #[derive(Deserialize)]
    pub(super) struct SearchResults {
        pub(super) query: String,
        pub(super) hits: Vec<SearchHit>,
    }
    #[derive(Deserialize)]
    pub(super) struct Error {
        pub(super) message: String,
    }
}

/// Reads one event frame from the bridge.
///
/// Each kind's fields are read straight from the text (`v` and `type` skipped as unknown
/// keys), not with `Event`'s derived reader: an internally tagged enum buffers the whole frame
/// in serde's `Content` first, and that second reader of every field type cost the page's
/// wasm some 30 KB (docs/architecture.md §18).
pub fn decode_event(text: &str) -> Result<Event, FrameError> {
    use event_fields::*;
    fn read<'a, T: Deserialize<'a>>(text: &'a str) -> Result<T, serde_json::Error> {
        serde_json::from_str(text)
    }

    let (_, kind) = envelope(text)?;
    let event = match kind.as_str() {
        "session" => read(text).map(|s: Session| Event::Session {
            id: s.id,
            facts: s.facts,
            sent: s.sent,
            activity: s.activity,
            forked: s.forked,
        }),
        "fact" => read(text).map(|Committed { seq, fact }| Event::Fact { seq, fact }),
        "delivering" => read(text).map(|d: Delivering| Event::Delivering {
            to: d.to,
            message: d.message,
            prompt_sha256: d.prompt_sha256,
            bytes: d.bytes,
        }),
        "output" => read(text).map(|Output { to, delta }| Event::Output { to, delta }),
        "retrying" => read(text).map(|r: Retrying| Event::Retrying {
            to: r.to,
            attempt: r.attempt,
            max: r.max,
            reason: r.reason,
        }),
        "activity" => read(text).map(|d: Doing| Event::Activity {
            to: d.to,
            message: d.message,
            item: d.item,
        }),
        "approval" => read(text).map(|a: Asking| Event::Approval {
            to: a.to,
            message: a.message,
            request: a.request,
        }),
        "approvalSettled" => read(text).map(|s: Settled| Event::ApprovalSettled {
            to: s.to,
            request: s.request,
            option: s.option,
            by: s.by,
        }),
        "sessions" => read(text).map(|List { list }| Event::Sessions { list }),
        "agents" => read(text).map(|List { list }| Event::Agents { list }),
        "searchResults" => {
            read(text).map(|SearchResults { query, hits }| Event::SearchResults { query, hits })
        }
        "runDetails" => read(text).map(Event::RunDetails),
        "error" => read(text).map(|Error { message }| Event::Error { message }),
        _ => return Err(FrameError::UnknownEvent(kind)),
    };
    event.map_err(|e| {
        // What was wrong, without where in the one-line frame (the derived reader's words).
        let reason = e.to_string();
        let reason = match reason.rsplit_once(" at line ") {
            Some((what, _)) => what.to_string(),
            None => reason,
        };
        FrameError::BadEvent { kind, reason }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::Millis;

    #[test]
    fn commands_decode() {
        assert_eq!(
            decode_command(r#"{"v":1,"type":"hello","token":"t"}"#),
            Ok(Command::Hello { token: "t".into() })
        );
        assert_eq!(
            decode_command(r#"{"v":1,"type":"openSession","id":3}"#),
            Ok(Command::OpenSession { id: 3 })
        );
        assert!(matches!(
            decode_command(
                r#"{"v":1,"type":"apply","fact":{"type":"human","text":"hi","sender":null,"at":1}}"#
            ),
            Ok(Command::Apply { .. })
        ));
    }

    #[test]
    fn bad_command_frames_say_what_is_wrong() {
        let cases = [
            ("{", "frame is not JSON (line 1, column 1)"),
            ("[]", "frame must be a JSON object"),
            (r#"{"type":"hello"}"#, "v: missing (expected 1)"),
            (r#"{"v":2,"type":"hello"}"#, "v: protocol version 2 is not spoken here (expected 1)"),
            (r#"{"v":1}"#, "type: missing or not a string"),
            (r#"{"v":1,"type":"hello"}"#, "hello.token: missing or not a string"),
            (r#"{"v":1,"type":"openSession","id":"x"}"#, "openSession.id: missing or not an integer"),
            (r#"{"v":1,"type":"shout"}"#, "type: unknown command \"shout\" (expected hello, apply, cancel, listSessions, openSession, newSession, renameSession, searchSessions, forkSession, answerApproval, runDetails or leaveTeam)"),
            (r#"{"v":1,"type":"apply"}"#, "apply.fact: missing"),
            (r#"{"v":1,"type":"leaveTeam","session":1}"#, "leaveTeam.member: missing or not a string"),
            (r#"{"v":1,"type":"leaveTeam","member":"bob"}"#, "leaveTeam.session: missing or not an integer"),
            (r#"{"v":1,"type":"apply","fact":{"type":"memberLeft","member":"bob","at":1}}"#, "apply.fact: a member leaves with leaveTeam{session, member}, which names the session it is for"),
            (r#"{"v":1,"type":"runDetails","session":1,"to":"max"}"#, "runDetails.at: missing or not a time in ms since the epoch"),
            (r#"{"v":1,"type":"runDetails","session":"1","to":"max","at":5}"#, "runDetails.session: missing or not an integer"),
            (r#"{"v":1,"type":"renameSession","id":1}"#, "renameSession.name: missing or not a string"),
            (r#"{"v":1,"type":"searchSessions"}"#, "searchSessions.query: missing or not a string"),
            (r#"{"v":1,"type":"forkSession","id":1,"upto":-1}"#, "forkSession.upto: missing or not a fact number (1 or more)"),
            (r#"{"v":1,"type":"apply","fact":{"type":"replied","to":"max","text":"x","at":1}}"#, "apply.fact: a replied fact comes from the agent the bridge runs, never from the page"),
        ];
        for (frame, want) in cases {
            assert_eq!(
                decode_command(frame).unwrap_err().to_string(),
                want,
                "{frame}"
            );
        }
        let err = decode_command(r#"{"v":1,"type":"apply","fact":{"type":"human"}}"#)
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("apply.fact: ") && err.contains("text"),
            "{err}"
        );
    }

    #[test]
    fn every_command_reads_back_as_written() {
        let commands = [
            Command::Hello { token: "t".into() },
            Command::Apply {
                fact: Box::new(Fact::Human {
                    text: "[NEXT: max] hi".into(),
                    sender: None,
                    at: Millis(5),
                }),
            },
            Command::Cancel { to: "max".into() },
            Command::ListSessions,
            Command::OpenSession { id: 7 },
            Command::NewSession,
            Command::RenameSession {
                id: 7,
                name: "Release notes, try 2".into(),
            },
            Command::SearchSessions {
                query: "\"changelog\" OR".into(),
            },
            Command::ForkSession { id: 7, upto: 3 },
            Command::AnswerApproval {
                to: "max".into(),
                request: "max-1".into(),
                option: "allow".into(),
            },
            Command::RunDetails {
                session: 7,
                to: "max".into(),
                at: 1_700_000_000_000,
            },
            Command::LeaveTeam {
                session: 7,
                member: "bob".into(),
            },
        ];
        for command in commands {
            let frame = encode_command(&command);
            assert!(frame.starts_with(r#"{"v":1,"type":""#), "{frame}");
            assert_eq!(decode_command(&frame), Ok(command));
        }
    }

    #[test]
    fn every_event_reads_back_as_written() {
        let events = [
            Event::Session {
                id: 1,
                facts: vec![Fact::replied("max", "hi", Millis(3))],
                sent: vec![Sent {
                    message: "msg-1".into(),
                    to: "max".into(),
                    prompt_sha256: "ab".into(),
                }],
                activity: vec![RunActivity {
                    message: "msg-1".into(),
                    to: "max".into(),
                    items: vec![Activity::Context { used: 5, size: 9 }],
                }],
                forked: None,
            },
            Event::Session {
                id: 2,
                facts: vec![],
                sent: vec![],
                activity: vec![],
                forked: Some(Forked { from: 1, at: 3 }),
            },
            Event::Activity {
                to: "max".into(),
                message: "msg-1".into(),
                item: Activity::ToolCall(crate::activity::ToolCall {
                    id: "t1".into(),
                    title: "Write a.txt".into(),
                    kind: crate::activity::ToolKind::Edit,
                    status: crate::activity::ToolStatus::Pending,
                    files: vec!["a.txt".into()],
                    diff: Some(crate::activity::DiffSize {
                        added: 1,
                        removed: 0,
                    }),
                }),
            },
            Event::ApprovalSettled {
                to: "max".into(),
                request: "max-1".into(),
                option: Some("allow".into()),
                by: DecidedBy::Person {
                    r#where: "page".into(),
                },
            },
            Event::Fact {
                seq: 2,
                fact: Fact::failed("max", "timed out", Millis(4)),
            },
            Event::Delivering {
                to: "max".into(),
                message: "msg-1".into(),
                prompt_sha256: "ab".into(),
                bytes: 3,
            },
            Event::Output {
                to: "max".into(),
                delta: "wor".into(),
            },
            Event::Sessions {
                list: vec![SessionInfo {
                    id: 1,
                    name: "Try 2".into(),
                    title: "crew".into(),
                    created_at: 9,
                    updated_at: 12,
                    first_message: Some("hi max".into()),
                    facts: 4,
                }],
            },
            Event::SearchResults {
                query: "max".into(),
                hits: vec![SearchHit {
                    session: 1,
                    name: "Try 2".into(),
                    seq: 2,
                    snippet: vec![
                        SnippetPart {
                            text: "hi ".into(),
                            hit: false,
                        },
                        SnippetPart {
                            text: "max".into(),
                            hit: true,
                        },
                    ],
                }],
            },
            Event::Agents {
                list: vec![AgentReport {
                    member: "max".into(),
                    runs: false,
                    simulated: false,
                    command: Some("claude -p".into()),
                    problem: Some("max: claude is not installed (not on PATH)".into()),
                    settings: crate::team::RunSettings {
                        model: Some("m1".into()),
                        permission_mode: Some(crate::team::PermissionMode::ReadOnly),
                        ..Default::default()
                    },
                    dir: Some("/srv/work".into()),
                    source: Some("team file /srv/team.json".into()),
                }],
            },
            Event::Retrying {
                to: "max".into(),
                attempt: 2,
                max: Some(10),
                reason: "HTTP 500: server_error".into(),
            },
            Event::RunDetails(RunDetails {
                session: 7,
                to: "max".into(),
                at: 5,
                model: Some("claude-x".into()),
                configured_model: None,
                argv: vec!["claude".into(), "-p".into()],
                output: Some("half".into()),
                output_bytes: 4,
            }),
            Event::Error {
                message: "x".into(),
            },
        ];
        for event in events {
            let frame = encode_event(&event);
            assert!(frame.starts_with(r#"{"v":1,"type":""#), "{frame}");
            assert_eq!(decode_event(&frame), Ok(event));
        }
    }

    #[test]
    fn event_fields_are_camel_case() {
        let frame = encode_event(&Event::Delivering {
            to: "max".into(),
            message: "msg-1".into(),
            prompt_sha256: "ab".into(),
            bytes: 3,
        });
        assert!(frame.contains(r#""promptSha256":"ab""#), "{frame}");
        assert!(frame.contains(r#""message":"msg-1""#), "{frame}");
    }

    #[test]
    fn session_fields_are_camel_case() {
        let frame = encode_command(&Command::ForkSession { id: 2, upto: 5 });
        assert_eq!(frame, r#"{"v":1,"type":"forkSession","id":2,"upto":5}"#);
        let frame = encode_event(&Event::Sessions {
            list: vec![SessionInfo {
                id: 1,
                name: "n".into(),
                title: "t".into(),
                created_at: 1,
                updated_at: 2,
                first_message: None,
                facts: 1,
            }],
        });
        for key in ["createdAt", "updatedAt", "firstMessage"] {
            assert!(frame.contains(&format!(r#""{key}""#)), "{frame}");
        }
    }

    #[test]
    fn bad_event_frames_say_what_is_wrong() {
        assert_eq!(
            decode_event(r#"{"v":1,"type":"shout"}"#)
                .unwrap_err()
                .to_string(),
            "type: unknown event \"shout\""
        );
        let err = decode_event(r#"{"v":1,"type":"fact","seq":1}"#)
            .unwrap_err()
            .to_string();
        assert_eq!(err, "fact: missing field `fact`");
    }
}
