//! `cargo xtask bench`: criterion benches of the core, then the npm package's Node bench;
//! results appended to `target/bench-report.md` (docs/architecture.md §15).

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::Value;

use crate::proc::{self, Ctx};
use crate::{dist, setup};

/// The Node bench of the npm package; prints markdown on stdout.
const NODE_BENCH: &str = "wasm/js/bench.mjs";
/// The side-by-side bench of the npm `ContextManager` and the TypeScript peer (`PEER_OUT`).
const PEER_BENCH: &str = "wasm/js/peer-bench.mjs";
/// The peer's own `ContextManager` tests run against the package (`PEER_OUT` too).
const PEER_TESTS: &str = "wasm/js/peer-tests.mjs";

/// Criterion options for `--quick`: short warm-up and measurement, same benches.
const QUICK: &[&str] = &["--warm-up-time", "1", "--measurement-time", "2"];

pub fn bench(ctx: &Ctx, quick: bool) -> Result<(), String> {
    // Results written before this run are stale; criterion keeps them in the same place.
    // One second of slack covers file systems with coarse modification times.
    let started = SystemTime::now()
        .checked_sub(Duration::from_secs(1))
        .unwrap_or(UNIX_EPOCH);
    let mut cargo = ctx.cargo(&["bench", "-p", "agent-chatter"]);
    if quick {
        cargo.arg("--").args(QUICK);
    }
    proc::run(&mut cargo)?;

    let criterion_dir = criterion_dir(ctx);
    let mut results = Vec::new();
    collect(&criterion_dir, started, &mut results)?;
    if results.is_empty() {
        return Err(format!(
            "`cargo bench` wrote no results under {}: do the bench targets use criterion_main!?",
            ctx.rel(&criterion_dir)
        ));
    }
    results.sort_by(|a, b| a.id.cmp(&b.id));

    let date = utc_date(SystemTime::now());
    let mut section = format!(
        "\n## Criterion benches, {date}{}\n\n| date | bench | mean | throughput |\n|---|---|---:|---:|\n",
        if quick { " (--quick)" } else { "" }
    );
    for r in &results {
        section.push_str(&format!(
            "| {date} | {} | {} | {} |\n",
            r.id,
            format_time(r.mean_ns),
            r.throughput
                .as_ref()
                .map(|t| t.per_second(r.mean_ns))
                .unwrap_or_else(|| "–".to_string())
        ));
    }

    if ctx.root.join(NODE_BENCH).is_file() {
        setup::setup(ctx)?;
        dist::dist(ctx)?;
        let out = proc::capture(ctx.cmd("node").arg(NODE_BENCH))?;
        add_section(
            &mut section,
            &format!("npm package in Node ({NODE_BENCH})"),
            &date,
            &out,
        );
        // The drop-in against the TypeScript peer, when PEER_OUT names its compiled modules.
        let peer = proc::capture(ctx.cmd("node").arg(PEER_BENCH))?;
        let title = format!("ContextManager against the peer ({PEER_BENCH})");
        add_section(&mut section, &title, &date, &peer);
        // The peer's own ContextManager tests against the package (same PEER_OUT).
        let tests = proc::capture(ctx.cmd("node").arg(PEER_TESTS))?;
        let title = format!("the peer's ContextManager tests against the package ({PEER_TESTS})");
        add_section(&mut section, &title, &date, &tests);
    } else {
        section.push_str(&format!("\n(no {NODE_BENCH}: Node bench not run)\n"));
    }

    // The bridge under load: 1 000 messages through fake agents (RSS, relay latency). It
    // embeds the page, which is built first (docs/architecture.md §14e).
    crate::web::build(ctx)?;
    proc::run(&mut ctx.cargo(&["build", "--release", "-p", "agent-chatter-bridge"]))?;
    let messages = if quick { "200" } else { "1000" };
    let example = |package: &str, name: &str| {
        proc::capture(&mut ctx.cargo(&[
            "run",
            "--quiet",
            "--release",
            "-p",
            package,
            "--example",
            name,
            "--",
            messages,
        ]))
    };
    let load = example("agent-chatter-bridge", "load")?;
    add_section(
        &mut section,
        "bridge load (bridge/examples/load.rs)",
        &date,
        &load,
    );
    // What the open conversation itself holds per message (a counting allocator): the part of
    // the load run's RSS growth that is the session, not a leak.
    let heap = example("agent-chatter", "session_heap")?;
    add_section(
        &mut section,
        "session heap (examples/session_heap.rs)",
        &date,
        &heap,
    );

    section.push_str(&page_timings(ctx));

    let report = ctx.target_dir().join("bench-report.md");
    append(&report, &section)?;
    println!("{section}");
    eprintln!("bench: appended to {}", ctx.rel(&report));
    Ok(())
}

