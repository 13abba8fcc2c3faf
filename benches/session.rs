//! Session replay (docs/architecture.md §6b): rebuilding a 10⁴-message session from its fact log,
//! as the bridge does on resume and the page on reload (target ≤ 50 ms natively). Measured from the
//! facts in memory (`replay`) and from the session file's text (`import`). Also the import of the
//! same conversation's snapshot (docs/architecture.md §11), from its text and from a parsed `Value`
//! (the page's path).

use std::hint::black_box;

use agent_chatter::config::load_team;
use agent_chatter::conversation::Action;
use agent_chatter::message::Millis;
use agent_chatter::session::{Fact, Session};
use agent_chatter::snapshot::Snapshot;
use criterion::{criterion_group, criterion_main, Criterion};

/// A session of about `n` messages: kailai asks max, max passes to sarah, sarah to carol,
/// carol back to kailai; each message ~200 bytes with its routing markers.
fn session(n: usize) -> Session {
    let team = load_team(
        r#"{"name": "Crew", "members": [
        {"name": "kailai", "kind": "human"},
        {"name": "max", "kind": "ai", "agentType": "claude", "systemInstruction": "You plan."},
        {"name": "sarah", "kind": "ai", "agentType": "codex", "systemInstruction": "You code."},
        {"name": "carol", "kind": "ai", "agentType": "gemini"}]}"#,
    )
    .expect("team");
    let mut s = Session::new();
    s.apply(&Fact::set_team(team)).expect("team");
    let body = "I looked at the parser and the budget code; the window logic is fine, but the \
                trimming path allocates per line. Suggest precomputing sizes.";
    let mut t = 0;
    while s.messages().len() < n {
        t += 1;
        s.apply(&Fact::human(
            format!("Round {t}: {body} [NEXT: max]"),
            Millis(t),
        ))
        .expect("human");
        while let Some(action) = s.poll_action() {
            if let Action::Deliver(d) = action {
                let next = match d.to.as_str() {
                    "max" => "sarah",
                    "sarah" => "carol",
                    _ => "kailai",
                };
                t += 1;
                let reply = format!("{} here: {body} [NEXT: {next}]", d.to);
                s.apply(&Fact::replied(&d.to, reply, Millis(t)))
                    .expect("reply");
            }
        }
    }
    s
}

fn replay(c: &mut Criterion) {
    let s = session(10_000);
    let facts = s.facts().to_vec();
    let file = s.export();
    let mut group = c.benchmark_group("session");
    group.sample_size(20);
    group.bench_function("replay/10000", |b| {
        b.iter_with_large_drop(|| Session::replay(black_box(&facts[..])).expect("replays"))
    });
    group.bench_function("import/10000", |b| {
        b.iter_with_large_drop(|| Session::import(black_box(&file)).expect("imports"))
    });
    group.finish();
}

fn snapshot_import(c: &mut Criterion) {
    let s = session(10_000);
    let text = serde_json::to_string(&s.snapshot(Millis(1))).expect("serializes");
    let value: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    let mut group = c.benchmark_group("snapshot");
    group.sample_size(20);
    group.throughput(criterion::Throughput::Bytes(text.len() as u64));
    group.bench_function("import-text/10000", |b| {
        b.iter_with_large_drop(|| Snapshot::from_json(black_box(&text)).expect("imports"))
    });
    group.bench_function("import-value/10000", |b| {
        b.iter_with_large_drop(|| Snapshot::from_value(black_box(&value)).expect("imports"))
    });
    group.finish();
}

criterion_group!(benches, replay, snapshot_import);
criterion_main!(benches);
