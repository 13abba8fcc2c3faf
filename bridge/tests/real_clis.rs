//! `agent-chatter chat` and `serve` running the real agent CLIs (Claude Code, Codex, Gemini, at
//! the versions docs/architecture.md §17 studied) against a loopback mock of their model APIs
//! (`support/mock_models.rs`): the chain, the exact prompt bytes each CLI sends on, and each
//! failure mode (issue #26, point 8).
//!
//! `cargo xtask test` installs the CLIs (npm, cached in `target/agent-clis/`) and sets
//! `AGENT_CHATTER_REAL_CLIS` to their `node_modules/.bin`; without it every test here says it
//! is skipped and passes, so a plain `cargo test` needs no npm. By hand, after one `cargo xtask
//! test`: `AGENT_CHATTER_REAL_CLIS=$PWD/target/agent-clis/node_modules/.bin cargo test -p
//! agent-chatter-bridge --test real_clis`.
//!
//! Each test has its own mock, a throwaway HOME, TMPDIR and working directory, and a clean
//! environment (no real key or config of the machine's reaches a CLI). The CLIs' retries are
//! turned off (`CLAUDE_CODE_MAX_RETRIES=0`, Codex `request_max_retries=0`, Gemini
//! `general.maxAttempts: 1`), so a failure is quick. Every process a test starts carries a
//! marker in its environment, so what is left running afterwards can be found and named.
//! No assertion depends on timing: waits are generous, for a busy 2-core machine.

mod support;

use std::io::Write;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use agent_chatter::conversation::Action;
use agent_chatter::protocol::{self, Event};
use agent_chatter::session::{Fact, Session};
use serde_json::{json, Value};
use support::mock_models::{claude_system, user_texts, Answer, Api, MockModels, Request};
use support::real::{World, CLIS_ENV, NO_TIMEOUT_MS, PATIENCE};
use tokio_tungstenite::tungstenite::client::IntoClientRequest;

/// The environment variable marking every process of one test (its value: the test's
/// directory).
const MARK_ENV: &str = "AGENT_CHATTER_REAL_CLIS_TEST";

/// The team: a human and one member per CLI; `maxAgentResponseMs` as given.
fn team(max_agent_response_ms: u64) -> Value {
    json!({"name": "real", "members": [
        {"name": "kailai", "kind": "human"},
        {"name": "max", "kind": "ai", "agentType": "claude-code",
         "systemInstruction": "You are Max, who drafts.\nKeep it short."},
        {"name": "sarah", "kind": "ai", "agentType": "openai-codex",
         "systemInstruction": "You are Sarah, who reviews."},
        {"name": "carol", "kind": "ai", "agentType": "google-gemini",
         "systemInstruction": "You are Carol, who tests."}],
        "settings": {"maxAgentResponseMs": max_agent_response_ms}})
}

/// The member of each CLI in [`team`], its API at the mock, and its CLI.
const MEMBERS: [(&str, Api, &str); 3] = [
    ("max", Api::Claude, "claude"),
    ("sarah", Api::Codex, "codex"),
    ("carol", Api::Gemini, "gemini"),
];

/// One test's world: the mock, a directory with HOME, TMPDIR, the working directory, the
/// team, agents file and database.
struct Lab {
    world: World,
}

impl std::ops::Deref for Lab {
    type Target = World;
    fn deref(&self) -> &World {
        &self.world
    }
}

impl Lab {
    /// `None` (after saying so) when the real CLIs are not installed: `cargo xtask test`
    /// installs them.
    fn new(test: &str) -> Option<Lab> {
        let lab = Lab {
            world: World::new(
                test,
                &["claude", "codex", "gemini"],
                &["empty-path"],
                MARK_ENV,
            )?,
        };
        lab.write_team(&team(NO_TIMEOUT_MS));
        lab.write_agents(&lab.agents());
        Some(lab)
    }

    fn write_team(&self, team: &Value) {
        std::fs::write(self.path("team.json"), team.to_string()).unwrap();
    }

    fn write_agents(&self, agents: &Value) {
        std::fs::write(self.path("agents.json"), agents.to_string()).unwrap();
    }

    /// The agents file: each CLI by its path, with the bridge's default arguments, and Codex
    /// pointed at the mock (it takes its provider from `-c` flags, not the environment).
    fn agents(&self) -> Value {
        let url = self.mock.base_url();
        let mut codex: Vec<String> = ["exec", "--json", "--skip-git-repo-check"]
            .map(String::from)
            .to_vec();
        for setting in [
            "model_provider=mock".to_string(),
            "model_providers.mock.name=mock".to_string(),
            format!("model_providers.mock.base_url={url}/v1"),
            "model_providers.mock.env_key=OPENAI_API_KEY".to_string(),
            "model_providers.mock.wire_api=responses".to_string(),
            "model_providers.mock.supports_websockets=false".to_string(),
            "model_providers.mock.request_max_retries=0".to_string(),
            "model_providers.mock.stream_max_retries=0".to_string(),
        ] {
            codex.push("-c".to_string());
            codex.push(setting);
        }
        codex.push("-".to_string());
        let default = |t: &str| {
            agent_chatter_bridge::agents::default_command(t)
                .unwrap()
                .args
        };
        json!({"agents": {
            "claude-code": {"command": self.bin.join("claude"), "args": default("claude-code")},
            "openai-codex": {"command": self.bin.join("codex"), "args": codex},
            "google-gemini": {"command": self.bin.join("gemini"), "args": default("google-gemini")},
        }})
    }

