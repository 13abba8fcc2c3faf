//! A real `agent-chatter serve` process on a free loopback port, with its own database, page
//! directory and agents file, and a WebSocket client that speaks docs/architecture.md §14b.

#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::Duration;

use agent_chatter::message::Millis;
use agent_chatter::protocol::{decode_event, encode_command, Command, Event, Forked, Sent};
use agent_chatter::session::{Fact, Failure};
use agent_chatter::usage::Usage;
use futures_util::{SinkExt, StreamExt};
use serde_json::{json, Value};
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::Message;

/// The `agent-chatter` binary: cargo's build of it for tests; for the load example (where
/// cargo names none), `$AGENT_CHATTER_BIN` or the release build.
pub fn bin() -> PathBuf {
    match option_env!("CARGO_BIN_EXE_agent-chatter") {
        Some(bin) => PathBuf::from(bin),
        None => std::env::var_os("AGENT_CHATTER_BIN").map_or_else(
            || Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/release/agent-chatter"),
            PathBuf::from,
        ),
    }
}

pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/agents")
        .join(name)
}

/// `agent-chatter chat` on the team, database (`chat.db`) and agents file of directory `d`
/// (as [`Bridge::new_dir`] writes them).
pub fn chat_command(d: &Path) -> std::process::Command {
    let mut cmd = std::process::Command::new(bin());
    cmd.arg("chat")
        .arg("--team")
        .arg(d.join("team.json"))
        .arg("--db")
        .arg(d.join("chat.db"))
        .arg("--agents")
        .arg(d.join("agents.json"));
    cmd
}

/// A team of one human and two agents: max (claude-code) and sarah (openai-codex).
pub fn team(max_agent_response_ms: Option<u64>) -> Value {
    let mut settings = json!({});
    if let Some(ms) = max_agent_response_ms {
        settings["maxAgentResponseMs"] = json!(ms);
    }
    json!({"name": "relay", "members": [
        {"name": "kailai", "kind": "human"},
        {"name": "max", "kind": "ai", "agentType": "claude-code", "systemInstruction": "You are Max."},
        {"name": "sarah", "kind": "ai", "agentType": "simulated"}],
        "settings": settings})
}

pub struct Bridge {
    pub dir: tempfile::TempDir,
    pub child: Child,
    pub port: u16,
    pub token: String,
}

