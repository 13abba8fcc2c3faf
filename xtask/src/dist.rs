//! `cargo xtask dist`: builds the npm package into `pkg/` (docs/architecture.md §12).
//!
//! Layout: `pkg/node/` (wasm-bindgen `experimental-nodejs-module`: pure ESM for Node ≥ 20),
//! `pkg/web/` (`web`: ESM for browsers, `initSync`/`init` to load the wasm), `pkg/embedded/`
//! (for bundles made for Node and Bun: the web glue with the wasm bytes, brotli-compressed, in a
//! JS module, instantiated on import, so a bundle needs no file beside it), `pkg/workerd/` (for
//! Cloudflare Workers: the web glue instantiated from the `.wasm` imported as a module), each with an `index.js`/`index.d.ts` entry (`wasm/npm/entry/`: the build's exports plus `ContextManager`,
//! whose JS half `wasm/npm/context-manager.js` is shared at `pkg/context-manager.js`), and the
//! package's own `package.json`, `README.md` and `LICENSE`. The two builds share one
//! `pkg/agent_chatter_wasm_bg.wasm` (the binaries are identical). Each `_bg.wasm` goes through
//! npm binaryen's `wasm-opt -Oz` (never Debian's: docs/architecture.md §18 P4). Self-contained: the
//! wasm binding's author may reshape it freely as long as `dist()` keeps its signature.

use std::path::{Path, PathBuf};

use crate::proc::{self, Ctx};
use crate::setup::WASM_TARGET;

/// Cargo profile for shipped wasm (root Cargo.toml: z, LTO, one codegen unit, abort).
const PROFILE: &str = "wasm-release";

/// wasm-bindgen targets and their output directories under `pkg/`.
const TARGETS: &[(&str, &str)] = &[("experimental-nodejs-module", "node"), ("web", "web")];

/// Files copied verbatim from `wasm/npm/` into `pkg/` when present.
const NPM_FILES: &[&str] = &[
    "package.json",
    "README.md",
    "context-manager.js",
    "markers.js",
    "guard.js",
    "wasm-module.d.ts",
];

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
        type_raw_exports(&out_dir)?;
        if *dir == "web" {
            let glue = out_dir.join(format!("{stem}.d.ts"));
            let text = std::fs::read_to_string(&glue)
                .map_err(|e| format!("cannot read {}: {e}", glue.display()))?;
            let typed = without_dom_types(&text).map_err(|e| format!("{}: {e}", glue.display()))?;
            std::fs::write(&glue, typed)
                .map_err(|e| format!("cannot write {}: {e}", glue.display()))?;
        }
        write_entry(ctx, &out_dir, dir)?;
    }

    let shipped = share_wasm(&pkg, &stem, shipped)?;
    write_embedded(ctx, &pkg, &stem)?;
    write_workerd(ctx, &pkg, &stem)?;

    for file in NPM_FILES {
        let from = ctx.root.join("wasm").join("npm").join(file);
        if from.is_file() {
            std::fs::copy(&from, pkg.join(file))
                .map_err(|e| format!("cannot copy {} into pkg/: {e}", ctx.rel(&from)))?;
        }
    }

    let license = ctx.root.join("LICENSE");
    std::fs::copy(&license, pkg.join("LICENSE"))
        .map_err(|e| format!("cannot copy {} into pkg/: {e}", ctx.rel(&license)))?;

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

/// Both builds carry the same wasm binary (the bindings differ only in their JS glue): ship
/// one copy at `pkg/`, with each glue file pointed at it. If the binaries ever differ, each
/// build keeps its own. Fails when a glue file no longer loads the wasm the way it is patched.
fn share_wasm(pkg: &Path, stem: &str, shipped: Vec<PathBuf>) -> Result<Vec<PathBuf>, String> {
    let read = |p: &Path| std::fs::read(p).map_err(|e| format!("cannot read {}: {e}", p.display()));
    let first = read(&shipped[0])?;
    for other in &shipped[1..] {
        if read(other)? != first {
            return Ok(shipped);
        }
    }
    let file = format!("{stem}_bg.wasm");
    let shared = pkg.join(&file);
    std::fs::write(&shared, &first)
        .map_err(|e| format!("cannot write {}: {e}", shared.display()))?;
    let local = format!("new URL('{file}', import.meta.url)");
    let up = format!("new URL('../{file}', import.meta.url)");
    for (_, dir) in TARGETS {
        let glue = pkg.join(dir).join(format!("{stem}.js"));
        let text = String::from_utf8(read(&glue)?)
            .map_err(|e| format!("{}: not UTF-8: {e}", glue.display()))?;
        if !text.contains(&local) {
            return Err(format!(
                "{}: no `{local}` to point at the shared wasm (did wasm-bindgen change how it loads the binary?)",
                glue.display()
            ));
        }
        std::fs::write(&glue, text.replace(&local, &up))
            .map_err(|e| format!("cannot write {}: {e}", glue.display()))?;
        let own = pkg.join(dir).join(&file);
        std::fs::remove_file(&own).map_err(|e| format!("cannot remove {}: {e}", own.display()))?;
    }
    Ok(vec![shared])
}