    /// The environment every CLI gets (through the bridge, which passes its own on): nothing
    /// of the machine's but PATH, the mock as every vendor's API, and this test's marker.
    fn env(&self, cmd: &mut Command) {
        self.vendor_env(cmd, std::env::var_os("PATH").unwrap_or_default());
        cmd.current_dir(self.path("work"));
    }

    /// `agent-chatter chat` on this lab's files, environment and working directory.
    fn chat_command(&self) -> Command {
        let mut cmd = Command::new(support::bin());
        self.env(&mut cmd);
        cmd.arg("chat")
            .arg("--team")
            .arg(self.path("team.json"))
            .arg("--db")
            .arg(self.path("sessions.db"))
            .arg("--agents")
            .arg(self.path("agents.json"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        cmd
    }

    /// `chat` with `input` piped in, to its end.
    fn chat(&self, input: &str) -> Chat {
        let mut child = self.chat_command().spawn().unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.as_bytes())
            .unwrap();
        self.finish_chat(child)
    }

    fn finish_chat(&self, child: Child) -> Chat {
        let out = wait_with_output_within(child, PATIENCE);
        Chat {
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
            code: out.status.code(),
            facts: self.facts(),
        }
    }

    /// The facts of session 1 in the database.
    fn facts(&self) -> Vec<Fact> {
        let db = rusqlite::Connection::open(self.path("sessions.db")).unwrap();
        let mut stmt = db
            .prepare("SELECT fact FROM facts WHERE session_id = 1 ORDER BY seq")
            .unwrap();
        let rows = stmt
            .query_map([], |r| r.get::<_, String>(0))
            .unwrap()
            .map(|t| serde_json::from_str(&t.unwrap()).unwrap())
            .collect();
        rows
    }

    /// The digests the database says were sent: (member, sha256), in order.
    fn sent(&self) -> Vec<(String, String)> {
        let db = rusqlite::Connection::open(self.path("sessions.db")).unwrap();
        let mut stmt = db
            .prepare("SELECT member, sha256 FROM sent WHERE session_id = 1 ORDER BY rowid")
            .unwrap();
        let rows = stmt
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        rows
    }

    /// `agent-chatter serve` on this lab's files; returns once it listens.
    fn serve(&self) -> Serve {
        let mut cmd = Command::new(support::bin());
        self.env(&mut cmd);
        let mut child = cmd
            .args(["serve", "--port", "0"])
            .arg("--db")
            .arg(self.path("sessions.db"))
            .arg("--dist")
            .arg(self.path("dist"))
            .arg("--team")
            .arg(self.path("team.json"))
            .arg("--agents")
            .arg(self.path("agents.json"))
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut line = String::new();
        std::io::BufRead::read_line(
            &mut std::io::BufReader::new(child.stdout.take().unwrap()),
            &mut line,
        )
        .unwrap();
        let rest = line
            .trim()
            .strip_prefix("http://127.0.0.1:")
            .unwrap_or_else(|| panic!("serve's first line: {line:?}"));
        let (port, token) = rest.split_once("/#token=").unwrap();
        Serve {
            child,
            port: port.parse().unwrap(),
            token: token.to_string(),
        }
    }
}

/// One running process: its argv, working directory and environment (from /proc).
#[derive(Debug)]
struct Proc {
    pid: u32,
    argv: Vec<String>,
    cwd: PathBuf,
    env: std::collections::BTreeMap<String, String>,
}

impl Proc {
    fn read(pid: u32) -> Option<Proc> {
        let nul_separated = |name: &str| -> Option<Vec<String>> {
            let bytes = std::fs::read(format!("/proc/{pid}/{name}")).ok()?;
            // Each entry ends with a NUL; an empty argument is an empty entry.
            let bytes = bytes.strip_suffix(&[0]).unwrap_or(&bytes);
            if bytes.is_empty() {
                return Some(Vec::new());
            }
            Some(
                bytes
                    .split(|&b| b == 0)
                    .map(|s| String::from_utf8_lossy(s).into_owned())
                    .collect(),
            )
        };
        Some(Proc {
            pid,
            argv: nul_separated("cmdline")?,
            cwd: std::fs::read_link(format!("/proc/{pid}/cwd")).ok()?,
            env: nul_separated("environ")?
                .into_iter()
                .filter_map(|kv| kv.split_once('=').map(|(k, v)| (k.into(), v.into())))
                .collect(),
        })
    }
}

impl Lab {
    /// The processes running `cli`'s command as the agents file gives it (npm launchers and
    /// the worker they start, which gets the same arguments).
    fn cli_processes(&self, cli: &str) -> Vec<Proc> {
        let command = self.bin.join(cli).display().to_string();
        self.processes(&[])
            .into_iter()
            .filter_map(|(pid, _)| Proc::read(pid))
            .filter(|p| p.argv.iter().take(2).any(|a| *a == command))
            .collect()
    }