/// The page's figures as the e2e suite last measured them (`cargo xtask test` writes them):
/// edits on a 10⁴-message session, and edits while an ACP agent streams tool-call updates.
fn page_timings(ctx: &Ctx) -> String {
    let mut out = String::new();
    for (file, what) in [
        ("timings.json", "a 10⁴-message session"),
        (
            "timings-acp.json",
            "while an ACP agent streams 1 000 tool-call updates",
        ),
    ] {
        let path = ctx.target_dir().join("e2e").join(file);
        match std::fs::read_to_string(&path) {
            Ok(text) => out.push_str(&format!(
                "\n### page in Chromium, {what} (web/e2e, last `cargo xtask test`)\n\n```json\n{}\n```\n",
                text.trim_end()
            )),
            Err(_) => out.push_str(&format!(
                "\n(no target/e2e/{file}: run `cargo xtask test` for the page's figures)\n"
            )),
        }
    }
    out
}

/// Where criterion writes: `$CRITERION_HOME`, else `$CARGO_TARGET_DIR/criterion`, else
/// `target/criterion` (criterion's own order).
fn criterion_dir(ctx: &Ctx) -> PathBuf {
    match std::env::var_os("CRITERION_HOME") {
        Some(home) => ctx.root.join(home),
        None => ctx.target_dir().join("criterion"),
    }
}

fn append(path: &Path, text: &str) -> Result<(), String> {
    use std::io::Write;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(|e| format!("cannot open {}: {e}", path.display()))?;
    file.write_all(text.as_bytes())
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// One benchmark's result from criterion's `new/` directory.
#[derive(Debug, PartialEq)]
struct BenchResult {
    id: String,
    mean_ns: f64,
    throughput: Option<Throughput>,
}

/// Criterion's throughput, per iteration.
#[derive(Debug, PartialEq)]
enum Throughput {
    Bytes(u64),
    BytesDecimal(u64),
    Bits(u64),
    Elements(u64),
    ElementsAndBytes { elements: u64, bytes: u64 },
}

impl Throughput {
    /// Rate at `mean_ns` per iteration, in criterion's units (MiB/s for bytes, MB/s for
    /// decimal bytes, Mbit/s for bits, elem/s for elements).
    fn per_second(&self, mean_ns: f64) -> String {
        let per_sec = |n: u64| {
            if mean_ns > 0.0 {
                n as f64 * 1e9 / mean_ns
            } else {
                0.0
            }
        };
        match *self {
            Throughput::Bytes(n) => scaled(per_sec(n), 1024.0, &["B/s", "KiB/s", "MiB/s", "GiB/s"]),
            Throughput::BytesDecimal(n) => {
                scaled(per_sec(n), 1000.0, &["B/s", "KB/s", "MB/s", "GB/s"])
            }
            Throughput::Bits(n) => {
                scaled(per_sec(n), 1000.0, &["bit/s", "Kbit/s", "Mbit/s", "Gbit/s"])
            }
            Throughput::Elements(n) => scaled(
                per_sec(n),
                1000.0,
                &["elem/s", "Kelem/s", "Melem/s", "Gelem/s"],
            ),
            Throughput::ElementsAndBytes { elements, bytes } => format!(
                "{}, {}",
                scaled(
                    per_sec(elements),
                    1000.0,
                    &["elem/s", "Kelem/s", "Melem/s", "Gelem/s"]
                ),
                scaled(per_sec(bytes), 1024.0, &["B/s", "KiB/s", "MiB/s", "GiB/s"])
            ),
        }
    }

    fn from_json(value: &Value) -> Option<Throughput> {
        let (kind, n) = value.as_object()?.iter().next()?;
        Some(match kind.as_str() {
            "Bytes" => Throughput::Bytes(n.as_u64()?),
            "BytesDecimal" => Throughput::BytesDecimal(n.as_u64()?),
            "Bits" => Throughput::Bits(n.as_u64()?),
            "Elements" => Throughput::Elements(n.as_u64()?),
            "ElementsAndBytes" => Throughput::ElementsAndBytes {
                elements: n.get("elements")?.as_u64()?,
                bytes: n.get("bytes")?.as_u64()?,
            },
            _ => return None,
        })
    }
}

fn scaled(mut value: f64, step: f64, units: &[&str]) -> String {
    let mut unit = 0;
    while value >= step && unit + 1 < units.len() {
        value /= step;
        unit += 1;
    }
    format!("{value:.2} {}", units.get(unit).copied().unwrap_or(""))
}

/// `12.35 ns`, `1.20 µs`, `3.40 ms`, `1.50 s`.
fn format_time(ns: f64) -> String {
    if ns < 1e3 {
        format!("{ns:.2} ns")
    } else if ns < 1e6 {
        format!("{:.2} µs", ns / 1e3)
    } else if ns < 1e9 {
        format!("{:.2} ms", ns / 1e6)
    } else {
        format!("{:.2} s", ns / 1e9)
    }
}

/// Walks `dir` for `…/new/benchmark.json` + `…/new/estimates.json` written since `since`.
fn collect(dir: &Path, since: SystemTime, out: &mut Vec<BenchResult>) -> Result<(), String> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(());
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if !path.is_dir() {
            continue;
        }
        if path.file_name().is_some_and(|n| n == "new") {
            let estimates = path.join("estimates.json");
            let fresh = std::fs::metadata(&estimates)
                .and_then(|m| m.modified())
                .is_ok_and(|t| t >= since);
            if fresh {
                out.push(read_result(&path)?);
            }
        } else {
            collect(&path, since, out)?;
        }
    }
    Ok(())
}

