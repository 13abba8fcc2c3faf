//! The terminal bell (docs/architecture.md §14): `agent-chatter chat` rings it (BEL on stderr)
//! when an agent fails or a reply hands the turn to a person, only when stderr is a terminal,
//! and never with `--no-bell`. stderr is put on a pseudo-terminal here, as a person's shell has it.

mod support;

use std::io::{Read, Write};
use std::process::Stdio;

use rustix::pty::{grantpt, openpt, ptsname, unlockpt, OpenptFlags};
use support::{chat_command, team, Bridge};

const BEL: u8 = 0x07;

/// Runs `chat` (max's agent the fixture `max`) with `input` piped in and stderr on a terminal
/// or a pipe; returns what reached stderr.
fn chat(max: &str, input: &str, args: &[&str], on_a_terminal: bool) -> Vec<u8> {
    let dir = Bridge::new_dir(&team(None), max);
    let mut cmd = chat_command(dir.path());
    cmd.args(args).stdin(Stdio::piped()).stdout(Stdio::null());
    let master = if on_a_terminal {
        let master = openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY).unwrap();
        grantpt(&master).unwrap();
        unlockpt(&master).unwrap();
        let name = ptsname(&master, Vec::new()).unwrap();
        let terminal = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(name.to_str().unwrap())
            .unwrap();
        cmd.stderr(Stdio::from(terminal));
        Some(std::fs::File::from(master))
    } else {
        cmd.stderr(Stdio::piped());
        None
    };
    let mut child = cmd.spawn().unwrap();
    // The command holds this process's end of the terminal: closed, the chat's exit ends the
    // reading below (the terminal then reads as closed, EIO).
    drop(cmd);
    let reader = std::thread::spawn(move || {
        let mut got = Vec::new();
        if let Some(mut master) = master {
            let mut buf = [0u8; 4096];
            while let Ok(n @ 1..) = master.read(&mut buf) {
                got.extend_from_slice(&buf[..n]);
            }
        }
        got
    });
    let _ = child.stdin.take().unwrap().write_all(input.as_bytes());
    let out = child.wait_with_output().unwrap();
    if on_a_terminal {
        reader.join().unwrap()
    } else {
        out.stderr
    }
}

fn bells(bytes: &[u8]) -> usize {
    bytes.iter().filter(|&&b| b == BEL).count()
}

#[test]
fn a_failed_agent_rings_the_bell_once_on_a_terminal() {
    let got = chat("crash.sh", "[NEXT: max] go\n", &[], true);
    let text = String::from_utf8_lossy(&got);
    assert!(text.contains("max's run failed"), "{text}");
    assert_eq!(bells(&got), 1, "{text:?}");
}

#[test]
fn no_bell_keeps_the_terminal_quiet() {
    let got = chat("crash.sh", "[NEXT: max] go\n", &["--no-bell"], true);
    let text = String::from_utf8_lossy(&got);
    assert!(text.contains("max's run failed"), "{text}");
    assert_eq!(bells(&got), 0, "{text:?}");
}

#[test]
fn a_stderr_that_is_not_a_terminal_gets_no_bell() {
    let got = chat("crash.sh", "[NEXT: max] go\n", &[], false);
    let text = String::from_utf8_lossy(&got);
    assert!(text.contains("max's run failed"), "{text}");
    assert_eq!(bells(&got), 0, "{text:?}");
}

#[test]
fn a_reply_that_hands_the_turn_to_a_person_rings_the_bell_once() {
    // Max replies "… [NEXT: kailai]".
    let got = chat("claude-stream.sh", "[NEXT: max] go\n", &[], true);
    let text = String::from_utf8_lossy(&got);
    assert_eq!(bells(&got), 1, "{text:?}");
}
