//! `agent-chatter chat` with piped stdin (docs/architecture.md §19 (seed 004)): messages go through
//! the agents, slash commands answer, the errors come from the seed's catalogue.

mod support;

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use support::{chat_command, team, Bridge};

/// Runs `chat` in a fresh directory with `input` piped in; returns (stdout, stderr, success).
fn chat(
    input: &str,
    max_script: &str,
    resume: Option<&str>,
    dir: Option<&tempfile::TempDir>,
) -> (String, String, bool) {
    let owned;
    let dir = match dir {
        Some(dir) => dir,
        None => {
            owned = Bridge::new_dir(&team(None), max_script);
            &owned
        }
    };
    let d = dir.path();
    let mut cmd = chat_command(d);
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(id) = resume {
        cmd.args(["--resume", id]);
    }
    let mut child = cmd.spawn().unwrap();
    // A chat refused at start exits before reading its input: the write then fails (EPIPE),
    // and the refusal is what the test reads.
    let _ = child.stdin.take().unwrap().write_all(input.as_bytes());
    let out = child.wait_with_output().unwrap();
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        out.status.success(),
    )
}

#[test]
fn a_piped_first_message_goes_through_the_agent_and_the_chat_ends() {
    let (out, err, ok) = chat(
        "[NEXT: max] Please draft it.\n",
        "claude-stream.sh",
        None,
        None,
    );
    assert!(ok, "{err}");
    assert!(out.contains("✓ Team \"relay\" loaded"), "{out}");
    assert!(out.contains("→ max (AI): Relay héllo, "), "{out}\n{err}");
}

/// A retry the CLI reports is said while the run goes on (a line when piped, where no spinner
/// shows), before the reply.
#[test]
fn a_retry_the_cli_reports_is_said_before_the_reply() {
    let (out, err, ok) = chat("[NEXT: max] go\n", "claude-retry.sh", None, None);
    assert!(ok, "{err}");
    assert!(
        err.contains("max is retrying (1/10): "),
        "the retry status: {err}"
    );
    assert!(out.contains("→ max (AI): Done after a retry"), "{out}");
}

#[test]
fn a_team_given_at_start_has_its_notices_printed_as_one_deployed_later() {
    let team = serde_json::json!({"name": "unk", "members": [
        {"name": "kailai", "kind": "human"},
        {"name": "bot", "kind": "ai", "agentType": "aider"}]});
    let dir = Bridge::new_dir(&team, "claude-stream.sh");
    std::fs::write(dir.path().join("unk.json"), team.to_string()).unwrap();
    let warning = "Warning: bot: agent type \"aider\" is unknown";
    let (_, err, ok) = chat("/help\n", "claude-stream.sh", None, Some(&dir));
    assert!(ok, "{err}");
    assert_eq!(err.matches(warning).count(), 1, "--team: {err}");
    let deploy = format!("/team deploy {}\n", dir.path().join("unk.json").display());
    let (_, err, ok) = chat(&deploy, "claude-stream.sh", None, Some(&dir));
    assert!(ok, "{err}");
    assert_eq!(
        err.matches(warning).count(),
        2,
        "--team, then /team deploy: {err}"
    );
}

#[test]
fn chat_says_at_start_who_cannot_run_and_exits_3_when_the_conversation_ends_on_a_failure() {
    let mut t = team(None);
    let (out, err, ok) = chat("/help\n", "claude-stream.sh", None, None);
    assert!(ok, "{err}");
    assert!(
        !err.contains("cannot run") && !err.contains("agent type"),
        "{out}{err}"
    );
    t["members"][2]["agentType"] = serde_json::json!("openai-codex");
    let dir = Bridge::new_dir(&t, "claude-stream.sh");
    let (_, err, ok) = chat(
        "[NEXT: sarah] review it\n",
        "claude-stream.sh",
        None,
        Some(&dir),
    );
    assert!(!ok, "the conversation ended on sarah's failure: {err}");
    let why = "sarah: agent-chatter-test-no-such-codex is not installed (not on PATH); install \
               it, set its command in the agents file, or start with --simulate";
    assert!(
        err.contains(&format!("agent-chatter: cannot run {why}")),
        "{err}"
    );
    assert!(
        err.contains(&format!("Error: sarah's run failed: {why}")),
        "{err}"
    );
}

