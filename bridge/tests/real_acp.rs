//! `agent-chatter serve` running members over ACP (docs/architecture.md §14d, issue #41 point 7) with the
//! real adapters — `claude-agent-acp`, `codex-acp` and `gemini --acp`, from their built-in
//! profiles — against the loopback mock of the model APIs (`support/mock_models.rs`), driven
//! by the typed test client: the chain and the exact prompt bytes, approvals answered by a
//! person, a rule and the timeout, activity rows, a cancel, usage and the context fill.
//!
//! As `real_clis.rs`: `cargo xtask test` installs the adapters and sets
//! `AGENT_CHATTER_REAL_CLIS` to their `node_modules/.bin`; without it every test here says it is
//! skipped and passes. By hand: `AGENT_CHATTER_REAL_CLIS=$PWD/target/agent-clis/node_modules/.bin
//! cargo test -p agent-chatter-bridge --test real_acp`. What each adapter does offline is in
//! docs/acp-adapters.md.
//!
//! Each test has its own mock, a throwaway HOME (with Codex's provider and Gemini's auth
//! settings pointing at the mock), TMPDIR and member directory, and a clean environment; every
//! process it starts carries a marker in its environment, so what is left running can be
//! found. No assertion depends on timing: waits are generous, for a busy 2-core machine.

mod support;

use std::path::PathBuf;
use std::process::{Child, Command as Process, Stdio};
use std::time::{Duration, Instant};

use agent_chatter::activity::{Activity, DecidedBy, OptionKind, ToolKind, ToolStatus};
use agent_chatter::conversation::Action;
use agent_chatter::protocol::{decode_event, Command, Event};
use agent_chatter::session::{Fact, Failure, Session};
use futures_util::StreamExt;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use support::mock_models::{claude_system, user_texts, Answer, Api, Tool};
use support::real::{World, NO_TIMEOUT_MS, PATIENCE};
use support::{cancel, human, Client};
use tokio_tungstenite::tungstenite::Message;

/// The environment variable marking every process of one test (its value: the test's
/// directory).
const MARK_ENV: &str = "AGENT_CHATTER_REAL_ACP_TEST";

/// The three adapters: the member's agent type, its API at the mock, the adapter's command.
const ADAPTERS: [(&str, Api, &str); 3] = [
    ("claude-code", Api::Claude, "claude-agent-acp"),
    ("openai-codex", Api::Codex, "codex-acp"),
    ("google-gemini", Api::Gemini, "gemini --acp"),
];

/// One test's world: the mock, a directory with HOME, TMPDIR, max's working directory, the
/// team, agents file and database.
struct Lab {
    world: World,
    /// max's `baseDir`, canonical.
    work: PathBuf,
}

impl std::ops::Deref for Lab {
    type Target = World;
    fn deref(&self) -> &World {
        &self.world
    }
}

impl Lab {
    /// `max` of `agent_type` over ACP from its built-in profile, with `entry` added to its
    /// agents-file entry and `member` to its team member. `None` (after saying so) when the
    /// adapters are not installed.
    fn new(test: &str, agent_type: &str, entry: Value, member: Value) -> Option<Lab> {
        let world = World::new(
            test,
            &["claude-agent-acp", "codex-acp", "gemini"],
            &["home/.codex"],
            MARK_ENV,
        )?;
        let d = world.dir.path();
        let url = world.mock.base_url();
        // codex-acp runs its own nested Codex, which takes its provider from config.toml.
        std::fs::write(
            d.join("home/.codex/config.toml"),
            format!(
                "model_provider = \"mock\"\n\n[model_providers.mock]\nname = \"mock\"\n\
                 base_url = \"{url}/v1\"\nenv_key = \"OPENAI_API_KEY\"\nwire_api = \"responses\"\n\
                 supports_websockets = false\nrequest_max_retries = 0\nstream_max_retries = 0\n"
            ),
        )
        .unwrap();
        let work = std::fs::canonicalize(d.join("work")).unwrap();
        let mut max = json!({"name": "max", "kind": "ai", "agentType": agent_type,
            "systemInstruction": "You are Max, who drafts.\nKeep it short.",
            "baseDir": work.display().to_string()});
        for (k, v) in member.as_object().unwrap() {
            max[k] = v.clone();
        }
        let team = json!({"name": "real-acp", "members": [
            {"name": "kailai", "kind": "human"}, max],
            "settings": {"maxAgentResponseMs": NO_TIMEOUT_MS}});
        std::fs::write(d.join("team.json"), team.to_string()).unwrap();
        // No command: the agent type's built-in profile, found on PATH (the adapters' .bin
        // first).
        let mut acp = json!({"protocol": "acp"});
        for (k, v) in entry.as_object().unwrap() {
            acp[k] = v.clone();
        }
        std::fs::write(
            d.join("agents.json"),
            json!({"agents": {"max": acp}}).to_string(),
        )
        .unwrap();
        Some(Lab { world, work })
    }

