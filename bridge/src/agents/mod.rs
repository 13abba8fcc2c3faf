//! The agent CLIs (docs/architecture.md §14): which command runs for which agent type, and running
//! it.
//!
//! Commands run as argv, never through a shell; the prompt goes on **stdin** (an argv string
//! is capped at 128 KiB on Linux) and Claude's system part as `--append-system-prompt`. Only
//! commands from the defaults below or the machine-local agents file run; the page cannot
//! change either. The core's simulated agent (`agent_chatter::demo`) answers only where it was
//! chosen (see [`Answerer`]).

pub(crate) mod acp;
pub mod decode;
pub mod machine;
mod process;
pub mod reaper;
pub(crate) mod reason;
pub(crate) mod run;
pub(crate) mod settings;
mod stderr;
mod tail;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use agent_chatter::objects::Object;
use agent_chatter::team::{CLAUDE_CODE, GOOGLE_GEMINI, OPENAI_CODEX};
use serde::Deserialize;

/// How a CLI's output is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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

    /// Whether its CLI reports what a run cost (docs/architecture.md §14c): only Claude's
    /// `total_cost_usd`; Codex and Gemini report tokens, a plain command nothing.
    pub fn reports_cost(self) -> bool {
        self == AgentType::Claude
    }
}

/// One runnable command: the program and its arguments (before the system flag), and, for a
/// member's run, the variables added to its environment and its working directory.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AgentCommand {
    pub command: String,
    pub args: Vec<String>,
    /// How to read its output; by default, the agent type's own format.
    pub output: Option<AgentType>,
    /// Added to the bridge's environment.
    pub env: BTreeMap<String, String>,
    /// Where it runs; the bridge's working directory when `None`.
    pub dir: Option<PathBuf>,
    /// Set when it speaks ACP (docs/architecture.md §14d) rather than printing a stream: the member's
    /// approval rule and wait.
    pub acp: Option<AcpSettings>,
}

/// How a member over ACP is run, from the machine's agents file only.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AcpSettings {
    pub approve: acp::Approve,
    /// How long an approval waits for a person before it is answered with the reject option.
    pub approval_timeout: Duration,
}

impl Default for AcpSettings {
    fn default() -> AcpSettings {
        AcpSettings {
            approve: acp::Approve::default(),
            approval_timeout: acp::DEFAULT_APPROVAL_TIMEOUT,
        }
    }
}

/// One entry of the agents file as written (read with serde: unknown keys refused, a
/// misspelt `comand` would otherwise run the default command).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[serde(rename_all = "camelCase")]
struct CommandEntry {
    /// Optional only for `protocol: "acp"` on a known agent type (its built-in profile).
    #[serde(default)]
    command: Option<String>,
    #[serde(default)]
    args: Option<Vec<String>>,
    #[serde(default)]
    output: Option<OutputName>,
    #[serde(default)]
    protocol: Option<ProtocolName>,
    #[serde(default)]
    approve: Option<acp::Approve>,
    #[serde(default)]
    approval_timeout_ms: Option<u64>,
}

/// How an agent is spoken to: its stream-json output (the default), or ACP.
#[derive(Deserialize, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
enum ProtocolName {
    Stream,
    Acp,
}

/// The names of [`AgentType`] in the agents file's `output`.
#[derive(Deserialize, Clone, Copy)]
#[serde(rename_all = "lowercase")]
enum OutputName {
    Claude,
    Codex,
    Gemini,
    Command,
}

impl From<OutputName> for AgentType {
    fn from(name: OutputName) -> AgentType {
        match name {
            OutputName::Claude => AgentType::Claude,
            OutputName::Codex => AgentType::Codex,
            OutputName::Gemini => AgentType::Gemini,
            OutputName::Command => AgentType::Command,
        }
    }
}

/// The agents file as written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AgentsFileText {
    /// Each entry an object (serde would take a struct's fields from an array too).
    #[serde(default)]
    agents: BTreeMap<String, Object<CommandEntry>>,
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
        ..Default::default()
    })
}

