//! `agent-chatter serve` as a user runs it: a real process on a real socket, real SQLite file,
//! fake agent scripts replaying recorded CLI streams (tests/fixtures/agents/).

mod support;

use agent_chatter::conversation::Action;
use agent_chatter::message::Millis;
use agent_chatter::protocol::{AgentReport, Command, Event, Sent};
use agent_chatter::session::{Fact, Failure, Session};
use agent_chatter::team::PermissionMode;
use serde_json::{json, Value};
use support::{apply, human, set_team, team, Bridge};

/// Request headers of one guard case.
type Headers<'a> = &'a [(&'a str, &'a str)];

fn is_delivering(e: &Event) -> bool {
    matches!(e, Event::Delivering { .. })
}

fn is_output(e: &Event) -> bool {
    matches!(e, Event::Output { .. })
}

/// The `agents` event's list, read after `hello`.
async fn agents_of(page: &mut support::Client) -> Vec<AgentReport> {
    match page.wait_for(|e| matches!(e, Event::Agents { .. })).await {
        Event::Agents { list } => list,
        _ => unreachable!(),
    }
}

#[test]
fn the_guards_refuse_foreign_hosts_and_origins_naming_the_reason() {
    let bridge = Bridge::start(Bridge::new_dir(&team(None), "claude-stream.sh"), None);
    let host = format!("127.0.0.1:{}", bridge.port);
    let localhost = format!("localhost:{}", bridge.port);
    let origin = bridge.origin();
    let cases: [(Headers, u16, &str); 9] = [
        (&[("Host", &host)], 200, "<!doctype html>"),
        // RFC 9112 §3.2 (issue #45.9): two Host fields are a bad request, even both ours.
        (
            &[("Host", &host), ("Host", &host)],
            400,
            "more than one Host header",
        ),
        (
            &[("Host", &host), ("Host", "evil.example")],
            400,
            "more than one Host header",
        ),
        (&[("Host", &localhost)], 200, "<!doctype html>"),
        (
            &[("Host", &host), ("Origin", &origin)],
            200,
            "<!doctype html>",
        ),
        (&[("Host", "evil.example")], 403, "is not a loopback name"),
        (&[("Host", "127.0.0.1:1")], 403, "is not a loopback name"),
        (
            &[("Host", &host), ("Origin", "null")],
            403,
            "Origin \"null\" is not this page's origin",
        ),
        (
            &[("Host", &host), ("Origin", "http://evil.example")],
            403,
            "is not this page's origin",
        ),
    ];
    for (headers, status, body) in cases {
        let (got, text) = bridge.get("/", headers);
        assert_eq!(got, status, "{headers:?}: {text}");
        assert!(text.contains(body), "{headers:?}: {text}");
    }
    // No CORS grant, ever.
    let (_, text) = bridge.get("/", &[("Host", &host), ("Origin", &origin)]);
    assert!(!text
        .to_ascii_lowercase()
        .contains("access-control-allow-origin"));
}

#[tokio::test]
async fn the_websocket_wants_our_origin_and_the_token_first() {
    let bridge = Bridge::start(Bridge::new_dir(&team(None), "claude-stream.sh"), None);
    let err = bridge.connect(None).await.err().unwrap();
    assert!(err.contains("403"), "{err}");
    let err = bridge
        .connect(Some("http://evil.example"))
        .await
        .err()
        .unwrap();
    assert!(err.contains("403"), "{err}");

    let mut wrong = bridge.connect(Some(&bridge.origin())).await.unwrap();
    wrong
        .send_command(Command::Hello {
            token: "0".repeat(64),
        })
        .await;
    assert_eq!(
        wrong.next_event().await,
        Some(Event::Error {
            message: "wrong token".into()
        })
    );
    assert!(wrong.next().await.is_none(), "closed after a wrong token");

    let mut rude = bridge.connect(Some(&bridge.origin())).await.unwrap();
    rude.send_command(Command::ListSessions).await;
    assert_eq!(
        rude.next_event().await,
        Some(Event::Error {
            message: "the first frame must be hello with the launch token".into()
        })
    );
    assert!(rude.next().await.is_none());
}