    /// `agent-chatter serve` on this lab's files with a clean environment: nothing of the
    /// machine's but PATH (the adapters' directory first), the mock as every vendor's API, and
    /// this test's marker. Returns once it listens, greeted, with the session and agents read.
    async fn serve(&self) -> (Child, Client) {
        let (child, page, _) = self.serve_with_facts().await;
        (child, page)
    }

    /// [`Lab::serve`], and the facts the session opened with.
    async fn serve_with_facts(&self) -> (Child, Client, Vec<Fact>) {
        let mut path = std::ffi::OsString::from(self.bin.as_os_str());
        path.push(":");
        path.push(std::env::var_os("PATH").unwrap_or_default());
        let log = std::fs::File::create(self.path("serve.log")).unwrap();
        let mut serve = Process::new(support::bin());
        self.vendor_env(&mut serve, path);
        let mut child = serve
            // As root, Claude offers its every mode only in a sandbox.
            .env("IS_SANDBOX", "1")
            .env("GEMINI_CLI_TRUST_WORKSPACE", "true")
            .current_dir(self.path("tmp"))
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
            .stderr(Stdio::from(log))
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
            .unwrap_or_else(|| panic!("serve's first line: {line:?}\n{}", self.serve_log()));
        let (port, token) = rest.split_once("/#token=").unwrap();
        use tokio_tungstenite::tungstenite::client::IntoClientRequest;
        let mut req = format!("ws://127.0.0.1:{port}/api/ws")
            .into_client_request()
            .unwrap();
        req.headers_mut().insert(
            "origin",
            format!("http://127.0.0.1:{port}").parse().unwrap(),
        );
        let (ws, _) = tokio_tungstenite::connect_async(req).await.unwrap();
        let mut page = Client { ws };
        page.send_command(Command::Hello {
            token: token.to_string(),
        })
        .await;
        let Event::Session { facts, .. } =
            page.wait_for(|e| matches!(e, Event::Session { .. })).await
        else {
            unreachable!()
        };
        page.wait_for(|e| matches!(e, Event::Agents { .. })).await;
        (child, page, facts)
    }

    fn serve_log(&self) -> String {
        std::fs::read_to_string(self.path("serve.log")).unwrap_or_default()
    }
}

/// Events up to and including the first matching `pred`, waiting up to [`PATIENCE`] (an
/// adapter starts Node and its vendor's agent: far slower than the fixture).
async fn until(page: &mut Client, pred: impl Fn(&Event) -> bool) -> Vec<Event> {
    let deadline = tokio::time::Instant::now() + PATIENCE;
    let mut seen = Vec::new();
    loop {
        let msg = tokio::time::timeout_at(deadline, page.ws.next())
            .await
            .unwrap_or_else(|_| panic!("no such event within {PATIENCE:?}; saw {seen:#?}"));
        let text = match msg {
            Some(Ok(Message::Text(t))) => t.to_string(),
            Some(Ok(_)) => continue,
            _ => panic!("closed; saw {seen:#?}"),
        };
        let e = decode_event(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
        let done = pred(&e);
        seen.push(e);
        if done {
            return seen;
        }
    }
}

fn is_outcome(e: &Event) -> bool {
    matches!(e, Event::Fact { fact, .. } if matches!(fact.kind(), "replied" | "failed"))
}

/// The outcome fact among `events` (the last one).
fn outcome(events: &[Event]) -> &Fact {
    events
        .iter()
        .rev()
        .find_map(|e| match e {
            Event::Fact { fact, .. } if matches!(fact.kind(), "replied" | "failed") => Some(fact),
            _ => None,
        })
        .expect("an outcome")
}

fn replied_text(lab: &Lab, events: &[Event]) -> String {
    match outcome(events) {
        Fact::Replied { text, .. } => text.to_string(),
        other => panic!(
            "not a reply: {other:?}\n--- serve's stderr\n{}\n--- mock\n{}",
            lab.serve_log(),
            lab.mock.summary()
        ),
    }
}

/// max's activity items among `events`.
fn activity(events: &[Event]) -> Vec<&Activity> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::Activity { to, item, .. } if to == "max" => Some(item),
            _ => None,
        })
        .collect()
}

