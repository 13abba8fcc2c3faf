//! Load bench of the bridge (`cargo xtask bench` runs it): 1 000 messages through fake agents
//! (tests/fixtures/agents/load-agent.mjs, two agents handing over to each other), reporting
//! the bridge's RSS at start and end and the relay latency (an agent writes a line → a page
//! connected to the WebSocket receives it). Then a second session of the same length, after
//! the first is closed: its RSS shows whether anything but the open conversation stays in
//! memory. Prints one markdown table.
//!
//! `cargo run --release -p agent-chatter-bridge --example load -- [MESSAGES]`

use std::time::{Instant, SystemTime, UNIX_EPOCH};

use serde_json::json;

// The same harness as the integration tests: a real `serve` process and a page client.
#[path = "../tests/support/mod.rs"]
mod support;

use support::Bridge;

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
    let team = json!({"name": "load", "members": [
        {"name": "kailai", "kind": "human"},
        {"name": "a1", "kind": "ai", "agentType": "claude-code"},
        {"name": "a2", "kind": "ai", "agentType": "openai-codex"}],
        "settings": {"maxRounds": messages + 10}});
    let dir = Bridge::new_dir(&team, "load-agent.mjs");
    let agent = support::fixture("load-agent.mjs").display().to_string();
    let agents = json!({"agents": {
        "a1": {"command": agent, "args": ["a2"], "output": "command"},
        "a2": {"command": agent, "args": ["a1"], "output": "command"}}});
    std::fs::write(dir.path().join("agents.json"), agents.to_string()).unwrap();

    let bridge = Bridge::start(dir, None);
    let pid = bridge.child.id();
    let rss_start = rss_kib(pid);
    let (mut page, _) = bridge.hello().await;
    let started = Instant::now();
    let first = run_session(&mut page, messages, pid).await;
    let elapsed = started.elapsed();
    // A second session of the same length, after the first is closed: if nothing but the
    // open conversation holds memory, its messages reuse what the first one freed and the
    // RSS stays where it was.
    page.send(json!({"v": 1, "type": "newSession"})).await;
    let second = run_session(&mut page, messages, pid).await;
    drop(bridge);
    let mut latencies_us = first.latencies_us;
    latencies_us.extend(second.latencies_us);
    latencies_us.sort_by(|a, b| a.total_cmp(b));
    let pct = |p: f64| {
        latencies_us
            .get(((latencies_us.len() as f64 - 1.0) * p) as usize)
            .copied()
            .unwrap_or(f64::NAN)
    };
    let series = |s: &[u64]| s.iter().map(u64::to_string).collect::<Vec<_>>().join(" · ");
    println!("| bridge load | value |\n|---|---:|");
    println!(
        "| messages through fake agents | {} per session, two sessions |",
        first.stored
    );
    println!(
        "| wall time, first session | {:.1} s ({:.1} ms per message, agent process start included) |",
        elapsed.as_secs_f64(),
        elapsed.as_secs_f64() * 1000.0 / first.stored as f64
    );
    println!(
        "| RSS at start / end of session 1 / end of session 2 | {} / {} / {} KiB |",
        rss_start, first.rss_end, second.rss_end
    );
    println!(
        "| RSS every 100 messages, session 1 | {} KiB |",
        series(&first.rss_series)
    );
    println!(
        "| RSS every 100 messages, session 2 | {} KiB |",
        series(&second.rss_series)
    );
    println!(
        "| relay latency median / p95 / max ({} lines) | {:.2} / {:.2} / {:.2} ms |",
        latencies_us.len(),
        pct(0.5) / 1000.0,
        pct(0.95) / 1000.0,
        pct(1.0) / 1000.0
    );
    acp_chatty(10, 1000).await;
}

