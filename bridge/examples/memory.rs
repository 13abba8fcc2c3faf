//! Memory the bridge keeps (docs/architecture.md §14, "Memory"): the resident size of a real
//! `serve` process before and after MESSAGES short human messages sent by a page (and as many
//! again, to show the cost per message holds), the same for `chat` with the messages piped in,
//! and `serve` given a team fact of 15 MiB (a member whose system instruction is 15 MiB,
//! through the socket, whose frames may hold 16 MiB), then a page connecting again (it is sent
//! the whole log). Figures are the kernel's (`/proc/PID/status`: VmRSS now, VmHWM the peak).
//! Prints one markdown table.
//!
//! `cargo build --release -p agent-chatter-bridge && cargo run --release -p agent-chatter-bridge --example memory -- [MESSAGES]`
//! (the release binary, or `$AGENT_CHATTER_BIN`).

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use serde_json::{json, Value};
use tokio_tungstenite::tungstenite::Message;

// The same harness as the integration tests: a real `serve` process and a page client.
#[path = "../tests/support/mod.rs"]
mod support;

use support::{Bridge, Client};

/// The size of the big team fact's system instruction.
const BIG: usize = 15 << 20;

/// VmRSS and VmHWM of `pid`, in KiB.
fn memory(pid: u32) -> (u64, u64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

/// Lets the process settle (pending writes, frames in flight) before it is measured.
async fn settled(pid: u32) -> (u64, u64) {
    tokio::time::sleep(Duration::from_millis(500)).await;
    memory(pid)
}

/// Two humans: the messages are stored and routed, and no agent runs.
fn team() -> Value {
    json!({"name": "memory", "members": [
        {"name": "kailai", "kind": "human"},
        {"name": "bob", "kind": "human"}]})
}

/// The `i`-th short message (57 bytes).
fn text(i: usize) -> String {
    format!("Note {i:05}: the build is green and the docs are updated.")
}

/// Sends `n` human messages from a page and waits until it has been sent each one's fact.
async fn send_messages(page: &mut Client, from: usize, n: usize) {
    let (mut sink, mut stream) = (&mut page.ws).split();
    let read = async {
        let mut seen = 0;
        while seen < n {
            match stream.next().await {
                Some(Ok(Message::Text(t))) => {
                    let e: Value = serde_json::from_str(&t).unwrap();
                    if e["type"] == "fact" && e["fact"]["type"] == "human" {
                        seen += 1;
                    } else if e["type"] == "session" {
                        // Behind: the bridge sent the whole log instead of the facts missed.
                        let facts = e["facts"].as_array().into_iter().flatten();
                        let humans = facts.filter(|f| f["type"] == "human").count();
                        seen = humans.saturating_sub(from);
                    } else if e["type"] == "error" {
                        panic!("refused: {e}");
                    }
                }
                Some(Ok(_)) => {}
                other => panic!("socket closed after {seen} messages: {other:?}"),
            }
        }
    };
    let write = async {
        for i in from..from + n {
            let frame = json!({"v": 1, "type": "apply", "fact": {"type": "human",
                "text": text(i), "sender": "kailai", "at": 1_700_000_000_000u64 + i as u64}});
            sink.send(Message::Text(frame.to_string().into()))
                .await
                .unwrap();
        }
    };
    tokio::join!(read, write);
}

fn per_message(before: u64, after: u64, n: usize) -> i64 {
    (after as i64 - before as i64) * 1024 / n.max(1) as i64
}

#[tokio::main]
async fn main() {
    let messages: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(10_000);
    println!("| bridge memory (release) | VmRSS | per message |\n|---|---:|---:|");

    // serve: a page sends the messages.
    let bridge = Bridge::start(Bridge::new_dir(&team(), "load-agent.mjs"), None);
    let pid = bridge.child.id();
    let (mut page, _) = bridge.hello().await;
    let (start, _) = settled(pid).await;
    send_messages(&mut page, 0, messages).await;
    let (first, _) = settled(pid).await;
    send_messages(&mut page, messages, messages).await;
    let (second, hwm) = settled(pid).await;
    // A page connecting is sent the whole log.
    let (again, _) = bridge.hello().await;
    let (reconnected, _) = settled(pid).await;
    drop((page, again));
    drop(bridge);
    println!("| serve, a page connected | {start} KiB | |");
    println!(
        "| serve, after {messages} short messages | {first} KiB | {} B |",
        per_message(start, first, messages)
    );
    println!(
        "| serve, after {} (peak {hwm} KiB) | {second} KiB | {} B |",
        2 * messages,
        per_message(first, second, messages)
    );
    println!("| serve, after a second page connects | {reconnected} KiB | |");

    // chat: the messages piped in.
    let (start, first, second) = chat(messages);
    println!("| chat, the team loaded | {start} KiB | |");
    println!(
        "| chat, after {messages} short messages | {first} KiB | {} B |",
        per_message(start, first, messages)
    );
    println!(
        "| chat, after {} | {second} KiB | {} B |",
        2 * messages,
        per_message(first, second, messages)
    );

    // serve: a team fact of 15 MiB through the socket.
    let bridge = Bridge::start(Bridge::new_dir(&team(), "load-agent.mjs"), None);
    let pid = bridge.child.id();
    let (mut page, _) = bridge.hello().await;
    let (start, _) = settled(pid).await;
    let big = json!({"name": "big", "members": [
        {"name": "kailai", "kind": "human"},
        {"name": "max", "kind": "ai", "agentType": "simulated",
         "systemInstruction": "x".repeat(BIG)}]});
    page.send(json!({"v": 1, "type": "apply", "fact": {"type": "setTeam", "team": big}}))
        .await;
    page.until_fact("setTeam").await;
    page.until(|e| e["type"] == "agents").await;
    let (after, hwm) = settled(pid).await;
    // A page connecting (or reloading) is sent the whole log, the big team in it.
    let (again, _) = bridge.hello().await;
    let (reconnected, hwm2) = settled(pid).await;
    drop((page, again));
    println!(
        "| serve before a team fact of {} MiB | {start} KiB | |",
        BIG >> 20
    );
    println!(
        "| serve after it (peak {hwm} KiB) | {after} KiB | +{} MiB |",
        (after as i64 - start as i64) / 1024
    );
    println!(
        "| serve after a second page connects (peak {hwm2} KiB) | {reconnected} KiB | +{} MiB |",
        (reconnected as i64 - start as i64) / 1024
    );
}

/// `chat` given `2 × n` messages on stdin: its RSS with the team loaded, after `n` and after
/// `2 × n` (each batch ends with `/team list`, whose answer shows every message before it was
/// applied: the chat handles its lines in order).
fn chat(n: usize) -> (u64, u64, u64) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("team.json"), team().to_string()).unwrap();
    let mut child = Command::new(support::bin())
        .arg("chat")
        .arg("--team")
        .arg(dir.path().join("team.json"))
        .arg("--db")
        .arg(dir.path().join("sessions.db"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("{}: {e}", support::bin().display()));
    let pid = child.id();
    let mut stdin = child.stdin.take().unwrap();
    let (listed, answers) = std::sync::mpsc::channel();
    let stdout = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if line.starts_with("Team \"memory\":") {
                let _ = listed.send(());
            }
        }
    });
    let mut batch = |lines: &mut dyn Iterator<Item = String>| {
        let mut input = String::new();
        for line in lines {
            input.push_str(&line);
            input.push('\n');
        }
        input.push_str("/team list\n");
        stdin.write_all(input.as_bytes()).unwrap();
        stdin.flush().unwrap();
        answers
            .recv_timeout(Duration::from_secs(120))
            .expect("chat listed the team");
        std::thread::sleep(Duration::from_millis(500));
        memory(pid).0
    };
    let start = batch(&mut std::iter::empty());
    let first = batch(&mut (0..n).map(|i| format!("[FROM: kailai] {}", text(i))));
    let second = batch(&mut (n..2 * n).map(|i| format!("[FROM: kailai] {}", text(i))));
    drop(stdin);
    let _ = child.kill();
    let _ = child.wait();
    (start, first, second)
}
