//! Marker parsing and stripping throughput (docs/architecture.md §15): `parse` must reach 1 GiB/s
//! on plain text and stay fast with a marker every ~200 bytes; the strips are linear.
//!
//! The `*_reference` groups run the same inputs through `markers::reference`, the plain
//! regex, line-by-line reading of the grammar: the trial of `regex` for this job (issue 7),
//! figures in `docs/markers.md`.

use std::hint::black_box;

use agent_chatter::markers::{parse, reference, strip_all, strip_routing};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};

const MIB: usize = 1024 * 1024;

/// About 1 MiB of prose in ~70-byte lines, no markers, no brackets.
fn plain_text() -> String {
    let words = [
        "the",
        "agent",
        "reads",
        "context",
        "before",
        "answering",
        "and",
        "routes",
        "work",
        "to",
        "a",
        "teammate",
        "when",
        "done",
        "résumé",
        "naïve",
    ];
    let mut text = String::with_capacity(MIB + 64);
    let mut i = 0usize;
    let mut line = 0usize;
    while text.len() < MIB {
        text.push_str(words[i % words.len()]);
        i = i.wrapping_mul(31).wrapping_add(7) % 9973;
        line += 1;
        text.push(if line % 12 == 0 { '\n' } else { ' ' });
    }
    text
}

/// About 1 MiB with a marker every ~200 bytes, and a fenced block every ~4 KiB.
fn marker_text() -> String {
    let markers = [
        "[NEXT: max, bob !P1]",
        "[DONE]",
        "[FROM: kailai]",
        "[TEAM_TASK: design the auth flow]",
        "[DROP: carol]",
        "[see note 3]",
    ];
    let plain = plain_text();
    let mut text = String::with_capacity(MIB + 4096);
    let mut n = 0usize;
    for chunk in plain.as_bytes().chunks(180) {
        text.push_str(&String::from_utf8_lossy(chunk));
        text.push_str(markers[n % markers.len()]);
        n += 1;
        if n % 20 == 0 {
            text.push_str("\n```\n  [NEXT: nobody]  code\n```\n");
        }
    }
    text
}

/// About 1 MiB of near-misses: brackets that are not markers, unclosed markers, block-form
/// `[TEAM_TASK]`, stray backticks, and one 64 KiB line of `[NEXT:` that never closes (the
/// scanner must stay linear on these).
fn near_miss_text() -> String {
    let pieces = [
        "[x] ",
        "[NEXT: a ",
        "[[",
        "]] ",
        "[TEAM_TASK] ",
        "`` ",
        "[DONE ",
        "[ NEXT: b] ",
        "a[0] ",
        "[DROP ",
        "\n",
    ];
    let mut text = String::with_capacity(MIB + 4096);
    text.push_str(&"[NEXT:".repeat(64 * 1024 / 6));
    text.push('\n');
    let mut n = 0usize;
    while text.len() < MIB {
        text.push_str(pieces[n % pieces.len()]);
        n = n.wrapping_mul(7).wrapping_add(3) % 1009;
    }
    text
}

/// One typical chat message: ~2 KB of prose with two markers.
fn message_text() -> String {
    let plain = plain_text();
    let body = plain.get(..2000).unwrap_or_default();
    format!("[FROM: kailai] {body}\n[NEXT: max !P1]")
}

fn bench(c: &mut Criterion) {
    let inputs = [
        ("message_2KB", message_text()),
        ("plain_1MiB", plain_text()),
        ("markers_every_200B_1MiB", marker_text()),
        ("near_misses_1MiB", near_miss_text()),
    ];
    for (op, f) in [
        ("parse", (|t: &str| drop(black_box(parse(t)))) as fn(&str)),
        ("strip_all", |t: &str| drop(black_box(strip_all(t)))),
        ("strip_routing", |t: &str| drop(black_box(strip_routing(t)))),
        ("parse_reference", |t: &str| {
            drop(black_box(reference::parse(t)))
        }),
        ("strip_all_reference", |t: &str| {
            drop(black_box(reference::strip_all_counted(t)))
        }),
        ("strip_routing_reference", |t: &str| {
            drop(black_box(reference::strip_routing_counted(t)))
        }),
    ] {
        let mut group = c.benchmark_group(op);
        for (name, text) in &inputs {
            group.throughput(Throughput::Bytes(text.len() as u64));
            group.bench_function(*name, |b| b.iter(|| f(black_box(text))));
        }
        group.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
