//! `cargo xtask setup`: installs or checks the pinned tools, idempotently
//! (docs/architecture.md §18).
//!
//! Each tool is one function returning what it did; a tool is installed only when missing or
//! at the wrong version, and only from the registries (rustup, crates.io, npm). Adding a tool
//! (Trunk, Chromium, …) is one more function in [`TOOLS`].

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Instant;

use crate::proc::{self, Ctx};
use crate::steps::format_duration;

/// The wasm target the core and the npm package build for.
pub const WASM_TARGET: &str = "wasm32-unknown-unknown";

/// Minimum Node major version (docs/architecture.md §12: the package works in Node ≥ 20).
const MIN_NODE_MAJOR: u32 = 20;

type Tool = (&'static str, fn(&Ctx) -> Result<String, String>);

/// The tools, in install order.
const TOOLS: &[Tool] = &[
    ("rustfmt + clippy", rust_components),
    ("wasm32 target", wasm_target),
    ("wasm-bindgen-cli", wasm_bindgen_cli),
    ("node + npm", node_and_npm),
    ("npm dev tools", npm_dev_tools),
    ("trunk", trunk),
    ("cargo-fuzz", cargo_fuzz),
    ("chromium", chromium),
];

/// Trunk, the web page's builder: exactly 0.21.14 and always `--locked` (newer releases need a
/// newer rustc, and an unlocked build fails to compile; docs/architecture.md §18 P3).
pub const TRUNK_VERSION: &str = "0.21.14";

/// The browser the e2e suite drives (Debian's package, docs/architecture.md §18 (d)).
pub const CHROMIUM: &str = "chromium";

/// Installs or checks every tool and prints one line per tool.
pub fn setup(ctx: &Ctx) -> Result<(), String> {
    for (name, tool) in TOOLS {
        let did = tool(ctx).map_err(|e| format!("setup of {name}: {e}"))?;
        eprintln!("setup: {name}: {did}");
    }
    Ok(())
}

fn rust_components(ctx: &Ctx) -> Result<String, String> {
    let Some(list) = proc::probe(ctx.cmd("rustup").args(["component", "list", "--installed"]))
    else {
        // No rustup: the toolchain came some other way; it must already have both tools.
        for (tool, sub) in [("rustfmt", "fmt"), ("clippy", "clippy")] {
            if proc::probe(&mut ctx.cargo(&[sub, "--version"])).is_none() {
                return Err(format!(
                    "`cargo {sub}` is missing and rustup is not on PATH: install {tool} for your toolchain"
                ));
            }
        }
        return Ok("present (no rustup)".to_string());
    };
    let missing: Vec<&str> = ["rustfmt", "clippy"]
        .into_iter()
        .filter(|c| {
            !list
                .lines()
                .any(|l| l.starts_with(&format!("{c}-")) || l == *c)
        })
        .collect();
    if missing.is_empty() {
        return Ok("present".to_string());
    }
    let start = Instant::now();
    proc::run(ctx.cmd("rustup").args(["component", "add"]).args(&missing))?;
    Ok(format!(
        "added {} in {}",
        missing.join(", "),
        format_duration(start.elapsed())
    ))
}

fn wasm_target(ctx: &Ctx) -> Result<String, String> {
    let installed = proc::probe(ctx.cmd("rustup").args(["target", "list", "--installed"]))
        .ok_or("`rustup target list --installed` failed: rustup is needed to add the wasm32-unknown-unknown target")?;
    if installed.lines().any(|l| l.trim() == WASM_TARGET) {
        return Ok(format!("{WASM_TARGET} present"));
    }
    let start = Instant::now();
    proc::run(ctx.cmd("rustup").args(["target", "add", WASM_TARGET]))?;
    Ok(format!(
        "added {WASM_TARGET} in {}",
        format_duration(start.elapsed())
    ))
}

/// wasm-bindgen-cli at exactly the `wasm-bindgen` version of Cargo.lock (falling back to the
/// `=x.y.z` pin in the root Cargo.toml while no crate uses it yet): the CLI refuses wasm built
/// against another version.
fn wasm_bindgen_cli(ctx: &Ctx) -> Result<String, String> {
    let version = required_wasm_bindgen(&ctx.root)?;
    ensure_cargo_tool(
        ctx,
        &CargoTool {
            krate: "wasm-bindgen-cli",
            version: &version,
            bins: &["wasm-bindgen", "wasm-bindgen-test-runner"],
            // Its published lock can name a dependency version a registry mirror lacks (seen:
            // webpki-roots 1.0.11); the unlocked build is verified to work
            // (docs/architecture.md §18).
            unlocked_fallback: true,
        },
    )
}

/// cargo-fuzz for `cargo xtask fuzz` (and the smoke in `test`), pinned.
fn cargo_fuzz(ctx: &Ctx) -> Result<String, String> {
    ensure_cargo_tool(
        ctx,
        &CargoTool {
            krate: "cargo-fuzz",
            version: "0.13.2",
            bins: &["cargo-fuzz"],
            unlocked_fallback: false,
        },
    )
}

fn trunk(ctx: &Ctx) -> Result<String, String> {
    ensure_cargo_tool(
        ctx,
        &CargoTool {
            krate: "trunk",
            version: TRUNK_VERSION,
            bins: &["trunk"],
            unlocked_fallback: false,
        },
    )
}

/// Debian's `chromium` (and `chromium-driver`) from apt, when `chromium --version` fails.
/// Needs root, as CI has; otherwise the error says what to run.
fn chromium(ctx: &Ctx) -> Result<String, String> {
    if let Some(version) = proc::probe(ctx.cmd(CHROMIUM).arg("--version")) {
        return Ok(format!("{} present", version.trim()));
    }
    let is_root = proc::probe(ctx.cmd("id").arg("-u")).is_some_and(|uid| uid.trim() == "0");
    if !is_root {
        return Err(
            "`chromium` is not installed and xtask is not running as root: run `sudo apt-get install -y chromium chromium-driver`, then retry".to_string(),
        );
    }
    let start = Instant::now();
    proc::run(
        ctx.cmd("apt-get")
            .env("DEBIAN_FRONTEND", "noninteractive")
            .args(["update", "-q"]),
    )?;
    proc::run(
        ctx.cmd("apt-get")
            .env("DEBIAN_FRONTEND", "noninteractive")
            .args(["install", "-y", "-q", "chromium", "chromium-driver"]),
    )?;
    let version = proc::probe(ctx.cmd(CHROMIUM).arg("--version"))
        .ok_or("apt-get installed chromium but `chromium --version` still fails")?;
    Ok(format!(
        "installed {} in {}",
        version.trim(),
        format_duration(start.elapsed())
    ))
}

/// A binary crate installed with `cargo install <krate> --version <version> [--locked]`.
struct CargoTool<'a> {
    krate: &'a str,
    version: &'a str,
    /// Binaries it provides; each must print `<bin> <version>` for `--version`.
    bins: &'a [&'a str],
    /// `--locked` is always tried first; when true and it fails (e.g. a registry mirror lacks
    /// a locked version), once more without it. Keep false where an unlocked build is known to
    /// break (Trunk 0.21.14, docs/architecture.md §18 P3).
    unlocked_fallback: bool,
}