#[tokio::test]
async fn hostile_frames_get_an_error_and_the_session_is_unchanged() {
    let bridge = Bridge::start(Bridge::new_dir(&team(None), "claude-stream.sh"), None);
    let (mut page, session) = bridge.join().await;
    let before = session.facts;
    // Frames the protocol's encoder cannot write (not an object, a reply forged by the page)
    // are sent raw; the others are commands the bridge refuses.
    let forged =
        agent_chatter::protocol::encode_command(&apply(Fact::replied("max", "forged", Millis(1))));
    let from_zed = apply(Fact::Human {
        text: "hi".into(),
        sender: Some("zed".into()),
        at: Millis(1),
    });
    for (frame, message) in [
        (
            r#""not an object""#.to_string(),
            "frame must be a JSON object",
        ),
        (
            forged,
            "apply.fact: a replied fact comes from the agent the bridge runs, never from the page",
        ),
        (agent_chatter::protocol::encode_command(&from_zed), "zed"),
        (
            agent_chatter::protocol::encode_command(&human(" ")),
            "the message is empty",
        ),
        (
            agent_chatter::protocol::encode_command(&Command::Cancel { to: "max".into() }),
            "cancel: max is not running",
        ),
    ] {
        page.send_text(frame).await;
        match page.next_event().await.unwrap() {
            Event::Error { message: got } => assert!(got.contains(message), "{got}"),
            other => panic!("not an error: {other:?}"),
        }
    }
    // Above the 16 MiB frame limit: the socket is dropped, the bridge lives on.
    let huge = format!(
        "{{\"v\":1,\"type\":\"hello\",\"token\":\"{}\"}}",
        "x".repeat(17 * 1024 * 1024)
    );
    let _ = futures_util::SinkExt::send(
        &mut page.ws,
        tokio_tungstenite::tungstenite::Message::Text(huge.into()),
    )
    .await;
    assert!(page.next().await.is_none());
    let (_, again) = bridge.join().await;
    assert_eq!(again.facts, before);
}

#[tokio::test]
async fn a_claude_agent_streams_its_reply_and_the_delivery_is_verifiable() {
    let bridge = Bridge::start(Bridge::new_dir(&team(None), "claude-stream.sh"), None);
    let (mut page, session) = bridge.join().await;
    let mut mirror = Session::replay(session.facts).unwrap();
    while mirror.poll_action().is_some() {}
    page.send_command(human("[FROM: kailai] Please draft it. [NEXT: max]"))
        .await;
    let events = page.collect_until_fact_kind("replied").await;
    // What the page computes from the facts it receives…
    let mut previewed = Vec::new();
    let mut sent = Vec::new();
    let mut deltas = String::new();
    for e in &events {
        match e {
            Event::Fact { fact, .. } => {
                mirror.apply(fact).unwrap();
                for action in std::iter::from_fn(|| mirror.poll_action()) {
                    if let Action::Deliver(d) = action {
                        previewed.push((
                            d.to.clone(),
                            d.prompt.sha256_hex(),
                            d.prompt.explain.total_bytes,
                        ));
                    }
                }
            }
            // …and what the bridge says it wrote to the agent.
            Event::Delivering {
                to,
                prompt_sha256,
                bytes,
                ..
            } => sent.push((to.clone(), prompt_sha256.clone(), *bytes)),
            Event::Output { delta, .. } => deltas.push_str(delta),
            _ => {}
        }
    }
    assert_eq!(sent.len(), 1);
    assert_eq!(
        previewed, sent,
        "the page's preview is what the bridge sent"
    );
    assert_eq!(deltas, "Relay héllo", "the split é stays whole");
    let Some(Event::Fact {
        fact: Fact::Replied { text: reply, .. },
        ..
    }) = events.last()
    else {
        panic!("{events:?}")
    };
    assert!(reply.starts_with("Relay héllo, "), "{reply}");
    assert!(reply.ends_with(" prompt bytes [NEXT: kailai]"), "{reply}");

    // A page that opens the session later gets the digest of that past delivery too, by message.
    let Some(Event::Delivering { message, .. }) = events.iter().find(|e| is_delivering(e)) else {
        panic!("{events:?}")
    };
    assert_eq!(message, "msg-1");
    let (_, later) = bridge.join().await;
    assert_eq!(
        later.sent,
        [Sent {
            message: "msg-1".into(),
            to: "max".into(),
            prompt_sha256: sent[0].1.clone()
        }]
    );
}

#[tokio::test]
async fn a_crashing_agent_becomes_a_failed_fact_with_its_reason() {
    let bridge = Bridge::start(Bridge::new_dir(&team(None), "crash.sh"), None);
    let (mut page, _) = bridge.join().await;
    page.send_command(human("[NEXT: max] go")).await;
    let reason = page.until_failed().await.reason;
    assert!(
        reason.contains("segfault in the model client (crash.sh exited with code 3); its output (31 bytes) is kept in the session database (`agent-chatter outputs` prints it)"),
        "{reason}"
    );
}

#[tokio::test]
async fn a_hanging_agent_is_stopped_at_the_team_timeout() {
    let bridge = Bridge::start(Bridge::new_dir(&team(Some(400)), "hang.sh"), None);
    let (mut page, _) = bridge.join().await;
    page.send_command(human("[NEXT: max] go")).await;
    assert_eq!(
        page.until_failed().await.reason,
        "no reply within 400 ms: the agent was stopped"
    );
}