impl Bridge {
    /// A fresh directory: page, team file, agents file (`max` → `max_script`; Codex never
    /// installed). In [`team`], `sarah` is answered by the simulator, as chosen.
    pub fn new_dir(team: &Value, max_script: &str) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("dist")).unwrap();
        std::fs::write(
            dir.path().join("dist/index.html"),
            "<!doctype html><title>page</title>",
        )
        .unwrap();
        std::fs::write(dir.path().join("team.json"), team.to_string()).unwrap();
        let agents = json!({"agents": {
            "max": {"command": fixture(max_script).display().to_string(), "args": []},
            "openai-codex": {"command": "agent-chatter-test-no-such-codex"}
        }});
        std::fs::write(dir.path().join("agents.json"), agents.to_string()).unwrap();
        dir
    }

    pub fn start(dir: tempfile::TempDir, session: Option<i64>) -> Bridge {
        Bridge::start_with(dir, session, &[])
    }

    /// [`Bridge::start`] with more arguments for `serve`.
    pub fn start_with(dir: tempfile::TempDir, session: Option<i64>, args: &[&str]) -> Bridge {
        let (child, port, token) = spawn(dir.path(), session, args, Stdio::null());
        Bridge {
            dir,
            child,
            port,
            token,
        }
    }

    /// [`Bridge::start_with`], its stderr written to `stderr-N.log` in its directory (N: the
    /// count of such logs before it); see [`Bridge::stderr`].
    pub fn start_logged(dir: tempfile::TempDir, session: Option<i64>, args: &[&str]) -> Bridge {
        let n = (0..)
            .find(|n| !dir.path().join(format!("stderr-{n}.log")).exists())
            .unwrap();
        let log = std::fs::File::create(dir.path().join(format!("stderr-{n}.log"))).unwrap();
        let (child, port, token) = spawn(dir.path(), session, args, Stdio::from(log));
        Bridge {
            dir,
            child,
            port,
            token,
        }
    }

    /// What the last bridge started with [`Bridge::start_logged`] in this directory printed
    /// on stderr so far.
    pub fn stderr(&self) -> String {
        let last = (0..)
            .take_while(|n| self.dir.path().join(format!("stderr-{n}.log")).exists())
            .last()
            .expect("started with start_logged");
        std::fs::read_to_string(self.dir.path().join(format!("stderr-{last}.log"))).unwrap()
    }

    /// A second bridge on this one's files (database, team, agents), opening `session`.
    pub fn beside(&self, session: Option<i64>) -> Bridge {
        let (child, port, token) = spawn(self.dir.path(), session, &[], Stdio::null());
        Bridge {
            dir: tempfile::tempdir().unwrap(),
            child,
            port,
            token,
        }
    }

    pub fn origin(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// A raw HTTP GET with the given headers; returns the status code and body.
    pub fn get(&self, path: &str, headers: &[(&str, &str)]) -> (u16, String) {
        let mut stream = std::net::TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        let mut req = format!("GET {path} HTTP/1.1\r\nConnection: close\r\n");
        for (k, v) in headers {
            req.push_str(&format!("{k}: {v}\r\n"));
        }
        req.push_str("\r\n");
        stream.write_all(req.as_bytes()).unwrap();
        let mut response = String::new();
        stream.read_to_string(&mut response).unwrap();
        let status = response.split_whitespace().nth(1).unwrap().parse().unwrap();
        let body = response
            .split_once("\r\n\r\n")
            .map(|(_, b)| b.to_string())
            .unwrap_or_default();
        (status, body)
    }

    pub fn kill(mut self) -> tempfile::TempDir {
        let _ = self.child.kill();
        let _ = self.child.wait();
        std::mem::replace(&mut self.dir, tempfile::tempdir().unwrap())
    }

    pub async fn connect(&self, origin: Option<&str>) -> Result<Client, String> {
        let mut req = format!("ws://127.0.0.1:{}/api/ws", self.port)
            .into_client_request()
            .unwrap();
        if let Some(origin) = origin {
            req.headers_mut().insert("origin", origin.parse().unwrap());
        }
        let (ws, _) = tokio_tungstenite::connect_async(req)
            .await
            .map_err(|e| e.to_string())?;
        Ok(Client { ws })
    }

    /// Connected and greeted: returns the client and the `session` event (the `agents` event
    /// that follows it is read too).
    pub async fn hello(&self) -> (Client, Value) {
        let mut client = self.connect(Some(&self.origin())).await.unwrap();
        client
            .send(json!({"v": 1, "type": "hello", "token": self.token}))
            .await;
        let session = client.until(|e| e["type"] == "session").await;
        // Then how each member is answered here.
        client.until(|e| e["type"] == "agents").await;
        (client, session)
    }

    /// Connected, `hello` sent with the launch token; nothing read yet.
    pub async fn greeted(&self) -> Client {
        let mut client = self.connect(Some(&self.origin())).await.unwrap();
        client
            .send_command(Command::Hello {
                token: self.token.clone(),
            })
            .await;
        client
    }

    /// [`Bridge::hello`], typed: the client and the `session` event (the `agents` event that
    /// follows it is read too).
    pub async fn join(&self) -> (Client, Opened) {
        let mut client = self.greeted().await;
        let session = client.until_session().await;
        client.wait_for(|e| matches!(e, Event::Agents { .. })).await;
        (client, session)
    }
}

/// The `session` event: the open session's id, its log, and the digest of every delivery made
/// in it.
#[derive(Debug, Clone)]
pub struct Opened {
    pub id: i64,
    pub facts: Vec<Fact>,
    pub sent: Vec<Sent>,
    /// The session forked and where, when a fork made this one.
    pub forked: Option<Forked>,
}

/// The `apply` command of a human message, as the page sends it (no sender, at 1 ms).
pub fn human(text: &str) -> Command {
    apply(Fact::human(text, Millis(1)))
}

/// The `apply` command of `fact`.
pub fn apply(fact: Fact) -> Command {
    Command::Apply {
        fact: Box::new(fact),
    }
}

/// The `apply` command of the user's retry of `to`'s failed delivery.
pub fn retry(to: &str, at: u64) -> Command {
    apply(Fact::Retry {
        to: to.into(),
        at: Millis(at),
    })
}

/// The `cancel` command of `to`'s run.
pub fn cancel(to: &str) -> Command {
    Command::Cancel { to: to.into() }
}

/// Whether `e` announces a delivery.
pub fn is_delivering(e: &Event) -> bool {
    matches!(e, Event::Delivering { .. })
}

/// The `apply` command of a `setTeam` fact of `team` (a team file's JSON, as [`team`] makes).
pub fn set_team(team: &Value) -> Command {
    apply(Fact::set_team(
        serde_json::from_value(team.clone()).unwrap(),
    ))
}

/// A `failed` fact, committed as fact `seq`.
#[derive(Debug, Clone)]
pub struct Failed {
    pub seq: u64,
    pub to: String,
    pub reason: String,
    pub failure: Option<Failure>,
}