/// The built-in ACP profiles (docs/architecture.md §14d): Claude and Codex through their adapters from npm,
/// Gemini's own `--acp`. Chosen by `{"protocol": "acp"}` for the agent type in the agents file.
pub fn acp_profile(agent_type: &str) -> Option<AgentCommand> {
    let (command, args): (&str, &[&str]) = match agent_type {
        CLAUDE_CODE => ("claude-agent-acp", &[]),
        OPENAI_CODEX => ("codex-acp", &[]),
        GOOGLE_GEMINI => ("gemini", &["--acp"]),
        _ => return None,
    };
    Some(AgentCommand {
        command: command.to_string(),
        args: args.iter().map(|a| a.to_string()).collect(),
        acp: Some(AcpSettings::default()),
        ..Default::default()
    })
}

/// The machine-local agents file: agent type (or member id) → command. Read once at start.
///
/// `{"agents": {"<agent type or member id>": {"command": "claude", "args": ["-p", …],
/// "output": "claude"|"codex"|"gemini"|"command"}}}`; `args` and `output` are optional.
/// Unknown keys are refused (a misspelt `comand` would otherwise run the default command).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AgentsFile {
    pub agents: BTreeMap<String, AgentCommand>,
}

impl AgentsFile {
    /// Reads `path`; the error names the file and the field
    /// (`agents.json: agents.max.command: expected a string, found 5`).
    pub fn load(path: &Path) -> Result<AgentsFile, String> {
        let text = crate::files::read_text(path, "agents file")?;
        AgentsFile::parse(&text).map_err(|e| format!("{}: {e}", path.display()))
    }

    /// Reads the agents file's JSON text; errors name the JSON path in the core's words
    /// (`agent_chatter::read_json`, as every outside input read with serde).
    pub fn parse(text: &str) -> Result<AgentsFile, String> {
        let Object(file): Object<AgentsFileText> =
            agent_chatter::read_json(text).map_err(|e| e.to_string())?;
        let mut agents = BTreeMap::new();
        for (key, Object(entry)) in file.agents {
            agents.insert(key.clone(), AgentsFile::entry(&key, entry)?);
        }
        Ok(AgentsFile { agents })
    }

    /// One entry: a stream command, or an ACP agent (its command may be left to the built-in
    /// profile of the agent type, filled in by [`AgentsFile::command_for`]).
    fn entry(key: &str, entry: CommandEntry) -> Result<AgentCommand, String> {
        let is_acp = entry.protocol == Some(ProtocolName::Acp);
        let command = match entry.command {
            Some(c) if c.trim().is_empty() => return Err(format!("agents.{key}.command: empty")),
            Some(c) => c,
            None if is_acp => String::new(),
            None => return Err(format!("agents.{key}.command: missing")),
        };
        if !is_acp {
            if entry.approve.is_some() {
                return Err(format!(
                    "agents.{key}.approve: only for an agent with \"protocol\": \"acp\""
                ));
            }
            if entry.approval_timeout_ms.is_some() {
                return Err(format!(
                    "agents.{key}.approvalTimeoutMs: only for an agent with \"protocol\": \"acp\""
                ));
            }
        } else if entry.output.is_some() {
            return Err(format!(
                "agents.{key}.output: an ACP agent's output is read as ACP; leave it out"
            ));
        }
        if entry.approval_timeout_ms == Some(0) {
            return Err(format!("agents.{key}.approvalTimeoutMs: must be above 0"));
        }
        let acp = is_acp.then(|| AcpSettings {
            approve: entry.approve.unwrap_or_default(),
            approval_timeout: entry
                .approval_timeout_ms
                .map_or(acp::DEFAULT_APPROVAL_TIMEOUT, Duration::from_millis),
        });
        Ok(AgentCommand {
            command,
            args: entry.args.unwrap_or_default(),
            output: entry.output.map(AgentType::from),
            acp,
            ..Default::default()
        })
    }
    /// The entry (its key, its command) that `member_id` runs by: its own, else its
    /// (normalised) agent type's; `None` when the file has neither.
    pub(crate) fn entry_for(
        &self,
        member_id: &str,
        agent_type: &str,
    ) -> Option<(&str, &AgentCommand)> {
        self.agents
            .get_key_value(member_id)
            .or_else(|| {
                self.agents
                    .iter()
                    .find(|(key, _)| agent_chatter::team::normalize_agent_type(key) == agent_type)
            })
            .map(|(key, command)| (key.as_str(), command))
    }