#[test]
fn slash_commands_answer_and_start_is_a_deprecated_alias() {
    let input = "/help\n/team list\n/dance\n/start [NEXT: sarah] review it\n";
    let (out, err, ok) = chat(input, "claude-stream.sh", None, None);
    assert!(ok, "{err}");
    assert!(out.contains("Available commands:\n  /team deploy <config.json> - Load team and enter conversation mode"), "{out}");
    assert!(out.contains("  max (max) - claude-code"), "{out}");
    assert!(err.contains("Error: Unknown command: /dance"), "{err}");
    assert!(
        err.contains("⚠ WARNING: /start command is deprecated and will be removed in v0.3.0"),
        "{err}"
    );
    assert!(
        out.contains("→ sarah (AI): sarah (simulated): I read"),
        "{out}"
    );
}

#[test]
fn errors_come_from_the_seed_catalogue() {
    let dir = Bridge::new_dir(
        &serde_json::json!({"name": "two", "members": [
        {"name": "kailai", "kind": "human"}, {"name": "bob", "kind": "human"},
        {"name": "max", "kind": "ai", "agentType": "claude-code"}]}),
        "claude-stream.sh",
    );
    let (_, err, ok) = chat(
        "hello [NEXT: max]\n[FROM: zed] hi\n/team deploy missing.json\n",
        "claude-stream.sh",
        None,
        Some(&dir),
    );
    assert!(ok);
    assert!(
        err.contains(
            "Error: Multiple human members detected. Please specify sender with [FROM:xxx]"
        ),
        "{err}"
    );
    assert!(err.contains("Error: Member 'zed' not found."), "{err}");
    // Plain text as the catalogue prints it: no emoji, the lines after the first unindented.
    assert!(
        err.contains(
            "Available members: kailai, bob\n\nExample: [FROM:kailai] Your message here\n"
        ),
        "{err}"
    );
    assert!(!err.contains('❌'), "{err}");
    assert!(
        err.contains("missing.json: cannot read the team config"),
        "{err}"
    );
}

#[test]
fn the_chat_says_what_the_conversation_says_back() {
    let input =
        "[NEXT: nobody] hello\n[TEAM_TASK: ship it] over to you [NEXT: sarah]\n/team deploy\n";
    let (out, err, ok) = chat(input, "claude-stream.sh", None, None);
    assert!(ok, "{err}");
    // A name that matched nobody is reported, not swallowed; the message is named as the page
    // numbers it, never by its internal id.
    assert!(
        err.contains("Warning: [NEXT] in #1 from kailai: no member matches nobody; not routed"),
        "{err}"
    );
    // Whose turn it is, in order: after the first message, before the second one's effects.
    let turn = out.find("Waiting for kailai").expect(&out);
    let task = out.find("✓ Team task set: \"ship it\"").expect(&out);
    let reply = out.find("→ sarah (AI): ").expect(&out);
    assert!(turn < task && task < reply, "{out}");
    assert!(
        err.contains("Error: Usage: /team deploy <config.json>"),
        "{err}"
    );

    let (out, err, ok) = chat("all done [DONE]\n", "claude-stream.sh", None, None);
    assert!(ok, "{err}");
    assert!(
        out.contains("✓ Conversation completed ([DONE]); a new message starts it again"),
        "{out}"
    );
}

#[test]
fn a_chat_that_falls_behind_still_prints_every_reply_and_whose_turn_it_is() {
    // max's long reply fills the terminal's pipe, which this test does not read yet; while
    // the chat waits to print it, sarah streams far more output frames than it keeps.
    let team = serde_json::json!({"name": "relay", "members": [
        {"name": "kailai", "kind": "human"},
        {"name": "max", "kind": "ai", "agentType": "claude-code"},
        {"name": "sarah", "kind": "ai", "agentType": "claude-code"}]});
    let dir = Bridge::new_dir(&team, "claude-long-reply.sh");
    let d = dir.path();
    let agents = serde_json::json!({"agents": {
        "max": {"command": support::fixture("claude-long-reply.sh").display().to_string()},
        "sarah": {"command": support::fixture("claude-chatty.sh").display().to_string()}}});
    std::fs::write(d.join("agents.json"), agents.to_string()).unwrap();
    let mut child = chat_command(d)
        .current_dir(d)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"[NEXT: max] tell me everything\n")
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while !d.join("chatty-done").exists() {
        assert!(std::time::Instant::now() < deadline, "sarah never ran");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    std::thread::sleep(std::time::Duration::from_millis(300));
    let out = child.wait_with_output().unwrap();
    let (out, err) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    let reply = out.find("→ sarah (AI): Said a lot").expect(&err);
    let turn = out.rfind("Waiting for kailai").expect(&err);
    assert!(reply < turn, "{err}");
}

