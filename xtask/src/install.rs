//! `cargo xtask install [--root DIR]`: the page built, then the bridge installed with it
//! embedded (`cargo install --path bridge --locked`), so `agent-chatter` runs from anywhere
//! with no clone beside it (docs/architecture.md §14e).

use std::path::{Path, PathBuf};

use crate::proc::{self, Ctx};
use crate::web;

/// Parses `[--root DIR]`.
pub fn parse_args(args: &[String]) -> Result<Option<PathBuf>, String> {
    match args {
        [] => Ok(None),
        [flag, dir] if flag == "--root" => Ok(Some(PathBuf::from(dir))),
        _ => Err(format!(
            "install: unexpected arguments {args:?}; usage: cargo xtask install [--root DIR]"
        )),
    }
}

/// Builds the page and installs the binary (into `root`/bin when given, else cargo's own
/// bin directory); returns the installed binary's path. The workspace's target directory is
/// reused, so an install after a release build compiles little.
pub fn install(ctx: &Ctx, root: Option<&Path>) -> Result<PathBuf, String> {
    web::build(ctx)?;
    let mut cmd = ctx.cargo(&["install", "--path", "bridge", "--locked", "--force"]);
    cmd.env("CARGO_TARGET_DIR", ctx.target_dir());
    if let Some(root) = root {
        cmd.arg("--root").arg(root);
    }
    proc::run(&mut cmd)?;
    let bin = match root {
        Some(root) => root.join("bin"),
        None => proc::cargo_bin_dir(),
    }
    .join("agent-chatter");
    let size = std::fs::metadata(&bin)
        .map_err(|e| format!("{}: not installed ({e})", bin.display()))?
        .len();
    eprintln!(
        "install: {} ({:.1} MiB, the page inside)",
        bin.display(),
        size as f64 / (1024.0 * 1024.0)
    );
    Ok(bin)
}
