//! `cargo xtask test`: everything CI checks, in order, stopping at the first failure
//! (docs/architecture.md §15). Steps whose files do not exist yet are skipped with the reason, so
//! the command stays green while the wasm package is being written.

use std::path::Path;

use crate::clis;
use crate::consumers;
use crate::cycles;
use crate::dist;
use crate::proc::{self, Ctx};
use crate::setup::{self, WASM_TARGET};
use crate::steps::Steps;
use crate::web;

/// The wasm binding crate's manifest; its steps run only once it exists.
const WASM_MANIFEST: &str = "wasm/Cargo.toml";
/// Node tests of the built package (`node --test` finds `*.test.mjs` etc. below it).
const JS_TESTS: &str = "wasm/js";
/// TypeScript consumer check of the package's `.d.ts` (the pinned TypeScript, nodenext).
const TS_CONFIG: &str = "wasm/js/tsconfig.json";
/// The same consumers checked by the oldest TypeScript line the README supports, with its
/// defaults (ES5 target, no `lib`): the declarations must bring the libs they need.
const TS_CONFIG_DEFAULTS: &str = "wasm/js/tsconfig.defaults.json";
/// Script run inside a fresh project that installed the packed tarball by name.
const TARBALL_SMOKE: &str = "wasm/js/tarball/smoke.mjs";
/// The package bundled by esbuild, Vite SSR and webpack and run in Bun, Rollup, workerd, a Next
/// edge route and Jest jsdom (`check.mjs`, `runtimes.mjs` and the programs
/// it bundles), run from a copy in `target/npm-consumers/` where the pinned bundlers are.
const BUNDLE_CHECK: &str = "wasm/js/bundle";
/// The declarations under `moduleResolution: bundler` with `lib: ["es2022"]` (no DOM).
const TS_CONFIG_NO_DOM: &str = "wasm/js/tsconfig.nodom.json";

pub fn test(ctx: &Ctx) -> Result<(), String> {
    let mut steps = Steps::new("test");
    let result = run_steps(ctx, &mut steps);
    eprintln!("\n{}", steps.summary());
    result
}

/// The step that bundles the installed package and runs it where users do.
const BUNDLED: &str =
    "bundled and run (esbuild, Vite SSR, webpack; Bun, Rollup, workerd, Next edge, Jest jsdom)";

fn run_steps(ctx: &Ctx, steps: &mut Steps) -> Result<(), String> {
    steps.run("setup", || setup::setup(ctx))?;
    // Before `cargo test`: bridge/tests/cli_help.rs reads these CLIs' `--help` too.
    steps.run("agent CLIs (npm)", || {
        eprintln!("clis: {}", clis::ensure(ctx)?);
        Ok(())
    })?;
    // The bridge embeds the page (docs/architecture.md §14e): it is built before anything
    // compiles the bridge.
    steps.run("web page (trunk build --release)", || {
        web::build(ctx)?;
        eprintln!("web: page wasm {}", web::wasm_size(ctx)?);
        Ok(())
    })?;
    steps.run("fmt", || {
        proc::run(&mut ctx.cargo(&["fmt", "--all", "--", "--check"]))
            .map_err(|e| format!("{e}; run `cargo fmt --all`"))
    })?;
    // No module of src/, bridge/src/ or web/src/ depends on one that depends on it back.
    steps.run("import cycles", || cycles::check(&ctx.root))?;
    steps.run("clippy", || {
        proc::run(&mut ctx.cargo(&[
            "clippy",
            "--workspace",
            "--all-targets",
            "--",
            "-D",
            "warnings",
        ]))
    })?;
    steps.run("cargo test", || {
        // The real CLIs' tests have a step of their own, next; here they say they are skipped.
        proc::run(ctx.cargo(&["test", "--workspace"]).env_remove(clis::ENV))
    })?;
    steps.run("bridge with the real agent CLIs and ACP adapters", || {
        // `--workspace`, as the step before: the same features, so nothing is built again.
        // `real_clis`: the CLIs streaming; `real_acp`: the ACP adapters.
        // real_clis first: a Claude ACP run has been seen to leave an empty `/tmp/.git`,
        // which Claude Code then reads as a repository and describes in its system prompt.
        for test in ["real_clis", "real_acp"] {
            proc::run(
                ctx.cargo(&["test", "--workspace", "--test", test])
                    .env(clis::ENV, clis::bin_dir(ctx)),
            )?;
        }
        Ok(())
    })?;
    steps.run("core on wasm32", || {
        // Clippy checks the wasm32 build too (what is compiled there differs: SIMD scans,
        // a 32-bit `usize`).
        proc::run(&mut ctx.cargo(&[
            "clippy",
            "-p",
            "agent-chatter",
            "--target",
            WASM_TARGET,
            "--",
            "-D",
            "warnings",
        ]))
    })?;
    if !npm_steps(ctx, steps)? {
        return Ok(());
    }
    page_steps(ctx, steps)
}