#[tokio::test]
async fn a_member_chosen_as_simulated_is_answered_by_the_simulator() {
    let bridge = Bridge::start(Bridge::new_dir(&team(None), "claude-stream.sh"), None);
    let (mut page, _) = bridge.join().await;
    page.send_command(human("[NEXT: sarah] review it")).await;
    let replied = page.until_replied().await;
    assert_eq!(replied.to, "sarah");
    assert!(
        replied.text.starts_with("sarah (simulated): I read"),
        "{replied:?}"
    );
}

#[tokio::test]
async fn an_empty_reply_is_a_failure_never_a_message() {
    let bridge = Bridge::start(Bridge::new_dir(&team(None), "claude-empty.sh"), None);
    let (mut page, _) = bridge.join().await;
    page.send_command(human("[NEXT: max] say something")).await;
    let outcome = page.until_seq(3).await;
    let Fact::Failed { reason, .. } = &outcome else {
        panic!("not failed: {outcome:?}")
    };
    assert_eq!(
        reason,
        "empty reply: the agent ended without saying anything"
    );
}

/// A team whose `sarah` is a Codex member, and Codex is not installed here.
fn team_with_a_missing_cli() -> serde_json::Value {
    let mut team = team(None);
    team["members"][2]["agentType"] = json!("openai-codex");
    team
}

#[tokio::test]
async fn a_missing_cli_is_never_simulated_silently_its_delivery_fails_by_name() {
    let bridge = Bridge::start(
        Bridge::new_dir(&team_with_a_missing_cli(), "claude-stream.sh"),
        None,
    );
    let (mut page, _) = bridge.join().await;
    page.send_command(human("[NEXT: sarah] review it")).await;
    let seen = page
        .collect_events_until(|e| matches!(e, Event::Fact { seq: 3, .. }))
        .await;
    let Some(Event::Fact {
        fact: Fact::Failed { reason, .. },
        ..
    }) = seen.last()
    else {
        panic!("not failed: {seen:?}")
    };
    assert_eq!(
        reason,
        "sarah: agent-chatter-test-no-such-codex is not installed (not on PATH); install it, \
         set its command in the agents file, or start with --simulate"
    );
    assert!(
        !seen.iter().any(is_delivering),
        "a delivery no one can take is not announced: {seen:?}"
    );
}

#[tokio::test]
async fn simulate_makes_the_simulator_answer_every_member() {
    let dir = Bridge::new_dir(&team_with_a_missing_cli(), "claude-stream.sh");
    let bridge = Bridge::start_with(dir, None, &["--simulate"]);
    let (mut page, _) = bridge.join().await;
    page.send_command(human("[NEXT: max] draft it")).await;
    let replied = page.until_replied().await;
    assert!(
        replied.text.starts_with("max (simulated): I read"),
        "max's CLI is installed, yet --simulate chose the simulator: {replied:?}"
    );
}

#[tokio::test]
async fn killed_mid_chain_twenty_times_the_bridge_resumes_with_every_fact() {
    let mut dir = Bridge::new_dir(&team(None), "slow-claude.sh");
    let mut session_id = None;
    let mut expected: Vec<Fact> = Vec::new();
    for round in 0..20u64 {
        let bridge = Bridge::start(dir, session_id);
        let (mut page, session) = bridge.join().await;
        session_id = Some(session.id);
        let facts = session.facts;
        assert!(
            facts.starts_with(&expected),
            "round {round}: a committed fact was lost"
        );
        assert!(
            Session::replay(&facts[..]).is_ok(),
            "round {round}: the log does not replay"
        );
        expected = facts;
        // Resumed mid-run, the bridge has recorded that run as interrupted (docs/architecture.md
        // §14c), and resumed with a delivery committed but not begun, it runs it; otherwise
        // start one.
        let running = Session::replay(&expected[..])
            .unwrap()
            .conversation()
            .in_flight()
            .is_some();
        if !running {
            page.send_command(human(&format!("[FROM: kailai] round {round} [NEXT: max]")))
                .await;
            page.wait_for(is_delivering).await;
        }
        // Kill at a different point each round: right away, or while the agent runs.
        tokio::time::sleep(std::time::Duration::from_millis(round * 37 % 500)).await;
        let (mut check, latest) = bridge.join().await;
        let _ = check.ws.close(None).await;
        expected = latest.facts;
        dir = bridge.kill();
    }
    let bridge = Bridge::start(dir, session_id);
    let (mut page, last) = bridge.join().await;
    let facts = last.facts;
    assert!(facts.starts_with(&expected));
    if Session::replay(&facts[..])
        .unwrap()
        .conversation()
        .in_flight()
        .is_some()
    {
        // A delivery committed but not begun at the last kill is made now, and answered.
        page.until_replied().await;
    }
    let replies = facts
        .iter()
        .filter(|f| matches!(f, Fact::Replied { .. }))
        .count();
    assert!(replies > 0, "some deliveries finished between kills");
}