fn read_result(new_dir: &Path) -> Result<BenchResult, String> {
    let read = |name: &str| -> Result<Value, String> {
        let path = new_dir.join(name);
        let text = std::fs::read_to_string(&path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        serde_json::from_str(&text).map_err(|e| format!("{}: invalid JSON: {e}", path.display()))
    };
    parse_result(&read("benchmark.json")?, &read("estimates.json")?)
        .map_err(|field| format!("{}: {field}: missing", new_dir.display()))
}

/// Criterion's `benchmark.json` (`full_id`, `throughput`) and `estimates.json`
/// (`mean.point_estimate`, in ns). The error is the missing field.
fn parse_result(benchmark: &Value, estimates: &Value) -> Result<BenchResult, &'static str> {
    let id = benchmark
        .get("full_id")
        .and_then(Value::as_str)
        .ok_or("benchmark.json full_id")?;
    let mean_ns = estimates
        .get("mean")
        .and_then(|m| m.get("point_estimate"))
        .and_then(Value::as_f64)
        .ok_or("estimates.json mean.point_estimate")?;
    let throughput = benchmark.get("throughput").and_then(Throughput::from_json);
    Ok(BenchResult {
        id: id.to_string(),
        mean_ns,
        throughput,
    })
}

/// `YYYY-MM-DD` (UTC) without a date crate: days since the epoch to the civil calendar
/// (Howard Hinnant's `civil_from_days`).
fn utc_date(now: SystemTime) -> String {
    let secs = now.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let days = (secs / 86_400) as i64;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}

/// Appends `### title, date` and the output of one bench to the report section.
fn add_section(section: &mut String, title: &str, date: &str, output: &str) {
    section.push_str(&format!("\n### {title}, {date}\n\n"));
    section.push_str(output.trim_end());
    section.push('\n');
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn utc_date_matches_known_days() {
        let cases = [
            (0, "1970-01-01"),
            (951_782_400, "2000-02-29"),
            (1_709_164_800, "2024-02-29"),
            (1_795_392_000, "2026-11-23"),
            (1_795_478_399, "2026-11-23"),
        ];
        for (secs, want) in cases {
            assert_eq!(
                utc_date(UNIX_EPOCH + Duration::from_secs(secs)),
                want,
                "{secs}"
            );
        }
    }

    #[test]
    fn result_reads_criterion_files() {
        let benchmark = json!({"group_id": "parse", "function_id": "plain", "value_str": null,
            "throughput": {"Bytes": 1048576}, "full_id": "parse/plain", "directory_name": "parse/plain",
            "title": "parse/plain"});
        let estimates = json!({"mean": {"confidence_interval": {"confidence_level": 0.95,
            "lower_bound": 1.0, "upper_bound": 3.0}, "point_estimate": 2000000.0, "standard_error": 0.1}});
        let result = parse_result(&benchmark, &estimates).expect("parsed");
        assert_eq!(
            result,
            BenchResult {
                id: "parse/plain".to_string(),
                mean_ns: 2_000_000.0,
                throughput: Some(Throughput::Bytes(1_048_576)),
            }
        );
    }

    #[test]
    fn result_without_throughput_has_none() {
        let benchmark = json!({"full_id": "prompt/100", "throughput": null});
        let estimates = json!({"mean": {"point_estimate": 12.5}});
        let result = parse_result(&benchmark, &estimates).expect("parsed");
        assert_eq!(result.throughput, None);
    }

    #[test]
    fn result_missing_mean_names_the_field() {
        let benchmark = json!({"full_id": "x"});
        let err = parse_result(&benchmark, &json!({})).unwrap_err();
        assert_eq!(err, "estimates.json mean.point_estimate");
    }

    #[test]
    fn throughput_uses_criterion_units() {
        // 1 MiB per 2 ms = 500 MiB/s.
        assert_eq!(Throughput::Bytes(1_048_576).per_second(2e6), "500.00 MiB/s");
        assert_eq!(
            Throughput::BytesDecimal(1_000_000).per_second(1e9),
            "1.00 MB/s"
        );
        assert_eq!(Throughput::Elements(100).per_second(1e3), "100.00 Melem/s");
        assert_eq!(
            Throughput::from_json(&json!({"ElementsAndBytes": {"elements": 10, "bytes": 1024}}))
                .map(|t| t.per_second(1e9)),
            Some("10.00 elem/s, 1.00 KiB/s".to_string())
        );
        assert_eq!(Throughput::from_json(&json!({"Unknown": 1})), None);
    }

    #[test]
    fn times_pick_a_readable_unit() {
        assert_eq!(format_time(12.345), "12.35 ns");
        assert_eq!(format_time(1_200.0), "1.20 µs");
        assert_eq!(format_time(3_400_000.0), "3.40 ms");
        assert_eq!(format_time(1.5e9), "1.50 s");
    }
}