    /// `cli` runs now with the agents file's command and arguments (Claude's system flag
    /// after them), in the working directory and with the environment the bridge was given.
    fn assert_runs_as_configured(&self, cli: &str) {
        let agent_type = match cli {
            "claude" => "claude-code",
            "codex" => "openai-codex",
            _ => "google-gemini",
        };
        let agents = self.agents();
        let want: Vec<String> =
            serde_json::from_value(agents["agents"][agent_type]["args"].clone()).unwrap();
        let procs = self.cli_processes(cli);
        let p = procs
            .first()
            .unwrap_or_else(|| panic!("no process runs {cli}: {:#?}", self.processes(&[])));
        let at = p
            .argv
            .iter()
            .position(|a| a.ends_with(&format!("/{cli}")))
            .unwrap();
        let args = &p.argv[at + 1..];
        assert!(args.starts_with(&want), "{cli} runs with {:?}", p.argv);
        let rest: Vec<&str> = args[want.len()..].iter().map(String::as_str).collect();
        if cli == "claude" {
            assert_eq!(
                rest.first(),
                Some(&"--append-system-prompt"),
                "{:?}",
                p.argv
            );
            assert_eq!(rest.len(), 2, "{:?}", p.argv);
        } else {
            assert!(rest.is_empty(), "{cli}: {:?}", p.argv);
        }
        assert_eq!(p.cwd, self.path("work"), "{cli} (pid {})", p.pid);
        for (key, value) in [
            ("HOME", self.path("home").display().to_string()),
            ("ANTHROPIC_BASE_URL", self.mock.base_url()),
            ("GOOGLE_GEMINI_BASE_URL", self.mock.base_url()),
            ("CLAUDE_CODE_MAX_RETRIES", "0".to_string()),
        ] {
            assert_eq!(p.env.get(key), Some(&value), "{cli}: {key}");
        }
    }
}

impl Lab {
    /// Gives `member` of [`team`] these run settings (docs/architecture.md §14c) and its own
    /// working directory, `member-dir`.
    fn give_run_settings(&self, member: &str, settings: Value) {
        let mut team = team(NO_TIMEOUT_MS);
        let entry = team["members"]
            .as_array_mut()
            .unwrap()
            .iter_mut()
            .find(|m| m["name"] == member)
            .unwrap();
        for (key, value) in settings.as_object().unwrap() {
            entry[key] = value.clone();
        }
        entry["baseDir"] = json!("member-dir");
        std::fs::create_dir_all(self.path("member-dir")).unwrap();
        self.write_team(&team);
    }
}

/// `child.wait_with_output()`, killing it after `within` (then the test fails, saying so).
fn wait_with_output_within(child: Child, within: Duration) -> std::process::Output {
    let pid = child.id();
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let watchdog = {
        let done = done.clone();
        std::thread::spawn(move || {
            let deadline = Instant::now() + within;
            while Instant::now() < deadline {
                if done.load(std::sync::atomic::Ordering::SeqCst) {
                    return false;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
            // SAFETY: kill(2) on the child this test spawned and has not reaped yet.
            unsafe { libc::kill(pid as i32, libc::SIGKILL) };
            true
        })
    };
    let out = child.wait_with_output().unwrap();
    done.store(true, std::sync::atomic::Ordering::SeqCst);
    assert!(
        !watchdog.join().unwrap(),
        "still running after {within:?}: killed\nstderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// A finished `chat`.
struct Chat {
    stdout: String,
    stderr: String,
    code: Option<i32>,
    facts: Vec<Fact>,
}

impl Chat {
    /// The outcome facts (`replied`, `failed`), in order.
    fn outcomes(&self) -> Vec<&Fact> {
        self.facts.iter().filter(|f| is_outcome(f)).collect()
    }

    /// The one outcome of a chat that asked one member: a failure's reason.
    fn failure_of(&self, member: &str) -> String {
        let outcomes = self.outcomes();
        assert_eq!(outcomes.len(), 1, "{self}");
        let outcome = outcomes[0];
        let Fact::Failed { to, reason, .. } = outcome else {
            panic!("not a failure of {member}: {self}")
        };
        assert_eq!(to, member, "{self}");
        assert!(
            self.stderr.contains(&format!("Error: {member}'s run ")),
            "{self}"
        );
        assert_eq!(self.code, Some(3), "ended on a failure: {self}");
        reason.clone()
    }
}

/// Whether `fact` is an outcome (`replied` or `failed`).
fn is_outcome(fact: &Fact) -> bool {
    matches!(fact, Fact::Replied { .. } | Fact::Failed { .. })
}

/// An outcome's kind, member and text (`""` for a failure).
fn kind_to_text(outcome: &Fact) -> (&str, &str, &str) {
    match outcome {
        Fact::Replied { to, text, .. } => ("replied", to, text),
        Fact::Failed { to, .. } => ("failed", to, ""),
        other => panic!("not an outcome: {other:?}"),
    }
}

impl std::fmt::Display for Chat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "exit {:?}\n--- stdout\n{}\n--- stderr\n{}\n--- facts\n{}",
            self.code,
            self.stdout,
            self.stderr,
            self.facts
                .iter()
                .map(|f| cut(&serde_json::to_string(f).unwrap(), 2000))
                .collect::<Vec<_>>()
                .join("\n")
        )
    }
}

/// At most `n` bytes of `s` (at a character boundary), for messages.
fn cut(s: &str, n: usize) -> String {
    if s.len() <= n {
        return s.to_string();
    }
    let mut end = n;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}… ({} bytes)", &s[..end], s.len())
}

/// A running `serve`.
struct Serve {
    child: Child,
    port: u16,
    token: String,
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Serve {
    /// A page: connected, greeted, past the `session` and `agents` events.
    async fn page(&self) -> Page {
        let origin = format!("http://127.0.0.1:{}", self.port);
        let mut req = format!("ws://127.0.0.1:{}/api/ws", self.port)
            .into_client_request()
            .unwrap();
        req.headers_mut().insert("origin", origin.parse().unwrap());
        let (ws, _) = tokio_tungstenite::connect_async(req).await.unwrap();
        let mut page = Page {
            client: support::Client { ws },
            seen: Vec::new(),
        };
        page.client
            .send_command(protocol::Command::Hello {
                token: self.token.clone(),
            })
            .await;
        page.until(|e| matches!(e, Event::Agents { .. })).await;
        page
    }
}

/// A page's socket (the typed client), with every event it received.
struct Page {
    client: support::Client,
    seen: Vec<Event>,
}

impl Page {
    async fn human(&mut self, text: &str) {
        self.client.send_command(support::human(text)).await;
    }