/// The `cargo install` argument lists to try, in order.
fn install_attempts(krate: &str, version: &str, unlocked_fallback: bool) -> Vec<Vec<String>> {
    let base: Vec<String> = ["install", krate, "--version", version]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let mut locked = base.clone();
    locked.push("--locked".to_string());
    if unlocked_fallback {
        vec![locked, base]
    } else {
        vec![locked]
    }
}

fn ensure_cargo_tool(ctx: &Ctx, tool: &CargoTool) -> Result<String, String> {
    let found: Vec<(&str, Option<String>)> = tool
        .bins
        .iter()
        .map(|bin| {
            let out = proc::probe(ctx.cmd(bin).arg("--version"));
            (
                *bin,
                out.and_then(|o| tool_version(&o, bin).map(str::to_string)),
            )
        })
        .collect();
    if found
        .iter()
        .all(|(_, v)| v.as_deref() == Some(tool.version))
    {
        return Ok(format!("{} {} present", tool.krate, tool.version));
    }
    let was: Vec<String> = found
        .iter()
        .map(|(bin, v)| format!("{bin} {}", v.as_deref().unwrap_or("missing")))
        .collect();
    eprintln!(
        "setup: installing {} {} (found: {}); this compiles from crates.io and takes a few minutes",
        tool.krate,
        tool.version,
        was.join(", ")
    );
    let start = Instant::now();
    let mut last_error = String::new();
    let mut installed = false;
    for args in install_attempts(tool.krate, tool.version, tool.unlocked_fallback) {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        match proc::run(&mut ctx.cargo(&args)) {
            Ok(()) => {
                installed = true;
                break;
            }
            Err(e) => {
                eprintln!("setup: {e}");
                last_error = e;
            }
        }
    }
    if !installed {
        return Err(last_error);
    }
    for bin in tool.bins {
        let out = proc::probe(ctx.cmd(bin).arg("--version"));
        let got = out.as_deref().and_then(|o| tool_version(o, bin));
        if got != Some(tool.version) {
            return Err(format!(
                "after installing {} {}, `{bin} --version` reports {}: another `{bin}` comes first on PATH; remove it or put {} first",
                tool.krate,
                tool.version,
                got.unwrap_or("nothing"),
                proc::cargo_bin_dir().display()
            ));
        }
    }
    Ok(format!(
        "installed {} {} in {} (was: {})",
        tool.krate,
        tool.version,
        format_duration(start.elapsed()),
        was.join(", ")
    ))
}

