//! Child processes: where they run, the PATH they see, and errors that name the command.

use std::ffi::{OsStr, OsString};
use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Where xtask works and the environment its children get.
pub struct Ctx {
    /// Workspace root (parent of `xtask/`).
    pub root: PathBuf,
    /// PATH for children: `node_modules/.bin` first (npm binaryen's wasm-opt must win over any
    /// system wasm-opt, docs/architecture.md §18 P4), then cargo's bin dir (where `cargo install`
    /// puts wasm-bindgen), then the inherited PATH.
    path: OsString,
    /// The cargo that runs xtask (`$CARGO`), so children use the same toolchain.
    cargo: OsString,
}

impl Ctx {
    pub fn new() -> Result<Ctx, String> {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .ok_or("xtask's manifest directory has no parent")?
            .to_path_buf();
        let mut dirs = vec![root.join("node_modules").join(".bin"), cargo_bin_dir()];
        if let Some(inherited) = std::env::var_os("PATH") {
            dirs.extend(std::env::split_paths(&inherited));
        }
        let path = std::env::join_paths(dirs)
            .map_err(|e| format!("cannot build PATH for child processes: {e}"))?;
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| OsString::from("cargo"));
        Ok(Ctx { root, path, cargo })
    }

    /// A command run in the workspace root, with our PATH and no stdin (CI has none).
    pub fn cmd(&self, program: impl AsRef<OsStr>) -> Command {
        let mut cmd = Command::new(program);
        cmd.current_dir(&self.root)
            .env("PATH", &self.path)
            .stdin(Stdio::null());
        cmd
    }

    /// `cargo <args>` with the toolchain running xtask, not incremental unless the caller set
    /// `CARGO_INCREMENTAL`: xtask builds whole trees once (CI's clean machine), where incremental
    /// caches only cost disk (docs/architecture.md §15 "Disk").
    pub fn cargo(&self, args: &[&str]) -> Command {
        let mut cmd = self.cmd(&self.cargo);
        cmd.args(args);
        if std::env::var_os("CARGO_INCREMENTAL").is_none() {
            cmd.env("CARGO_INCREMENTAL", "0");
        }
        cmd
    }

    /// A program from the npm dev tools (`node_modules/.bin/<name>`), by full path.
    pub fn npm_bin(&self, name: &str) -> PathBuf {
        self.root.join("node_modules").join(".bin").join(name)
    }

    /// Cargo's target directory (`$CARGO_TARGET_DIR` or `<root>/target`).
    pub fn target_dir(&self) -> PathBuf {
        match std::env::var_os("CARGO_TARGET_DIR") {
            Some(dir) => self.root.join(dir),
            None => self.root.join("target"),
        }
    }

    /// `path` relative to the root, for messages.
    pub fn rel(&self, path: &Path) -> String {
        path.strip_prefix(&self.root)
            .unwrap_or(path)
            .display()
            .to_string()
    }
}

/// `$CARGO_HOME/bin`, or `~/.cargo/bin`: where `cargo install` puts binaries.
pub fn cargo_bin_dir() -> PathBuf {
    match std::env::var_os("CARGO_HOME") {
        Some(home) => PathBuf::from(home).join("bin"),
        None => {
            let home = std::env::var_os("HOME").unwrap_or_default();
            PathBuf::from(home).join(".cargo").join("bin")
        }
    }
}

/// The command line as a user would type it, for banners and errors.
pub fn describe(cmd: &Command) -> String {
    let program = Path::new(cmd.get_program())
        .file_name()
        .unwrap_or(cmd.get_program())
        .to_string_lossy()
        .into_owned();
    std::iter::once(program)
        .chain(cmd.get_args().map(|a| a.to_string_lossy().into_owned()))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Runs `cmd` with inherited stdout/stderr (so test output stays visible); fails on a
/// non-zero exit, naming the command.
pub fn run(cmd: &mut Command) -> Result<(), String> {
    let what = describe(cmd);
    let status = cmd.status().map_err(|e| spawn_error(&what, &e))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("`{what}` failed ({status})"))
    }
}

/// Runs `cmd` and returns its stdout; stderr passes through. Fails on a non-zero exit.
/// Installs `packages` (name, exact version) into the npm project `dir`: a manifest with the
/// exact versions (so a later plain `npm install` there keeps them; `"type": "module"` when
/// `module`), then `npm install` with install scripts and optional dependencies on whatever the
/// machine's npm config says (Claude's binary comes from a postinstall script, Codex's and
/// esbuild's from optional dependencies).
pub fn npm_install_exact(
    ctx: &Ctx,
    dir: &Path,
    packages: &[(&str, &str)],
    module: bool,
) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let mut manifest = serde_json::json!({
        "private": true,
        "dependencies": packages.iter().map(|(p, v)| (p.to_string(), serde_json::json!(v)))
            .collect::<serde_json::Map<_, _>>(),
    });
    if module {
        manifest["type"] = serde_json::json!("module");
    }
    let path = dir.join("package.json");
    std::fs::write(&path, format!("{manifest:#}\n"))
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    run(ctx
        .cmd("npm")
        .current_dir(dir)
        .args([
            "install",
            "--no-audit",
            "--no-fund",
            "--loglevel=error",
            "--save-exact",
            "--ignore-scripts=false",
            "--include=optional",
        ])
        .args(packages.iter().map(|(p, v)| format!("{p}@{v}"))))
}

pub fn capture(cmd: &mut Command) -> Result<String, String> {
    let what = describe(cmd);
    let output = cmd
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| spawn_error(&what, &e))?;
    if output.status.success() {
        String::from_utf8(output.stdout).map_err(|_| format!("`{what}` printed non-UTF-8 output"))
    } else {
        Err(format!("`{what}` failed ({})", output.status))
    }
}

/// Runs `cmd` quietly and returns its stdout if it started and succeeded: a tool probe
/// (`None` = missing or broken).
pub fn probe(cmd: &mut Command) -> Option<String> {
    let output = cmd.stderr(Stdio::null()).output().ok()?;
    if !output.status.success() {
        return None;
    }
    String::from_utf8(output.stdout).ok()
}

fn spawn_error(what: &str, e: &std::io::Error) -> String {
    if e.kind() == ErrorKind::NotFound {
        let program = what.split(' ').next().unwrap_or(what);
        format!("`{program}` not found on PATH (needed for `{what}`); run `cargo xtask setup` or install it")
    } else {
        format!("cannot start `{what}`: {e}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn describe_shows_program_name_and_arguments() {
        let mut cmd = Command::new("/usr/bin/node");
        cmd.args(["--test", "wasm/js/"]);
        assert_eq!(describe(&cmd), "node --test wasm/js/");
    }

    #[test]
    fn child_path_puts_npm_tools_first() {
        let ctx = Ctx::new().expect("ctx");
        let cmd = ctx.cmd("true");
        let path = cmd
            .get_envs()
            .find(|(k, _)| *k == "PATH")
            .and_then(|(_, v)| v)
            .expect("PATH set");
        let first = std::env::split_paths(path).next().expect("non-empty");
        assert_eq!(first, ctx.root.join("node_modules").join(".bin"));
    }

    #[test]
    fn missing_program_error_names_it_and_the_fix() {
        let ctx = Ctx::new().expect("ctx");
        let err = run(&mut ctx.cmd("xtask-no-such-tool-7f3a")).unwrap_err();
        assert!(err.contains("`xtask-no-such-tool-7f3a` not found"), "{err}");
        assert!(err.contains("cargo xtask setup"), "{err}");
    }
}