    /// Events up to the first matching `pred`, which is returned (all are kept in `seen`).
    async fn until(&mut self, pred: impl Fn(&Event) -> bool) -> Event {
        let deadline = tokio::time::Instant::now() + PATIENCE;
        loop {
            let event = tokio::time::timeout_at(deadline, self.client.next_event_unhurried())
                .await
                .unwrap_or_else(|_| panic!("no such event in {PATIENCE:?}; saw {}", self.log()))
                .unwrap_or_else(|| panic!("the socket closed; saw {}", self.log()));
            self.seen.push(event.clone());
            if pred(&event) {
                return event;
            }
        }
    }

    /// The next outcome fact (`replied` or `failed`).
    async fn outcome(&mut self) -> Fact {
        match self
            .until(|e| matches!(e, Event::Fact { fact, .. } if is_outcome(fact)))
            .await
        {
            Event::Fact { fact, .. } => fact,
            _ => unreachable!(),
        }
    }

    fn log(&self) -> String {
        self.seen
            .iter()
            .map(|e| cut(&serde_json::to_string(e).unwrap(), 600))
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// The deliveries a session's facts make, replayed by the core as the page does: (member,
/// prompt bytes, system flag, sha256 the bridge reports).
fn deliveries(facts: &[Fact]) -> Vec<(String, String, Option<String>, String)> {
    let mut mirror = Session::new();
    let mut out = Vec::new();
    for fact in facts {
        mirror.apply(fact).unwrap();
        while let Some(action) = mirror.poll_action() {
            if let Action::Deliver(d) = action {
                out.push((
                    d.to.to_string(),
                    d.prompt.prompt.clone(),
                    d.prompt.system_flag.clone(),
                    d.prompt.sha256_hex(),
                ));
            }
        }
    }
    out
}

/// Each delivery's prompt is, byte for byte, the last user text its CLI sent the model, and
/// Claude's system part ends with the system flag.
fn assert_prompts_reached_the_models(
    lab: &Lab,
    deliveries: &[(String, String, Option<String>, String)],
) {
    for (member, prompt, flag, _) in deliveries {
        let (_, api, cli) = MEMBERS.iter().find(|(m, _, _)| m == member).unwrap();
        let requests = lab.mock.main_requests(*api);
        let request: &Request = requests
            .first()
            .unwrap_or_else(|| panic!("{cli} never called the model:\n{}", lab.mock.summary()));
        let texts = user_texts(request);
        let last = texts.last().map(String::as_str).unwrap_or_default();
        assert!(
            last == prompt,
            "{cli}: the last user text at the model is not the prompt the bridge delivered\n\
             --- prompt ({} bytes)\n{prompt}\n--- at the model ({} bytes)\n{last}",
            prompt.len(),
            last.len()
        );
        match (api, flag) {
            (Api::Claude, Some(flag)) => {
                let system = claude_system(request);
                assert!(
                    system.ends_with(flag.as_str()),
                    "claude: the system part does not end with the system flag\n--- flag\n\
                     {flag}\n--- system's end\n{}",
                    &system[system.len().saturating_sub(flag.len() + 200)..]
                );
            }
            (Api::Claude, None) => panic!("max has a system instruction, so a system flag"),
            (_, Some(flag)) => panic!("{cli} got a system flag: {flag}"),
            (_, None) => {}
        }
    }
}

/// The chain's answers: each member passes the turn on, the last one back to the human.
fn answer_the_chain(mock: &MockModels) {
    mock.answer(
        Api::Claude,
        Answer::Text("Drafted the plan, héllo ✓. [NEXT: sarah]".into()),
    );
    mock.answer(
        Api::Codex,
        Answer::Text("Reviewed: one fix needed. [NEXT: carol]".into()),
    );
    mock.answer(
        Api::Gemini,
        Answer::Text("Tested it; all green. [NEXT: kailai]".into()),
    );
}

/// The human's first message of the chain: two lines, non-ASCII, trailing spaces.
const FIRST: &str = "[NEXT: max] Draft the plan for the “relay” feature.\nKeep it to 3 steps.  ";

#[test]
fn chat_runs_the_chain_claude_codex_gemini_and_each_cli_gets_the_exact_prompt() {
    let Some(lab) = Lab::new("chat_runs_the_chain") else {
        return;
    };
    answer_the_chain(&lab.mock);
    let chat = lab.chat(&format!("{FIRST}\n"));
    assert_eq!(chat.code, Some(0), "{chat}");
    let outcomes = chat.outcomes();
    let replies: Vec<(&str, &str)> = outcomes
        .iter()
        .map(|f| {
            let (_, to, text) = kind_to_text(f);
            (to, text)
        })
        .collect();
    assert_eq!(
        replies,
        [
            ("max", "Drafted the plan, héllo ✓. [NEXT: sarah]"),
            ("sarah", "Reviewed: one fix needed. [NEXT: carol]"),
            ("carol", "Tested it; all green. [NEXT: kailai]"),
        ],
        "{chat}"
    );
    assert!(
        outcomes.iter().all(|f| matches!(f, Fact::Replied { .. })),
        "{chat}"
    );
    for line in [
        "→ max (AI): Drafted the plan, héllo ✓. [NEXT: sarah]",
        "→ sarah (AI): Reviewed: one fix needed. [NEXT: carol]",
        "→ carol (AI): Tested it; all green. [NEXT: kailai]",
        "Waiting for kailai",
    ] {
        assert!(chat.stdout.contains(line), "{line:?} not in {chat}");
    }
    let deliveries = deliveries(&chat.facts);
    let members: Vec<&str> = deliveries.iter().map(|d| d.0.as_str()).collect();
    assert_eq!(members, ["max", "sarah", "carol"]);
    assert_prompts_reached_the_models(&lab, &deliveries);
    // What the database says was sent is what the core computes from the facts.
    let digests: Vec<(String, String)> = deliveries
        .iter()
        .map(|(m, _, _, sha)| (m.clone(), sha.clone()))
        .collect();
    assert_eq!(lab.sent(), digests);
    // Each CLI was asked once: no retry, no second turn.
    for (_, api, cli) in MEMBERS {
        assert_eq!(
            lab.mock.main_requests(api).len(),
            1,
            "{cli}:\n{}",
            lab.mock.summary()
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_runs_the_chain_and_the_page_sees_the_digest_of_the_bytes_each_cli_got() {
    let Some(lab) = Lab::new("serve_runs_the_chain") else {
        return;
    };
    answer_the_chain(&lab.mock);
    let serve = lab.serve();
    let mut page = serve.page().await;
    page.human(FIRST).await;
    let mut outcomes = Vec::new();
    for _ in 0..3 {
        outcomes.push(page.outcome().await);
    }
    let replies: Vec<(&str, &str, &str)> = outcomes.iter().map(kind_to_text).collect();
    assert_eq!(
        replies,
        [
            ("replied", "max", "Drafted the plan, héllo ✓. [NEXT: sarah]"),
            (
                "replied",
                "sarah",
                "Reviewed: one fix needed. [NEXT: carol]"
            ),
            ("replied", "carol", "Tested it; all green. [NEXT: kailai]"),
        ],
        "{}",
        page.log()
    );
    // The page's own replay of the facts gives the prompts; the bridge's `delivering` events
    // carry their digests; the models got exactly those bytes.
    let facts: Vec<Fact> = page
        .seen
        .iter()
        .filter_map(|e| match e {
            Event::Fact { fact, .. } => Some(fact.clone()),
            _ => None,
        })
        .collect();
    let stored = lab.facts();
    assert_eq!(facts, stored[stored.len() - facts.len()..]);
    let deliveries = deliveries(&stored);
    let announced: Vec<(String, String, u64)> = page
        .seen
        .iter()
        .filter_map(|e| match e {
            Event::Delivering {
                to,
                prompt_sha256,
                bytes,
                ..
            } => Some((to.clone(), prompt_sha256.clone(), *bytes as u64)),
            _ => None,
        })
        .collect();
    let computed: Vec<(String, String, u64)> = deliveries
        .iter()
        .map(|(m, prompt, flag, sha)| {
            let bytes = prompt.len() + flag.as_ref().map_or(0, String::len);
            (m.clone(), sha.clone(), bytes as u64)
        })
        .collect();
    assert_eq!(announced, computed, "{}", page.log());
    assert_prompts_reached_the_models(&lab, &deliveries);
    // Streamed output reached the page for each member, Claude's in deltas.
    for (member, reply) in [
        ("max", "Drafted the plan, héllo ✓. [NEXT: sarah]"),
        ("sarah", "Reviewed: one fix needed. [NEXT: carol]"),
        ("carol", "Tested it; all green. [NEXT: kailai]"),
    ] {
        let streamed: String = page
            .seen
            .iter()
            .filter_map(|e| match e {
                Event::Output { to, delta } if to == member => Some(delta.as_str()),
                _ => None,
            })
            .collect();
        assert!(streamed.contains(reply), "{member}: {streamed:?}");
    }
}

/// Asks `member` once, with the mock answering `answer`, through `chat`; returns the chat.
fn ask(lab: &Lab, member: &str, answer: Answer) -> Chat {
    let (_, api, _) = MEMBERS.iter().find(|(m, _, _)| *m == member).unwrap();
    lab.mock.answer(*api, answer);
    lab.chat(&format!("[NEXT: {member}] Please answer.\n"))
}

#[test]
fn an_http_500_is_a_failure_with_the_clis_reason_after_one_request() {
    for (member, api, cli) in MEMBERS {
        let Some(lab) = Lab::new("an_http_500_is_a_failure") else {
            return;
        };
        let chat = ask(&lab, member, Answer::Status(500));
        let reason = chat.failure_of(member);
        // Codex says it in its own words ("We're currently experiencing high demand…").
        if api != Api::Codex {
            assert!(reason.contains("500"), "{cli}: {reason}");
        }
        assert_eq!(
            lab.mock.main_requests(api).len(),
            1,
            "{cli} retried:\n{}",
            lab.mock.summary()
        );
        eprintln!("{cli}: HTTP 500 → {reason}");
    }
}

#[test]
fn an_empty_reply_is_a_failure_never_a_message() {
    for (member, _, cli) in MEMBERS {
        let Some(lab) = Lab::new("an_empty_reply_is_a_failure") else {
            return;
        };
        let chat = ask(&lab, member, Answer::Empty);
        let reason = chat.failure_of(member);
        eprintln!("{cli}: empty reply → {reason}");
        if cli == "gemini" {
            // Gemini says it itself (an `error` event, then a `result` of status `error`).
            assert!(reason.contains("empty response"), "{cli}: {reason}");
        } else {
            // Claude asks the model once more, then ends with an empty `result`; Codex ends
            // its turn without an agent message.
            assert!(reason.starts_with("empty reply"), "{cli}: {reason}");
        }
    }
}

#[test]
fn a_model_that_hangs_is_stopped_at_the_team_timeout_and_nothing_is_left_running() {
    if std::env::var_os(CLIS_ENV).is_none() {
        eprintln!("SKIPPED a_model_that_hangs: {CLIS_ENV} is not set");
        return;
    }
    // The three at once: each mostly waits for its timeout.
    std::thread::scope(|scope| {
        for (member, api, cli) in MEMBERS {
            scope.spawn(move || {
                let lab = Lab::new("a_model_that_hangs").unwrap();
                lab.write_team(&team(20_000));
                let chat = ask(&lab, member, Answer::Hang);
                let reason = chat.failure_of(member);
                assert!(
                    reason.starts_with("no reply within 20 s: the agent was stopped"),
                    "{cli}: {reason}"
                );
                // (Whether the CLI had reached the model by then depends on the machine.)
                eprintln!(
                    "{cli}: model requests before the timeout: {}",
                    lab.mock.main_requests(api).len()
                );
                let left = lab.leftovers(&[]);
                assert!(left.is_empty(), "{cli}: still running: {left:?}");
            });
        }
    });
}

#[test]
fn cancel_stops_the_cli_mid_request_and_nothing_is_left_running() {
    // (While the model holds the request, the running CLI's argv, working directory and
    // environment are checked too.)
    for (member, api, cli) in MEMBERS {
        let Some(lab) = Lab::new("cancel_stops_the_cli") else {
            return;
        };
        lab.mock.answer(api, Answer::Hang);
        let mut child = lab.chat_command().spawn().unwrap();
        let mut stdin = child.stdin.take().unwrap();
        writeln!(stdin, "[NEXT: {member}] Take your time.").unwrap();
        assert!(
            lab.mock.wait_for_main(api, PATIENCE).is_some(),
            "{cli} never called the model"
        );
        lab.assert_runs_as_configured(cli);
        writeln!(stdin, "/cancel").unwrap();
        drop(stdin);
        let chat = lab.finish_chat(child);
        assert_eq!(
            chat.failure_of(member),
            "cancelled by the user: the agent was stopped",
            "{cli}"
        );
        let left = lab.leftovers(&[]);
        assert!(left.is_empty(), "{cli}: still running: {left:?}");
    }
}

#[test]
fn a_missing_cli_is_named_at_start_and_its_delivery_fails_by_name() {
    let Some(lab) = Lab::new("a_missing_cli") else {
        return;
    };
    // No agents file entry and no CLI on PATH: the defaults (`claude`, `codex`, `gemini`)
    // are found nowhere.
    lab.write_agents(&json!({"agents": {}}));
    let mut cmd = lab.chat_command();
    cmd.env("PATH", lab.path("empty-path"));
    let mut child = cmd.spawn().unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"[NEXT: sarah] Review it.\n")
        .unwrap();
    let chat = lab.finish_chat(child);
    for (member, _, cli) in MEMBERS {
        let why = format!(
            "{member}: {cli} is not installed (not on PATH); install it, set its command in the \
             agents file, or start with --simulate"
        );
        assert!(
            chat.stderr
                .contains(&format!("agent-chatter: cannot run {why}")),
            "{chat}"
        );
        if member == "sarah" {
            assert_eq!(chat.failure_of(member), why);
        }
    }
    assert!(lab.mock.requests().is_empty(), "{}", lab.mock.summary());
}

/// A reply of `bytes` bytes (or a little more): numbered lines, none like another, so no
/// CLI's loop detector takes it for a loop.
fn long_reply(bytes: usize) -> String {
    let mut text = String::with_capacity(bytes + 64);
    let mut n = 0;
    while text.len() < bytes {
        n += 1;
        text.push_str(&format!(
            "Line {n} of a long reply, with nothing repeated: {n:x}.\n"
        ));
    }
    text.push_str("The end. [NEXT: kailai]");
    text
}

#[test]
fn a_reply_over_the_message_limit_is_a_failure_naming_its_size_and_its_output_is_kept() {
    for (member, _, cli) in MEMBERS {
        let Some(lab) = Lab::new("a_reply_over_the_message_limit") else {
            return;
        };
        let text = long_reply(1_200_000);
        let chat = ask(&lab, member, Answer::Text(text.clone()));
        let reason = chat.failure_of(member);
        let size = format!(
            "reply of {} bytes is above the 1048576 byte message limit; its ",
            text.len()
        );
        assert!(reason.starts_with(&size), "{cli}: {reason}");
        let db = rusqlite::Connection::open(lab.path("sessions.db")).unwrap();
        let kept: Vec<u8> = db
            .query_row(
                "SELECT output FROM outputs WHERE member = ?1",
                [member],
                |r| r.get(0),
            )
            .unwrap();
        // Codex prints the reply once and Gemini in deltas: all of it is kept. Claude prints
        // it three times (deltas, the whole block, the result): over 2 MiB, so the first and
        // last MiB are kept, and the reason says so.
        if reason.contains("its full output is kept") {
            assert!(kept.len() > text.len(), "{cli}: {} bytes kept", kept.len());
        } else {
            assert!(
                reason.contains("the first and the last 1048576 bytes"),
                "{cli}: {reason}"
            );
            assert!(
                kept.len() >= 2 * 1048576,
                "{cli}: {} bytes kept",
                kept.len()
            );
        }
        eprintln!("{cli}: {reason}");
    }
}

/// Ten and more repeats of one 50-character stretch, close together, is a loop to Gemini's
/// detector (`LoopDetectionService`: `CONTENT_LOOP_THRESHOLD` 10, `CONTENT_CHUNK_SIZE` 50): it
/// stops after the first chunk that shows one, with an `error` event of severity `warning`
/// ("Loop detected, stopping execution") and a `result` of status `success`. Returns the chant
/// and the chat.
fn gemini_chants(lab: &Lab) -> (String, Chat) {
    let chant = "All work and no play makes Jack a dull boy. ".repeat(40);
    let chat = ask(lab, "carol", Answer::Text(chant.clone()));
    assert_eq!(chat.outcomes().len(), 1, "{chat}");
    (chant, chat)
}

#[test]
fn gemini_stopped_by_its_loop_detector_is_never_taken_for_a_whole_reply() {
    let Some(lab) = Lab::new("gemini_loop") else {
        return;
    };
    let (chant, chat) = gemini_chants(&lab);
    let outcome = chat.outcomes()[0];
    let named = |why: Option<&str>| why.is_some_and(|why| why.contains("Loop detected"));
    match outcome {
        // As the bridge records it today: a failure in Gemini's words.
        Fact::Failed { reason, .. } => assert!(named(Some(reason)), "{chat}"),
        // As docs/architecture.md §14c wants it: the text so far, marked incomplete.
        Fact::Replied {
            text, incomplete, ..
        } => {
            assert!(
                chant.starts_with(&**text) && text.len() < chant.len(),
                "{chat}"
            );
            assert!(named(incomplete.as_deref()), "{chat}");
        }
        other => unreachable!("{other:?}"),
    }
}

#[test]
#[ignore = "gemini 0.61 stops on its loop detector before it streams any text (its 695-byte stream holds no assistant message), so the honest outcome is a failure naming the loop, as the test above checks; the incomplete path (a loop stop after some text) is tested on a recorded stream in bridge/src/agents/decode.rs"]
fn gemini_stopped_by_its_loop_detector_gives_a_reply_marked_incomplete() {
    let Some(lab) = Lab::new("gemini_loop") else {
        return;
    };
    let (chant, chat) = gemini_chants(&lab);
    let outcome = chat.outcomes()[0];
    let Fact::Replied {
        text, incomplete, ..
    } = outcome
    else {
        panic!("not replied: {chat}")
    };
    assert!(
        !text.is_empty() && chant.starts_with(&**text) && text.len() < chant.len(),
        "{chat}"
    );
    assert!(
        incomplete
            .as_deref()
            .is_some_and(|why| why.contains("Loop detected")),
        "{chat}"
    );
}

/// Two threads spinning while `f` runs: the machine as busy as a CI runner on 2 cores.
fn with_the_machine_busy<T>(f: impl FnOnce() -> T) -> T {
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let spinners: Vec<_> = (0..2)
        .map(|_| {
            let stop = stop.clone();
            std::thread::spawn(move || {
                let mut x = 0u64;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(7));
                }
            })
        })
        .collect();
    let out = f();
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    for s in spinners {
        s.join().unwrap();
    }
    out
}

#[test]
fn a_900_kib_claude_reply_arrives_whole_ten_times_on_a_busy_machine() {
    if std::env::var_os(CLIS_ENV).is_none() {
        eprintln!("SKIPPED a_900_kib_claude_reply: {CLIS_ENV} is not set");
        return;
    }
    let text = long_reply(900 * 1024);
    let lost: Vec<String> = with_the_machine_busy(|| {
        (0..10)
            .filter_map(|run| {
                let lab = Lab::new("a_900_kib_claude_reply").unwrap();
                let chat = ask(&lab, "max", Answer::Text(text.clone()));
                let outcomes = chat.outcomes();
                match outcomes.as_slice() {
                    [Fact::Replied { text: t, .. }] if *t == text => None,
                    [o] => Some(format!(
                        "run {run}: {} {}",
                        o.kind(),
                        cut(
                            &match o {
                                Fact::Failed { reason, .. } => reason.clone(),
                                _ => format!("{} bytes", kind_to_text(o).2.len()),
                            },
                            300
                        )
                    )),
                    _ => Some(format!("run {run}: {chat}")),
                }
            })
            .collect()
    });
    assert!(
        lost.is_empty(),
        "the {} byte reply did not arrive whole in {} of 10 runs:\n{}",
        text.len(),
        lost.len(),
        lost.join("\n")
    );
}

/// `kill -9` of `serve` while `member`'s CLI waits for the model: no process of the run may
/// remain.
async fn killed_mid_run_leaves_nothing_running(member: &str) {
    let Some(lab) = Lab::new("killed_mid_run") else {
        return;
    };
    let (_, api, cli) = *MEMBERS.iter().find(|(m, _, _)| *m == member).unwrap();
    lab.mock.answer(api, Answer::Hang);
    let mut serve = lab.serve();
    let mut page = serve.page().await;
    page.human(&format!("[NEXT: {member}] Take your time."))
        .await;
    let mock = &lab.mock;
    let called = tokio::task::block_in_place(|| mock.wait_for_main(api, PATIENCE));
    assert!(called.is_some(), "{cli} never called the model");
    let running = lab.processes(&[serve.child.id()]);
    assert!(
        running.iter().any(|(_, cmdline)| cmdline.contains(cli)),
        "{cli}'s run is not among the test's processes: {running:#?}"
    );
    // SAFETY: kill(2) on the bridge this test spawned.
    unsafe { libc::kill(serve.child.id() as i32, libc::SIGKILL) };
    let _ = serve.child.wait();
    let left = tokio::task::block_in_place(|| lab.leftovers(&[]));
    assert!(
        left.is_empty(),
        "{cli}: after a kill -9 of the bridge, still running (killed now): {left:#?}\n\
         the run's processes before: {running:#?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bridge_killed_with_sigkill_leaves_no_claude_running() {
    killed_mid_run_leaves_nothing_running("max").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bridge_killed_with_sigkill_leaves_no_codex_running() {
    killed_mid_run_leaves_nothing_running("sarah").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bridge_killed_with_sigkill_leaves_no_gemini_running() {
    killed_mid_run_leaves_nothing_running("carol").await;
}

#[test]
fn each_cli_runs_with_its_members_model_permissions_and_directory_and_its_usage_is_recorded() {
    for (member, api, cli) in MEMBERS {
        let Some(lab) = Lab::new("run_settings_and_usage") else {
            return;
        };
        // The member's run settings (docs/architecture.md §14c); the flags they map to must be
        // in the real CLI's --help, or the chat would refuse to start.
        lab.give_run_settings(
            member,
            json!({"model": "mock-model-x", "permissionMode": "readOnly"}),
        );
        let chat = ask(&lab, member, Answer::Text("Settings seen.".into()));
        let outcomes = chat.outcomes();
        assert_eq!(outcomes.len(), 1, "{cli}: {chat}");
        let Fact::Replied { usage, .. } = outcomes[0] else {
            panic!("not replied: {cli}: {chat}")
        };
        // The model reached the API.
        let request = lab.mock.main_requests(api).pop().expect("a main request");
        match api {
            Api::Gemini => assert!(request.uri.contains("mock-model-x"), "{}", request.uri),
            _ => assert_eq!(request.body["model"], "mock-model-x", "{cli}"),
        }
        // It ran in the member's directory: each CLI tells its model where it works.
        let dir = std::fs::canonicalize(lab.path("member-dir")).unwrap();
        assert!(
            request
                .body
                .to_string()
                .contains(&dir.display().to_string()),
            "{cli}: the request does not name {}",
            dir.display()
        );
        // The usage the CLI reported is the outcome's.
        let usage = usage.as_deref().cloned().unwrap_or_default();
        let (input, cached, output) = match api {
            Api::Claude => (1513, 301, 41),
            Api::Codex => (1202, 302, 42),
            Api::Gemini => (1203, 303, 43),
        };
        assert_eq!(
            (usage.input_tokens, usage.cached_tokens, usage.output_tokens),
            (Some(input), Some(cached), Some(output)),
            "{cli}: {chat}"
        );
        assert!(usage.duration_ms.is_some(), "{cli}: {chat}");
        eprintln!("{cli}: ran with its member's settings; usage {usage:?}");
    }
}

#[test]
fn each_cli_runs_with_its_members_env_argv_and_directory_seen_from_proc() {
    for (member, api, cli) in MEMBERS {
        let Some(lab) = Lab::new("member_env_argv_dir") else {
            return;
        };
        lab.give_run_settings(
            member,
            json!({"env": {"AGENT_CHATTER_MEMBER_VAR": format!("for-{member}")},
                   "model": "mock-model-x", "permissionMode": "edit"}),
        );
        lab.mock.answer(api, Answer::Hang);
        let mut child = lab.chat_command().spawn().unwrap();
        let mut stdin = child.stdin.take().unwrap();
        writeln!(stdin, "[NEXT: {member}] Take your time.").unwrap();
        assert!(
            lab.mock.wait_for_main(api, PATIENCE).is_some(),
            "{cli} never called the model"
        );
        // While the model holds the request: the CLI's own process.
        let procs = lab.cli_processes(cli);
        let p = procs.first().expect("the CLI runs");
        assert_eq!(
            p.env.get("AGENT_CHATTER_MEMBER_VAR").map(String::as_str),
            Some(format!("for-{member}").as_str()),
            "{cli}"
        );
        assert_eq!(
            p.cwd,
            std::fs::canonicalize(lab.path("member-dir")).unwrap(),
            "{cli}"
        );
        let (flag, mode) = match api {
            Api::Claude => ("--permission-mode", "acceptEdits"),
            Api::Codex => ("-s", "workspace-write"),
            Api::Gemini => ("--approval-mode", "auto_edit"),
        };
        let argv = p.argv.join(" ");
        assert!(argv.contains(&format!("{flag} {mode}")), "{cli}: {argv}");
        assert!(argv.contains("mock-model-x"), "{cli}: {argv}");
        writeln!(stdin, "/cancel").unwrap();
        drop(stdin);
        let chat = lab.finish_chat(child);
        chat.failure_of(member);
    }
}