/// The build for bundles (`pkg/embedded/`): a copy of the web glue that cannot fetch (its one
/// `new URL(…, import.meta.url)` becomes a throw, so no bundler copies the binary or warns about
/// `import.meta` in CommonJS output), `wasm.js` with the binary in base64, and its entry, which
/// instantiates it on import. Its declarations are the Node build's.
fn write_embedded(ctx: &Ctx, pkg: &Path, stem: &str) -> Result<(), String> {
    let read = |p: &Path| std::fs::read(p).map_err(|e| format!("cannot read {}: {e}", p.display()));
    let write = |p: &Path, text: &[u8]| {
        std::fs::write(p, text).map_err(|e| format!("cannot write {}: {e}", p.display()))
    };
    let file = format!("{stem}_bg.wasm");
    let web = pkg.join("web");
    let shared = pkg.join(&file);
    let own = web.join(&file);
    let binary = read(if shared.is_file() { &shared } else { &own })?;
    let glue = web.join(format!("{stem}.js"));
    let text = String::from_utf8(read(&glue)?)
        .map_err(|e| format!("{}: not UTF-8: {e}", glue.display()))?;
    let fetching = [format!("../{file}"), file.clone()]
        .iter()
        .map(|at| format!("module_or_path = new URL('{at}', import.meta.url);"))
        .find(|line| text.contains(line.as_str()))
        .ok_or_else(|| {
            format!(
                "{}: no `module_or_path = new URL('…{file}', import.meta.url);` to remove from the embedded build (did wasm-bindgen change how it loads the binary?)",
                glue.display()
            )
        })?;
    let embedded_glue = text.replace(
        &fetching,
        "throw new Error('agent-chatter-wasm/embedded carries its wasm and is ready on import');",
    );
    if embedded_glue.contains("import.meta") {
        return Err(format!(
            "{}: `import.meta` is used beyond the line the embedded build removes",
            glue.display()
        ));
    }
    let dir = pkg.join("embedded");
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    write(&dir.join(format!("{stem}.js")), embedded_glue.as_bytes())?;
    let compressed = brotli_base64(ctx, if shared.is_file() { &shared } else { &own })?;
    let module = format!(
        "// The package's wasm binary ({} bytes), brotli-compressed, base64: written by `cargo xtask dist`.\n\
         // Compressed, so the tarball's second copy of the binary costs ~0.8 of the file's gzip.\n\
         import {{ Buffer }} from 'node:buffer';\n\
         import {{ brotliDecompressSync }} from 'node:zlib';\n\
         const BROTLI_BASE64 = '{compressed}';\n\
         /** The binary's bytes (decompressed on each call). */\n\
         export function bytes() {{\n\
         \x20 return brotliDecompressSync(Buffer.from(BROTLI_BASE64, 'base64'));\n\
         }}\n",
        binary.len(),
    );
    write(&dir.join("wasm.js"), module.as_bytes())?;
    write_entry(ctx, &dir, "embedded")
}

/// The build for Cloudflare's workerd (`pkg/workerd/`, the `workerd` condition): its entry
/// imports the shared `.wasm` as a module and instantiates the web glue with it on import, as
/// workerd compiles wasm only from modules (never from bytes, never by URL). Needs the shared
/// binary at `pkg/`, which its entry names.
fn write_workerd(ctx: &Ctx, pkg: &Path, stem: &str) -> Result<(), String> {
    let shared = pkg.join(format!("{stem}_bg.wasm"));
    if !shared.is_file() {
        return Err(format!(
            "{}: missing, and the workerd entry imports it (do the node and web builds' binaries differ?)",
            shared.display()
        ));
    }
    let dir = pkg.join("workerd");
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    write_entry(ctx, &dir, "workerd")
}