#[tokio::test]
async fn a_reply_above_the_message_limit_is_kept_whole_and_recorded_as_failed() {
    let bridge = Bridge::start(Bridge::new_dir(&team(None), "huge-reply.sh"), None);
    let (mut page, _) = bridge.join().await;
    page.send_command(human("[NEXT: max] write a lot")).await;
    assert_eq!(
        page.until_failed().await.reason,
        "reply of 1200000 bytes is above the 1048576 byte message limit; its full output is kept in the session database (`agent-chatter outputs` prints it)"
    );
    let db = rusqlite::Connection::open(bridge.dir.path().join("sessions.db")).unwrap();
    let kept: i64 = db
        .query_row(
            "SELECT length(output) FROM outputs WHERE member = 'max'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(kept, 1_200_001);
}

#[tokio::test]
async fn the_output_a_failure_says_is_kept_is_printed_by_the_outputs_command() {
    let bridge = Bridge::start(Bridge::new_dir(&team(None), "huge-reply.sh"), None);
    let (mut page, _) = bridge.join().await;
    page.send_command(human("[NEXT: max] write a lot")).await;
    page.until_failed().await;
    let db = bridge.dir.path().join("sessions.db");
    let out = std::process::Command::new(support::bin())
        .args(["outputs", "1", "--member", "Max", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(out.stdout.len(), 1_200_001);
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("max") && said.contains("1200001 bytes"),
        "{said}"
    );
}

#[tokio::test]
async fn cancel_stops_the_running_agent_and_becomes_a_failed_fact() {
    let bridge = Bridge::start(Bridge::new_dir(&team(None), "hang.sh"), None);
    let (mut page, _) = bridge.join().await;
    page.send_command(human("[NEXT: max] take your time")).await;
    page.wait_for(is_delivering).await;
    page.send_command(Command::Cancel { to: "max".into() })
        .await;
    assert_eq!(
        page.until_failed().await.reason,
        "cancelled by the user: the agent was stopped"
    );
}

#[test]
fn preview_prints_the_cores_exact_bytes() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let scenario_path = root.join("examples/demo-scenario.json");
    let scenario =
        agent_chatter::scenario::load_scenario(&std::fs::read_to_string(&scenario_path).unwrap())
            .unwrap();
    for member in ["max", "sarah", "carol"] {
        let expected = agent_chatter::scenario::preview(&scenario, member).unwrap();
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_agent-chatter"))
            .args([
                "preview",
                scenario_path.to_str().unwrap(),
                "--member",
                member,
            ])
            .output()
            .unwrap();
        assert_eq!(out.stdout, expected.prompt.as_bytes(), "{member}");
        // Claude's system flag is part of what the agent gets: shown on stderr.
        let stderr = String::from_utf8(out.stderr).unwrap();
        match &expected.system_flag {
            Some(flag) => assert!(
                stderr.contains(&format!(
                    "(--append-system-prompt), {} B --\n{flag}\n",
                    flag.len()
                )),
                "{member}: {stderr}"
            ),
            None => assert!(!stderr.contains("system flag"), "{member}: {stderr}"),
        }
        assert!(
            stderr.contains(&format!(
                "-- {member}: prompt (stdin) {} B",
                expected.prompt.len()
            )),
            "{member}: {stderr}"
        );
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_agent-chatter"))
            .args([
                "preview",
                scenario_path.to_str().unwrap(),
                "--member",
                member,
                "--json",
            ])
            .output()
            .unwrap();
        let json: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(json["prompt"], expected.prompt);
        assert_eq!(
            json["systemFlag"],
            serde_json::to_value(&expected.system_flag).unwrap()
        );
    }
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_agent-chatter"))
        .args([
            "preview",
            scenario_path.to_str().unwrap(),
            "--member",
            "zed",
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("\"zed\" is not a member"));
}

/// `agent-chatter preview` on `path` in `cwd` with `extra` arguments: (stdout, stderr).
fn run_preview(path: &std::path::Path, cwd: &std::path::Path, extra: &[&str]) -> (String, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_agent-chatter"))
        .current_dir(cwd)
        .args(["preview", path.to_str().unwrap(), "--member", "max"])
        .args(extra)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{stderr}");
    (String::from_utf8(out.stdout).unwrap(), stderr)
}

/// A scenario whose max has an instruction file `roles/max/max.md` (written when `with_file`).
fn scenario_with_instruction_file(with_file: bool) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("roles/max")).unwrap();
    if with_file {
        std::fs::write(dir.path().join("roles/max/max.md"), "Read the diff first.").unwrap();
    }
    let scenario = json!({
        "team": {"name": "t", "members": [
            {"name": "kailai", "kind": "human"},
            {"name": "max", "kind": "ai", "agentType": "codex", "systemInstruction": "Base.",
             "instructionFile": "max.md", "baseDir": "roles/max"}]},
        "messages": [{"from": "kailai", "content": "Go [NEXT: max]"}]
    });
    let path = dir.path().join("scenario.json");
    std::fs::write(&path, scenario.to_string()).unwrap();
    (dir, path)
}

