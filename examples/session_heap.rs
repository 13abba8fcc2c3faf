//! Heap held by a [`Session`] per stored message (`cargo xtask bench` runs it): the bridge's
//! load run reports its RSS, and this tells what part of that the conversation itself holds
//! (a counting allocator, no guesswork). The messages have the shape of the load run's fake
//! agents: two AI members handing over to each other with ~110-byte replies.
//!
//! `cargo run --release --example session_heap -- [MESSAGES]`

use agent_chatter::conversation::Action;
use agent_chatter::message::Millis;
use agent_chatter::session::{Fact, Session};

#[path = "../tests/support/counting_alloc.rs"]
mod counting_alloc;

use counting_alloc::live;

fn main() {
    let messages: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(1000);
    let team = agent_chatter::config::load_team(&format!(
        r#"{{"name": "load", "members": [
            {{"name": "kailai", "kind": "human"}},
            {{"name": "a1", "kind": "ai", "agentType": "claude-code"}},
            {{"name": "a2", "kind": "ai", "agentType": "openai-codex"}}],
            "settings": {{"maxRounds": {}}}}}"#,
        messages + 10
    ))
    .expect("the load team is valid");
    let mut session = Session::new();
    session.apply(&Fact::set_team(team)).expect("setTeam");
    session
        .apply(&Fact::human("[FROM: kailai] go [NEXT: a1]", Millis(1)))
        .expect("human");
    let start = live();
    let mut series = Vec::new();
    let mut stored = 1;
    let mut at = 2;
    while stored < messages {
        let Some(action) = session.poll_action() else {
            break;
        };
        if let Action::Deliver(delivery) = action {
            let next = if delivery.to.as_str() == "a1" {
                "a2"
            } else {
                "a1"
            };
            let stamp = "stamp 1790000000000000000\n";
            let text = format!("{stamp}{stamp}{stamp}done, over to {next} [NEXT: {next}]");
            session
                .apply(&Fact::replied(&delivery.to, &text, Millis(at)))
                .expect("replied");
            at += 1;
            stored += 1;
            if stored % 100 == 0 {
                series.push((live() - start) / 1024);
            }
        }
    }
    let held = live() - start;
    let facts_json: usize = session
        .facts()
        .iter()
        .map(|f| serde_json::to_string(f).map_or(0, |s| s.len()))
        .sum();
    println!("| session heap | value |\n|---|---:|");
    println!("| messages stored | {} |", session.messages().len());
    println!(
        "| heap held after the first message | {} KiB ({} B per message) |",
        held / 1024,
        held / stored.max(1)
    );
    println!(
        "| every 100 messages | {} KiB |",
        series
            .iter()
            .map(usize::to_string)
            .collect::<Vec<_>>()
            .join(" · ")
    );
    println!(
        "| the facts as JSON (what SQLite stores) | {} B per message |",
        facts_json / session.facts().len().max(1)
    );
}