#[test]
fn a_message_with_from_is_echoed_with_its_sender_and_a_buzz_in_says_so() {
    let dir = Bridge::new_dir(
        &serde_json::json!({"name": "two", "members": [
        {"name": "kailai", "kind": "human"}, {"name": "bob", "kind": "human"},
        {"name": "max", "kind": "ai", "agentType": "claude-code"}]}),
        "claude-stream.sh",
    );
    // After kailai's message it is kailai's turn again (the first human): bob takes it.
    let input = "[FROM:kailai] Design a login page\n[FROM:bob] Add OAuth\n";
    let (out, err, ok) = chat(input, "claude-stream.sh", None, Some(&dir));
    assert!(ok, "{err}");
    let first = out.find("→ kailai: Design a login page\n").expect(&out);
    let buzz = out.find("→ bob: Add OAuth (buzzing in)\n").expect(&out);
    assert!(first < buzz, "{out}");
    // Answering when it is one's turn is not buzzing in.
    let dir = Bridge::new_dir(
        &serde_json::json!({"name": "two", "members": [
        {"name": "kailai", "kind": "human"}, {"name": "bob", "kind": "human"},
        {"name": "max", "kind": "ai", "agentType": "claude-code"}]}),
        "claude-stream.sh",
    );
    let input = "[FROM:kailai] over to you [NEXT: bob]\n[FROM:bob] I agree\n";
    let (out, err, ok) = chat(input, "claude-stream.sh", None, Some(&dir));
    assert!(ok, "{err}");
    assert!(out.contains("→ bob: I agree\n"), "{out}");
}

#[test]
fn an_agents_control_characters_are_shown_not_obeyed_by_the_terminal() {
    let (out, err, ok) = chat("[NEXT: max] go\n", "claude-ansi.sh", None, None);
    assert!(ok, "{err}");
    assert!(
        out.contains("→ max (AI): ok\\u{1b}[2J\\u{d}FAKE: kailai approves\\u{7} [NEXT: kailai]"),
        "{out}"
    );
    assert!(!out.contains('\u{1b}') && !out.contains('\r'), "{out:?}");
}

#[test]
fn a_closed_stdout_does_not_panic_the_chat() {
    let dir = Bridge::new_dir(&team(None), "claude-stream.sh");
    let d = dir.path();
    let mut child = chat_command(d)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Like `| head -1`: the reader goes away before the chat has printed everything.
    drop(child.stdout.take());
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"[NEXT: max] go\n")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn empty_piped_input_is_refused_as_the_seed_cli_does() {
    for input in ["", "\n  \n"] {
        let dir = Bridge::new_dir(&team(None), "claude-stream.sh");
        let (out, err, ok) = chat(input, "claude-stream.sh", None, Some(&dir));
        assert!(!ok, "exit code 1");
        assert!(
            err.contains("Error: First message cannot be empty"),
            "{err}"
        );
        // Nothing announced, and no empty session left behind.
        assert!(!out.contains("loaded"), "{out}");
        let db = rusqlite::Connection::open(dir.path().join("chat.db")).unwrap();
        let sessions: i64 = db
            .query_row("SELECT count(*) FROM sessions", [], |r| r.get(0))
            .unwrap();
        assert_eq!(sessions, 0);
    }
}

#[test]
fn a_chat_resumes_from_the_database() {
    let dir = Bridge::new_dir(&team(None), "claude-stream.sh");
    let (out, err, ok) = chat(
        "[NEXT: sarah] first\n",
        "claude-stream.sh",
        None,
        Some(&dir),
    );
    assert!(ok && out.contains("(session 1)"), "{out}{err}");
    let (out, err, ok) = chat("/team list\n", "claude-stream.sh", Some("1"), Some(&dir));
    assert!(ok, "{err}");
    assert!(out.contains("(session 1)"), "{out}");
    let list = Command::new(support::bin())
        .args(["sessions", "--db"])
        .arg(dir.path().join("chat.db"))
        .output()
        .unwrap();
    let list = String::from_utf8_lossy(&list.stdout);
    assert!(list.starts_with("1  relay  "), "{list}");
}

/// Whether `pid` runs (a zombie, killed and waiting for its reaper, does not).
fn alive(pid: &str) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        stat.rsplit(") ")
            .next()
            .is_some_and(|s| !s.starts_with('Z'))
    })
}