#[test]
fn preview_gives_the_npm_packages_bytes_and_names_the_instruction_file_it_did_not_read() {
    let (dir, path) = scenario_with_instruction_file(true);
    let (prompt, stderr) = run_preview(&path, dir.path(), &[]);
    let text = std::fs::read_to_string(&path).unwrap();
    let scenario = agent_chatter::scenario::load_scenario(&text).unwrap();
    let npm = agent_chatter::scenario::preview(&scenario, "max").unwrap();
    assert_eq!(prompt, npm.prompt);
    assert!(
        prompt.starts_with("[SYSTEM]\nBase.\n\n[MESSAGE]"),
        "{prompt}"
    );
    assert!(
        stderr.contains("note: ")
            && stderr.contains("member max names instructionFile \"max.md\", which is not read")
            && stderr.contains("--instruction-files adds it"),
        "{stderr}"
    );
}

#[test]
fn preview_with_instruction_files_reads_them_from_the_members_base_dir() {
    let (dir, path) = scenario_with_instruction_file(true);
    let (prompt, _) = run_preview(&path, dir.path(), &["--instruction-files"]);
    assert!(
        prompt.starts_with("[SYSTEM]\nBase.\n\nRead the diff first.\n\n[MESSAGE]"),
        "{prompt}"
    );
    // Paths resolve from the scenario's directory, not the working directory.
    assert_eq!(
        run_preview(&path, std::path::Path::new("/"), &["--instruction-files"]).0,
        prompt
    );

    // A named file that does not exist (yet) is a warning, as the peer skips it.
    let (dir, path) = scenario_with_instruction_file(false);
    let (prompt, stderr) = run_preview(&path, dir.path(), &["--instruction-files"]);
    assert!(prompt.starts_with("[SYSTEM]\nBase.\n\n[MESSAGE]"));
    assert!(
        stderr.contains("warning: ")
            && stderr.contains("member max (instructionFile \"max.md\", baseDir \"roles/max\")")
            && stderr.contains("does not exist; max's prompts go without it"),
        "{stderr}"
    );
}

#[tokio::test]
async fn codex_and_gemini_streams_give_their_final_text() {
    for (script, agent_type, streamed, reply) in [
        (
            "codex-stream.sh",
            "openai-codex",
            "WARNING: not JSON, kept as text\nLet me check.",
            "Reviewed ✓ [NEXT: kailai]",
        ),
        (
            "gemini-stream.sh",
            "google-gemini",
            "Let me check.Tightened the wording. [NEXT: kailai]",
            "Tightened the wording. [NEXT: kailai]",
        ),
    ] {
        let dir = Bridge::new_dir(
            &json!({"name": "t", "members": [{"name": "kailai", "kind": "human"},
                {"name": "ann", "kind": "ai", "agentType": agent_type}]}),
            "claude-stream.sh",
        );
        let agents =
            json!({"agents": {"ann": {"command": support::fixture(script).display().to_string()}}});
        std::fs::write(dir.path().join("agents.json"), agents.to_string()).unwrap();
        let bridge = Bridge::start(dir, None);
        let (mut page, _) = bridge.join().await;
        page.send_command(human("[NEXT: ann] go")).await;
        let events = page.collect_until_fact_kind("replied").await;
        let deltas: String = events
            .iter()
            .filter_map(|e| match e {
                Event::Output { delta, .. } => Some(delta.as_str()),
                _ => None,
            })
            .collect();
        assert!(deltas.contains(streamed), "{script}: {deltas:?}");
        let Some(Event::Fact {
            fact: Fact::Replied { text, .. },
            ..
        }) = events.last()
        else {
            panic!("{script}: {events:?}")
        };
        assert_eq!(text.as_str(), reply, "{script}");
    }
}

#[tokio::test]
async fn the_page_learns_who_runs_for_real_and_who_is_simulated() {
    let bridge = Bridge::start(Bridge::new_dir(&team(None), "claude-stream.sh"), None);
    let mut page = bridge.greeted().await;
    let agents = agents_of(&mut page).await;
    let list = agents;
    assert_eq!(list.len(), 2);
    assert_eq!((list[0].member.as_str(), list[0].runs), ("max", true));
    assert_eq!((list[1].member.as_str(), list[1].runs), ("sarah", false));
    assert!(list[1].simulated);
    assert_eq!(list[0].problem, None);
}