fn node_and_npm(ctx: &Ctx) -> Result<String, String> {
    let node = proc::probe(ctx.cmd("node").arg("--version"))
        .ok_or("`node` not found on PATH: install Node.js 20 or newer (with npm)")?;
    let major = node_major(&node)
        .ok_or_else(|| format!("cannot read the Node version from `{}`", node.trim()))?;
    if major < MIN_NODE_MAJOR {
        return Err(format!(
            "Node {} is too old: install Node.js {MIN_NODE_MAJOR} or newer",
            node.trim()
        ));
    }
    let npm = proc::probe(ctx.cmd("npm").arg("--version"))
        .ok_or("`npm` not found on PATH: install npm (it ships with Node.js)")?;
    Ok(format!("node {}, npm {}", node.trim(), npm.trim()))
}

/// `npm ci` from the committed package-lock.json, only when an installed devDependency differs
/// from the lock; then checks that wasm-opt is npm binaryen's (never Debian's, toolchain P4).
fn npm_dev_tools(ctx: &Ctx) -> Result<String, String> {
    let package = read_json(&ctx.root.join("package.json"))?;
    let lock = read_json(&ctx.root.join("package-lock.json"))?;
    let locked = locked_dev_dependencies(&package, &lock)?;
    let stale: Vec<String> = locked
        .iter()
        .filter(|(name, version)| installed_npm_version(&ctx.root, name).as_ref() != Some(version))
        .map(|(name, version)| format!("{name}@{version}"))
        .collect();
    let did = if stale.is_empty() {
        format!("{} up to date", list_packages(&locked))
    } else {
        let start = Instant::now();
        proc::run(ctx.cmd("npm").args(["ci", "--no-audit", "--no-fund"]))?;
        format!(
            "npm ci installed {} in {} (stale: {})",
            list_packages(&locked),
            format_duration(start.elapsed()),
            stale.join(", ")
        )
    };
    if let Some(binaryen) = locked.get("binaryen") {
        check_wasm_opt(ctx, binaryen)?;
    }
    if let Some(typescript) = locked.get("typescript") {
        check_tsc(ctx, typescript)?;
    }
    Ok(did)
}

/// tsc 7 is a native binary from a per-platform optional package; check that it runs. By
/// its package's path: `typescript5` (the older line the consumer check also runs) installs a
/// `tsc` in node_modules/.bin too.
fn check_tsc(ctx: &Ctx, typescript: &str) -> Result<(), String> {
    let tsc = ctx.root.join("node_modules/typescript/bin/tsc");
    let out = proc::probe(ctx.cmd("node").arg(&tsc).arg("--version")).unwrap_or_default();
    if tsc_version(&out) == Some(typescript) {
        Ok(())
    } else {
        Err(format!(
            "{} does not report version {typescript} (got {:?}): delete node_modules and run `cargo xtask setup`",
            ctx.rel(&tsc),
            out.trim()
        ))
    }
}

