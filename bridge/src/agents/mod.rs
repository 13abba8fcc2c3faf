//! The agent CLIs (DESIGN §14): which command runs for which agent type, and running it.
//!
//! Commands run as argv, never through a shell; the prompt goes on **stdin** (an argv string
//! is capped at 128 KiB on Linux) and Claude's system part as `--append-system-prompt`. Only
//! commands from the defaults below or the machine-local agents file run; the page cannot
//! change either. A member whose command is not installed is answered by the core's simulated
//! agent (`agent_chatter::demo`).

pub mod decode;
pub mod run;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

/// How a CLI's output is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum AgentType {
    Claude,
    Codex,
    Gemini,
    /// Any command: its stdout is the reply, streamed as it comes.
    Command,
}

impl AgentType {
    /// The decoder for a member's normalised agent type.
    pub fn of(agent_type: &str) -> AgentType {
        match agent_type {
            "claude-code" => AgentType::Claude,
            "openai-codex" => AgentType::Codex,
            "google-gemini" => AgentType::Gemini,
            _ => AgentType::Command,
        }
    }
}

/// One runnable command: the program and its arguments (before the system flag).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentCommand {
    pub command: String,
    #[serde(default)]
    pub args: Vec<String>,
    /// How to read its output; by default, the agent type's own format.
    #[serde(default)]
    pub output: Option<AgentType>,
}

/// The defaults, checked against each CLI's `--help` (docs/agents.md).
pub fn default_command(agent_type: &str) -> Option<AgentCommand> {
    let (command, args): (&str, &[&str]) = match agent_type {
        "claude-code" => (
            "claude",
            &[
                "-p",
                "--output-format",
                "stream-json",
                "--verbose",
                "--include-partial-messages",
            ],
        ),
        "openai-codex" => ("codex", &["exec", "--json", "--skip-git-repo-check", "-"]),
        "google-gemini" => (
            "gemini",
            &["-p", "", "--output-format", "stream-json", "--skip-trust"],
        ),
        _ => return None,
    };
    Some(AgentCommand {
        command: command.to_string(),
        args: args.iter().map(|a| a.to_string()).collect(),
        output: None,
    })
}

/// The machine-local agents file: agent type (or member id) → command. Read once at start.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentsFile {
    #[serde(default)]
    pub agents: BTreeMap<String, AgentCommand>,
}

impl AgentsFile {
    /// Reads `path`; the error names the file and the field.
    pub fn load(path: &Path) -> Result<AgentsFile, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("{}: cannot read the agents file: {e}", path.display()))?;
        let de = &mut serde_json::Deserializer::from_str(&text);
        serde_path_to_error::deserialize(de)
            .map_err(|e| format!("{}: {}: {}", path.display(), e.path(), e.inner()))
    }

    /// The command for `member` (by id) or its agent type; the file wins over the defaults.
    pub fn command_for(&self, member_id: &str, agent_type: &str) -> Option<AgentCommand> {
        self.agents
            .get(member_id)
            .or_else(|| self.agents.get(agent_type))
            .cloned()
            .or_else(|| default_command(agent_type))
    }
}

/// Where `program` would be found: a path as given, else the first match on `PATH`.
pub fn locate(program: &str) -> Option<PathBuf> {
    let is_exec = |p: &Path| {
        use std::os::unix::fs::PermissionsExt;
        p.metadata()
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    if program.contains('/') {
        let path = PathBuf::from(program);
        return is_exec(&path).then_some(path);
    }
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|dir| dir.join(program))
        .find(|p| is_exec(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_match_the_design() {
        let claude = default_command("claude-code").unwrap();
        assert_eq!(claude.command, "claude");
        assert_eq!(
            claude.args,
            [
                "-p",
                "--output-format",
                "stream-json",
                "--verbose",
                "--include-partial-messages"
            ]
        );
        assert_eq!(
            default_command("openai-codex").unwrap().args,
            ["exec", "--json", "--skip-git-repo-check", "-"]
        );
        assert_eq!(
            default_command("google-gemini").unwrap().args,
            ["-p", "", "--output-format", "stream-json", "--skip-trust"]
        );
        assert_eq!(default_command("cursor"), None);
    }

    #[test]
    fn the_agents_file_wins_and_names_bad_fields() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("agents.json");
        std::fs::write(&path, r#"{"agents": {"claude-code": {"command": "/opt/claude", "args": ["-p"]}, "max": {"command": "fake", "output": "command"}}}"#).unwrap();
        let file = AgentsFile::load(&path).unwrap();
        assert_eq!(
            file.command_for("sarah", "claude-code").unwrap().command,
            "/opt/claude"
        );
        assert_eq!(
            file.command_for("max", "claude-code").unwrap().command,
            "fake"
        );
        assert_eq!(
            file.command_for("carol", "google-gemini").unwrap().command,
            "gemini"
        );
        std::fs::write(&path, r#"{"agents": {"x": {"command": "a", "arg": []}}}"#).unwrap();
        let err = AgentsFile::load(&path).unwrap_err();
        assert!(err.contains("agents.x"), "{err}");
        assert!(err.contains("unknown field `arg`"), "{err}");
    }

    #[test]
    fn locate_finds_executables_only() {
        assert!(locate("sh").is_some());
        assert!(locate("/bin/sh").is_some());
        assert!(locate("agent-chatter-no-such-cli").is_none());
    }
}