#[tokio::test]
async fn the_page_learns_which_member_cannot_run_and_why() {
    let bridge = Bridge::start(
        Bridge::new_dir(&team_with_a_missing_cli(), "claude-stream.sh"),
        None,
    );
    let mut page = bridge.greeted().await;
    let agents = agents_of(&mut page).await;
    let sarah = &agents[1];
    assert_eq!((sarah.runs, sarah.simulated), (false, false));
    assert!(
        sarah
            .problem
            .as_deref()
            .unwrap()
            .starts_with("sarah: agent-chatter-test-no-such-codex is not installed"),
        "{sarah:?}"
    );
}

#[tokio::test]
async fn opening_a_session_that_does_not_exist_changes_nothing_and_stops_nothing() {
    let bridge = Bridge::start(Bridge::new_dir(&team(None), "hang.sh"), None);
    let (mut page, _) = bridge.join().await;
    page.send_command(human("[NEXT: max] take your time")).await;
    page.wait_for(is_delivering).await;
    page.send_command(Command::OpenSession { id: 999 }).await;
    let error = page.until_error().await;
    assert!(error.contains("999"), "{error}");
    // Nothing is recorded meanwhile: max still runs in the same session.
    page.no_fact_for_half_a_second().await;
    // Only a cancel ends it, as the next fact.
    page.send_command(Command::Cancel { to: "max".into() })
        .await;
    let failed = page.until_failed().await;
    assert_eq!(failed.seq, 3);
    assert_eq!(
        failed.reason,
        "cancelled by the user: the agent was stopped"
    );
}

/// docs/architecture.md §14c "Interrupted runs": a session left while its agent runs keeps its
/// log as it was; reopened, it records that run as interrupted (saying why) and makes nothing
/// again unasked.
#[tokio::test]
async fn leaving_a_session_mid_run_keeps_its_log_and_reopening_records_the_run_as_interrupted() {
    let bridge = Bridge::start(Bridge::new_dir(&team(None), "hang.sh"), None);
    let (mut page, first) = bridge.join().await;
    let first_id = first.id;
    page.send_command(human("[NEXT: max] take your time")).await;
    page.wait_for(is_delivering).await;

    // A new session, where max is started too.
    page.send_command(Command::NewSession).await;
    let second = page.until_session().await;
    let second_id = second.id;
    assert_ne!(second_id, first_id);
    assert_eq!(second.facts.len(), 1, "the new session has its team only");
    page.send_command(human("[NEXT: max] and here")).await;
    page.wait_for(is_delivering).await;

    // Back to the first: its log is as it was, then its run is recorded as interrupted.
    page.send_command(Command::OpenSession { id: first_id })
        .await;
    let reopened = page.until_session().await;
    assert_eq!(reopened.facts.len(), 2, "setTeam and the human message");
    let failed = page.until_failed().await;
    assert_eq!(failed.seq, 3);
    assert_eq!(failed.failure, Some(Failure::Interrupted));
    let reason = failed.reason;
    assert!(
        reason.starts_with("interrupted: its session was left while it ran (it started "),
        "{reason}"
    );
    // Nothing is delivered again: the session waits for the user.
    page.no_fact_for_half_a_second().await;
    page.send_command(Command::Cancel { to: "max".into() })
        .await;
    let error = page.until_error().await;
    assert!(error.contains("max"), "{error}");

    // The second session's run was stopped as it was left too.
    page.send_command(Command::OpenSession { id: second_id })
        .await;
    let again = page.until_session().await;
    assert_eq!(again.facts.len(), 2, "setTeam and its human message");
    let failed = page.until_failed().await;
    assert_eq!(failed.failure, Some(Failure::Interrupted));
}

#[tokio::test]
async fn a_new_team_mid_run_stops_the_agent_and_its_outcome_is_not_recorded() {
    let bridge = Bridge::start(Bridge::new_dir(&team(None), "hang.sh"), None);
    let (mut page, _) = bridge.join().await;
    page.send_command(human("[NEXT: max] take your time")).await;
    page.wait_for(is_delivering).await;

    // The same team again begins a new conversation, where max is asked again.
    page.send_command(set_team(&team(None))).await;
    page.until_fact_kind("setTeam").await;
    page.send_command(human("[NEXT: max] a new question")).await;
    page.wait_for(is_delivering).await;
    // The first run's stop is not recorded against the second delivery.
    page.no_fact_for_half_a_second().await;
    page.send_command(Command::Cancel { to: "max".into() })
        .await;
    let failed = page.until_failed().await;
    assert_eq!(failed.seq, 5, "setTeam, human, setTeam, human, failed");
}

