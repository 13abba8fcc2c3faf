//! The web page (docs/architecture.md §13): built by Trunk from `index.html` + `Trunk.toml` at the
//! root into `web/dist`, tested in Chromium by `web/e2e/`, served on 127.0.0.1 by
//! `cargo xtask run` (run.rs).

use crate::proc::{self, Ctx};

/// Where Trunk writes the page (`[build] dist` in Trunk.toml).
pub const DIST: &str = "web/dist";
/// The e2e suite (`node --test` finds `*.test.mjs` below it).
pub const E2E: &str = "web/e2e";

/// `trunk build --release`: the wasm-release profile and npm binaryen's wasm-opt (our PATH
/// puts node_modules/.bin first; Trunk.toml pins `version_132`, so Debian's never runs).
pub fn build(ctx: &Ctx) -> Result<(), String> {
    proc::run(
        ctx.cmd("trunk")
            .args(["build", "--release", "--offline", "--skip-version-check"])
            .env("NO_COLOR", "true"),
    )
}

/// The bridge binary the suite and `run` start (`cargo build -p agent-chatter-bridge`).
pub fn bridge_bin(ctx: &Ctx, profile: &str) -> std::path::PathBuf {
    ctx.target_dir().join(profile).join("agent-chatter")
}

/// The browser suite, one file at a time (2 cores: one Chromium is enough), against the page
/// in web/dist and a debug build of the bridge.
pub fn e2e(ctx: &Ctx) -> Result<(), String> {
    proc::run(&mut ctx.cargo(&["build", "-p", "agent-chatter-bridge"]))?;
    proc::run(
        ctx.cmd("node")
            .args(["--test", "--test-concurrency=1", &format!("{E2E}/")])
            .env("AGENT_CHATTER_BIN", bridge_bin(ctx, "debug")),
    )
}

/// The gzip size of the built page's wasm, for the report (`gzip -9`).
pub fn wasm_size(ctx: &Ctx) -> Result<String, String> {
    let dist = ctx.root.join(DIST);
    let wasm = std::fs::read_dir(&dist)
        .map_err(|e| {
            format!(
                "cannot read {DIST}: {e}; run `cargo xtask run` or `trunk build --release` first"
            )
        })?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "wasm"))
        .ok_or_else(|| format!("no .wasm in {DIST}"))?;
    let raw = std::fs::metadata(&wasm).map_err(|e| e.to_string())?.len();
    let gz = proc::capture(
        ctx.cmd("sh")
            .arg("-c")
            .arg(format!("gzip -9 -c '{}' | wc -c", wasm.display())),
    )?;
    Ok(format!("{} B raw, {} B gzip", raw, gz.trim()))
}