/// The median, 95th percentile and largest of `values` (µs), in ms.
fn spread(mut values: Vec<f64>) -> String {
    values.sort_by(|a, b| a.total_cmp(b));
    let pct = |p: f64| {
        values
            .get(((values.len() as f64 - 1.0) * p) as usize)
            .copied()
            .unwrap_or(f64::NAN)
            / 1000.0
    };
    format!("{:.2} / {:.2} / {:.2} ms", pct(0.5), pct(0.95), pct(1.0))
}

/// A chatty ACP agent (tests/fixtures/agents/acp-agent.mjs `chatty:N`): `runs` deliveries of
/// `updates` tool-call updates each, with a text line every 10th; the relay latency of each
/// (agent writes → page receives), activity and text apart (docs/architecture.md §14d: activity must not
/// slow the relay).
async fn acp_chatty(runs: usize, updates: usize) {
    let team = json!({"name": "acp", "members": [
        {"name": "kailai", "kind": "human"},
        {"name": "max", "kind": "ai", "agentType": "claude-code"}]});
    let dir = Bridge::new_dir(&team, "load-agent.mjs");
    let agent = support::fixture("acp-agent.mjs").display().to_string();
    let agents = json!({"agents": {"max": {"protocol": "acp", "command": agent,
        "args": [format!("chatty:{updates}"), "/dev/null"]}}});
    std::fs::write(dir.path().join("agents.json"), agents.to_string()).unwrap();
    let bridge = Bridge::start(dir, None);
    let (mut page, _) = bridge.hello().await;
    let (mut activity_us, mut text_us) = (Vec::new(), Vec::new());
    for _ in 0..runs {
        page.send(json!({"v": 1, "type": "apply", "fact": {"type": "human", "text": "[NEXT: max] go", "sender": null, "at": 1}})).await;
        loop {
            let event = page.next().await.expect("socket open");
            let received = now_ns();
            let stamp = |text: &str| {
                text.split("stamp ")
                    .nth(1)
                    .and_then(|s| s.trim().parse::<u128>().ok())
                    .map(|s| received.saturating_sub(s) as f64 / 1000.0)
            };
            match event["type"].as_str().unwrap_or_default() {
                "activity" => {
                    activity_us.extend(stamp(event["item"]["title"].as_str().unwrap_or("")))
                }
                "output" => {
                    for line in event["delta"].as_str().unwrap_or_default().lines() {
                        text_us.extend(stamp(line));
                    }
                }
                "fact" if event["fact"]["type"] == "replied" => break,
                "fact" if event["fact"]["type"] == "failed" => panic!("{}", event["fact"]),
                _ => {}
            }
        }
    }
    println!(
        "| ACP agent, {updates} tool-call updates per run × {runs}: activity relay median / p95 / max ({} updates) | {} |",
        activity_us.len(),
        spread(activity_us)
    );
    println!(
        "| … its text relay median / p95 / max meanwhile ({} lines) | {} |",
        text_us.len(),
        spread(text_us)
    );
}

/// What one session of the load run measured.
struct SessionRun {
    stored: usize,
    latencies_us: Vec<f64>,
    rss_series: Vec<u64>,
    rss_end: u64,
}

/// Starts the chain in the page's current session and waits for `messages` stored messages.
async fn run_session(page: &mut support::Client, messages: usize, pid: u32) -> SessionRun {
    page.send(json!({"v": 1, "type": "apply", "fact": {"type": "human", "text": "[FROM: kailai] go [NEXT: a1]", "sender": null, "at": 1}})).await;
    let mut stored = 0usize;
    let mut latencies_us: Vec<f64> = Vec::new();
    let mut rss_series = Vec::new();
    while stored < messages {
        let event = page
            .next()
            .await
            .unwrap_or_else(|| panic!("socket closed after {stored} messages"));
        let received = now_ns();
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
                    rss_series.push(rss_kib(pid));
                }
            }
            "fact" if event["fact"]["type"] == "failed" => {
                panic!("an agent failed: {}", event["fact"])
            }
            _ => {}
        }
    }
    SessionRun {
        stored,
        latencies_us,
        rss_series,
        rss_end: rss_kib(pid),
    }
}
