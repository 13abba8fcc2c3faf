//! The default agent commands (docs/architecture.md §14) against the real CLIs' `--help`: each CLI
//! is installed from npm, at the version docs/architecture.md §17 studied, into
//! `target/agent-clis/` (cached), and every flag our default passes must be one its help lists.
//! Skips, saying why, when npm or the registry is unreachable. The flags are recorded in
//! docs/agents.md.
//!
//! And our own CLI's help (issue #24.6): `-v` prints the version, `chat --help` shows the
//! usage examples, every subcommand takes `--debug`.

use std::path::{Path, PathBuf};
use std::process::Command;

use agent_chatter_bridge::agents::default_command;

/// The CLIs, the versions studied, the help to read, and its words for stdin input.
const CLIS: [(&str, &str, &str, &[&str]); 3] = [
    (
        "claude-code",
        "@anthropic-ai/claude-code@2.1.197",
        "claude",
        &["--help"],
    ),
    (
        "openai-codex",
        "@openai/codex@0.169.0",
        "codex",
        &["exec", "--help"],
    ),
    (
        "google-gemini",
        "@google/gemini-cli@0.61.0",
        "gemini",
        &["--help"],
    ),
];

fn install_dir() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../target"));
    target.join("agent-clis")
}

/// Installs the pinned CLIs once; `Err` says why they are not available.
fn install() -> Result<PathBuf, String> {
    let dir = install_dir();
    let bin = dir.join("node_modules/.bin");
    if CLIS.iter().all(|(_, _, cmd, _)| bin.join(cmd).exists()) {
        return Ok(bin);
    }
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    std::fs::write(dir.join("package.json"), r#"{"private": true}"#).map_err(|e| e.to_string())?;
    let status = Command::new("npm")
        .current_dir(&dir)
        .args(["install", "--no-audit", "--no-fund", "--loglevel=error"])
        .args(CLIS.iter().map(|(_, pkg, _, _)| *pkg))
        .status()
        .map_err(|e| format!("npm did not start: {e}"))?;
    if status.success() {
        Ok(bin)
    } else {
        Err(format!(
            "npm install failed ({status}): registry unreachable?"
        ))
    }
}

fn help(bin: &Path, cmd: &str, args: &[&str]) -> String {
    let out = Command::new(bin.join(cmd))
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .unwrap_or_else(|e| panic!("{cmd} {args:?}: {e}"));
    String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr)
}

#[test]
fn every_default_flag_is_in_the_real_clis_help() {
    let bin = match install() {
        Ok(bin) => bin,
        Err(why) => {
            eprintln!("SKIPPED: the real CLIs are not available: {why}");
            return;
        }
    };
    for (agent_type, _, cmd, help_args) in CLIS {
        let default = default_command(agent_type).unwrap();
        assert_eq!(default.command, cmd);
        let text = help(&bin, cmd, help_args);
        for arg in &default.args {
            match arg.as_str() {
                // Positional / values, checked below.
                "" | "-" | "exec" | "stream-json" => {}
                flag => assert!(
                    text.contains(flag),
                    "{cmd}: `{flag}` is not in `{cmd} {}`:\n{text}",
                    help_args.join(" ")
                ),
            }
        }
        assert!(
            text.contains("stream-json") || agent_type == "openai-codex",
            "{cmd}: no stream-json format"
        );
    }
    // Claude's system part travels as this flag.
    assert!(help(&bin, "claude", &["--help"]).contains("--append-system-prompt"));
    // What is left under a team's cost cap is given as this one (issue 44.4).
    assert!(help(&bin, "claude", &["--help"]).contains("--max-budget-usd <amount>"));
    // Codex reads the prompt from stdin when it is `-` or absent; Gemini appends -p to stdin.
    assert!(help(&bin, "codex", &["exec", "--help"]).contains("read from stdin"));
    assert!(help(&bin, "gemini", &["--help"]).contains("Appended to input on stdin"));
}

// ---------------------------------------------------------------- our own CLI's help (#24.6)

/// `agent-chatter ARGS`: (stdout, success).
fn ours(args: &[&str]) -> (String, bool) {
    let out = Command::new(env!("CARGO_BIN_EXE_agent-chatter"))
        .args(args)
        .output()
        .unwrap();
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        out.status.success(),
    )
}

#[test]
fn v_prints_the_version_as_seed_004s_help_shows_and_capital_v_stays() {
    let want = format!("agent-chatter {}\n", env!("CARGO_PKG_VERSION"));
    for flag in ["-v", "-V", "--version"] {
        assert_eq!(ours(&[flag]), (want.clone(), true), "{flag}");
    }
    let (help, _) = ours(&["--help"]);
    assert!(help.contains("-v, --version"), "{help}");
}

#[test]
fn chat_help_shows_the_usage_examples() {
    let (help, ok) = ours(&["chat", "--help"]);
    assert!(ok);
    for example in [
        "Examples:",
        "echo \"Build authentication system\" | agent-chatter chat --team team.json",
        "echo \"[FROM:kailai] Design new feature [NEXT:max]\" | agent-chatter chat --team team.json",
        "agent-chatter> /team deploy other-team.json",
    ] {
        assert!(help.contains(example), "{example:?} not in:\n{help}");
    }
}

#[test]
fn every_subcommand_takes_the_debug_switch() {
    for command in ["serve", "chat", "sessions", "agents", "preview"] {
        let (help, ok) = ours(&[command, "--help"]);
        assert!(ok && help.contains("--debug"), "{command}:\n{help}");
    }
}

#[test]
fn a_session_id_that_is_no_number_is_refused_in_words_naming_the_flag() {
    for args in [
        &["chat", "--resume", "abc"][..],
        &["serve", "--session", "abc"][..],
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_agent-chatter"))
            .args(args)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success());
        assert!(
            err.contains(&format!("invalid value 'abc' for '{}", args[1]))
                && err.contains(
                    "a session's id is its number, as `agent-chatter sessions` lists them"
                ),
            "{args:?}: {err}"
        );
        assert!(!err.contains("invalid digit"), "{err}");
    }
}
