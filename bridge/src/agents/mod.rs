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

use agent_chatter::team::{CLAUDE_CODE, GOOGLE_GEMINI, OPENAI_CODEX};
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
            CLAUDE_CODE => AgentType::Claude,
            OPENAI_CODEX => AgentType::Codex,
            GOOGLE_GEMINI => AgentType::Gemini,
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
        CLAUDE_CODE => (
            "claude",
            &[
                "-p",
                "--output-format",
                "stream-json",
                "--verbose",
                "--include-partial-messages",
            ],
        ),
        OPENAI_CODEX => ("codex", &["exec", "--json", "--skip-git-repo-check", "-"]),
        GOOGLE_GEMINI => (
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

/// How one AI member will be answered on this machine (`agent-chatter agents`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemberAgent {
    pub member: String,
    pub agent_type: String,
    /// The configured command, if any.
    pub command: Option<AgentCommand>,
    /// Where it was found; `None` = the simulator answers.
    pub path: Option<PathBuf>,
}

/// For every AI member of `team`: its command and whether it is installed here.
pub fn members(team: &agent_chatter::team::Team, file: &AgentsFile) -> Vec<MemberAgent> {
    team.members
        .iter()
        .filter(|m| m.is_ai())
        .map(|m| {
            let agent_type = m.agent_type.clone().unwrap_or_default();
            let command = file.command_for(&m.id, &agent_type);
            let path = command.as_ref().and_then(|c| locate(&c.command));
            MemberAgent {
                member: m.id.clone(),
                agent_type,
                command,
                path,
            }
        })
        .collect()
}

/// The first line `program --version` prints (5 s at most), for the report.
pub fn version(program: &Path) -> String {
    use std::process::{Command, Stdio};
    let child = Command::new(program)
        .arg("--version")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn();
    let Ok(mut child) = child else {
        return "does not start".to_string();
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if std::time::Instant::now() < deadline => {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return "no answer to --version within 5 s".to_string();
            }
        }
    }
    let mut out = String::new();
    if let Some(mut stdout) = child.stdout.take() {
        use std::io::Read;
        let _ = stdout.read_to_string(&mut out);
    }
    out.lines().next().unwrap_or("").trim().to_string()
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
    fn members_report_the_command_and_whether_it_is_installed() {
        let team = agent_chatter::demo::team();
        let mut file = AgentsFile::default();
        file.agents.insert(
            "max".into(),
            AgentCommand {
                command: "/bin/sh".into(),
                args: vec![],
                output: None,
            },
        );
        file.agents.insert(
            "openai-codex".into(),
            AgentCommand {
                command: "agent-chatter-no-such-codex".into(),
                args: vec![],
                output: None,
            },
        );
        let report = members(&team, &file);
        let ids: Vec<&str> = report.iter().map(|m| m.member.as_str()).collect();
        assert_eq!(ids, ["max", "sarah", "carol"]);
        assert_eq!(report[0].path.as_deref(), Some(Path::new("/bin/sh")));
        assert_eq!(report[1].path, None);
        assert_eq!(report[1].agent_type, "openai-codex");
    }

    #[test]
    fn locate_finds_executables_only() {
        assert!(locate("sh").is_some());
        assert!(locate("/bin/sh").is_some());
        assert!(locate("agent-chatter-no-such-cli").is_none());
    }
}
