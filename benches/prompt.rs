//! Prompt build cost (docs/architecture.md §9, §15): one prompt for histories of 10², 10⁴ and 10⁶
//! messages (window 5, 768 KiB), and window 1000 over 10⁴ messages at 768 KiB and at 100 KB
//! (trimming). The cost must not grow with the history's length.

use std::hint::black_box;
use std::sync::OnceLock;

use agent_chatter::context::{build, BuildSettings, Recipient, Store, Target, TokenEstimator};
use agent_chatter::message::{Millis, Routing, Speaker, SpeakerKind};
use agent_chatter::team::{CompactionStrategy, DeliveryPolicy, DEFAULT_MAX_BYTES};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};

/// A conversation of `n` messages: a human and three agents taking turns, ~200 bytes each,
/// with routing markers as real messages carry them.
fn history(n: usize) -> Store {
    let people = ["kailai", "max", "sarah", "carol"];
    let mut store = Store::new();
    for i in 0..n {
        let who = people[i % people.len()];
        let kind = if i % people.len() == 0 {
            SpeakerKind::Human
        } else {
            SpeakerKind::Ai
        };
        let next = people[(i + 1) % people.len()];
        let content = format!(
            "Message {i}: I looked at the parser and the budget code; the window logic is fine, but the \
             trimming path allocates per line. Suggest precomputing sizes. [NEXT: {next}] Thanks, {who}."
        );
        let speaker = Speaker {
            id: who.into(),
            name: who.into(),
            display_name: who.into(),
            kind,
        };
        let routing = Routing {
            resolved: vec![next.into()],
            resolved_names: vec![next.into()],
            ..Routing::default()
        };
        store.push(speaker, content, routing, Millis(i as u64));
    }
    store.set_team_task(Some("Ship the context manager with a hard byte budget."));
    store
}

fn settings(window: usize, max_bytes: usize) -> BuildSettings {
    BuildSettings {
        window,
        pin_first: false,
        max_bytes,
        delivery: DeliveryPolicy::Latest,
        compaction: CompactionStrategy::Lazy,
        tokens: TokenEstimator::None,
        max_tokens: None,
    }
}

fn recipient() -> Recipient {
    Recipient {
        id: "max".into(),
        agent_type: "claude-code".into(),
        system_instruction: Some("You are Max, a careful reviewer.".into()),
        ..Recipient::default()
    }
}

fn bench_history_length(c: &mut Criterion) {
    let mut group = c.benchmark_group("prompt/window5_768KiB");
    for n in [100usize, 10_000, 1_000_000] {
        // Built on first use, so a filtered run does not pay for the 10⁶-message setup.
        let store = OnceLock::new();
        let (r, s) = (recipient(), settings(5, DEFAULT_MAX_BYTES));
        group.bench_with_input(BenchmarkId::from_parameter(n), &n, |b, &n| {
            let store: &Store = store.get_or_init(|| history(n));
            let target = Target {
                current: store.latest().unwrap().id.clone(),
                parent: None,
            };
            b.iter(|| black_box(build(store, &r, &target, &s).unwrap()))
        });
    }
    group.finish();
}

fn bench_large_window(c: &mut Criterion) {
    let store = history(10_000);
    let target = Target {
        current: store.latest().unwrap().id.clone(),
        parent: None,
    };
    let r = recipient();
    let mut group = c.benchmark_group("prompt/window1000_10k");
    for (label, max_bytes) in [("768KiB", DEFAULT_MAX_BYTES), ("100KB_trimming", 100_000)] {
        let s = settings(1000, max_bytes);
        group.bench_function(label, |b| {
            b.iter(|| black_box(build(&store, &r, &target, &s).unwrap()))
        });
    }
    group.finish();
}

criterion_group!(benches, bench_history_length, bench_large_window);
criterion_main!(benches);