/// A `replied` fact, committed as fact `seq`.
#[derive(Debug, Clone)]
pub struct Replied {
    pub seq: u64,
    pub to: String,
    pub text: String,
    pub usage: Option<Usage>,
}

/// The longest a [`Client::wait_for`] waits for its event, however busy the socket.
const DEADLINE: Duration = Duration::from_secs(30);

impl Drop for Bridge {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub struct Client {
    pub ws: tokio_tungstenite::WebSocketStream<
        tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>,
    >,
}

impl Client {
    /// Sends a raw frame: for the tests of frames the protocol's types cannot write.
    pub async fn send(&mut self, frame: Value) {
        self.send_text(frame.to_string()).await;
    }

    /// Sends `text` as one text frame, as is.
    pub async fn send_text(&mut self, text: String) {
        self.ws.send(Message::Text(text.into())).await.unwrap();
    }

    /// Sends `command`, written by the protocol's own encoder.
    pub async fn send_command(&mut self, command: Command) {
        self.send_text(encode_command(&command)).await;
    }

    /// The next event, read by the protocol's own decoder, or `None` when the socket closed;
    /// panics after 10 s of silence, or on a frame that does not decode.
    pub async fn next_event(&mut self) -> Option<Event> {
        let text = self.next_text().await?;
        Some(decode_event(&text).unwrap_or_else(|e| panic!("{e}: {text}")))
    }

    /// Events up to and including the first matching `pred`; panics when the socket closes
    /// first or after [`DEADLINE`].
    pub async fn collect_events_until(&mut self, pred: impl Fn(&Event) -> bool) -> Vec<Event> {
        let deadline = tokio::time::Instant::now() + DEADLINE;
        let mut seen = Vec::new();
        loop {
            let e = tokio::time::timeout_at(deadline, self.next_event())
                .await
                .unwrap_or_else(|_| panic!("no such event within {DEADLINE:?}; saw {seen:?}"))
                .unwrap_or_else(|| panic!("closed; saw {seen:?}"));
            let done = pred(&e);
            seen.push(e);
            if done {
                return seen;
            }
        }
    }

    /// The first event matching `pred` (those before it are dropped), within [`DEADLINE`].
    pub async fn wait_for(&mut self, pred: impl Fn(&Event) -> bool) -> Event {
        self.collect_events_until(pred).await.pop().unwrap()
    }

    /// Events up to and including the first `fact` event whose fact is of kind `kind`.
    pub async fn collect_until_fact_kind(&mut self, kind: &str) -> Vec<Event> {
        self.collect_events_until(|e| matches!(e, Event::Fact { fact, .. } if fact.kind() == kind))
            .await
    }

    /// The first fact of kind `kind` (`replied`, `failed`, …), with its `seq`.
    pub async fn until_fact_kind(&mut self, kind: &str) -> (u64, Fact) {
        match self
            .wait_for(|e| matches!(e, Event::Fact { fact, .. } if fact.kind() == kind))
            .await
        {
            Event::Fact { seq, fact } => (seq, fact),
            _ => unreachable!(),
        }
    }

    /// The fact committed as `seq`.
    pub async fn until_seq(&mut self, seq: u64) -> Fact {
        match self
            .wait_for(|e| matches!(e, Event::Fact { seq: s, .. } if *s == seq))
            .await
        {
            Event::Fact { fact, .. } => fact,
            _ => unreachable!(),
        }
    }

    /// The next `failed` fact.
    pub async fn until_failed(&mut self) -> Failed {
        match self.until_fact_kind("failed").await {
            (
                seq,
                Fact::Failed {
                    to,
                    reason,
                    failure,
                    ..
                },
            ) => Failed {
                seq,
                to,
                reason,
                failure,
            },
            _ => unreachable!(),
        }
    }

    /// The next `replied` fact.
    pub async fn until_replied(&mut self) -> Replied {
        match self.until_fact_kind("replied").await {
            (
                seq,
                Fact::Replied {
                    to, text, usage, ..
                },
            ) => Replied {
                seq,
                to,
                text: text.to_string(),
                usage: usage.map(|u| *u),
            },
            _ => unreachable!(),
        }
    }

    /// The next `session` event.
    pub async fn until_session(&mut self) -> Opened {
        self.until_session_where(|_| true).await
    }

    /// The next `session` event whose id `pred` accepts.
    pub async fn until_session_where(&mut self, pred: impl Fn(i64) -> bool) -> Opened {
        match self
            .wait_for(|e| matches!(e, Event::Session { id, .. } if pred(*id)))
            .await
        {
            Event::Session {
                id,
                facts,
                sent,
                forked,
                ..
            } => Opened {
                id,
                facts,
                sent,
                forked,
            },
            _ => unreachable!(),
        }
    }