fn check_wasm_opt(ctx: &Ctx, binaryen: &str) -> Result<(), String> {
    let wasm_opt = ctx.npm_bin("wasm-opt");
    let out = proc::probe(ctx.cmd(&wasm_opt).arg("--version")).ok_or_else(|| {
        format!(
            "{} does not run: delete node_modules and run `cargo xtask setup`",
            ctx.rel(&wasm_opt)
        )
    })?;
    let want = binaryen.split('.').next().unwrap_or(binaryen);
    match wasm_opt_version(&out) {
        Some(got) if got == want => Ok(()),
        got => Err(format!(
            "{} reports version {} but package-lock.json pins binaryen {binaryen}: delete node_modules and run `cargo xtask setup`",
            ctx.rel(&wasm_opt),
            got.unwrap_or("unknown")
        )),
    }
}

fn list_packages(locked: &BTreeMap<String, String>) -> String {
    locked
        .iter()
        .map(|(n, v)| format!("{n}@{v}"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn installed_npm_version(root: &Path, name: &str) -> Option<String> {
    let manifest = root.join("node_modules").join(name).join("package.json");
    let json = read_json(&manifest).ok()?;
    json.get("version")?.as_str().map(str::to_string)
}

fn read_json(path: &Path) -> Result<serde_json::Value, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{}: invalid JSON: {e}", path.display()))
}

/// The version package-lock.json pins for each devDependency of package.json.
fn locked_dev_dependencies(
    package: &serde_json::Value,
    lock: &serde_json::Value,
) -> Result<BTreeMap<String, String>, String> {
    let mut locked = BTreeMap::new();
    let Some(deps) = package.get("devDependencies").and_then(|d| d.as_object()) else {
        return Ok(locked);
    };
    for name in deps.keys() {
        let version = lock
            .get("packages")
            .and_then(|p| p.get(format!("node_modules/{name}")))
            .and_then(|p| p.get("version"))
            .and_then(|v| v.as_str())
            .ok_or_else(|| {
                format!(
                    "package-lock.json: packages[\"node_modules/{name}\"].version: missing; run `npm install` and commit the lock"
                )
            })?;
        locked.insert(name.clone(), version.to_string());
    }
    Ok(locked)
}

/// The version in `<bin> <version> …` (first line), as wasm-bindgen, wasm-bindgen-test-runner
/// and trunk print for `--version`.
pub fn tool_version<'a>(output: &'a str, bin: &str) -> Option<&'a str> {
    let mut words = output.lines().next()?.split_whitespace();
    if words.next()? != bin {
        return None;
    }
    words.next()
}

/// `132` from `wasm-opt version 132 (version_132)`.
fn wasm_opt_version(output: &str) -> Option<&str> {
    let rest = output.trim().strip_prefix("wasm-opt version ")?;
    rest.split_whitespace().next()
}

/// `7.0.2` from `Version 7.0.2`.
fn tsc_version(output: &str) -> Option<&str> {
    output
        .trim()
        .strip_prefix("Version ")?
        .split_whitespace()
        .next()
}

/// `20` from `v20.20.2`.
fn node_major(output: &str) -> Option<u32> {
    output
        .trim()
        .strip_prefix('v')?
        .split('.')
        .next()?
        .parse()
        .ok()
}

/// The wasm-bindgen version everything must use: Cargo.lock's, else the root Cargo.toml's
/// `wasm-bindgen = "=x.y.z"` pin.
pub fn required_wasm_bindgen(root: &Path) -> Result<String, String> {
    let lock = std::fs::read_to_string(root.join("Cargo.lock"))
        .map_err(|e| format!("cannot read Cargo.lock: {e}"))?;
    let versions = cargo_lock_versions(&lock, "wasm-bindgen");
    match versions.as_slice() {
        [one] => return Ok(one.clone()),
        [] => {}
        many => {
            return Err(format!(
                "Cargo.lock has several wasm-bindgen versions ({}): keep one, pinned `=x.y.z` in the root Cargo.toml",
                many.join(", ")
            ))
        }
    }
    let manifest = std::fs::read_to_string(root.join("Cargo.toml"))
        .map_err(|e| format!("cannot read Cargo.toml: {e}"))?;
    workspace_pin(&manifest, "wasm-bindgen").ok_or_else(|| {
        "no wasm-bindgen in Cargo.lock and no `wasm-bindgen = \"=x.y.z\"` in [workspace.dependencies] of Cargo.toml".to_string()
    })
}

