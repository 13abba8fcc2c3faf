//! The page is part of the binary (docs/architecture.md §14e): it is embedded from `web/dist`
//! at compile time. Without a built page the build stops with one line saying how to build it
//! (`page_missing`: see `src/page.rs`), never with a binary that serves a 404.
//!
//! Each of the page's files is also compressed here, once (brotli at quality 11 and gzip at
//! level 9, too slow to do per request or at every start), into `OUT_DIR/precompressed/`, and
//! `OUT_DIR/precompressed.rs` lists them for `src/page.rs` to embed and serve by the
//! browser's `Accept-Encoding`.

use std::io::Write;
use std::path::{Path, PathBuf};

fn main() {
    println!("cargo::rerun-if-changed=../web/dist");
    println!("cargo::rustc-check-cfg=cfg(page_missing)");
    // Read when the script runs (not when it was compiled): one compiled script may serve
    // checkouts in other places that share a target directory.
    let manifest = std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default();
    let dist = Path::new(&manifest).join("../web/dist");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").unwrap_or_default());
    let listing = if dist.join("index.html").is_file() {
        compress_page(&dist, &out.join("precompressed"))
    } else {
        println!("cargo::rustc-cfg=page_missing");
        Vec::new()
    };
    let mut table = String::from(
        "/// The page's files compressed at build time: (path, brotli, gzip).\n\
         pub static PRECOMPRESSED: &[(&str, &[u8], &[u8])] = &[\n",
    );
    for (path, br, gz) in listing {
        table.push_str(&format!(
            "    ({path:?}, include_bytes!({br:?}), include_bytes!({gz:?})),\n",
            br = br.display().to_string(),
            gz = gz.display().to_string(),
        ));
    }
    table.push_str("];\n");
    if let Err(e) = std::fs::write(out.join("precompressed.rs"), table) {
        panic!("cannot write the precompressed page's table in OUT_DIR: {e}");
    }
}

/// Each file below `dist` compressed into `into` (same relative path, `.br` and `.gz` added):
/// its path in the page and the two compressed files. A file compression does not shrink is
/// left out (it is served as it is).
fn compress_page(dist: &Path, into: &Path) -> Vec<(String, PathBuf, PathBuf)> {
    let mut listing = Vec::new();
    for file in files_below(dist) {
        let Ok(relative) = file.strip_prefix(dist) else {
            continue;
        };
        let path = relative
            .components()
            .map(|c| c.as_os_str().to_string_lossy())
            .collect::<Vec<_>>()
            .join("/");
        let data = std::fs::read(&file)
            .unwrap_or_else(|e| panic!("cannot read the page's {}: {e}", file.display()));
        let (br, gz) = (brotli(&data), gzip(&data));
        if br.len() >= data.len() || gz.len() >= data.len() {
            continue;
        }
        let target = into.join(relative);
        if let Some(parent) = target.parent() {
            let _ = std::fs::create_dir_all(parent);
        }
        let br_path = PathBuf::from(format!("{}.br", target.display()));
        let gz_path = PathBuf::from(format!("{}.gz", target.display()));
        for (at, bytes) in [(&br_path, &br), (&gz_path, &gz)] {
            std::fs::write(at, bytes)
                .unwrap_or_else(|e| panic!("cannot write {}: {e}", at.display()));
        }
        listing.push((path, br_path, gz_path));
    }
    listing.sort();
    listing
}

/// Every plain file below `dir`, subfolders included.
fn files_below(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return files;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        match entry.file_type() {
            Ok(t) if t.is_dir() => files.extend(files_below(&path)),
            Ok(t) if t.is_file() => files.push(path),
            _ => {}
        }
    }
    files
}

/// Brotli at its best (quality 11, a 4 MiB window: the wasm fits in it whole).
fn brotli(data: &[u8]) -> Vec<u8> {
    let params = brotli::enc::BrotliEncoderParams {
        quality: 11,
        lgwin: 22,
        ..Default::default()
    };
    let mut out = Vec::new();
    brotli::BrotliCompress(&mut &data[..], &mut out, &params)
        .unwrap_or_else(|e| panic!("brotli failed on the page: {e}"));
    out
}

/// gzip at level 9.
fn gzip(data: &[u8]) -> Vec<u8> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    encoder
        .write_all(data)
        .and_then(|()| encoder.try_finish())
        .unwrap_or_else(|e| panic!("gzip failed on the page: {e}"));
    encoder.finish().unwrap_or_default()
}