/// The npm package: its wasm tests, `dist`, the Node suites, TypeScript, lint, the tarball as
/// users install it, and the bundlers and runtimes it is checked in. False when there is no
/// package to test (every step after it needs one).
fn npm_steps(ctx: &Ctx, steps: &mut Steps) -> Result<bool, String> {
    let wasm_manifest = ctx.root.join(WASM_MANIFEST);
    if !wasm_manifest.is_file() {
        let reason = format!("no {WASM_MANIFEST}");
        for name in [
            "wasm tests (node)",
            "dist",
            "node --test",
            "npm consumers (bundlers, oldest TypeScript)",
            "tsc",
            "npm package lint",
            "tarball install",
            BUNDLED,
        ] {
            steps.skip(name, &reason);
        }
        return Ok(false);
    }
    let package = dist::package_name(&wasm_manifest)?;
    steps.run("wasm tests (node)", || {
        proc::run(&mut ctx.cargo(&["test", "-p", &package, "--target", WASM_TARGET]))
    })?;
    steps.run("dist", || dist::dist(ctx).map(|_| ()))?;

    if ctx.root.join(JS_TESTS).is_dir() {
        steps.run("node --test", || {
            proc::run(ctx.cmd("node").args(["--test", &format!("{JS_TESTS}/")]))
        })?;
    } else {
        steps.skip("node --test", &format!("no {JS_TESTS}/"));
    }

    // The bundlers and the oldest TypeScript the README supports (cached in target/).
    steps.run("npm consumers (bundlers, oldest TypeScript)", || {
        eprintln!("npm consumers: {}", consumers::ensure(ctx)?);
        Ok(())
    })?;

    if ctx.root.join(TS_CONFIG).is_file() {
        // Each TypeScript by its own path: both packages install a `tsc` in node_modules/.bin.
        steps.run("tsc", || {
            proc::run(ctx.cmd("node").args([
                "node_modules/typescript/bin/tsc",
                "-p",
                TS_CONFIG,
                "--noEmit",
            ]))?;
            proc::run(ctx.cmd("node").args([
                "node_modules/typescript5/bin/tsc",
                "-p",
                TS_CONFIG_DEFAULTS,
            ]))?;
            proc::run(ctx.cmd("node").args([
                "node_modules/typescript/bin/tsc",
                "-p",
                TS_CONFIG_NO_DOM,
            ]))?;
            // The oldest TypeScript the README states, on every configuration.
            for config in [TS_CONFIG, TS_CONFIG_DEFAULTS, TS_CONFIG_NO_DOM] {
                proc::run(
                    ctx.cmd("node")
                        .arg(consumers::tsc(ctx))
                        .args(["-p", config, "--noEmit"]),
                )?;
            }
            Ok(())
        })?;
    } else {
        steps.skip("tsc", &format!("no {TS_CONFIG}"));
    }

    // The package as npm users get it: publint, and arethetypeswrong for the ESM-only profile
    // the README states (both pinned in package.json, run on pkg/).
    steps.run("npm package lint", || {
        proc::run(ctx.cmd(ctx.npm_bin("publint")).arg("--strict").arg("pkg"))?;
        proc::run(
            ctx.cmd(ctx.npm_bin("attw"))
                .args(["--pack", ".", "--profile", "esm-only"])
                .current_dir(ctx.root.join("pkg")),
        )?;
        remove_packed_tarballs(&ctx.root.join("pkg"))
    })?;

    let smoke = ctx.root.join(TARBALL_SMOKE);
    if smoke.is_file() {
        steps.run("tarball install", || tarball_install(ctx, &smoke))?;
        steps.run(BUNDLED, || bundle_check(ctx))?;
    } else {
        steps.skip("tarball install", &format!("no {TARBALL_SMOKE}"));
    }
    Ok(true)
}