#[tokio::test]
async fn an_event_larger_than_a_fragment_reaches_every_page_as_one_message() {
    // Sent in 64 KiB fragments (so a connection's write buffer never holds a whole large
    // event): with 3-byte characters, 2 of any 3 fragments end inside one (65 536 = 1 mod 3).
    let instruction = "✓".repeat(120_000) + "end";
    let mut big = team(None);
    big["members"][1]["systemInstruction"] = json!(instruction);
    let bridge = Bridge::start(Bridge::new_dir(&team(None), "claude-stream.sh"), None);
    let (mut page, _) = bridge.join().await;
    page.send_command(set_team(&big)).await;
    let (_, fact) = page.until_fact_kind("setTeam").await;
    let Fact::SetTeam { team, .. } = &fact else {
        unreachable!()
    };
    assert_eq!(
        team.members[1].system_instruction.as_deref(),
        Some(instruction.as_str())
    );
    let (_, session) = bridge.join().await;
    let Some(Fact::SetTeam { team, .. }) = session.facts.last() else {
        panic!("the log ends with the team: {session:?}");
    };
    assert_eq!(
        team.members[1].system_instruction.as_deref(),
        Some(instruction.as_str())
    );
}

#[tokio::test]
async fn a_system_part_too_long_for_one_argument_fails_without_being_announced_as_sent() {
    let mut long_team = team(None);
    long_team["members"][1]["systemInstruction"] = json!("s".repeat(131_072));
    let bridge = Bridge::start(Bridge::new_dir(&long_team, "claude-stream.sh"), None);
    let (mut page, _) = bridge.join().await;
    page.send_command(human("[NEXT: max] hi")).await;
    let events = page.collect_until_fact_kind("failed").await;
    assert!(!events.iter().any(is_delivering), "{events:?}");
    let Some(Event::Fact {
        fact: Fact::Failed { reason, .. },
        ..
    }) = events.last()
    else {
        unreachable!()
    };
    assert!(reason.contains("at most 131071 bytes"), "{reason}");
    // No digest says it was sent: a reload's session lists none.
    let (_, session) = bridge.join().await;
    assert_eq!(session.sent, [], "{session:?}");
}

#[tokio::test]
async fn cancel_stops_a_simulated_agent_too() {
    let bridge = Bridge::start(Bridge::new_dir(&team(None), "hang.sh"), None);
    let (mut page, _) = bridge.join().await;
    page.send_command(human("[NEXT: sarah] review it")).await;
    page.wait_for(is_delivering).await;
    page.send_command(Command::Cancel { to: "sarah".into() })
        .await;
    let outcome = page.until_seq(3).await;
    let Fact::Failed { reason, .. } = &outcome else {
        panic!("not failed: {outcome:?}")
    };
    assert_eq!(reason, "cancelled by the user: the agent was stopped");
}

#[tokio::test]
async fn a_page_can_rename_and_reprompt_but_never_change_what_runs_or_where() {
    let mut machine = team(None);
    machine["members"][1]["permissionMode"] = json!("readOnly");
    machine["members"][1]["env"] = json!({"AGENT_CHATTER_TEST_VAR": "secret-value"});
    // (claude-settings.sh's `--help` lists the flag readOnly maps to, so the bridge starts.)
    let bridge = Bridge::start(Bridge::new_dir(&machine, "claude-settings.sh"), None);
    let mut page = bridge.greeted().await;
    // The page sees the settings, read only, with their source, and env names without values.
    let agents = agents_of(&mut page).await;
    let max = &agents[0];
    assert_eq!(
        max.settings.permission_mode,
        Some(PermissionMode::ReadOnly),
        "{max:?}"
    );
    assert_eq!(
        max.settings.env,
        [("AGENT_CHATTER_TEST_VAR".to_string(), String::new())].into()
    );
    assert!(
        max.source.as_deref().unwrap().starts_with("team file "),
        "{max:?}"
    );
    // A team sent from the page that widens max's rights and changes its env and directory.
    let mut sent = machine.clone();
    sent["members"][1]["permissionMode"] = json!("full");
    sent["members"][1]["env"] = json!({"PATH": "/tmp/evil"});
    sent["members"][1]["baseDir"] = json!("/");
    sent["members"][1]["additionalArgs"] = json!(["--dangerously-skip-permissions"]);
    sent["members"][1]["systemInstruction"] = json!("You are Max, renamed.");
    page.send_command(set_team(&sent)).await;
    let (_, fact) = page.until_fact_kind("setTeam").await;
    let Fact::SetTeam { team, .. } = &fact else {
        unreachable!()
    };
    let max = &team.members[1];
    // The log keeps no run settings at all (docs/architecture.md §14c): neither the page's
    // nor the machine's.
    assert_eq!(max.run.permission_mode, None, "{max:?}");
    assert!(max.run.env.is_empty(), "{max:?}");
    assert_eq!(max.base_dir, None, "{max:?}");
    assert!(max.run.additional_args.is_empty(), "{max:?}");
    assert_eq!(
        max.system_instruction.as_deref(),
        Some("You are Max, renamed.")
    );
    // What runs is what the machine's file says.
    page.send_command(human("[NEXT: max] go")).await;
    let text = page.until_replied().await.text;
    assert!(text.contains("--permission-mode,plan,"), "{text}");
    assert!(!text.contains("dangerously"), "{text}");
    assert!(text.contains("var=secret-value "), "{text}");
}

