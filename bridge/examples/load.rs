//! Load bench of the bridge (`cargo xtask bench` runs it): 1 000 messages through fake agents
//! (tests/fixtures/agents/load-agent.mjs, two agents handing over to each other), reporting
//! the bridge's RSS at start and end and the relay latency (an agent writes a line → a page
//! connected to the WebSocket receives it). Prints one markdown table.
//!
//! `cargo run --release -p agent-chatter-bridge --example load -- [MESSAGES]`

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use futures_util::{SinkExt, StreamExt};
use serde_json::{json, Value};
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::Message;

fn rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse().ok())
        })
        .unwrap_or(0)
}

fn now_ns() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos())
}

#[tokio::main]
async fn main() {
    let messages: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(1000);
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let bin = std::env::var("AGENT_CHATTER_BIN").unwrap_or_else(|_| {
        root.join("../target/release/agent-chatter")
            .display()
            .to_string()
    });
    let agent = root
        .join("tests/fixtures/agents/load-agent.mjs")
        .display()
        .to_string();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir(d.join("dist")).unwrap();
    std::fs::write(d.join("dist/index.html"), "<!doctype html>").unwrap();
    let team = json!({"name": "load", "members": [
        {"name": "kailai", "kind": "human"},
        {"name": "a1", "kind": "ai", "agentType": "claude-code"},
        {"name": "a2", "kind": "ai", "agentType": "openai-codex"}],
        "settings": {"maxRounds": messages + 10}});
    std::fs::write(d.join("team.json"), team.to_string()).unwrap();
    let agents = json!({"agents": {
        "a1": {"command": agent, "args": ["a2"], "output": "command"},
        "a2": {"command": agent, "args": ["a1"], "output": "command"}}});
    std::fs::write(d.join("agents.json"), agents.to_string()).unwrap();

    let mut child = Command::new(&bin)
        .args(["serve", "--port", "0"])
        .arg("--db")
        .arg(d.join("s.db"))
        .arg("--dist")
        .arg(d.join("dist"))
        .arg("--team")
        .arg(d.join("team.json"))
        .arg("--agents")
        .arg(d.join("agents.json"))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| {
            panic!("{bin}: {e} (build it: cargo build --release -p agent-chatter-bridge)")
        });
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let (port, token) = line
        .trim()
        .strip_prefix("http://127.0.0.1:")
        .unwrap()
        .split_once("/#token=")
        .unwrap();
    let pid = child.id();
    let rss_start = rss_kib(pid);

    let mut req = format!("ws://127.0.0.1:{port}/api/ws")
        .into_client_request()
        .unwrap();
    req.headers_mut().insert(
        "origin",
        format!("http://127.0.0.1:{port}").parse().unwrap(),
    );
    let (mut ws, _) = tokio_tungstenite::connect_async(req).await.unwrap();
    ws.send(Message::Text(
        json!({"v": 1, "type": "hello", "token": token})
            .to_string()
            .into(),
    ))
    .await
    .unwrap();
    ws.send(Message::Text(json!({"v": 1, "type": "apply", "fact": {"type": "human", "text": "[FROM: kailai] go [NEXT: a1]", "sender": null, "at": 1}}).to_string().into())).await.unwrap();

    let started = Instant::now();
    let mut stored = 0usize;
    let mut latencies_us: Vec<f64> = Vec::new();
    let mut rss_peak = rss_start;
    let mut rss_series = Vec::new();
    while stored < messages {
        let frame = tokio::time::timeout(Duration::from_secs(30), ws.next())
            .await
            .expect("no event within 30 s");
        let Some(Ok(Message::Text(text))) = frame else {
            panic!("socket closed after {stored} messages")
        };
        let received = now_ns();
        let event: Value = serde_json::from_str(&text).unwrap();
        match event["type"].as_str().unwrap_or_default() {
            "output" => {
                for l in event["delta"].as_str().unwrap_or_default().lines() {
                    if let Some(stamp) = l
                        .strip_prefix("stamp ")
                        .and_then(|s| s.parse::<u128>().ok())
                    {
                        latencies_us.push(received.saturating_sub(stamp) as f64 / 1000.0);
                    }
                }
            }
            "fact" if matches!(event["fact"]["type"].as_str(), Some("human" | "replied")) => {
                stored += 1;
                if stored % 100 == 0 {
                    let rss = rss_kib(pid);
                    rss_peak = rss_peak.max(rss);
                    rss_series.push(rss);
                }
            }
            "fact" if event["fact"]["type"] == "failed" => {
                panic!("an agent failed: {}", event["fact"])
            }
            _ => {}
        }
    }
    let elapsed = started.elapsed();
    let rss_end = rss_kib(pid);
    let _ = child.kill();
    let _ = child.wait();
    latencies_us.sort_by(|a, b| a.total_cmp(b));
    let pct = |p: f64| {
        latencies_us
            .get(((latencies_us.len() as f64 - 1.0) * p) as usize)
            .copied()
            .unwrap_or(f64::NAN)
    };
    println!("| bridge load | value |\n|---|---:|");
    println!("| messages through fake agents | {stored} |");
    println!(
        "| wall time | {:.1} s ({:.1} ms per message, agent process start included) |",
        elapsed.as_secs_f64(),
        elapsed.as_secs_f64() * 1000.0 / stored as f64
    );
    println!(
        "| RSS at start / peak / end | {} / {} / {} KiB |",
        rss_start, rss_peak, rss_end
    );
    println!(
        "| RSS every 100 messages | {} KiB |",
        rss_series
            .iter()
            .map(u64::to_string)
            .collect::<Vec<_>>()
            .join(" · ")
    );
    println!(
        "| relay latency median / p95 / max ({} lines) | {:.2} / {:.2} / {:.2} ms |",
        latencies_us.len(),
        pct(0.5) / 1000.0,
        pct(0.95) / 1000.0,
        pct(1.0) / 1000.0
    );
}