/// The page in Chromium (after dist: the e2e suite compares the page with the npm package's
/// preview), the installed binary, the page's size, and the fuzz smoke.
fn page_steps(ctx: &Ctx, steps: &mut Steps) -> Result<(), String> {
    steps.run("web e2e (chromium)", || web::e2e(ctx))?;
    steps.run(
        "installed binary (cargo xtask install, run elsewhere)",
        || web::installed_smoke(ctx),
    )?;
    let size_step = format!(
        "web page size (gzip -9, at most {} B; target {} B)",
        web::WASM_GZIP_LIMIT,
        web::WASM_GZIP_TARGET
    );
    steps.run(&size_step, || web::wasm_size(ctx)?.within_limit())?;
    steps.run("fuzz smoke", || {
        crate::fuzz::fuzz(ctx, crate::fuzz::SMOKE_SECONDS, None)
    })?;
    Ok(())
}

/// Packs `pkg/` as npm would publish it, installs the tarball into a fresh project under
/// `target/tarball-test/` and runs the smoke script there, so it imports the package by name
/// exactly as a user does.
fn tarball_install(ctx: &Ctx, smoke: &Path) -> Result<(), String> {
    let pkg = ctx.root.join("pkg");
    if !pkg.join("package.json").is_file() {
        return Err(
            "pkg/package.json is missing: `cargo xtask dist` copies it from wasm/npm/package.json"
                .to_string(),
        );
    }
    let work = ctx.target_dir().join("tarball-test");
    let app = work.join("app");
    if work.exists() {
        std::fs::remove_dir_all(&work)
            .map_err(|e| format!("cannot clear {}: {e}", work.display()))?;
    }
    std::fs::create_dir_all(&app).map_err(|e| format!("cannot create {}: {e}", app.display()))?;

    let packed = proc::capture(
        ctx.cmd("npm")
            .args(["pack", "--silent", "--pack-destination"])
            .arg(&work)
            .arg(&pkg),
    )?;
    let tarball_name = packed
        .lines()
        .rev()
        .map(str::trim)
        .find(|l| l.ends_with(".tgz"))
        .ok_or_else(|| format!("`npm pack` printed no .tgz name: {packed:?}"))?;
    let tarball = work.join(tarball_name);

    let manifest = r#"{ "name": "tarball-smoke", "private": true, "type": "module" }"#;
    write(&app.join("package.json"), manifest)?;
    proc::run(
        ctx.cmd("npm")
            .current_dir(&app)
            .args([
                "install",
                "--offline",
                "--no-audit",
                "--no-fund",
                "--no-save",
            ])
            .arg(&tarball),
    )?;
    let script = app.join("smoke.mjs");
    std::fs::copy(smoke, &script).map_err(|e| {
        format!(
            "cannot copy {} to {}: {e}",
            smoke.display(),
            script.display()
        )
    })?;
    proc::run(ctx.cmd("node").current_dir(&app).arg("smoke.mjs"))
}

/// Copies `wasm/js/bundle/` into the bundlers' directory and runs its `check.mjs` on the package
/// the tarball install step installed: each bundle must run alone (docs/architecture.md §12).
fn bundle_check(ctx: &Ctx) -> Result<(), String> {
    let from = ctx.root.join(BUNDLE_CHECK);
    let into = consumers::dir(ctx);
    let entries =
        std::fs::read_dir(&from).map_err(|e| format!("cannot list {}: {e}", from.display()))?;
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_file() {
            std::fs::copy(&path, into.join(entry.file_name()))
                .map_err(|e| format!("cannot copy {}: {e}", ctx.rel(&path)))?;
        }
    }
    let installed = ctx
        .target_dir()
        .join("tarball-test")
        .join("app")
        .join("node_modules")
        .join("agent-chatter-wasm");
    proc::run(
        ctx.cmd("node")
            .current_dir(&into)
            .arg("check.mjs")
            .arg(&installed),
    )
}

fn write(path: &Path, text: &str) -> Result<(), String> {
    std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// `attw --pack` leaves the tarball it packed in the package directory; it must not ship.
fn remove_packed_tarballs(pkg: &Path) -> Result<(), String> {
    let entries =
        std::fs::read_dir(pkg).map_err(|e| format!("cannot list {}: {e}", pkg.display()))?;
    for entry in entries.flatten() {
        let path = entry.path();
        if path.extension().is_some_and(|e| e == "tgz") {
            std::fs::remove_file(&path)
                .map_err(|e| format!("cannot remove {}: {e}", path.display()))?;
        }
    }
    Ok(())
}
