//! The real agent CLIs for the bridge's tests against them (`bridge/tests/real_clis.rs`):
//! Claude Code, Codex and Gemini at the versions docs/architecture.md §17 studied, and the ACP
//! adapters of the first two (docs/acp-adapters.md; Gemini's is `gemini --acp`), installed
//! from npm into `target/agent-clis/` (cached there: reinstalled only when a version differs or
//! a command does not run) and handed to the tests as `AGENT_CHATTER_REAL_CLIS=<its .bin>`.

use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::proc::{self, Ctx};
use crate::steps::format_duration;

/// The environment variable the tests read: the directory holding `claude`, `codex`, `gemini`,
/// `claude-agent-acp` and `codex-acp`. Unset, they are skipped (with a notice), so a plain `cargo test` needs no npm.
pub const ENV: &str = "AGENT_CHATTER_REAL_CLIS";

/// npm package, pinned version, the command it installs: the three CLIs, then the two ACP
/// adapters. Both adapters answer `--version` with their version and exit (seen with stdin
/// closed), so every command is checked the same way. Each adapter brings its own copy of the
/// vendor's code (`claude-agent-acp` the Claude Agent SDK with its native `claude`,
/// `codex-acp` a nested `@openai/codex` 0.166), not the CLI pinned above.
pub const PACKAGES: [(&str, &str, &str); 5] = [
    ("@anthropic-ai/claude-code", "2.1.197", "claude"),
    ("@openai/codex", "0.169.0", "codex"),
    ("@google/gemini-cli", "0.61.0", "gemini"),
    (
        "@agentclientprotocol/claude-agent-acp",
        "0.101.0",
        "claude-agent-acp",
    ),
    ("@agentclientprotocol/codex-acp", "2.6.0", "codex-acp"),
];

/// `target/agent-clis`: npm's prefix for the CLIs.
pub fn install_dir(ctx: &Ctx) -> PathBuf {
    ctx.target_dir().join("agent-clis")
}

/// Where the CLIs' commands are.
pub fn bin_dir(ctx: &Ctx) -> PathBuf {
    install_dir(ctx).join("node_modules").join(".bin")
}

/// Installs the pinned packages unless they are there and run; says what it did.
pub fn ensure(ctx: &Ctx) -> Result<String, String> {
    let dir = install_dir(ctx);
    // Each command's `--version` was checked once for this install (Gemini's alone takes
    // seconds).
    let stamp = dir.join(STAMP);
    if installed_versions_match(&dir)
        && std::fs::read_to_string(&stamp).is_ok_and(|s| s.trim() == list())
    {
        return Ok(format!("{} present", list()));
    }
    let wrong = problems(ctx, &dir);
    if wrong.is_empty() {
        write_stamp(&stamp)?;
        return Ok(format!("{} present (checked)", list()));
    }
    let _ = std::fs::remove_file(&stamp);
    eprintln!("clis: installing {} ({})", list(), wrong.join("; "));
    let start = Instant::now();
    // Claude's real binary is put in place by its postinstall script, and Codex's native
    // binary is an optional dependency (docs/agents.md, 17.5).
    let packages: Vec<(&str, &str)> = PACKAGES.iter().map(|(p, v, _)| (*p, *v)).collect();
    proc::npm_install_exact(ctx, &dir, &packages, false)?;
    let wrong = problems(ctx, &dir);
    if !wrong.is_empty() {
        return Err(format!(
            "after `npm install` in {}: {}",
            ctx.rel(&dir),
            wrong.join("; ")
        ));
    }
    write_stamp(&stamp)?;
    Ok(format!(
        "installed {} in {}",
        list(),
        format_duration(start.elapsed())
    ))
}

/// The file saying which versions ran (`claude 2.1.197, codex 0.169.0, gemini 0.61.0, …`).
const STAMP: &str = "checked-versions";

fn write_stamp(stamp: &Path) -> Result<(), String> {
    std::fs::write(stamp, format!("{}\n", list()))
        .map_err(|e| format!("cannot write {}: {e}", stamp.display()))
}

/// Whether every package's manifest in `dir` has the pinned version.
fn installed_versions_match(dir: &Path) -> bool {
    PACKAGES
        .iter()
        .all(|(package, version, _)| installed_version(dir, package).as_deref() == Some(version))
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
        .map(|(_, v, cmd)| format!("{cmd} {v}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// What is wrong with the install in `dir`, one entry per package: not installed, another version,
/// or a command that does not report its version (Claude installed without its postinstall
/// prints "claude native binary not installed"; Codex without its optional dependency fails).
fn problems(ctx: &Ctx, dir: &Path) -> Vec<String> {
    let mut wrong = Vec::new();
    for (package, version, cmd) in PACKAGES {
        match installed_version(dir, package) {
            None => wrong.push(format!("{package} not installed")),
            Some(v) if v != version => wrong.push(format!("{package} is {v}, not {version}")),
            Some(_) => {
                let bin = dir.join("node_modules").join(".bin").join(cmd);
                let out = proc::probe(ctx.cmd(&bin).arg("--version")).unwrap_or_default();
                if !reports_version(&out, version) {
                    wrong.push(format!(
                        "`{cmd} --version` printed {:?}, not {version}",
                        out.trim()
                    ));
                }
            }
        }
    }
    wrong
}

/// Whether a command's `--version` output names `version` as a word (`2.1.197 (Claude Code)`,
/// `codex-cli 0.169.0`, `0.61.0`, `@agentclientprotocol/codex-acp 2.6.0`).
fn reports_version(output: &str, version: &str) -> bool {
    output
        .lines()
        .next()
        .is_some_and(|l| l.split_whitespace().any(|w| w == version))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_clis_version_line_is_read_as_it_prints_it() {
        assert!(reports_version("2.1.197 (Claude Code)\n", "2.1.197"));
        assert!(reports_version("codex-cli 0.169.0\n", "0.169.0"));
        assert!(reports_version("0.61.0\n", "0.61.0"));
        assert!(reports_version("0.101.0\n", "0.101.0"));
        assert!(reports_version(
            "@agentclientprotocol/codex-acp 2.6.0\n",
            "2.6.0"
        ));
        assert!(!reports_version("0.61.01\n", "0.61.0"));
        assert!(!reports_version(
            "claude native binary not installed\n",
            "2.1.197"
        ));
        assert!(!reports_version("", "0.61.0"));
    }
}