/// `file` compressed by Node's brotli (quality 11, a window as large as the file), in base64:
/// Node is required anyway, so no compression crate is needed.
fn brotli_base64(ctx: &Ctx, file: &Path) -> Result<String, String> {
    const COMPRESS: &str =
        "const z = require('zlib'), b = require('fs').readFileSync(process.argv[1]);\
        const p = z.constants;\
        process.stdout.write(z.brotliCompressSync(b, { params: { [p.BROTLI_PARAM_QUALITY]: 11, \
        [p.BROTLI_PARAM_LGWIN]: 24, [p.BROTLI_PARAM_SIZE_HINT]: b.length } }).toString('base64'));";
    let out = proc::capture(ctx.cmd("node").args(["-e", COMPRESS]).arg(file))?;
    let out = out.trim();
    if out.is_empty()
        || !out
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"+/=".contains(&b))
    {
        return Err(format!(
            "compressing {}: node printed no base64",
            file.display()
        ));
    }
    Ok(out.to_string())
}

/// `index.js` and `index.d.ts` of one build: its entry from `wasm/npm/entry/`, the
/// declarations followed by the shared `ContextManager` class declaration (the embedded and
/// workerd builds re-export the Node build's declarations instead).
fn write_entry(ctx: &Ctx, out_dir: &Path, build: &str) -> Result<(), String> {
    let npm = ctx.root.join("wasm").join("npm");
    let read = |path: PathBuf| {
        std::fs::read_to_string(&path).map_err(|e| format!("cannot read {}: {e}", ctx.rel(&path)))
    };
    let js = read(npm.join("entry").join(format!("{build}.js")))?;
    let mut dts = read(npm.join("entry").join(format!("{build}.d.ts")))?;
    if build == "node" || build == "web" {
        dts += &read(npm.join("context-manager.d.ts"))?;
    }
    for (name, text) in [("index.js", js), ("index.d.ts", dts)] {
        let path = out_dir.join(name);
        std::fs::write(&path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    Ok(())
}

/// wasm-bindgen declares the raw wasm exports (the `InitOutput` interface and the
/// `*_bg.wasm.d.ts` file) with `any` for externref slots. Nobody calls them directly, but the
/// package promises no `any` in its declarations (docs/architecture.md §12), so they become
/// `unknown`.
fn type_raw_exports(out_dir: &Path) -> Result<(), String> {
    let entries = std::fs::read_dir(out_dir)
        .map_err(|e| format!("cannot list {}: {e}", out_dir.display()))?;
    for entry in entries {
        let path = entry
            .map_err(|e| format!("cannot list {}: {e}", out_dir.display()))?
            .path();
        if !path.to_string_lossy().ends_with(".d.ts") {
            continue;
        }
        let text = std::fs::read_to_string(&path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        let typed = raw_exports_without_any(&text);
        if typed != text {
            std::fs::write(&path, typed)
                .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        }
    }
    Ok(())
}

/// The web build's declarations name DOM globals (`RequestInfo`, `URL`, `Response`,
/// `BufferSource`, `WebAssembly.*`) in its init inputs and raw exports, so a project without
/// the DOM lib (`lib: ["es2022"]`, a Node or worker project) failed to compile them. Each
/// becomes the global's type when the project's libs declare it (the DOM lib, @types/node)
/// and `never` otherwise; `BufferSource` is spelled out (`ArrayBuffer | ArrayBufferView`,
/// in every lib). Fails when a line it rewrites is not there.
fn without_dom_types(dts: &str) -> Result<String, String> {
    const HELPERS: &str = "\n\
        /** A global's instance type when the project's libs declare it (the DOM lib, @types/node), else `never`. */\n\
        type GlobalInstance<K extends string> = typeof globalThis extends { [P in K]: { prototype: infer T } } ? T : never;\n\
        /** A `WebAssembly.*` instance type when the project's libs declare it, else `never`. */\n\
        type WasmInstance<K extends string> = typeof globalThis extends { WebAssembly: { [P in K]: { prototype: infer T } } } ? T : never;\n";
    let replacements = [
        (
            "export type InitInput = RequestInfo | URL | Response | BufferSource | WebAssembly.Module;",
            "export type InitInput = string | GlobalInstance<'Request'> | GlobalInstance<'URL'> | GlobalInstance<'Response'> | ArrayBuffer | ArrayBufferView | WasmInstance<'Module'>;",
        ),
        (
            "export type SyncInitInput = BufferSource | WebAssembly.Module;",
            "export type SyncInitInput = ArrayBuffer | ArrayBufferView | WasmInstance<'Module'>;",
        ),
        ("readonly memory: WebAssembly.Memory;", "readonly memory: WasmInstance<'Memory'>;"),
        (
            "readonly __wbindgen_externrefs: WebAssembly.Table;",
            "readonly __wbindgen_externrefs: WasmInstance<'Table'>;",
        ),
    ];
    let mut out = dts.to_string();
    for (from, to) in replacements {
        if !out.contains(from) {
            return Err(format!(
                "no `{from}` to free of the DOM lib (did wasm-bindgen change it?)"
            ));
        }
        out = out.replace(from, to);
    }
    for line in out.lines() {
        let code = line.trim_start();
        if !code.starts_with('*') && !code.starts_with("/**") && code.contains("WebAssembly.") {
            return Err(format!("`{}` still needs the DOM lib", code));
        }
    }
    out.push_str(HELPERS);
    Ok(out)
}

/// Replaces the word `any` by `unknown` on raw-export lines (`readonly x: (…) => …;` inside
/// `InitOutput`, `export const x: (…) => …;` in `*_bg.wasm.d.ts`); other lines are kept.
fn raw_exports_without_any(dts: &str) -> String {
    let mut out = String::with_capacity(dts.len());
    for line in dts.split_inclusive('\n') {
        let trimmed = line.trim_start();
        let raw_export = (trimmed.starts_with("readonly ") || trimmed.starts_with("export const "))
            && trimmed.contains("=>");
        if raw_export {
            out.push_str(&replace_word(line, "any", "unknown"));
        } else {
            out.push_str(line);
        }
    }
    out
}

/// `text` with every whole-word `word` replaced by `with`.
fn replace_word(text: &str, word: &str, with: &str) -> String {
    let is_ident = |c: char| c.is_alphanumeric() || c == '_' || c == '$';
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(word) {
        let before = rest[..at].chars().next_back();
        let after = rest[at + word.len()..].chars().next();
        out.push_str(&rest[..at]);
        if before.is_some_and(is_ident) || after.is_some_and(is_ident) {
            out.push_str(word);
        } else {
            out.push_str(with);
        }
        rest = &rest[at + word.len()..];
    }
    out.push_str(rest);
    out
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
    fn raw_export_signatures_lose_any_and_nothing_else_changes() {
        let dts = "export function company(anyway: string): Many;\n\
                   export interface InitOutput {\n\
                   \x20 readonly memory: WebAssembly.Memory;\n\
                   \x20 readonly f: (a: number, b: any) => any;\n\
                   }\n\
                   export const g: (a: any) => [number, number];\n";
        let typed = raw_exports_without_any(dts);
        assert!(typed.contains("readonly f: (a: number, b: unknown) => unknown;"));
        assert!(typed.contains("export const g: (a: unknown) => [number, number];"));
        assert!(typed.starts_with("export function company(anyway: string): Many;\n"));
        assert!(!typed.contains(" any"));
    }

    #[test]
    fn web_init_types_need_no_dom_lib() {
        let dts = "/**\n * a precompiled `WebAssembly.Module`.\n */\n\
                   export type InitInput = RequestInfo | URL | Response | BufferSource | WebAssembly.Module;\n\
                   export interface InitOutput {\n\
                   \x20   readonly memory: WebAssembly.Memory;\n\
                   \x20   readonly __wbindgen_externrefs: WebAssembly.Table;\n\
                   }\n\
                   export type SyncInitInput = BufferSource | WebAssembly.Module;\n";
        let typed = without_dom_types(dts).expect("rewritten");
        for dom in [
            "RequestInfo",
            "BufferSource",
            "WebAssembly.Memory",
            "WebAssembly.Table",
        ] {
            assert!(!typed.contains(dom), "{dom} left in {typed}");
        }
        assert!(typed.contains("a precompiled `WebAssembly.Module`."));
        assert!(typed.contains("type WasmInstance<K extends string>"));
        let err = without_dom_types("export type InitInput = Other;\n").unwrap_err();
        assert!(err.contains("InitInput"), "{err}");
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