    /// The command for `member` (by id) or its agent type; the file wins over the defaults.
    /// A key that is no member's id names an agent type, in any of the team config's
    /// spellings (`claude`, `Claude`, `claude-code`), as the team's `agentType` does.
    pub(crate) fn command_for(&self, member_id: &str, agent_type: &str) -> Option<AgentCommand> {
        let agent_type = agent_chatter::team::normalize_agent_type(agent_type);
        self.entry_for(member_id, &agent_type)
            .map(|(_, command)| command.clone())
            .map(|command| match command.acp {
                // An ACP entry with no command: the agent type's built-in profile.
                Some(_) if command.command.is_empty() => match acp_profile(&agent_type) {
                    Some(profile) => AgentCommand {
                        command: profile.command,
                        args: if command.args.is_empty() {
                            profile.args
                        } else {
                            command.args
                        },
                        ..command
                    },
                    None => command,
                },
                _ => command,
            })
            .or_else(|| default_command(&agent_type))
    }
}

/// Where `program` would be found: a path as given, else the first match on `PATH`.
pub(crate) fn locate(program: &str) -> Option<PathBuf> {
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

/// Who answers one AI member's deliveries on this machine (docs/architecture.md §14). The
/// simulator answers only where it was chosen, so a simulated reply never drives real, paid
/// agents unless the user asked for simulation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answerer {
    /// Its command, found at this path.
    Cli(PathBuf),
    /// The built-in simulator (`agent_chatter::demo`), chosen by `--simulate`, by
    /// `agentType: "simulated"`, or by running the embedded demo team, whose members fall back
    /// to it when their CLI is not installed.
    Simulator,
    /// No one: every delivery to it fails with this reason, which says what to do.
    Nobody(String),
}

/// Checks, at start and at each `/team deploy`, that every member this machine runs can run
/// as its settings say (docs/architecture.md §14c): settings its CLI type takes, and flags the
/// installed CLI knows (its `--help`, read once). The error names the member and the setting.
pub fn check_team(
    team: &agent_chatter::team::Team,
    file: &AgentsFile,
    simulate_all: bool,
) -> Result<(), String> {
    let mut uses = Vec::new();
    for agent in members(team, file, simulate_all) {
        let (Answerer::Cli(path), Some(command)) = (&agent.answerer, &agent.command) else {
            continue;
        };
        let Some(member) = team.member(&agent.member) else {
            continue;
        };
        if command.acp.is_some() {
            // Over ACP, model and mode are the session's, checked when it opens (the agent
            // says which it offers); nothing is a flag.
            continue;
        }
        let kind = command.output.unwrap_or(AgentType::of(&agent.agent_type));
        let args =
            settings::setting_args(kind, &member.run).map_err(|e| format!("{}: {e}", member.id))?;
        uses.push((
            member.id.clone(),
            path.clone(),
            settings::subcommand(command),
            args,
        ));
    }
    settings::check_flags(&uses)
}

/// Checks, at start, the ACP members whose run settings set a mode or a model: each agent is
/// started, a session opened with them set (no prompt: nothing reaches a model) and the agent
/// stopped (docs/architecture.md §14d). A value the agent does not offer is the error, naming
/// the member and the value; an agent that could not be asked is a warning returned (its
/// first run says why), as a member that cannot run is.
pub async fn check_acp_settings(
    team: &agent_chatter::team::Team,
    file: &AgentsFile,
    machine: &machine::MachineSettings,
    simulate_all: bool,
) -> Result<Vec<String>, String> {
    let mut warnings = Vec::new();
    for agent in members(team, file, simulate_all) {
        let (Answerer::Cli(_), Some(command)) = (&agent.answerer, &agent.command) else {
            continue;
        };
        let (Some(acp_settings), Some(member)) = (&command.acp, team.member(&agent.member)) else {
            continue;
        };
        let member = machine.dress(member);
        if member.run.model.is_none() && member.run.permission_mode.is_none() {
            continue;
        }
        let kind = command.output.unwrap_or(AgentType::of(&agent.agent_type));
        let Ok(command) = settings::command_for_member(command, kind, &member) else {
            continue;
        };
        let job = acp::AcpJob {
            command: &command,
            member: &member.id,
            run: 0,
            prompt: "",
            system: None,
            model: member.run.model.as_deref(),
            permission_mode: member.run.permission_mode,
            approve: acp_settings.approve,
            approval_timeout: acp_settings.approval_timeout,
            timeout: Duration::from_secs(90),
        };
        match acp::check(job).await {
            Ok(()) => {}
            Err(acp::Unchecked::Refused(why)) => return Err(why),
            Err(acp::Unchecked::Unasked(why)) => warnings.push(format!(
                "could not check {}'s mode and model with its ACP agent ({why}); its first run \
                 checks them",
                member.id
            )),
        }
    }
    Ok(warnings)
}

