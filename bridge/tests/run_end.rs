//! When an agent's run ends (docs/architecture.md §14c): the reply is taken when the agent's
//! final event arrives, or when its stdout is closed and nothing more comes within half a
//! second, not when the process exits; then nothing of the run is left running. Each agent
//! here keeps running for a minute after it has said all it says: its run must end within a
//! few seconds, through a real `agent-chatter chat` and its SQLite file.

mod support;

use std::io::Write;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::json;

/// Long enough for a run to end and `chat` to exit, far shorter than the minute the agents run.
const DEADLINE: Duration = Duration::from_secs(10);

/// What `chat` printed and how it exited, and how long it took.
struct Chat {
    stdout: String,
    stderr: String,
    code: Option<i32>,
    took: Duration,
}

/// `chat` with one human (kailai) and one agent (max), whose command is `script` read as
/// `output` (`claude` or `command`), its run's timeout two minutes; `says` is the file the
/// agent prints, for the scripts that print one. The message `[NEXT: max] Go.` is piped in.
/// Panics when `chat` has not exited within [`DEADLINE`].
fn chat(d: &Path, script: &str, output: &str, says: &[u8]) -> Chat {
    let team = json!({"name": "relay", "members": [
        {"name": "kailai", "kind": "human"},
        {"name": "max", "kind": "ai", "agentType": "claude-code"}],
        "settings": {"maxAgentResponseMs": 120_000}});
    std::fs::write(d.join("team.json"), team.to_string()).unwrap();
    let agents = json!({"agents": {"max": {
        "command": support::fixture(script).display().to_string(), "args": [], "output": output}}});
    std::fs::write(d.join("agents.json"), agents.to_string()).unwrap();
    std::fs::write(d.join("says"), says).unwrap();
    let mut child = support::chat_command(d)
        .env("AGENT_CHATTER_TEST_PIDS", d.join("pids"))
        .env("AGENT_CHATTER_TEST_SAYS", d.join("says"))
        .stdin(Stdio::piped())
        .stdout(std::fs::File::create(d.join("stdout")).unwrap())
        .stderr(std::fs::File::create(d.join("stderr")).unwrap())
        .spawn()
        .unwrap();
    let started = Instant::now();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"[NEXT: max] Go.\n")
        .unwrap();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > DEADLINE {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "no outcome within {DEADLINE:?}: chat waits for an agent that said all it says\n{}",
                std::fs::read_to_string(d.join("stderr")).unwrap_or_default()
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Chat {
        stdout: std::fs::read_to_string(d.join("stdout")).unwrap(),
        stderr: std::fs::read_to_string(d.join("stderr")).unwrap(),
        code: status.code(),
        took: started.elapsed(),
    }
}

/// Whether process `pid` runs (a zombie, killed and waiting for its reaper, does not).
fn alive(pid: &str) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        stat.rsplit(") ")
            .next()
            .is_some_and(|s| !s.starts_with('Z'))
    })
}

/// Asserts that no process of the run in `d` (the agent and its helper, as it noted them)
/// runs, waiting up to 5 s for them to go.
fn nothing_left_running(d: &Path) {
    let pids = std::fs::read_to_string(d.join("pids")).unwrap();
    let pids: Vec<&str> = pids.split_whitespace().collect();
    assert_eq!(pids.len(), 2, "the agent and its helper: {pids:?}");
    let deadline = Instant::now() + Duration::from_secs(5);
    while pids.iter().any(|pid| alive(pid)) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let running: Vec<&&str> = pids.iter().filter(|pid| alive(pid)).collect();
    assert!(running.is_empty(), "still running: {running:?}");
}

#[test]
fn a_reply_is_taken_at_the_final_event_and_the_agent_running_on_is_stopped() {
    let dir = tempfile::tempdir().unwrap();
    let ran = chat(dir.path(), "claude-final-then-runs.sh", "claude", b"");
    assert_eq!(ran.code, Some(0), "{}", ran.stderr);
    assert!(
        ran.stdout
            .contains("→ max (AI): Taken at the final event. [NEXT: kailai]"),
        "{}",
        ran.stdout
    );
    nothing_left_running(dir.path());
    eprintln!("the run ended as a reply, chat exited after {:?}", ran.took);
}

#[test]
fn a_closed_output_without_a_final_event_ends_the_run_as_a_cut_stream_does() {
    const TEXT: &str = r#"{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Half of it"}},"parent_tool_use_id":null}"#;
    const CUT: &str = r#"{"type":"result","subt"#;
    // (what the agent prints before it closes stdout, read as, what chat prints, its exit)
    let cases = [
        (
            format!("{TEXT}\n"),
            "claude",
            "Error: max's run failed: the agent closed its output without a reply and did not \
             exit: it was stopped",
            3,
        ),
        (
            format!("{TEXT}\n{CUT}"),
            "claude",
            "Warning: max's reply may be incomplete: the agent's output ended in the middle of \
             an event, before its final text: this is what it had said",
            0,
        ),
        (
            CUT.to_string(),
            "claude",
            "Error: max's run failed: the agent's output ended in the middle of an event (an \
             unfinished JSON line): it was cut off before its final text",
            3,
        ),
        (
            "Plain words, then the output closes.\n".to_string(),
            "command",
            "→ max (AI): Plain words, then the output closes.",
            0,
        ),
    ];
    for (says, output, printed, code) in cases {
        let dir = tempfile::tempdir().unwrap();
        let ran = chat(
            dir.path(),
            "closes-output-runs-on.sh",
            output,
            says.as_bytes(),
        );
        let both = format!("{}{}", ran.stdout, ran.stderr);
        assert!(both.contains(printed), "{says:?}: {both}");
        assert_eq!(ran.code, Some(code), "{says:?}: {both}");
        nothing_left_running(dir.path());
        eprintln!("{says:?}: chat exited after {:?}", ran.took);
    }
}
