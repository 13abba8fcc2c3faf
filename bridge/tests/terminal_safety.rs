//! What the terminal shows of names and messages (issue 45): `sessions` and `chat` print
//! control characters written out (`\u{1b}`), as `chat` prints replies, so a session's name, a
//! member's name or a message cannot retitle the window, clear the screen or forge a line.
//! Real `chat` runs make the database; `chat` runs under a pseudo-terminal (`script`) where its
//! spinner shows.

mod support;

use std::io::{Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::json;

/// An escape sequence that sets the terminal window's title, and a bell.
const RETITLE: &str = "\u{1b}]0;pwned\u{7}";
/// The same, as the terminal must show it.
const RETITLE_SHOWN: &str = "\\u{1b}]0;pwned\\u{7}";
/// An escape sequence that clears the screen.
const CLEAR: &str = "\u{1b}[2J";

/// A database (`chat.db` in `d`) with one session, made by `chat --simulate`: the team's name
/// holds [`RETITLE`], and the first message [`CLEAR`].
fn chatted(d: &Path) {
    let team = json!({"name": format!("relay{RETITLE}"), "members": [
        {"name": "kailai", "kind": "human"},
        {"name": "max", "kind": "ai", "agentType": "simulated"}]});
    std::fs::write(d.join("team.json"), team.to_string()).unwrap();
    std::fs::write(d.join("agents.json"), r#"{"agents": {}}"#).unwrap();
    let mut child = support::chat_command(d)
        .arg("--simulate")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(format!("[NEXT: max] Hello {CLEAR}there\n").as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn sessions_prints_names_messages_and_matches_with_control_characters_written_out() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    chatted(d);
    for args in [&["sessions"][..], &["sessions", "--search", "hello"]] {
        let out = Command::new(support::bin())
            .args(args)
            .arg("--db")
            .arg(d.join("chat.db"))
            .output()
            .unwrap();
        let printed = String::from_utf8(out.stdout).unwrap();
        assert!(out.status.success(), "{args:?}");
        assert!(
            !printed.contains(['\u{1b}', '\u{7}']),
            "{args:?}: {printed:?}"
        );
        assert!(
            printed.starts_with(&format!("1  relay{RETITLE_SHOWN}  ")),
            "{args:?}: {printed:?}"
        );
        assert!(printed.contains("\\u{1b}[2J"), "{args:?}: {printed:?}");
    }
}

/// What a process writes, gathered as it comes.
#[derive(Clone, Default)]
struct Gathered(Arc<Mutex<Vec<u8>>>);

impl Gathered {
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
    }

    /// Waits up to 10 s for `what` to have been written.
    fn wait_for(&self, what: &str) {
        let deadline = Instant::now() + Duration::from_secs(10);
        while !self.text().contains(what) {
            assert!(
                Instant::now() < deadline,
                "{what:?} never came: {:?}",
                self.text()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

#[test]
fn chat_shows_a_members_name_with_control_characters_written_out_while_it_works() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // max answers once the test has seen its working line (the file `go` appears).
    let max = d.join("max.sh");
    std::fs::write(
        &max,
        format!(
            "#!/bin/sh\ncat > /dev/null\nwhile [ ! -e '{go}' ]; do sleep 0.05; done\n\
             printf '%s\\n' '{{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,\"result\":\"Done. [NEXT: kailai]\"}}'\n",
            go = d.join("go").display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&max, std::fs::Permissions::from_mode(0o755)).unwrap();
    let team = json!({"name": "relay", "members": [
        {"name": "kailai", "kind": "human"},
        {"name": "max", "displayName": format!("Max{RETITLE}"), "kind": "ai",
         "agentType": "claude-code"}]});
    std::fs::write(d.join("team.json"), team.to_string()).unwrap();
    let agents = json!({"agents": {"max": {"command": max, "args": [], "output": "claude"}}});
    std::fs::write(d.join("agents.json"), agents.to_string()).unwrap();
    std::fs::write(d.join("input"), "[NEXT: max] Go.\n").unwrap();
    // chat with its stdout and stderr on a terminal (its input still from a file).
    let chat = format!(
        "'{}' chat --team '{}' --db '{}' --agents '{}' < '{}'",
        support::bin().display(),
        d.join("team.json").display(),
        d.join("chat.db").display(),
        d.join("agents.json").display(),
        d.join("input").display()
    );
    let mut child = Command::new("script")
        .args(["-q", "-e", "-c", &chat, "/dev/null"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let shown = Gathered::default();
    let mut terminal = child.stdout.take().unwrap();
    let gather = shown.clone();
    let reader = std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        while let Ok(n) = terminal.read(&mut buf) {
            if n == 0 {
                break;
            }
            gather.0.lock().unwrap().extend_from_slice(&buf[..n]);
        }
    });
    shown.wait_for(" is working…");
    std::fs::write(d.join("go"), "").unwrap();
    shown.wait_for("Done. [NEXT: kailai]");
    let status = child.wait().unwrap();
    reader.join().unwrap();
    let shown = shown.text();
    assert!(status.success(), "{shown:?}");
    assert!(!shown.contains(RETITLE), "{shown:?}");
    assert!(
        shown.contains(&format!("Max{RETITLE_SHOWN} is working…")),
        "{shown:?}"
    );
}