/// How one AI member will be answered on this machine (`agent-chatter agents`, the page).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemberAgent {
    pub member: String,
    pub agent_type: String,
    /// The configured command, if any.
    pub command: Option<AgentCommand>,
    pub answerer: Answerer,
}

/// For every AI member of `team`: its command and who answers it here; `simulate_all` is
/// `--simulate`.
pub fn members(
    team: &agent_chatter::team::Team,
    file: &AgentsFile,
    simulate_all: bool,
) -> Vec<MemberAgent> {
    let demo = is_demo(team);
    team.members
        .iter()
        .filter(|m| m.is_ai())
        .map(|m| member_agent(m, file, simulate_all, demo))
        .collect()
}

/// [`members`] for one AI member of `team` (a delivery needs only its recipient's).
pub fn member(
    team: &agent_chatter::team::Team,
    id: &str,
    file: &AgentsFile,
    simulate_all: bool,
) -> Option<MemberAgent> {
    let m = team.member(id).filter(|m| m.is_ai())?;
    Some(member_agent(m, file, simulate_all, is_demo(team)))
}

/// The team in force is the embedded demo team, unedited.
fn is_demo(team: &agent_chatter::team::Team) -> bool {
    static DEMO: std::sync::OnceLock<agent_chatter::team::Team> = std::sync::OnceLock::new();
    team == DEMO.get_or_init(agent_chatter::demo::team)
}

fn member_agent(
    m: &agent_chatter::team::Member,
    file: &AgentsFile,
    simulate_all: bool,
    demo: bool,
) -> MemberAgent {
    let agent_type = m.agent_type.clone().unwrap_or_default();
    let command = file.command_for(&m.id, &agent_type);
    let simulated = simulate_all
        || agent_chatter::team::normalize_agent_type(&agent_type) == agent_chatter::team::SIMULATED;
    let answerer = match (&command, simulated) {
        (_, true) => Answerer::Simulator,
        (Some(c), false) if c.command.is_empty() => Answerer::Nobody(format!(
            "{}: agent type {agent_type:?} has no built-in ACP command; set \"command\" in its \
             agents-file entry",
            m.id
        )),
        (Some(c), false) => match locate(&c.command) {
            Some(path) => Answerer::Cli(path),
            None if demo => Answerer::Simulator,
            None => Answerer::Nobody(format!(
                "{}: {} is not installed ({}); install it, set its command in the agents file, \
                 or start with --simulate",
                m.id,
                c.command,
                if c.command.contains('/') {
                    "not an executable file"
                } else {
                    "not on PATH"
                }
            )),
        },
        (None, false) if demo => Answerer::Simulator,
        (None, false) => Answerer::Nobody(format!(
            "{}: no command for agent type {agent_type:?}; set one in the agents file, or start \
             with --simulate",
            m.id
        )),
    };
    MemberAgent {
        member: m.id.clone(),
        agent_type,
        command,
        answerer,
    }
}

/// The first line `program --version` prints (5 s at most), for the report.
pub fn version(program: &Path) -> String {
    match answer_of(program, &["--version".to_string()], Duration::from_secs(5)) {
        Ok(out) => out.lines().next().unwrap_or("").trim().to_string(),
        Err(NoAnswer::DoesNotStart(_)) => "does not start".to_string(),
        Err(NoAnswer::Late) => "no answer to --version within 5 s".to_string(),
    }
}

/// Why a program gave no answer.
#[derive(Debug)]
pub(crate) enum NoAnswer {
    DoesNotStart(std::io::Error),
    /// Still running at the deadline: it was killed.
    Late,
}

