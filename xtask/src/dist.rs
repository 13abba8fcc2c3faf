//! `cargo xtask dist`: builds the npm package into `pkg/` (DESIGN §12).
//!
//! Layout: `pkg/node/` (wasm-bindgen `experimental-nodejs-module`: pure ESM for Node ≥ 20),
//! `pkg/web/` (`web`: ESM for browsers, `initSync`/`init` to load the wasm), and the package's
//! own `package.json` and `README.md` copied from `wasm/npm/`. Each `_bg.wasm` goes through
//! npm binaryen's `wasm-opt -Oz` (never Debian's: toolchain.md P4). Self-contained: the wasm
//! binding's author may reshape it freely as long as `dist()` keeps its signature.

use std::path::{Path, PathBuf};

use crate::proc::{self, Ctx};
use crate::setup::WASM_TARGET;

/// Cargo profile for shipped wasm (root Cargo.toml: z, LTO, one codegen unit, abort).
const PROFILE: &str = "wasm-release";

/// wasm-bindgen targets and their output directories under `pkg/`.
const TARGETS: &[(&str, &str)] = &[("experimental-nodejs-module", "node"), ("web", "web")];

/// Files copied verbatim from `wasm/npm/` into `pkg/` when present.
const NPM_FILES: &[&str] = &["package.json", "README.md"];

/// Size of one shipped wasm file.
pub struct WasmSize {
    pub path: PathBuf,
    pub raw: u64,
    pub gzip: u64,
}

/// Builds `pkg/` from scratch and returns the wasm sizes (also printed).
pub fn dist(ctx: &Ctx) -> Result<Vec<WasmSize>, String> {
    let manifest = ctx.root.join("wasm").join("Cargo.toml");
    let package = package_name(&manifest)?;
    proc::run(&mut ctx.cargo(&[
        "build",
        "-p",
        &package,
        "--target",
        WASM_TARGET,
        "--profile",
        PROFILE,
    ]))?;
    let stem = package.replace('-', "_");
    let input = ctx
        .target_dir()
        .join(WASM_TARGET)
        .join(PROFILE)
        .join(format!("{stem}.wasm"));
    if !input.is_file() {
        return Err(format!(
            "{} was not produced: is `crate-type` in {} `[\"cdylib\", \"rlib\"]`?",
            input.display(),
            ctx.rel(&manifest)
        ));
    }

    let pkg = ctx.root.join("pkg");
    if pkg.exists() {
        std::fs::remove_dir_all(&pkg).map_err(|e| format!("cannot clear pkg/: {e}"))?;
    }
    let wasm_opt = ctx.npm_bin("wasm-opt");
    if !wasm_opt.is_file() {
        return Err(format!(
            "{} is missing: run `cargo xtask setup` (installs npm binaryen)",
            ctx.rel(&wasm_opt)
        ));
    }
    let mut shipped = Vec::new();
    for (target, dir) in TARGETS {
        let out_dir = pkg.join(dir);
        proc::run(
            ctx.cmd("wasm-bindgen")
                .args(["--target", target, "--out-dir"])
                .arg(&out_dir)
                .arg(&input),
        )?;
        let wasm = out_dir.join(format!("{stem}_bg.wasm"));
        proc::run(
            ctx.cmd(&wasm_opt)
                .arg("-Oz")
                .arg(&wasm)
                .arg("-o")
                .arg(&wasm),
        )?;
        shipped.push(wasm);
    }

    for file in NPM_FILES {
        let from = ctx.root.join("wasm").join("npm").join(file);
        if from.is_file() {
            std::fs::copy(&from, pkg.join(file))
                .map_err(|e| format!("cannot copy {} into pkg/: {e}", ctx.rel(&from)))?;
        }
    }

    let sizes = measure(ctx, &shipped)?;
    eprintln!("dist: built pkg/ from {package}");
    for size in &sizes {
        eprintln!(
            "dist: {}: {} bytes raw, {} bytes gzip -9",
            ctx.rel(&size.path),
            size.raw,
            size.gzip
        );
    }
    Ok(sizes)
}

/// `name = "…"` of the `[package]` section of a Cargo.toml.
pub fn package_name(manifest: &Path) -> Result<String, String> {
    let text = std::fs::read_to_string(manifest)
        .map_err(|e| format!("cannot read {}: {e}", manifest.display()))?;
    package_name_in(&text).ok_or_else(|| format!("{}: [package] name: missing", manifest.display()))
}

fn package_name_in(manifest: &str) -> Option<String> {
    let mut in_package = false;
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            in_package = line == "[package]";
        } else if in_package {
            if let Some((key, value)) = line.split_once('=') {
                if key.trim() == "name" {
                    let value = value.trim().strip_prefix('"')?.strip_suffix('"')?;
                    return Some(value.to_string());
                }
            }
        }
    }
    None
}

/// Raw size from the file system; gzip -9 size from Node's zlib (Node is required anyway,
/// so no compression crate is needed).
fn measure(ctx: &Ctx, files: &[PathBuf]) -> Result<Vec<WasmSize>, String> {
    const GZIP_SIZES: &str = "const z = require('zlib'), f = require('fs');\
        for (const p of process.argv.slice(1)) \
        console.log(z.gzipSync(f.readFileSync(p), { level: 9 }).length);";
    let out = proc::capture(ctx.cmd("node").args(["-e", GZIP_SIZES]).args(files))?;
    let gzip: Vec<u64> = out.lines().filter_map(|l| l.trim().parse().ok()).collect();
    if gzip.len() != files.len() {
        return Err(format!(
            "measuring gzip sizes: expected {} numbers from node, got {out:?}",
            files.len()
        ));
    }
    files
        .iter()
        .zip(gzip)
        .map(|(path, gzip)| {
            let raw = std::fs::metadata(path)
                .map_err(|e| format!("cannot stat {}: {e}", path.display()))?
                .len();
            Ok(WasmSize {
                path: path.clone(),
                raw,
                gzip,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn package_name_comes_from_the_package_section() {
        let manifest = "[lib]\nname = \"not_this\"\n\n[package]\nversion = \"0.1.0\"\nname = \"agent-chatter-wasm\"\n";
        assert_eq!(
            package_name_in(manifest).as_deref(),
            Some("agent-chatter-wasm")
        );
        assert_eq!(package_name_in("[lib]\nname = \"x\"\n"), None);
    }

    #[test]
    fn gzip_sizes_are_measured_per_file() {
        let ctx = Ctx::new().expect("ctx");
        let files = [ctx.root.join("Cargo.toml"), ctx.root.join("Cargo.lock")];
        let sizes = measure(&ctx, &files).expect("node measures");
        assert_eq!(sizes.len(), 2);
        for size in &sizes {
            assert!(
                size.gzip > 0 && size.gzip < size.raw,
                "{}",
                size.path.display()
            );
        }
    }
}
