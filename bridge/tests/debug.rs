//! Debug diagnostics (issue #24.5; seed 004's `[Debug]` lines, seed 001 §7's `[ContextManager]`
//! ones): `chat --debug` or `AGENT_CHATTER_LOG=debug` prints them on stderr, derived in the
//! bridge from what the core exposes; without either, none; never in a prompt.

mod support;

use std::io::{BufRead, BufReader, Write};
use std::process::Stdio;

use support::{team, Bridge};

/// How debug output is asked for.
#[derive(Debug, Clone, Copy)]
enum Switch {
    None,
    Flag,
    Env,
}

/// `chat` on the team of `dir` with `input` piped in, debug as `switch` says; (stdout, stderr).
fn chat(dir: &tempfile::TempDir, input: &str, switch: Switch) -> (String, String) {
    let d = dir.path();
    let mut cmd = support::chat_command(d);
    cmd.env_remove("AGENT_CHATTER_LOG")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    match switch {
        Switch::None => {}
        Switch::Flag => {
            cmd.arg("--debug");
        }
        Switch::Env => {
            cmd.env("AGENT_CHATTER_LOG", "debug");
        }
    }
    let mut child = cmd.spawn().unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Asserts `want` are lines of `stderr` (each the start of one), in this order.
fn assert_lines_in_order(case: &str, stderr: &str, want: &[&str]) {
    let mut lines = stderr.lines();
    for w in want {
        assert!(
            lines.any(|l| l.starts_with(w)),
            "{case}: no line {w:?} (in order) in:\n{stderr}"
        );
    }
}

fn is_debug_line(line: &str) -> bool {
    line.starts_with("[Debug]") || line.starts_with("[ContextManager]")
}

/// The seed's examples that apply, as table rows: what is typed, and the lines it gives.
/// (`max` is claude-stream.sh, which answers `[NEXT: kailai]`; `sarah` is simulated, and
/// passes the turn to max.)
const CASES: &[(&str, &str, &[&str])] = &[
    (
        "a first message routed to an agent, who hands the turn back",
        "[TEAM_TASK: draft][TEAM_TASK: ship it] [NEXT: max] Please draft it.\n",
        &[
            "[Debug][Session] Created new session 1",
            "[Debug][Sender] Auto-selected single human → kailai",
            "[Debug][Session] First speaker: kailai (kailai)",
            "[Debug][TEAM_TASK] Warning: 2 [TEAM_TASK] markers in #1 from kailai; the last one is used",
            "[ContextManager] Message added: #1 from kailai",
            "[Debug][Routing] From kailai addressees=[\"max\"]",
            "[Debug][Routing] Queued max",
            "[Debug][Queue] Processing max (ai)",
            "[ContextManager] Message added: #2 from max",
            "[Debug][Routing] From max addressees=[\"kailai\"] raw=[kailai !P2] parent=#1 from kailai intent=P2",
            "[Debug][AI Response] Queued kailai from max's output",
            "[Debug][Queue] Paused for human kailai",
        ],
    ),
    (
        "a message that routes no one, then the awaited human speaks",
        "hello\nstill there?\n",
        &[
            "[Debug][Sender] Auto-selected single human → kailai",
            "[Debug][Routing] From kailai addressees=[]",
            "[Debug][Routing] No queue, waiting for kailai",
            "[Debug][Sender] Using waitingForRoleId → kailai",
            "[ContextManager] Message added: #2 from kailai",
        ],
    ),
    (
        "a sender named with [FROM]",
        "[FROM: kailai] hi\n",
        &["[Debug][Sender] Resolved from [FROM:kailai] → kailai"],
    ),
    (
        "an AI→AI chain",
        "[NEXT: sarah] go\n",
        &[
            "[Debug][Queue] Processing sarah (ai)",
            "[ContextManager] Message added: #2 from sarah",
            "[Debug][AI Response] Queued max from sarah's output",
            "[Debug][Queue] Processing max (ai)",
            "[Debug][Queue] Paused for human kailai",
        ],
    ),
    (
        "[DONE]",
        "that's all [DONE]\n",
        &["[Debug][Queue] Finished ([DONE])"],
    ),
];

#[test]
fn debug_diagnostics_follow_the_seed_lines_with_the_flag_or_the_variable() {
    for (i, (case, input, want)) in CASES.iter().enumerate() {
        // Both switches, alternately, so each is run on several cases.
        let switch = if i % 2 == 0 {
            Switch::Flag
        } else {
            Switch::Env
        };
        let dir = Bridge::new_dir(&team(None), "claude-stream.sh");
        let (_, err) = chat(&dir, input, switch);
        assert_lines_in_order(&format!("{case} ({switch:?})"), &err, want);
    }
}

#[test]
fn without_the_switch_no_debug_line_appears() {
    for (case, input, _) in CASES {
        let dir = Bridge::new_dir(&team(None), "claude-stream.sh");
        let (out, err) = chat(&dir, input, Switch::None);
        let debug: Vec<_> = out
            .lines()
            .chain(err.lines())
            .filter(|l| is_debug_line(l))
            .collect();
        assert!(debug.is_empty(), "{case}: {debug:#?}");
    }
}

#[test]
fn debug_output_never_reaches_a_prompt_nor_stdout() {
    // claude-stream.sh tells how many bytes of prompt it read; the chat's stdout is the same
    // with and without --debug, the debug lines being on stderr only.
    let input = "[TEAM_TASK: ship it] [NEXT: max] Please draft it.\n";
    let run = |switch| {
        let dir = Bridge::new_dir(&team(None), "claude-stream.sh");
        chat(&dir, input, switch)
    };
    let (plain, plain_err) = run(Switch::None);
    let (debug, debug_err) = run(Switch::Flag);
    assert!(
        plain.contains(" prompt bytes [NEXT: kailai]"),
        "{plain}{plain_err}"
    );
    assert_eq!(plain, debug, "stdout differs with --debug:\n{debug_err}");
    assert!(!debug.lines().any(is_debug_line), "{debug}");
    assert!(debug_err.lines().any(is_debug_line), "{debug_err}");
}

#[test]
fn a_routed_delivery_tells_the_receivers_own_last_answer_was_deduplicated() {
    // The `parent` policy drops the receiver's own last answer from its context: seed 001
    // §7's "Deduplicated context" line says which. The second message waits until the first
    // chain is over, so the messages are numbered as the line expects.
    let mut t = team(None);
    t["settings"] = serde_json::json!({"delivery": "parent"});
    let dir = Bridge::new_dir(&t, "claude-stream.sh");
    let d = dir.path();
    let mut child = support::chat_command(d)
        .arg("--debug")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"[NEXT: sarah] go\n").unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    while !line.starts_with("Waiting for kailai") {
        line.clear();
        assert!(stdout.read_line(&mut line).unwrap() > 0, "chat ended early");
    }
    stdin.write_all(b"[NEXT: sarah] again\n").unwrap();
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_lines_in_order(
        "own last answer",
        &err,
        &[
            "[Debug][Sender] Using waitingForRoleId → kailai",
            "[Debug][Queue] Processing sarah (ai)",
            "[ContextManager] Deduplicated context: #2 from sarah, sarah's own last answer",
        ],
    );
}