/// Versions of package `name` in a Cargo.lock (one per `[[package]]` entry).
fn cargo_lock_versions(lock: &str, name: &str) -> Vec<String> {
    let mut versions = Vec::new();
    let mut current_name: Option<&str> = None;
    for line in lock.lines().map(str::trim) {
        if line == "[[package]]" {
            current_name = None;
        } else if let Some(value) = toml_string_value(line, "name") {
            current_name = Some(value);
        } else if let Some(value) = toml_string_value(line, "version") {
            if current_name == Some(name) {
                versions.push(value.to_string());
            }
        }
    }
    versions
}

/// The exact version (`=x.y.z`) of `name` in `[workspace.dependencies]`, plain string or
/// inline table form.
fn workspace_pin(manifest: &str, name: &str) -> Option<String> {
    let mut in_section = false;
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            in_section = line == "[workspace.dependencies]";
            continue;
        }
        if !in_section {
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        if key.trim() != name {
            continue;
        }
        let value = value.trim();
        let spec = if value.starts_with('{') {
            let inner = value.trim_start_matches('{').trim_end_matches('}');
            inner
                .split(',')
                .find_map(|field| toml_string_value(field.trim(), "version"))?
        } else {
            value.strip_prefix('"')?.strip_suffix('"')?
        };
        return spec.strip_prefix('=').map(|v| v.trim().to_string());
    }
    None
}

/// `value` from a `key = "value"` line.
fn toml_string_value<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    let (k, v) = line.split_once('=')?;
    if k.trim() != key {
        return None;
    }
    v.trim().strip_prefix('"')?.strip_suffix('"')
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn tool_version_reads_the_word_after_the_binary_name() {
        let cases = [
            ("wasm-bindgen 0.2.130\n", "wasm-bindgen", Some("0.2.130")),
            (
                "wasm-bindgen 0.2.130 (a1b2c3d 2026-01-01)\n",
                "wasm-bindgen",
                Some("0.2.130"),
            ),
            (
                "wasm-bindgen-test-runner 0.2.130\n",
                "wasm-bindgen-test-runner",
                Some("0.2.130"),
            ),
            ("trunk 0.21.14\n", "trunk", Some("0.21.14")),
            ("wasm-bindgen-test-runner 0.2.130\n", "wasm-bindgen", None),
            ("error: unexpected argument\n", "wasm-bindgen", None),
            ("wasm-bindgen\n", "wasm-bindgen", None),
            ("", "wasm-bindgen", None),
        ];
        for (output, bin, want) in cases {
            assert_eq!(tool_version(output, bin), want, "{output:?}");
        }
    }

    #[test]
    fn install_tries_locked_first_and_unlocked_only_when_allowed() {
        let preferred = install_attempts("wasm-bindgen-cli", "0.2.130", true);
        assert_eq!(
            preferred,
            [
                vec![
                    "install",
                    "wasm-bindgen-cli",
                    "--version",
                    "0.2.130",
                    "--locked"
                ],
                vec!["install", "wasm-bindgen-cli", "--version", "0.2.130"],
            ]
        );
        let required = install_attempts("trunk", "0.21.14", false);
        assert_eq!(
            required,
            [vec!["install", "trunk", "--version", "0.21.14", "--locked"]]
        );
    }

    #[test]
    fn wasm_opt_version_is_binaryens_release_number() {
        assert_eq!(
            wasm_opt_version("wasm-opt version 132 (version_132)\n"),
            Some("132")
        );
        assert_eq!(wasm_opt_version("wasm-opt version 108\n"), Some("108"));
        assert_eq!(wasm_opt_version("binaryen 132"), None);
    }

    #[test]
    fn tsc_version_follows_the_word_version() {
        assert_eq!(tsc_version("Version 7.0.2\n"), Some("7.0.2"));
        assert_eq!(tsc_version(""), None);
        assert_eq!(tsc_version("tsc 7.0.2"), None);
    }

    #[test]
    fn node_major_parses_v_prefixed_versions() {
        assert_eq!(node_major("v20.20.2\n"), Some(20));
        assert_eq!(node_major("v18.1.0"), Some(18));
        assert_eq!(node_major("20.1.0"), None);
        assert_eq!(node_major("vx"), None);
    }

    const LOCK: &str = r#"
