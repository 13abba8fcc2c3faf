//! `cargo xtask fuzz [--seconds N] [TARGET]`: runs the cargo-fuzz (libFuzzer) targets of
//! `fuzz/`, each for N seconds (default 60), seeded from `tests/fixtures/`. `cargo xtask test`
//! runs a short smoke of every target.
//!
//! cargo-fuzz needs nightly compiler features (sanitizers, `-Z` flags). These machines have
//! stable only; `RUSTC_BOOTSTRAP=1` is the documented way to use them on a stable compiler,
//! and it is set for the fuzz build alone, never for the project's own builds.

use std::path::{Path, PathBuf};

use crate::proc::{self, Ctx};

/// Every target in fuzz/Cargo.toml, and the fixture directories that seed it.
pub const TARGETS: &[(&str, &[&str])] = &[
    (
        "markers",
        &["tests/fixtures/scenarios", "tests/fixtures/prompts"],
    ),
    (
        "team_config",
        &[
            "tests/fixtures/teams",
            "tests/fixtures/peer/valid",
            "tests/fixtures/peer/invalid",
            "tests/fixtures/bad",
        ],
    ),
    (
        "snapshot_import",
        &["tests/fixtures/snapshots", "tests/fixtures/bad"],
    ),
    (
        "scenario_preview",
        &["tests/fixtures/scenarios", "tests/fixtures/bad"],
    ),
    ("session_import", &["tests/fixtures/sessions"]),
    ("ws_frame", &[]),
    ("agent_streams", &["bridge/tests/fixtures/agents"]),
];

/// Seconds per target in `cargo xtask test`.
pub const SMOKE_SECONDS: u64 = 15;

pub fn parse_args(args: &[String]) -> Result<(u64, Option<String>), String> {
    let mut seconds = 60;
    let mut target = None;
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--seconds" => {
                let value = it.next().ok_or("--seconds needs a number")?;
                seconds = value
                    .parse()
                    .map_err(|_| format!("--seconds {value}: not a whole number of seconds"))?;
            }
            name if TARGETS.iter().any(|(t, _)| *t == name) => target = Some(name.to_string()),
            other => {
                let names: Vec<&str> = TARGETS.iter().map(|(t, _)| *t).collect();
                return Err(format!(
                    "fuzz: unknown argument {other:?}; targets: {}",
                    names.join(", ")
                ));
            }
        }
    }
    Ok((seconds, target))
}

/// Runs `target` (or all) for `seconds` each; a crash fails with the reproducer's path.
pub fn fuzz(ctx: &Ctx, seconds: u64, target: Option<&str>) -> Result<(), String> {
    let fuzz_dir = ctx.root.join("fuzz");
    for (name, seeds) in TARGETS
        .iter()
        .filter(|(t, _)| target.is_none_or(|w| w == *t))
    {
        let corpus = ctx.target_dir().join("fuzz-corpus").join(name);
        std::fs::create_dir_all(&corpus)
            .map_err(|e| format!("cannot create {}: {e}", corpus.display()))?;
        let seed_dirs: Vec<PathBuf> = seeds
            .iter()
            .map(|s| ctx.root.join(s))
            .filter(|p| p.is_dir())
            .collect();
        eprintln!("fuzz: {name} for {seconds} s");
        let artifacts = fuzz_dir.join("artifacts").join(name);
        let before = files_in(&artifacts);
        proc::run(
            ctx.cargo(&["fuzz", "run", name])
                .current_dir(&fuzz_dir)
                // Stable compiler, nightly features: for the fuzz build only (module doc).
                .env("RUSTC_BOOTSTRAP", "1")
                .env("CARGO_TARGET_DIR", ctx.target_dir().join("fuzz"))
                .arg(&corpus)
                .args(&seed_dirs)
                .args([
                    "--",
                    &format!("-max_total_time={seconds}"),
                    "-rss_limit_mb=2048",
                    "-timeout=10",
                ]),
        )
        .map_err(|e| {
            let new: Vec<String> = files_in(&artifacts)
                .difference(&before)
                .map(|p| ctx.rel(p))
                .collect();
            if new.is_empty() {
                format!("fuzz target {name}: {e} (no crashing input was written: see the output above, e.g. a build error)")
            } else {
                format!("fuzz target {name}: {e} (crashing input: {})", new.join(", "))
            }
        })?;
    }
    Ok(())
}

/// The files in `dir` (none when it does not exist).
fn files_in(dir: &Path) -> std::collections::BTreeSet<PathBuf> {
    std::fs::read_dir(dir)
        .map(|entries| entries.filter_map(|e| Some(e.ok()?.path())).collect())
        .unwrap_or_default()
}
