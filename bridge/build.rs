//! The page is part of the binary (docs/architecture.md §14e): it is embedded from `web/dist`
//! at compile time. Without a built page the build stops with one line saying how to build it
//! (`page_missing`: see `src/page.rs`), never with a binary that serves a 404.

use std::path::Path;

fn main() {
    println!("cargo::rerun-if-changed=../web/dist");
    println!("cargo::rustc-check-cfg=cfg(page_missing)");
    // Read when the script runs (not when it was compiled): one compiled script may serve
    // checkouts in other places that share a target directory.
    let manifest = std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default();
    let index = Path::new(&manifest).join("../web/dist/index.html");
    if !index.is_file() {
        println!("cargo::rustc-cfg=page_missing");
    }
}
