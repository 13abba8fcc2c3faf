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
fn the_bell_rings_once_when_a_person_is_wanted_and_only_on_a_terminal() {
    // (what, max's agent, arguments, stderr on a terminal, bells, a line stderr shows)
    let cases = [
        (
            "a failed agent, on a terminal",
            "crash.sh",
            &[][..],
            true,
            1,
            Some("max's run failed"),
        ),
        (
            "--no-bell",
            "crash.sh",
            &["--no-bell"][..],
            true,
            0,
            Some("max's run failed"),
        ),
        (
            "stderr a pipe",
            "crash.sh",
            &[][..],
            false,
            0,
            Some("max's run failed"),
        ),
        // Max replies "… [NEXT: kailai]".
        (
            "a reply handing the turn to a person",
            "claude-stream.sh",
            &[][..],
            true,
            1,
            None,
        ),
    ];
    for (what, max, args, on_a_terminal, want, line) in cases {
        let got = chat(max, "[NEXT: max] go\n", args, on_a_terminal);
        let text = String::from_utf8_lossy(&got);
        if let Some(line) = line {
            assert!(text.contains(line), "{what}: {text}");
        }
        assert_eq!(bells(&got), want, "{what}: {text:?}");
    }
}