#[tokio::test]
async fn retries_are_shown_live_and_usage_is_recorded_with_the_reply() {
    let bridge = Bridge::start(Bridge::new_dir(&team(None), "claude-retry.sh"), None);
    let (mut page, _) = bridge.join().await;
    page.send_command(human("[NEXT: max] go")).await;
    let retry = page.wait_for(|e| matches!(e, Event::Retrying { .. })).await;
    assert_eq!(
        retry,
        Event::Retrying {
            to: "max".into(),
            attempt: 1,
            max: Some(10),
            reason: "HTTP 500: server_error".into()
        }
    );
    let replied = page.until_replied().await;
    let usage = replied.usage.unwrap();
    assert_eq!(
        (
            usage.input_tokens,
            usage.output_tokens,
            usage.cost_usd.map(|c| c.dollars())
        ),
        (Some(10), Some(5), Some(0.002)),
        "{replied:?}"
    );
    assert!(usage.duration_ms.is_some(), "{replied:?}");
}

#[tokio::test]
async fn a_failed_agent_retried_from_the_page_runs_its_delivery_again() {
    let dir = Bridge::new_dir(&team(None), "fail-once.sh");
    let state = dir.path().join("first-run");
    let agents = json!({"agents": {
        "max": {"command": support::fixture("fail-once.sh").display().to_string(),
                "args": [state.display().to_string()]},
    }});
    std::fs::write(dir.path().join("agents.json"), agents.to_string()).unwrap();
    let bridge = Bridge::start(dir, None);
    let (mut page, _) = bridge.join().await;
    page.send_command(human("[NEXT: max] draft it")).await;
    assert_eq!(page.until_failed().await.to, "max");

    page.send_command(apply(Fact::Retry {
        to: "max".into(),
        at: Millis(5),
    }))
    .await;
    let (_, retry) = page.until_fact_kind("retry").await;
    assert!(
        matches!(&retry, Fact::Retry { to, .. } if to == "max"),
        "{retry:?}"
    );
    let replied = page.until_replied().await;
    assert_eq!(replied.to, "max");
    assert_eq!(replied.text, "Recovered on the second try. [NEXT: kailai]");
}

#[tokio::test]
async fn a_retry_of_an_agent_that_did_not_fail_is_refused_in_words() {
    let bridge = Bridge::start(Bridge::new_dir(&team(None), "claude-stream.sh"), None);
    let (mut page, _) = bridge.join().await;
    page.send_command(human("[NEXT: max] go")).await;
    page.until_replied().await;
    page.send_command(apply(Fact::Retry {
        to: "max".into(),
        at: Millis(5),
    }))
    .await;
    let error = page.until_error().await;
    assert!(
        error.contains("last run did not fail, so there is nothing to retry"),
        "{error}"
    );
}

/// Issue #45.9: a page that connects while an agent runs is sent what the run has streamed so
/// far (its last MiB), then the rest as it comes: nothing streamed while it was away is lost.
#[tokio::test]
async fn a_page_that_connects_mid_run_gets_the_output_streamed_so_far() {
    let dir = Bridge::new_dir(&json!({}), "claude-waits-for-go.sh");
    let go = dir.path().join("go");
    let mut t = team(None);
    t["members"][1]["env"] = json!({"AGENT_CHATTER_TEST_GO": go.display().to_string()});
    std::fs::write(dir.path().join("team.json"), t.to_string()).unwrap();
    let bridge = Bridge::start(dir, None);
    let (mut first, _) = bridge.join().await;
    first.send_command(human("[NEXT: max] go")).await;
    first.wait_for(is_output).await;

    let (mut later, _) = bridge.join().await;
    let replayed = later
        .wait_for(|e| is_output(e) || matches!(e, Event::Fact { .. }))
        .await;
    assert_eq!(
        replayed,
        Event::Output {
            to: "max".into(),
            delta: "first part ".into()
        }
    );
    std::fs::write(&go, "").unwrap();
    let rest = later.wait_for(is_output).await;
    assert!(
        matches!(&rest, Event::Output { delta, .. } if delta == "second part"),
        "{rest:?}"
    );
    later.until_replied().await;
}