version = 4

[[package]]
name = "wasm-bindgen"
version = "0.2.130"
source = "registry+https://github.com/rust-lang/crates.io-index"
dependencies = [
 "cfg-if",
]

[[package]]
name = "wasm-bindgen-backend"
version = "0.2.999"
"#;

    #[test]
    fn cargo_lock_versions_match_the_exact_package_name() {
        assert_eq!(cargo_lock_versions(LOCK, "wasm-bindgen"), ["0.2.130"]);
        assert_eq!(
            cargo_lock_versions(LOCK, "wasm-bindgen-backend"),
            ["0.2.999"]
        );
        assert!(cargo_lock_versions(LOCK, "serde").is_empty());
    }

    #[test]
    fn workspace_pin_reads_exact_versions_only_from_workspace_dependencies() {
        let plain = "[package]\nwasm-bindgen = \"=9.9.9\"\n[workspace.dependencies]\nserde = \"1\"\nwasm-bindgen = \"=0.2.130\"\n";
        assert_eq!(
            workspace_pin(plain, "wasm-bindgen").as_deref(),
            Some("0.2.130")
        );
        let table = "[workspace.dependencies]\nwasm-bindgen = { version = \"=0.2.130\", default-features = false }\n";
        assert_eq!(
            workspace_pin(table, "wasm-bindgen").as_deref(),
            Some("0.2.130")
        );
        let caret = "[workspace.dependencies]\nwasm-bindgen = \"0.2\"\n";
        assert_eq!(workspace_pin(caret, "wasm-bindgen"), None);
        let elsewhere = "[dependencies]\nwasm-bindgen = \"=0.2.130\"\n";
        assert_eq!(workspace_pin(elsewhere, "wasm-bindgen"), None);
    }

    #[test]
    fn the_repository_pins_one_wasm_bindgen_version() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let version = required_wasm_bindgen(&root).expect("a pinned version");
        assert_eq!(version.split('.').count(), 3, "{version}");
    }

    #[test]
    fn locked_dev_dependencies_come_from_the_lock_not_the_ranges() {
        let package = json!({"devDependencies": {"binaryen": "^132.0.0", "typescript": "7.0.2"}});
        let lock = json!({"packages": {
            "": {},
            "node_modules/binaryen": {"version": "132.0.0"},
            "node_modules/typescript": {"version": "7.0.2"}
        }});
        let locked = locked_dev_dependencies(&package, &lock).expect("locked");
        assert_eq!(locked.get("binaryen").map(String::as_str), Some("132.0.0"));
        assert_eq!(locked.get("typescript").map(String::as_str), Some("7.0.2"));
    }

    #[test]
    fn a_dev_dependency_missing_from_the_lock_names_the_fix() {
        let package = json!({"devDependencies": {"playwright-core": "1.65.1"}});
        let lock = json!({"packages": {}});
        let err = locked_dev_dependencies(&package, &lock).unwrap_err();
        assert!(err.contains("node_modules/playwright-core"), "{err}");
        assert!(err.contains("npm install"), "{err}");
    }

    #[test]
    fn committed_npm_tools_are_pinned_exactly() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let package = read_json(&root.join("package.json")).expect("package.json");
        let deps = package["devDependencies"]
            .as_object()
            .expect("devDependencies");
        for (name, range) in deps {
            let range = range.as_str().unwrap_or("");
            // An alias (`npm:typescript@5.9.3`, a second line of one package) pins its version.
            let range = range
                .strip_prefix("npm:")
                .and_then(|aliased| aliased.rsplit_once('@'))
                .map_or(range, |(_, version)| version);
            assert!(
                range.chars().next().is_some_and(|c| c.is_ascii_digit()),
                "{name}: `{range}` is not an exact version"
            );
        }
        assert_eq!(deps["binaryen"], "132.0.0");
    }
}