/// Asks max (`[NEXT: max] …`) and reads every event up to the run's outcome.
async fn ask_max(page: &mut Client, text: &str) -> Vec<Event> {
    page.send_command(human(&format!("[NEXT: max] {text}")))
        .await;
    until(page, is_outcome).await
}

fn sha256_hex(parts: &[&[u8]]) -> String {
    let mut sha = Sha256::new();
    for p in parts {
        sha.update(p);
    }
    sha.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// The deliveries the facts among `events` make, replayed by the core as the page does:
/// (member, prompt bytes, system part, the core's digest).
fn deliveries(opened: &[Fact], events: &[Event]) -> Vec<(String, String, Option<String>, String)> {
    let mut mirror = Session::new();
    let mut out = Vec::new();
    let later = events.iter().filter_map(|e| match e {
        Event::Fact { fact, .. } => Some(fact),
        _ => None,
    });
    for fact in opened.iter().chain(later) {
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

// ---------------------------------------------------------------------------------------------
// a. The chain over ACP, and the exact bytes (e. Claude's usage and context fill).

#[tokio::test]
async fn each_adapter_replies_and_its_model_gets_the_exact_prompt_the_digest_covers() {
    for (agent_type, api, adapter) in ADAPTERS {
        let Some(lab) = Lab::new("each_adapter_replies", agent_type, json!({}), json!({})) else {
            return;
        };
        let started = Instant::now();
        lab.mock
            .answer(api, Answer::Text("Drafted over ACP. [NEXT: kailai]".into()));
        let (serve, mut page, opened) = lab.serve_with_facts().await;
        let events = ask_max(&mut page, "Please draft the plan.").await;
        let text = replied_text(&lab, &events);
        assert!(text.contains("Drafted over ACP."), "{adapter}: {text}");
        let delivering = events
            .iter()
            .find_map(|e| match e {
                Event::Delivering {
                    to, prompt_sha256, ..
                } if to == "max" => Some(prompt_sha256.clone()),
                _ => None,
            })
            .expect("a delivering event");
        let ds = deliveries(&opened, &events);
        let (_, prompt, system, core_sha) = ds
            .iter()
            .find(|(m, ..)| m == "max")
            .expect("a delivery to max");
        // The digest covers the prompt, and for Claude the system part sent apart from it.
        let digest = match (api, system) {
            (Api::Claude, Some(system)) => {
                sha256_hex(&[prompt.as_bytes(), &[0], system.as_bytes()])
            }
            (Api::Claude, None) => panic!("max has a system instruction, so a system part"),
            (_, Some(system)) => panic!("{adapter}: a system part apart: {system}"),
            (_, None) => sha256_hex(&[prompt.as_bytes()]),
        };
        assert_eq!(delivering, digest, "{adapter}: the digest of what was sent");
        assert_eq!(&delivering, core_sha, "{adapter}: the core's digest");
        // The model got the prompt's bytes verbatim, as its last user text.
        let requests = lab.mock.main_requests(api);
        let request = requests
            .first()
            .unwrap_or_else(|| panic!("{adapter} never called the model:\n{}", lab.mock.summary()));
        let texts = user_texts(request);
        let last = texts.last().map(String::as_str).unwrap_or_default();
        assert!(
            last.contains(prompt.as_str()),
            "{adapter}: the prompt is not in the model's last user text\n--- prompt ({} bytes)\n\
             {prompt}\n--- at the model ({} bytes)\n{last}",
            prompt.len(),
            last.len()
        );
        if last != prompt {
            eprintln!(
                "{adapter}: the last user text holds the prompt with {} bytes around it",
                last.len() - prompt.len()
            );
        }
        if let (Api::Claude, Some(system)) = (api, system) {
            let at_model = claude_system(request);
            assert!(
                at_model.contains(system.as_str()),
                "{adapter}: the system part is not in the model's system\n--- system part\n\
                 {system}\n--- at the model's end\n{}",
                &at_model[at_model.len().saturating_sub(system.len() + 200)..]
            );
        }
        // e. Usage and the context fill: Claude's adapter reports tokens, the cost and the
        // fill; the others at least tokens.
        let Fact::Replied { usage, .. } = outcome(&events) else {
            unreachable!()
        };
        let usage = usage.as_deref().cloned().expect("usage recorded");
        eprintln!("{adapter}: usage {usage:?}");
        assert!(usage.input_tokens.is_some_and(|t| t > 0), "{adapter}");
        assert!(usage.output_tokens.is_some_and(|t| t > 0), "{adapter}");
        if api == Api::Claude {
            assert!(
                usage.cost_usd.is_some_and(|c| c.dollars() > 0.0),
                "{adapter}: {usage:?}"
            );
            assert!(
                activity(&events).iter().any(
                    |i| matches!(i, Activity::Context { used, size } if *used > 0 && *size > 0)
                ),
                "{adapter}: no context fill"
            );
        }
        drop(page);
        drop(serve);
        eprintln!("{adapter}: replied in {:?}", started.elapsed());
    }
}

// ---------------------------------------------------------------------------------------------
// b. Claude's approvals (its `default` mode: always ask).

/// A lab whose max is Claude over ACP, its model writing `hello.txt` in max's directory, then
/// saying `Done.`.
fn claude_writes(test: &str, entry: Value) -> Option<Lab> {
    writes(test, "claude-code", Api::Claude, entry)
}

/// [`claude_writes`] for max of `agent_type`, its model at `api`.
fn writes(test: &str, agent_type: &str, api: Api, entry: Value) -> Option<Lab> {
    let lab = Lab::new(test, agent_type, entry, json!({}))?;
    lab.mock.answer(
        api,
        Answer::ToolThenText {
            tool: Tool::Write {
                path: lab.work.join("hello.txt").display().to_string(),
                content: "hello from the model\n".into(),
            },
            text: "Done. [NEXT: kailai]".into(),
        },
    );
    Some(lab)
}

/// Waits for max's approval of its Write; returns its id and the option of `kind`.
async fn approval(page: &mut Client, kind: OptionKind) -> (String, String) {
    let events = until(page, |e| {
        matches!(e, Event::Approval { .. }) || is_outcome(e)
    })
    .await;
    let Some(Event::Approval { request, to, .. }) = events.last() else {
        panic!("no approval asked: {events:#?}")
    };
    assert_eq!(to, "max");
    assert_eq!(request.tool_call.kind, ToolKind::Edit, "{request:?}");
    assert!(request.tool_call.title.contains("hello.txt"), "{request:?}");
    let option = request
        .options
        .iter()
        .find(|o| o.kind == kind)
        .unwrap_or_else(|| panic!("no {kind:?} option: {:?}", request.options));
    (request.id.clone(), option.id.clone())
}

fn settled(events: &[Event]) -> Vec<(Option<String>, DecidedBy)> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::ApprovalSettled { option, by, .. } => Some((option.clone(), by.clone())),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn claude_asks_before_writing_and_an_allow_from_the_page_lets_it_write() {
    let Some(lab) = claude_writes("claude_allow", json!({})) else {
        return;
    };
    let (_serve, mut page) = lab.serve().await;
    page.send_command(human("[NEXT: max] Write hello.txt please."))
        .await;
    let (request, option) = approval(&mut page, OptionKind::AllowOnce).await;
    page.send_command(Command::AnswerApproval {
        to: "max".into(),
        request,
        option: option.clone(),
    })
    .await;
    let events = until(&mut page, is_outcome).await;
    assert_eq!(
        settled(&events),
        [(
            Some(option),
            DecidedBy::Person {
                r#where: "page".into()
            }
        )]
    );
    assert!(replied_text(&lab, &events).contains("Done."));
    assert_eq!(
        std::fs::read_to_string(lab.work.join("hello.txt")).unwrap(),
        "hello from the model\n"
    );
}

#[tokio::test]
async fn claude_denied_from_the_page_writes_nothing_and_its_model_is_told() {
    let Some(lab) = claude_writes("claude_deny", json!({})) else {
        return;
    };
    let (_serve, mut page) = lab.serve().await;
    page.send_command(human("[NEXT: max] Write hello.txt please."))
        .await;
    let (request, option) = approval(&mut page, OptionKind::RejectOnce).await;
    page.send_command(Command::AnswerApproval {
        to: "max".into(),
        request,
        option,
    })
    .await;
    let events = until(&mut page, is_outcome).await;
    assert!(replied_text(&lab, &events).contains("Done."));
    assert!(!lab.work.join("hello.txt").exists());
    // The model's next request carries the refusal as the tool's result.
    let last = lab.mock.main_requests(Api::Claude).pop().unwrap();
    let body = last.body.to_string();
    assert!(
        body.contains("tool_result") && body.contains("refused"),
        "the model is not told: {}",
        &body[body.len().saturating_sub(1500)..]
    );
}

#[tokio::test]
async fn claude_unanswered_is_rejected_at_the_approval_timeout() {
    let Some(lab) = claude_writes("claude_timeout", json!({"approvalTimeoutMs": 1500})) else {
        return;
    };
    let (_serve, mut page) = lab.serve().await;
    let events = ask_max(&mut page, "Write hello.txt please.").await;
    assert!(events.iter().any(|e| matches!(e, Event::Approval { .. })));
    let decisions = settled(&events);
    assert_eq!(decisions.len(), 1, "{decisions:?}");
    assert_eq!(decisions[0].1, DecidedBy::Timeout);
    assert!(decisions[0].0.is_some(), "answered with the reject option");
    assert!(replied_text(&lab, &events).contains("Done."));
    assert!(!lab.work.join("hello.txt").exists());
}

#[tokio::test]
async fn claude_under_approve_edits_writes_and_no_one_is_asked() {
    let Some(lab) = claude_writes("claude_rule", json!({"approve": "edits"})) else {
        return;
    };
    let (_serve, mut page) = lab.serve().await;
    let events = ask_max(&mut page, "Write hello.txt please.").await;
    assert!(!events.iter().any(|e| matches!(e, Event::Approval { .. })));
    let decisions = settled(&events);
    assert_eq!(decisions.len(), 1, "{decisions:?}");
    assert_eq!(
        decisions[0].1,
        DecidedBy::Rule {
            rule: "approve: edits".into()
        }
    );
    assert!(replied_text(&lab, &events).contains("Done."));
    assert!(lab.work.join("hello.txt").exists());
}

/// Gemini (its own `default` mode, which asks before `write_file`): allowed, then denied, from
/// the page.
#[tokio::test]
async fn gemini_asks_before_writing_and_the_pages_answer_decides() {
    for (kind, written) in [
        (OptionKind::AllowOnce, true),
        (OptionKind::RejectOnce, false),
    ] {
        let Some(lab) = writes("gemini_approval", "google-gemini", Api::Gemini, json!({})) else {
            return;
        };
        let (_serve, mut page) = lab.serve().await;
        page.send_command(human("[NEXT: max] Write hello.txt please."))
            .await;
        let (request, option) = approval(&mut page, kind).await;
        page.send_command(Command::AnswerApproval {
            to: "max".into(),
            request,
            option: option.clone(),
        })
        .await;
        let events = until(&mut page, is_outcome).await;
        assert_eq!(
            settled(&events),
            [(
                Some(option),
                DecidedBy::Person {
                    r#where: "page".into()
                }
            )],
            "{kind:?}"
        );
        assert!(replied_text(&lab, &events).contains("Done."), "{kind:?}");
        assert_eq!(lab.work.join("hello.txt").exists(), written, "{kind:?}");
    }
}

// ---------------------------------------------------------------------------------------------
// c. Activity rows for a read, an edit and a command.

#[tokio::test]
async fn a_read_an_edit_and_a_command_are_activity_rows() {
    for (agent_type, api, adapter) in ADAPTERS {
        let Some(lab) = Lab::new(
            "activity_rows",
            agent_type,
            json!({"approve": "all"}),
            json!({}),
        ) else {
            return;
        };
        std::fs::write(lab.work.join("readme.txt"), "read me\n").unwrap();
        let (_serve, mut page) = lab.serve().await;
        let cases = [
            (
                Tool::Read {
                    path: lab.work.join("readme.txt").display().to_string(),
                },
                ToolKind::Read,
            ),
            (
                Tool::Write {
                    path: lab.work.join("new.txt").display().to_string(),
                    content: "one\ntwo\n".into(),
                },
                ToolKind::Edit,
            ),
            (
                Tool::Shell {
                    command: "touch made-by-command.txt".into(),
                },
                ToolKind::Execute,
            ),
        ];
        for (tool, kind) in cases {
            lab.mock.answer(
                api,
                Answer::ToolThenText {
                    tool: tool.clone(),
                    text: "Done. [NEXT: kailai]".into(),
                },
            );
            let events = ask_max(&mut page, "Use your tool.").await;
            replied_text(&lab, &events);
            let calls: Vec<_> = activity(&events)
                .into_iter()
                .filter_map(|i| match i {
                    Activity::ToolCall(c) => Some(c),
                    _ => None,
                })
                .collect();
            assert!(
                calls
                    .iter()
                    .any(|c| c.kind == kind && c.status == ToolStatus::Completed),
                "{adapter}: no completed {kind:?} row for {tool:?}: {calls:#?}"
            );
            if kind == ToolKind::Edit {
                assert!(
                    calls.iter().any(|c| c.kind == kind
                        && c.files.iter().any(|f| f.ends_with("new.txt"))
                        && c.diff.is_some_and(|d| d.added == 2)),
                    "{adapter}: the edit's file and diff: {calls:#?}"
                );
            }
        }
        assert!(lab.work.join("new.txt").exists(), "{adapter}");
        assert!(lab.work.join("made-by-command.txt").exists(), "{adapter}");
    }
}

// ---------------------------------------------------------------------------------------------
// d. A cancel during an approval and during a tool call.

#[tokio::test]
async fn a_cancel_during_claudes_approval_withdraws_it_and_nothing_is_left_running() {
    let Some(lab) = claude_writes("cancel_approval", json!({})) else {
        return;
    };
    let (serve, mut page) = lab.serve().await;
    page.send_command(human("[NEXT: max] Write hello.txt please."))
        .await;
    approval(&mut page, OptionKind::RejectOnce).await;
    page.send_command(cancel("max")).await;
    let events = until(&mut page, is_outcome).await;
    assert_eq!(settled(&events), [(None, DecidedBy::RunEnded)]);
    assert!(
        matches!(
            outcome(&events),
            Fact::Failed {
                failure: Some(Failure::Cancelled),
                ..
            }
        ),
        "{:?}",
        outcome(&events)
    );
    assert!(!lab.work.join("hello.txt").exists());
    let left = lab.leftovers_but_the_watchdog(&[serve.id()]);
    assert!(left.is_empty(), "still running: {left:?}");
}

#[tokio::test]
async fn a_cancel_during_a_running_command_stops_it_and_nothing_is_left_running() {
    for (agent_type, api, adapter) in ADAPTERS {
        let Some(lab) = Lab::new(
            "cancel_command",
            agent_type,
            json!({"approve": "all"}),
            json!({}),
        ) else {
            return;
        };
        lab.mock.answer(
            api,
            Answer::ToolThenText {
                tool: Tool::Shell {
                    // (Claude's Bash refuses a long `sleep`.)
                    command: "tail -f /dev/null && touch slept.txt".into(),
                },
                text: "Done. [NEXT: kailai]".into(),
            },
        );
        let (serve, mut page) = lab.serve().await;
        page.send_command(human("[NEXT: max] Run it.")).await;
        // The command is running once its `tail` is.
        let deadline = Instant::now() + PATIENCE;
        while !lab
            .processes(&[])
            .iter()
            .any(|(_, cmd)| cmd == "tail -f /dev/null")
        {
            assert!(
                Instant::now() < deadline,
                "{adapter}: the command never ran\n{}",
                lab.mock.summary()
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        page.send_command(cancel("max")).await;
        let events = until(&mut page, is_outcome).await;
        assert!(
            matches!(
                outcome(&events),
                Fact::Failed {
                    failure: Some(Failure::Cancelled),
                    ..
                }
            ),
            "{adapter}: {:?}",
            outcome(&events)
        );
        let left = lab.leftovers_but_the_watchdog(&[serve.id()]);
        assert!(left.is_empty(), "{adapter}: still running: {left:?}");
        assert!(!lab.work.join("slept.txt").exists());
    }
}