/// What `program args` prints (stdout, then stderr) when it ends within `within`; read as it
/// comes, so a long answer never fills a pipe and blocks it. Used for the CLIs' `--version`
/// and `--help`, with no stdin.
pub(crate) fn answer_of(
    program: &Path,
    args: &[String],
    within: Duration,
) -> Result<String, NoAnswer> {
    use std::process::{Command, Stdio};
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(NoAnswer::DoesNotStart)?;
    let (mut stdout, mut stderr) = (child.stdout.take(), child.stderr.take());
    let reader = std::thread::spawn(move || {
        use std::io::Read;
        let mut text = String::new();
        if let Some(s) = stdout.as_mut() {
            let _ = s.read_to_string(&mut text);
        }
        if let Some(s) = stderr.as_mut() {
            let _ = s.read_to_string(&mut text);
        }
        text
    });
    let deadline = std::time::Instant::now() + within;
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if std::time::Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(20));
            }
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(NoAnswer::Late);
            }
        }
    }
    Ok(reader.join().unwrap_or_default())
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
    fn an_agents_file_key_may_spell_the_agent_type_as_a_team_config_does() {
        for key in ["claude", "Claude", "claude-code"] {
            let file = AgentsFile::parse(&format!(
                r#"{{"agents": {{"{key}": {{"command": "/opt/claude"}}}}}}"#
            ))
            .unwrap();
            let command = file.command_for("max", "claude").unwrap();
            assert_eq!(command.command, "/opt/claude", "{key}");
        }
        // A member id still comes first.
        let file = AgentsFile::parse(
            r#"{"agents": {"claude": {"command": "/opt/claude"}, "max": {"command": "/opt/max"}}}"#,
        )
        .unwrap();
        assert_eq!(
            file.command_for("max", "claude-code").unwrap().command,
            "/opt/max"
        );
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
        assert_eq!(
            AgentsFile::load(&path).unwrap_err(),
            format!(
                "{}: agents.x.arg: not a key here (expected \"command\", \"args\", \"output\", \"protocol\", \"approve\" or \"approvalTimeoutMs\")",
                path.display()
            )
        );
    }

    #[test]
    fn an_acp_entry_without_a_command_runs_its_agent_types_built_in_profile() {
        let file = AgentsFile::parse(
            r#"{"agents": {"claude-code": {"protocol": "acp", "approve": "reads"},
                "google-gemini": {"protocol": "acp"},
                "goose": {"protocol": "acp", "command": "goose", "args": ["acp"]},
                "opencode": {"protocol": "acp"}}}"#,
        )
        .unwrap();
        let claude = file.command_for("max", "claude").unwrap();
        assert_eq!(
            (claude.command.as_str(), claude.args.len()),
            ("claude-agent-acp", 0)
        );
        assert_eq!(claude.acp.unwrap().approve, acp::Approve::Reads);
        let gemini = file.command_for("carol", "gemini").unwrap();
        assert_eq!(
            (gemini.command.as_str(), gemini.args.as_slice()),
            ("gemini", &["--acp".to_string()][..])
        );
        let goose = file.command_for("g", "goose").unwrap();
        assert_eq!(
            (goose.command.as_str(), goose.acp.is_some()),
            ("goose", true)
        );
        // An agent type with no profile and no command: nobody can run it, and it says why.
        let team: agent_chatter::team::Team = serde_json::from_str(
            r#"{"name": "t", "members": [{"name": "kai", "kind": "human"},
                {"name": "oc", "kind": "ai", "agentType": "opencode"}]}"#,
        )
        .unwrap();
        let report = members(&team, &file, false);
        assert!(
            matches!(&report[0].answerer, Answerer::Nobody(why) if why.contains("no built-in ACP command")),
            "{report:?}"
        );
    }

    #[test]
    fn a_bad_agents_file_is_refused_naming_the_field_in_plain_words() {
        let cases = [
            (r#"{"agents": 5}"#, "agents: expected an object, found 5"),
            (
                r#"{"agents": {"max": {"comand": "x"}}}"#,
                r#"agents.max.comand: not a key here (expected "command", "args", "output", "protocol", "approve" or "approvalTimeoutMs")"#,
            ),
            (r#"{"agents": {"max": {}}}"#, "agents.max.command: missing"),
            (
                r#"{"agents": {"max": {"command": " "}}}"#,
                "agents.max.command: empty",
            ),
            (
                r#"{"agents": {"max": {"command": 5}}}"#,
                "agents.max.command: expected a string, found 5",
            ),
            (
                r#"{"agents": {"max": {"command": "x", "args": ["-p", 1]}}}"#,
                "agents.max.args[1]: expected a string, found 1",
            ),
            (
                r#"{"agents": {"max": {"command": "x", "output": "xml"}}}"#,
                r#"agents.max.output: expected "claude", "codex", "gemini" or "command", found "xml""#,
            ),
            (
                r#"{"agent": {}}"#,
                r#"agent: not a key here (expected "agents")"#,
            ),
            (
                r#"{"agents": {"max": {"protocol": "acp", "approve": "some"}}}"#,
                r#"agents.max.approve: expected "ask", "reads", "edits" or "all", found "some""#,
            ),
            (
                r#"{"agents": {"max": {"command": "x", "approve": "all"}}}"#,
                r#"agents.max.approve: only for an agent with "protocol": "acp""#,
            ),
            (
                r#"{"agents": {"max": {"protocol": "acp", "output": "claude"}}}"#,
                "agents.max.output: an ACP agent's output is read as ACP; leave it out",
            ),
            (
                r#"{"agents": {"max": {"protocol": "acp", "approvalTimeoutMs": 0}}}"#,
                "agents.max.approvalTimeoutMs: must be above 0",
            ),
            (
                r#"{"agents": {"max": {"protocol": "grpc"}}}"#,
                r#"agents.max.protocol: expected "stream" or "acp", found "grpc""#,
            ),
            ("[]", "(top level): expected an object, found an array"),
            (
                r#"{"agents": {"max": ["claude"]}}"#,
                "agents.max: expected an object, found an array",
            ),
            (
                "{\"agents\": {",
                "invalid JSON at line 1, column 12: the text ends inside an object (something is \
                 cut off or not closed)",
            ),
        ];
        for (text, want) in cases {
            match AgentsFile::parse(text) {
                Ok(file) => panic!("{text} was read: {file:?}"),
                Err(e) => assert_eq!(e, want, "{text}"),
            }
        }
        assert_eq!(AgentsFile::parse("{}").unwrap(), AgentsFile::default());
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
                ..Default::default()
            },
        );
        file.agents.insert(
            "openai-codex".into(),
            AgentCommand {
                command: "agent-chatter-no-such-codex".into(),
                args: vec![],
                output: None,
                ..Default::default()
            },
        );
        let report = members(&team, &file, false);
        let ids: Vec<&str> = report.iter().map(|m| m.member.as_str()).collect();
        assert_eq!(ids, ["max", "sarah", "carol"]);
        assert_eq!(report[0].answerer, Answerer::Cli(PathBuf::from("/bin/sh")));
        // The demo team falls back to the simulator for a CLI not installed.
        assert_eq!(report[1].answerer, Answerer::Simulator);
        assert_eq!(report[1].agent_type, "openai-codex");

        // Any other team never does: the member cannot run, and the reason says what to do.
        let mut own = team.clone();
        own.name = "own".into();
        let report = members(&own, &file, false);
        assert_eq!(report[0].answerer, Answerer::Cli(PathBuf::from("/bin/sh")));
        assert_eq!(
            report[1].answerer,
            Answerer::Nobody(
                "sarah: agent-chatter-no-such-codex is not installed (not on PATH); install it, \
                 set its command in the agents file, or start with --simulate"
                    .into()
            )
        );
        // --simulate: everyone, installed or not.
        let report = members(&own, &file, true);
        assert!(report.iter().all(|m| m.answerer == Answerer::Simulator));
        // agentType "simulated": that member, in any team.
        own.members[3].agent_type = Some("Simulated".into()); // carol (after the human)
        let report = members(&own, &file, false);
        assert_eq!(report[2].answerer, Answerer::Simulator);
    }

    #[test]
    fn locate_finds_executables_only() {
        assert!(locate("sh").is_some());
        assert!(locate("/bin/sh").is_some());
        assert!(locate("agent-chatter-no-such-cli").is_none());
    }
}