    /// The message of the next `error` event.
    pub async fn until_error(&mut self) -> String {
        match self.wait_for(|e| matches!(e, Event::Error { .. })).await {
            Event::Error { message } => message,
            _ => unreachable!(),
        }
    }

    /// Asserts that no `fact` event comes within half a second (other events may).
    pub async fn no_fact_for_half_a_second(&mut self) {
        while let Ok(event) = tokio::time::timeout(Duration::from_millis(500), self.next()).await {
            assert_ne!(
                event.as_ref().map(|e| &e["type"]),
                Some(&serde_json::json!("fact")),
                "{event:?}"
            );
        }
    }

    /// The next event as raw JSON, or `None` when the socket closed; panics after 10 s of
    /// silence.
    pub async fn next(&mut self) -> Option<Value> {
        let text = self.next_text().await?;
        Some(serde_json::from_str(&text).unwrap())
    }

    /// The next event, read by the protocol's own decoder, or `None` when the socket closed,
    /// however long it takes: for callers with their own, longer deadline (a real agent CLI
    /// may be silent for long on a busy machine). Panics on a frame that does not decode.
    pub async fn next_event_unhurried(&mut self) -> Option<Event> {
        let text = self.next_text_unhurried().await?;
        Some(decode_event(&text).unwrap_or_else(|e| panic!("{e}: {text}")))
    }

    /// The next text frame, or `None` when the socket closed; panics after 10 s of silence.
    async fn next_text(&mut self) -> Option<String> {
        loop {
            let msg = tokio::time::timeout(Duration::from_secs(10), self.ws.next())
                .await
                .expect("no event within 10 s");
            match msg {
                Some(Ok(Message::Text(t))) => return Some(t.to_string()),
                Some(Ok(Message::Close(_))) | None | Some(Err(_)) => return None,
                Some(Ok(_)) => continue,
            }
        }
    }

    /// The next text frame, or `None` when the socket closed, however long it takes.
    async fn next_text_unhurried(&mut self) -> Option<String> {
        loop {
            match self.ws.next().await {
                Some(Ok(Message::Text(t))) => return Some(t.to_string()),
                Some(Ok(Message::Close(_))) | None | Some(Err(_)) => return None,
                Some(Ok(_)) => continue,
            }
        }
    }

    /// Events up to and including the first matching `pred`.
    pub async fn collect_until(&mut self, pred: impl Fn(&Value) -> bool) -> Vec<Value> {
        let mut seen = Vec::new();
        loop {
            let e = self
                .next()
                .await
                .unwrap_or_else(|| panic!("closed; saw {seen:?}"));
            let done = pred(&e);
            seen.push(e);
            if done {
                return seen;
            }
        }
    }

    pub async fn until(&mut self, pred: impl Fn(&Value) -> bool) -> Value {
        self.collect_until(pred).await.pop().unwrap()
    }

    /// Events up to and including the first `fact` event whose fact is of type `kind`.
    pub async fn collect_until_fact(&mut self, kind: &str) -> Vec<Value> {
        self.collect_until(|e| e["type"] == "fact" && e["fact"]["type"] == kind)
            .await
    }

    /// The first `fact` event whose fact is of type `kind` (`replied`, `failed`, …).
    pub async fn until_fact(&mut self, kind: &str) -> Value {
        self.collect_until_fact(kind).await.pop().unwrap()
    }
}

/// `agent-chatter serve` on the files in `d`; returns the process, its port and its token.
/// `serve` on a free port with the database, page, team and agents files of directory `d`.
pub fn serve_command(d: &Path) -> std::process::Command {
    let mut cmd = std::process::Command::new(bin());
    cmd.args(["serve", "--port", "0"])
        .arg("--db")
        .arg(d.join("sessions.db"))
        .arg("--dist")
        .arg(d.join("dist"))
        .arg("--team")
        .arg(d.join("team.json"))
        .arg("--agents")
        .arg(d.join("agents.json"));
    cmd
}

fn spawn(
    d: &std::path::Path,
    session: Option<i64>,
    args: &[&str],
    stderr: Stdio,
) -> (Child, u16, String) {
    let mut cmd = serve_command(d);
    cmd.args(args).stdout(Stdio::piped()).stderr(stderr);
    if let Some(id) = session {
        cmd.args(["--session", &id.to_string()]);
    }
    let mut child = cmd
        .spawn()
        .unwrap_or_else(|e| panic!("{}: {e}", bin().display()));
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = line.trim();
    let rest = url
        .strip_prefix("http://127.0.0.1:")
        .unwrap_or_else(|| panic!("first line: {url:?}"));
    let (port, token) = rest.split_once("/#token=").unwrap();
    (child, port.parse().unwrap(), token.to_string())
}

pub mod mock_models;
pub mod real;
