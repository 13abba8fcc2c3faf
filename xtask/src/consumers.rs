//! What the npm package's users build it with, for `cargo xtask test` (docs/architecture.md §12):
//! the bundlers a Node bundle is made with (esbuild, Vite, webpack), the runtimes and bundlers
//! whose setup the README states (Bun, Rollup with node-resolve, Cloudflare's workerd through
//! miniflare, a Next.js edge route built by Turbopack, Jest's jsdom environment) and the oldest TypeScript the package's README supports,
//! installed from npm at exact versions into
//! `target/npm-consumers/` (cached there: reinstalled only when a version differs).

use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::proc::{self, Ctx};
use crate::steps::format_duration;

/// npm package and pinned version. `typescript` is the oldest line the README supports (its
/// declarations use `[Symbol.dispose]`, whose lib TypeScript 5.2 added); `bun` and `miniflare`
/// bring their runtimes' binaries as optional dependencies, `next` its compiler's (about 65 s
/// to install, once).
pub const PACKAGES: [(&str, &str); 13] = [
    ("esbuild", "0.28.2"),
    ("vite", "8.3.8"),
    ("webpack", "5.112.2"),
    ("typescript", "5.2.2"),
    ("bun", "1.4.4"),
    ("rollup", "4.68.5"),
    ("@rollup/plugin-node-resolve", "16.0.3"),
    ("miniflare", "4.20260730.0"),
    ("jest", "30.5.2"),
    ("jest-environment-jsdom", "30.5.2"),
    ("next", "16.4.6"),
    ("react", "19.3.1"),
    ("react-dom", "19.3.1"),
];

/// `target/npm-consumers`: npm's prefix for them.
pub fn dir(ctx: &Ctx) -> PathBuf {
    ctx.target_dir().join("npm-consumers")
}

/// The oldest supported TypeScript's `tsc` script (run with `node`).
pub fn tsc(ctx: &Ctx) -> PathBuf {
    dir(ctx)
        .join("node_modules")
        .join("typescript")
        .join("bin")
        .join("tsc")
}

/// Installs the pinned packages unless they are there; says what it did.
pub fn ensure(ctx: &Ctx) -> Result<String, String> {
    let dir = dir(ctx);
    let wrong = problems(&dir);
    if wrong.is_empty() {
        return Ok(format!("{} present", list()));
    }
    eprintln!(
        "npm consumers: installing {} ({})",
        list(),
        wrong.join("; ")
    );
    let start = Instant::now();
    // esbuild's native binary is an optional dependency, checked by its install script.
    proc::npm_install_exact(ctx, &dir, &PACKAGES, true)?;
    let wrong = problems(&dir);
    if !wrong.is_empty() {
        return Err(format!(
            "after `npm install` in {}: {}",
            ctx.rel(&dir),
            wrong.join("; ")
        ));
    }
    Ok(format!(
        "installed {} in {}",
        list(),
        format_duration(start.elapsed())
    ))
}

fn problems(dir: &Path) -> Vec<String> {
    PACKAGES
        .iter()
        .filter_map(|(package, version)| match installed_version(dir, package) {
            None => Some(format!("{package} not installed")),
            Some(v) if v != *version => Some(format!("{package} is {v}, not {version}")),
            Some(_) => None,
        })
        .collect()
}

fn installed_version(dir: &Path, package: &str) -> Option<String> {
    let manifest = dir.join("node_modules").join(package).join("package.json");
    let text = std::fs::read_to_string(manifest).ok()?;
    let json: serde_json::Value = serde_json::from_str(&text).ok()?;
    json["version"].as_str().map(str::to_string)
}

fn list() -> String {
    PACKAGES
        .iter()
        .map(|(p, v)| format!("{p} {v}"))
        .collect::<Vec<_>>()
        .join(", ")
}