/// Waits up to 5 s for `file` to hold `n` pids.
fn pids_in(file: &std::path::Path, n: usize) -> Vec<String> {
    for _ in 0..500 {
        let pids: Vec<String> = std::fs::read_to_string(file)
            .unwrap_or_default()
            .lines()
            .map(|l| l.trim().to_string())
            .filter(|l| !l.is_empty())
            .collect();
        if pids.len() >= n {
            return pids;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    panic!("{} never held {n} pids", file.display());
}

/// Whether every one of `pids` is gone within 2 s; those still running are killed (so a
/// failing test leaves nothing behind) and returned.
fn still_running_after_2_s(pids: &[String]) -> Vec<String> {
    let started = std::time::Instant::now();
    while started.elapsed() < std::time::Duration::from_secs(2) {
        if pids.iter().all(|p| !alive(p)) {
            return Vec::new();
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let running: Vec<String> = pids.iter().filter(|p| alive(p)).cloned().collect();
    for pid in &running {
        // SAFETY: kill(2) on a test agent's process; no memory is shared.
        unsafe { libc::kill(pid.parse().unwrap(), libc::SIGKILL) };
    }
    running
}

/// `chat` on `d`'s files with its stdio piped and `env` set, given "[NEXT: max] Please draft
/// it." (its stdin stays open for more).
fn chat_drafting(
    d: &Path,
    env: &[(&str, &Path)],
) -> (std::process::Child, std::process::ChildStdin) {
    let mut command = chat_command(d);
    for (key, value) in env {
        command.env(key, value);
    }
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"[NEXT: max] Please draft it.\n").unwrap();
    (child, stdin)
}

/// Linux only: a `kill -9` runs no destructor, so the kernel (`PR_SET_PDEATHSIG`, for the
/// agent itself) and the bridge's watchdog (for everything in the agent's process group)
/// take the agent and its helpers down with the chat.
#[cfg(target_os = "linux")]
#[test]
fn a_chat_killed_with_sigkill_takes_its_running_agent_with_it() {
    let dir = Bridge::new_dir(&team(None), "hang.sh");
    let d = dir.path();
    let agent_pid = d.join("agent.pid");
    let (mut child, _stdin) = chat_drafting(
        d,
        &[
            ("AGENT_CHATTER_TEST_AGENT", agent_pid.as_path()),
            ("AGENT_CHATTER_TEST_PIDS", d.join("helper.pids").as_path()),
        ],
    );
    let mut pids = pids_in(&agent_pid, 1);
    pids.extend(pids_in(&d.join("helper.pids"), 1));
    // SAFETY: kill(2) on the child we spawned; no memory is shared.
    unsafe { libc::kill(child.id() as i32, libc::SIGKILL) };
    let _ = child.wait();
    let running = still_running_after_2_s(&pids);
    assert!(
        running.is_empty(),
        "the agent and its helper {pids:?}: {running:?} outlived a chat killed with SIGKILL"
    );
}

/// npm's `codex` and `gemini` are launchers whose child does the work, and the kernel's
/// parent-death signal reaches the launcher only.
#[cfg(target_os = "linux")]
#[test]
fn a_chat_killed_with_sigkill_leaves_nothing_of_a_launchers_run() {
    let dir = Bridge::new_dir(&team(None), "launcher.sh");
    let d = dir.path();
    let pids = d.join("worker.pids");
    let (mut child, _stdin) = chat_drafting(d, &[("AGENT_CHATTER_TEST_PIDS", pids.as_path())]);
    let workers = pids_in(&pids, 2);
    assert!(workers.iter().all(|p| alive(p)));
    // SAFETY: kill(2) on the child we spawned; no memory is shared.
    unsafe { libc::kill(child.id() as i32, libc::SIGKILL) };
    let _ = child.wait();
    let running = still_running_after_2_s(&workers);
    assert!(
        running.is_empty(),
        "the launcher's workers {running:?} outlived a chat killed with SIGKILL"
    );
}

/// docs/architecture.md §14c "Interrupted runs": `/exit` while a real agent runs says what
/// `--resume` will do, and `--resume` records that run as interrupted by the chat's exit,
/// never running it again unasked.
#[test]
fn exiting_the_chat_mid_run_and_resuming_records_the_run_as_interrupted() {
    let dir = Bridge::new_dir(&team(None), "hang.sh");
    let d = dir.path();
    let agent_pid = d.join("agent.pid");
    let (child, mut stdin) = chat_drafting(d, &[("AGENT_CHATTER_TEST_AGENT", agent_pid.as_path())]);
    pids_in(&agent_pid, 1);
    stdin.write_all(b"/exit\n").unwrap();
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(
            "Stopping max: `--resume 1` records its run as interrupted, and /retry runs it again"
        ),
        "{stderr}"
    );
    let (out, err, ok) = chat("/cost\n", "", Some("1"), Some(&dir));
    assert!(
        err.contains(
            "max's run failed: interrupted: the chat was exited while it ran (it started "
        ),
        "{out}{err}"
    );
    assert!(
        out.contains("  max: 1 run · no usage reported (cost not known)"),
        "{out}"
    );
    // The chat ended on that failure.
    assert!(!ok, "{out}{err}");
}

/// However the chat ends while an agent runs — `/exit`, Ctrl-C, SIGTERM — the agent and the
/// helpers it started end with it (they are in their own process group, which the terminal's
/// Ctrl-C does not reach).
#[test]
fn stopping_the_chat_stops_the_running_agent_and_its_helpers() {
    for stop in ["/exit", "SIGINT", "SIGTERM"] {
        let dir = Bridge::new_dir(&team(None), "hang.sh");
        let d = dir.path();
        let pids = d.join("helper.pids");
        let (child, mut stdin) = chat_drafting(d, &[("AGENT_CHATTER_TEST_PIDS", pids.as_path())]);
        let helper = (0..500)
            .find_map(|_| {
                let pid = std::fs::read_to_string(&pids).unwrap_or_default();
                if pid.trim().is_empty() {
                    std::thread::sleep(std::time::Duration::from_millis(10));
                    None
                } else {
                    Some(pid.trim().to_string())
                }
            })
            .expect("the agent started its helper");
        match stop {
            "/exit" => stdin.write_all(b"/exit\n").unwrap(),
            signal => {
                let signal = if signal == "SIGINT" {
                    libc::SIGINT
                } else {
                    libc::SIGTERM
                };
                // SAFETY: kill(2) on the child we spawned; no memory is shared.
                unsafe { libc::kill(child.id() as i32, signal) };
            }
        }
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        if stop == "/exit" {
            assert!(out.status.success(), "{stop}: {err}");
        } else {
            assert!(!out.status.success(), "{stop}");
            assert!(err.contains("stopped by"), "{stop}: {err}");
        }
        let gone = (0..500).any(|_| {
            std::thread::sleep(std::time::Duration::from_millis(10));
            !alive(&helper)
        });
        assert!(
            gone,
            "{stop}: the agent's helper {helper} outlived the chat"
        );
    }
}

#[test]
fn a_run_stopped_at_the_team_timeout_reads_timed_out_as_in_the_page() {
    let dir = Bridge::new_dir(&team(Some(300)), "hang.sh");
    let (_, err, ok) = chat(
        "[NEXT: max] Please draft it.\n",
        "hang.sh",
        None,
        Some(&dir),
    );
    assert!(!ok, "the conversation ended on max's timeout: {err}");
    assert!(
        err.contains("Error: max's run timed out: no reply within"),
        "{err}"
    );
}

#[test]
fn cancel_stops_the_running_agent_and_the_chat_goes_on() {
    let dir = Bridge::new_dir(&team(None), "hang.sh");
    let d = dir.path();
    let pids = d.join("helper.pids");
    let (child, mut stdin) = chat_drafting(d, &[("AGENT_CHATTER_TEST_PIDS", pids.as_path())]);
    let helper = (0..500)
        .find_map(|_| {
            let pid = std::fs::read_to_string(&pids).unwrap_or_default();
            std::thread::sleep(std::time::Duration::from_millis(10));
            (!pid.trim().is_empty()).then(|| pid.trim().to_string())
        })
        .expect("the agent started its helper");
    stdin.write_all(b"/cancel\n").unwrap();
    let gone = (0..500).any(|_| {
        std::thread::sleep(std::time::Duration::from_millis(10));
        !alive(&helper)
    });
    assert!(
        gone,
        "the cancelled agent's helper {helper} is still running"
    );
    // Nothing runs any more: a second /cancel says so, and the chat takes the next command.
    stdin.write_all(b"/cancel\n/team list\n/exit\n").unwrap();
    let out = child.wait_with_output().unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains(
            "Error: max's run was cancelled: cancelled by the user: the agent was stopped"
        ),
        "{stderr}"
    );
    assert!(stderr.contains("No agent is running"), "{stderr}");
    assert!(stdout.contains("Team \"relay\":"), "{stdout}");
}

/// A directory whose team gives max run settings (docs/architecture.md §14c), with
/// `claude-settings.sh` answering max.
fn settings_dir(max: serde_json::Value, settings: serde_json::Value) -> tempfile::TempDir {
    let mut team = team(None);
    for (key, value) in max.as_object().unwrap() {
        team["members"][1][key] = value.clone();
    }
    team["settings"] = settings;
    let dir = Bridge::new_dir(&team, "claude-settings.sh");
    std::fs::create_dir(dir.path().join("work")).unwrap();
    dir
}

#[test]
fn a_members_run_settings_reach_its_cli_and_its_usage_is_told() {
    let dir = settings_dir(
        serde_json::json!({"model": "m1", "permissionMode": "readOnly", "baseDir": "work",
            "env": {"AGENT_CHATTER_TEST_VAR": "set-by-team"}, "additionalArgs": ["-p"]}),
        serde_json::json!({}),
    );
    let (out, err, ok) = chat("[NEXT: max] go\n", "", None, Some(&dir));
    assert!(ok, "{err}");
    let work = std::fs::canonicalize(dir.path().join("work")).unwrap();
    // The member's flags after the CLI's own, its env, its working directory.
    assert!(
        out.contains(&format!("var=set-by-team dir={}", work.display())),
        "{out}"
    );
    assert!(
        out.contains("--model,m1,--permission-mode,plan,-p,"),
        "{out}"
    );
    // `/cost` (in the same session, resumed): per member and in all, in the words of the
    // usage summary.
    let (out, err, ok) = chat("/cost\n", "", Some("1"), Some(&dir));
    assert!(ok, "{err}");
    assert!(
        out.contains("  max: 1 run · 150 in (50 cached) · 20 out · $0.0100 · 1.2 s"),
        "{out}"
    );
    assert!(out.contains("  total: 1 run · 150 in (50 cached)"), "{out}");
    // `sessions` lists the totals too.
    let sessions = Command::new(support::bin())
        .args(["sessions", "--db"])
        .arg(dir.path().join("chat.db"))
        .output()
        .unwrap();
    let listed = String::from_utf8_lossy(&sessions.stdout);
    assert!(
        listed.contains("  1 run · 150 in (50 cached) · 20 out · $0.0100 · 1.2 s"),
        "{listed}"
    );
}

/// docs/architecture.md §14c: Codex reports tokens but no cost, so a total over its runs and
/// Claude's is a floor and says so (`≥`, and how many runs reported none), and a team with a
/// cost cap is told at start that the cap cannot count that member's runs.
#[test]
fn a_cost_total_says_which_runs_reported_no_cost_and_a_cap_is_told_what_it_cannot_count() {
    let mut t = team(None);
    t["members"]
        .as_array_mut()
        .unwrap()
        .push(serde_json::json!({"name": "cody", "displayName": "Cody", "kind": "ai", "agentType": "openai-codex"}));
    t["settings"]["maxCostUsd"] = serde_json::json!(5.0);
    let dir = Bridge::new_dir(&t, "claude-settings.sh");
    let agents = serde_json::json!({"agents": {
        "max": {"command": support::fixture("claude-settings.sh").display().to_string()},
        "cody": {"command": support::fixture("codex-stream.sh").display().to_string()}
    }});
    std::fs::write(dir.path().join("agents.json"), agents.to_string()).unwrap();

    let (out, err, ok) = chat("[NEXT: max] go\n", "", None, Some(&dir));
    assert!(ok, "{out}{err}");
    assert!(
        err.contains(
            "the team's cost cap (maxCostUsd) counts reported costs only, and the CLIs of Cody \
             report none: their runs are not counted against it"
        ),
        "{err}"
    );
    let (out, err, ok) = chat("[NEXT: cody] and you\n", "", Some("1"), Some(&dir));
    assert!(ok, "{out}{err}");
    // The simulator (chosen for sarah) reports nothing, and costs nothing: not counted.
    let (out, err, ok) = chat("[NEXT: sarah] and you\n", "", Some("1"), Some(&dir));
    assert!(ok, "{out}{err}");
    let (out, err, ok) = chat("/cost\n", "", Some("1"), Some(&dir));
    assert!(ok, "{err}");
    // (Sarah's simulated reply may pass the turn to Cody again: his runs are counted.)
    let cody = out
        .lines()
        .find_map(|l| l.strip_prefix("  Cody: "))
        .unwrap_or_else(|| panic!("{out}"));
    let cody_runs: usize = cody.split(' ').next().unwrap().parse().unwrap();
    assert!(
        cody.contains(" in · ") && cody.ends_with(" (cost not known)"),
        "{out}"
    );
    assert!(
        out.contains("  sarah: 1 run · no usage reported\n"),
        "{out}"
    );
    let total = out
        .lines()
        .find_map(|l| l.strip_prefix("  total: "))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(
        total.starts_with(&format!("{} runs · ", cody_runs + 2))
            && total.contains(" · ≥ $0.0100 · "),
        "{out}"
    );
    let unpriced = if cody_runs == 1 {
        "(cost of 1 run not known)".to_string()
    } else {
        format!("(cost of {cody_runs} runs not known)")
    };
    assert!(total.ends_with(&unpriced), "{out}");
    let cap = out
        .lines()
        .find_map(|l| l.strip_prefix("  cap (maxCostUsd): $5.00: $"))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(
        cap.ends_with(" left (it counts reported costs only)"),
        "{out}"
    );
}

#[test]
fn a_flag_the_installed_cli_does_not_know_is_refused_at_start_naming_member_and_flag() {
    let dir = settings_dir(
        serde_json::json!({"additionalArgs": ["--no-such-flag"]}),
        serde_json::json!({}),
    );
    let (_, err, ok) = chat("[NEXT: max] go\n", "", None, Some(&dir));
    assert!(!ok);
    assert!(
        err.contains("max: the installed CLI does not know the flag --no-such-flag"),
        "{err}"
    );
    // Nothing ran, nothing was stored.
    assert!(!dir.path().join("chat.db").exists() || !err.contains("✓ Team"));
}

#[test]
fn bad_run_settings_are_refused_naming_the_member_and_the_field() {
    for (max, want) in [
        (
            serde_json::json!({"permissionMode": "yolo"}),
            r#"members[1].permissionMode: expected "readOnly", "edit" or "full", found "yolo""#,
        ),
        (
            serde_json::json!({"baseDir": "no-such-dir"}),
            "members[1] (max).baseDir: ",
        ),
        (
            serde_json::json!({"env": {"NOT-A-NAME": "x"}}),
            r#"members[1].env.NOT-A-NAME: "NOT-A-NAME" is not an environment variable name"#,
        ),
    ] {
        let dir = settings_dir(max, serde_json::json!({}));
        let (_, err, ok) = chat("[NEXT: max] go\n", "", None, Some(&dir));
        assert!(!ok, "{want}");
        assert!(err.contains(want), "{want}: {err}");
    }
    let dir = settings_dir(serde_json::json!({}), serde_json::json!({"maxCostUsd": 0}));
    let (_, err, ok) = chat("[NEXT: max] go\n", "", None, Some(&dir));
    assert!(!ok);
    assert!(
        err.contains("settings.maxCostUsd: must be more than 0 dollars"),
        "{err}"
    );
}

#[test]
fn the_cost_cap_stops_the_next_delivery_and_says_why() {
    // max's run costs $0.01 and hands the turn to sarah: the cap of $0.005 stops her delivery.
    let dir = settings_dir(
        serde_json::json!({"env": {"AGENT_CHATTER_TEST_NEXT": "sarah"}}),
        serde_json::json!({"maxCostUsd": 0.005}),
    );
    let (out, err, _) = chat("[NEXT: max] first\n", "", None, Some(&dir));
    assert!(out.contains("→ max (AI): args="), "{out}");
    assert!(!out.contains("→ sarah (AI)"), "{out}");
    assert!(
        err.contains(
            "cost cap reached: the runs cost $0.0100 of the team's max cost $0.005 (the last \
             run passed the cap by $0.0050: a run that starts under the cap is not stopped by \
             it); dropped the pending deliveries to sarah"
        ),
        "{err}"
    );
}

#[test]
fn claude_is_given_what_is_left_under_the_cap_and_the_notice_says_how_far_a_run_passed_it() {
    // Each of max's runs costs $0.01 and hands the turn to sarah (simulated), who hands it
    // back: under a cap of $0.015 max's first run is given $0.015 to spend, his second the
    // $0.005 left, which it passes by $0.005; sarah's next delivery is then stopped.
    let dir = settings_dir(
        serde_json::json!({"env": {"AGENT_CHATTER_TEST_NEXT": "sarah"}}),
        serde_json::json!({"maxCostUsd": 0.015}),
    );
    let (out, err, ok) = chat("[NEXT: max] first\n", "", None, Some(&dir));
    assert!(ok, "{err}");
    let first = out.find("--max-budget-usd,0.015,");
    let second = out.find("--max-budget-usd,0.005,");
    assert!(first.is_some() && second > first, "{out}");
    assert!(
        err.contains("the last run passed the cap by $0.0050"),
        "{err}"
    );
    // No cap, no budget given.
    let dir = settings_dir(serde_json::json!({}), serde_json::json!({}));
    let (out, err, ok) = chat("[NEXT: max] go\n", "", None, Some(&dir));
    assert!(ok, "{err}");
    assert!(
        out.contains("args=") && !out.contains("--max-budget-usd"),
        "{out}"
    );
}

#[test]
fn retry_runs_the_failed_agent_again_and_the_chat_goes_on() {
    let dir = Bridge::new_dir(&team(None), "fail-once.sh");
    let d = dir.path();
    let agents = serde_json::json!({"agents": {"max": {
        "command": support::fixture("fail-once.sh").display().to_string(),
        "args": [d.join("first-run").display().to_string()],
    }}});
    std::fs::write(d.join("agents.json"), agents.to_string()).unwrap();
    let mut child = chat_command(d)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    // What the chat says on stderr, line by line, as it says it.
    let (tx, said) = std::sync::mpsc::channel();
    let stderr = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        use std::io::BufRead;
        let mut all = String::new();
        for line in std::io::BufReader::new(stderr)
            .lines()
            .map_while(Result::ok)
        {
            all.push_str(&line);
            all.push('\n');
            let _ = tx.send(line);
        }
        all
    });
    // Nothing has failed yet: /retry says so.
    stdin.write_all(b"/retry\n").unwrap();
    stdin.write_all(b"[NEXT: max] Please draft it.\n").unwrap();
    let failed = said
        .iter()
        .find(|l| l.contains("max's run failed"))
        .expect("max's first run failed");
    assert!(
        failed.contains("the model client lost its connection"),
        "{failed}"
    );
    stdin.write_all(b"/retry max\n").unwrap();
    let mut stdout = child.stdout.take().unwrap();
    drop(stdin);
    let mut out = String::new();
    std::io::Read::read_to_string(&mut stdout, &mut out).unwrap();
    child.wait().unwrap();
    let err = reader.join().unwrap();
    assert!(
        err.contains("Error: No agent has failed: there is nothing to retry"),
        "{err}"
    );
    assert!(
        out.contains("Recovered on the second try."),
        "stdout: {out}\nstderr: {err}"
    );
}

