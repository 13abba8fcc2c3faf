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
/// in web/dist and a release build of the bridge: the binary users install (the install
/// step after it reuses this build), and one whose relaying does not take the page's CPU on
/// a two-core machine (a debug bridge relaying an agent's 250 updates a second tripled the
/// page's edit time, docs/measurements.md).
pub fn e2e(ctx: &Ctx) -> Result<(), String> {
    proc::run(&mut ctx.cargo(&[
        "build",
        "--release",
        "--locked",
        "-p",
        "agent-chatter-bridge",
    ]))?;
    proc::run(
        ctx.cmd("node")
            .args(["--test", "--test-concurrency=1", &format!("{E2E}/")])
            .env("AGENT_CHATTER_BIN", bridge_bin(ctx, "release")),
    )
}

/// `cargo xtask install` into a temporary root, then the e2e smoke of the installed binary
/// (`web/e2e/installed.test.mjs`): started from another directory with an empty `HOME`, its
/// page, wasm and WebSocket work in Chromium and its database lands in the data directory.
pub fn installed_smoke(ctx: &Ctx) -> Result<(), String> {
    let root = ctx.target_dir().join("install-test");
    let _ = std::fs::remove_dir_all(&root);
    let bin = crate::install::install(ctx, Some(&root))?;
    proc::run(
        ctx.cmd("node")
            .args(["--test", &format!("{E2E}/installed.test.mjs")])
            .env("AGENT_CHATTER_INSTALLED", &bin),
    )
}

/// The most the page's wasm may weigh gzipped (`gzip -9`), in bytes: a ratchet, so the suite
/// fails on any growth past it. It is moved only with the reason and the measured size in
/// docs/measurements.md; issue #25's budget is [`WASM_GZIP_TARGET`].
pub const WASM_GZIP_LIMIT: u64 = 585_500;
/// Issue #25's budget for the page's wasm ("does not grow past 400 KB"), not yet met.
pub const WASM_GZIP_TARGET: u64 = 400_000;

/// The built page's wasm: its size on disk and gzipped (`gzip -9`).
#[derive(Clone, Copy)]
pub struct WasmSize {
    pub raw: u64,
    pub gzip: u64,
}

impl std::fmt::Display for WasmSize {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} B raw, {} B gzip", self.raw, self.gzip)
    }
}

impl WasmSize {
    /// Ok within [`WASM_GZIP_LIMIT`], or an error saying the size and the limit.
    pub fn within_limit(self) -> Result<(), String> {
        if self.gzip <= WASM_GZIP_LIMIT {
            Ok(())
        } else {
            Err(format!(
                "the page's wasm is {} bytes gzipped (gzip -9), over the limit of {WASM_GZIP_LIMIT} bytes \
                 (the ceiling while it works down to {WASM_GZIP_TARGET}, issue #25): {} bytes too many",
                self.gzip,
                self.gzip - WASM_GZIP_LIMIT
            ))
        }
    }
}

/// The size of the built page's wasm (in `web/dist`).
pub fn wasm_size(ctx: &Ctx) -> Result<WasmSize, String> {
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
    let gzip = gz
        .trim()
        .parse()
        .map_err(|_| format!("gzip -9 | wc -c printed {gz:?}, not a number of bytes"))?;
    Ok(WasmSize { raw, gzip })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_at_the_limit_passes() {
        let size = WasmSize {
            raw: 1_000_000,
            gzip: WASM_GZIP_LIMIT,
        };
        assert_eq!(size.within_limit(), Ok(()));
    }

    #[test]
    fn a_page_over_the_limit_fails_naming_the_limit() {
        let size = WasmSize {
            raw: 1_000_000,
            gzip: WASM_GZIP_LIMIT + 1,
        };
        let why = size.within_limit().unwrap_err();
        let over = WASM_GZIP_LIMIT + 1;
        assert!(why.contains(&format!("{over} bytes gzipped")), "{why}");
        assert!(
            why.contains(&format!("limit of {WASM_GZIP_LIMIT} bytes")),
            "{why}"
        );
        assert!(why.contains("1 bytes too many"), "{why}");
    }
}