#[test]
fn team_leave_removes_a_member_from_now_on_and_names_what_cannot_leave() {
    let input =
        "/team leave sarah\n/team list\n/team leave zed\n/team leave\n[NEXT: sarah] Review it.\n";
    let (out, err, ok) = chat(input, "claude-stream.sh", None, None);
    assert!(ok, "{err}");
    assert!(
        out.contains("✓ sarah left the team from now on: their messages stay theirs"),
        "{out}\n{err}"
    );
    let listed = out.split("Team \"relay\":").nth(1).unwrap_or_default();
    assert!(
        listed.contains("(max)") && !listed.contains("(sarah)"),
        "sarah is no longer listed: {out}"
    );
    assert!(err.contains("Error: Member 'zed' not found."), "{err}");
    assert!(err.contains("Error: Usage: /team leave <name>"), "{err}");
    assert!(
        err.contains("no member matches sarah; not routed") && !out.contains("→ sarah (AI)"),
        "no one reaches sarah once she left: {out}\n{err}"
    );
}

#[test]
fn a_next_name_that_is_no_member_is_noted_with_the_member_it_likely_meant() {
    let (out, err, _) = chat(
        "[NEXT: sarha] Please review.\n[NEXT: nobody] Anyone?\n",
        "claude-stream.sh",
        None,
        None,
    );
    assert!(
        err.contains("Note: \"sarha\" is no member, so [NEXT: sarha] reached no one; did you mean sarah ([NEXT: sarah])?"),
        "{out}\n{err}"
    );
    assert!(
        err.contains("Note: \"nobody\" is no member, so [NEXT: nobody] reached no one. Members: kailai, max, sarah"),
        "{out}\n{err}"
    );
}
