//! `agent-chatter doctor` (docs/architecture.md §14e): what each agent type and each member of
//! a team would run on this machine, whether it can, and how to fix what cannot — before a run
//! fails. Also where the data is kept and whether the port is free. Key variables are named,
//! never their values.

use std::path::Path;

use agent_chatter::team::{Team, CLAUDE_CODE, GOOGLE_GEMINI, OPENAI_CODEX};

use crate::agents::machine::MachineSettings;
use crate::agents::{self, settings, AcpSettings, AgentCommand, AgentType, AgentsFile, Answerer};

/// What the checkup found: the report's lines, and each problem with its fix (one line each).
#[derive(Debug, Default)]
pub struct Checkup {
    pub lines: Vec<String>,
    pub problems: Vec<String>,
}

/// The vendor agent types, each with the variables its CLI reads a key from and the npm
/// package that installs it.
const VENDORS: [(&str, &[&str], &str); 3] = [
    (
        CLAUDE_CODE,
        &[
            "ANTHROPIC_API_KEY",
            "ANTHROPIC_AUTH_TOKEN",
            "CLAUDE_CODE_OAUTH_TOKEN",
        ],
        "@anthropic-ai/claude-code",
    ),
    (
        OPENAI_CODEX,
        &["OPENAI_API_KEY", "CODEX_API_KEY"],
        "@openai/codex",
    ),
    (
        GOOGLE_GEMINI,
        &[
            "GEMINI_API_KEY",
            "GOOGLE_API_KEY",
            "GOOGLE_APPLICATION_CREDENTIALS",
        ],
        "@google/gemini-cli",
    ),
];

/// Checks the agent types, the team (with the machine settings its file gives), the data
/// files around `db` and the port.
pub fn checkup(
    team: Option<(&Team, &MachineSettings, &Path)>,
    file: &AgentsFile,
    db: &Path,
    port: u16,
) -> Checkup {
    let mut up = Checkup::default();
    agent_types(&mut up, file);
    if let Some((team, machine, path)) = team {
        members(&mut up, team, machine, path, file);
        unused_entries(&mut up, team, file);
    }
    data(&mut up, db);
    port_line(&mut up, port);
    up
}

fn agent_types(up: &mut Checkup, file: &AgentsFile) {
    up.lines.push("agent types".into());
    for (agent_type, keys, package) in VENDORS {
        let Some(command) = file.command_for("", agent_type) else {
            continue;
        };
        let shown = shown(&command);
        let package = match (&command.acp, agent_type) {
            (Some(_), CLAUDE_CODE) => "@agentclientprotocol/claude-agent-acp",
            (Some(_), OPENAI_CODEX) => "@agentclientprotocol/codex-acp",
            _ => package,
        };
        let found = match agents::locate(&command.command) {
            Some(path) => format!("{} ({})", path.display(), agents::version(&path)),
            None => format!("not installed (`npm install -g {package}`)"),
        };
        let set: Vec<&str> = keys
            .iter()
            .copied()
            .filter(|k| std::env::var_os(k).is_some_and(|v| !v.is_empty()))
            .collect();
        let keys = if set.is_empty() {
            "no key variable set (it may use its own login)".to_string()
        } else {
            format!("key variables set: {}", set.join(", "))
        };
        let mode = match &command.acp {
            Some(acp) => over_acp(acp),
            None => output_mode(command.output.unwrap_or(AgentType::of(agent_type))).to_string(),
        };
        up.lines.push(format!(
            "  {agent_type}: `{shown}` · {found} · {mode} · {keys}"
        ));
    }
}

fn members(
    up: &mut Checkup,
    team: &Team,
    machine: &MachineSettings,
    path: &Path,
    file: &AgentsFile,
) {
    up.lines
        .push(format!("team {:?} ({})", team.name, path.display()));
    for agent in agents::members(team, file, false) {
        let Some(member) = team.member(&agent.member) else {
            continue;
        };
        let dressed = machine.dress(member);
        let label = format!("  {} ({})", agent.member, agent.agent_type);
        let command = match (&agent.answerer, &agent.command) {
            (Answerer::Cli(program), Some(command)) => {
                let kind = command.output.unwrap_or(AgentType::of(&agent.agent_type));
                match settings::command_for_member(command, kind, &dressed) {
                    Ok(full) => Some((program.clone(), full, kind)),
                    Err(why) => {
                        up.lines.push(format!("{label}: cannot run: {why}"));
                        up.problems.push(format!(
                            "{why}; fix the member's settings in {}",
                            path.display()
                        ));
                        None
                    }
                }
            }
            (Answerer::Simulator, _) => {
                up.lines
                    .push(format!("{label}: answered by the simulator (chosen)"));
                None
            }
            (Answerer::Nobody(why), _) => {
                up.lines.push(format!("{label}: cannot run"));
                up.problems.push(fix_for_missing(why, &agent.agent_type));
                None
            }
            (Answerer::Cli(_), None) => None,
        };
        let Some((program, full, kind)) = command else {
            continue;
        };
        if let Some(acp) = &full.acp {
            // Over ACP nothing is a flag: the model and the mode are the session's, checked
            // against what the agent offers when a delivery opens it.
            up.lines.push(format!(
                "{label}: runs `{}` in {} · {}",
                shown(&full),
                full.dir
                    .as_ref()
                    .map_or("the bridge's directory".to_string(), |d| d
                        .display()
                        .to_string()),
                over_acp(acp)
            ));
            continue;
        }
        let flags = settings::setting_args(kind, &dressed.run)
            .map_err(|e| format!("{}: {e}", member.id))
            .and_then(|args| {
                settings::check_flags(&[(
                    member.id.clone(),
                    program.clone(),
                    settings::subcommand(&full),
                    args,
                )])
            });
        let flags = match flags {
            Ok(()) => "its settings' flags are known to it".to_string(),
            Err(why) => {
                up.problems.push(why);
                "a flag of its settings is unknown to it".to_string()
            }
        };
        let env = if dressed.run.env.is_empty() {
            String::new()
        } else {
            let names: Vec<&str> = dressed.run.env.keys().map(String::as_str).collect();
            format!(" · env: {}", names.join(", "))
        };
        up.lines.push(format!(
            "{label}: runs `{}` in {} · {flags}{env}",
            shown(&full),
            full.dir
                .as_ref()
                .map_or("the bridge's directory".to_string(), |d| d
                    .display()
                    .to_string())
        ));
    }
}

/// The agents file's entries this team uses none of: each listed (the file is the machine's,
/// so an entry may be another team's), and one that looks like a misspelling of a member id
/// or an agent type of this team is a problem: that member silently runs another command.
fn unused_entries(up: &mut Checkup, team: &Team, file: &AgentsFile) {
    use agent_chatter::team::normalize_agent_type;
    let ai: Vec<_> = team.members.iter().filter(|m| m.is_ai()).collect();
    let types: Vec<String> = ai
        .iter()
        .filter_map(|m| m.agent_type.as_deref())
        .map(normalize_agent_type)
        .chain(VENDORS.iter().map(|(t, _, _)| t.to_string()))
        .collect();
    // The entries the members run by, found as a run finds them.
    let used: Vec<&str> = ai
        .iter()
        .filter_map(|m| {
            let agent_type = normalize_agent_type(m.agent_type.as_deref().unwrap_or_default());
            file.entry_for(&m.id, &agent_type).map(|(key, _)| key)
        })
        .collect();
    for key in file.agents.keys() {
        if used.contains(&key.as_str()) || team.member(key).is_some() {
            continue;
        }
        let as_type = normalize_agent_type(key);
        // Keyed by member id, not name: `"Max"` is not `max`.
        let member = team
            .find(key)
            .filter(|m| m.is_ai())
            .or_else(|| team.suggest(key).filter(|m| m.is_ai()));
        let meant = match member {
            Some(m) if m.display_name == m.id => Some(format!("member id `{}`", m.id)),
            Some(m) => Some(format!("member id `{}` ({})", m.id, m.display_name)),
            None => types
                .iter()
                // One edit away; the type itself is another team's, not a misspelling.
                .find(|t| strsim::osa_distance(&as_type.to_lowercase(), &t.to_lowercase()) == 1)
                .map(|t| format!("agent type `{t}`")),
        };
        match meant {
            Some(meant) => {
                up.lines.push(format!(
                    "  agents file entry `{key}`: used by no member of this team (did you mean {meant}?)"
                ));
                up.problems.push(format!(
                    "the agents file's entry `{key}` is used by no member of this team; if it is meant for {meant}, rename the entry to that"
                ));
            }
            None => up.lines.push(format!(
                "  agents file entry `{key}`: used by no member of this team (another team's?)"
            )),
        }
    }
}

/// A missing CLI's problem with its fix: the npm package of a vendor's CLI, else the agents file.
fn fix_for_missing(why: &str, agent_type: &str) -> String {
    let normalized = agent_chatter::team::normalize_agent_type(agent_type);
    match VENDORS.iter().find(|(t, _, _)| *t == normalized) {
        Some((_, _, package)) if why.contains("is not installed") => {
            format!("{why} (`npm install -g {package}`)")
        }
        _ => why.to_string(),
    }
}

fn data(up: &mut Checkup, db: &Path) {
    up.lines.push("data".into());
    let dir = crate::files::parent_dir(db);
    up.lines.push(format!("  directory: {}", described(&dir)));
    up.lines.push(format!("  database:  {}", described(db)));
    let token = crate::token::path_for(db);
    up.lines.push(format!("  token:     {}", described(&token)));
    for (file, what) in [(db, "database"), (token.as_path(), "token")] {
        if let Some(mode) = mode_of(file) {
            if mode & 0o077 != 0 {
                up.problems.push(format!(
                    "the {what} {} is open to other users (mode {mode:04o}): `chmod 600 {}`",
                    file.display(),
                    file.display()
                ));
            }
        }
    }
}

fn port_line(up: &mut Checkup, port: u16) {
    let free = std::net::TcpListener::bind(("127.0.0.1", port)).is_ok();
    up.lines.push(format!(
        "port 127.0.0.1:{port}: {}",
        if free {
            "free"
        } else {
            "in use (a bridge already running? `--port N` picks another)"
        }
    ));
}

fn mode_of(path: &Path) -> Option<u32> {
    use std::os::unix::fs::MetadataExt;
    std::fs::symlink_metadata(path)
        .ok()
        .map(|m| m.mode() & 0o777)
}

/// `path (0600)`, or that it does not exist yet.
fn described(path: &Path) -> String {
    match mode_of(path) {
        Some(mode) => format!("{} ({mode:04o})", path.display()),
        None => format!(
            "{} (not made yet: serve makes it, owner-only)",
            path.display()
        ),
    }
}

/// How a member over ACP runs, in one phrase: the protocol, its approval rule and wait.
fn over_acp(acp: &AcpSettings) -> String {
    format!(
        "ACP · {} · an unanswered question is rejected after {} s",
        acp.approve.name(),
        acp.approval_timeout.as_secs()
    )
}

fn output_mode(kind: AgentType) -> &'static str {
    match kind {
        AgentType::Claude | AgentType::Gemini => "stream-json",
        AgentType::Codex => "exec --json",
        AgentType::Command => "plain output",
    }
}

/// A command line as a user would type it.
fn shown(command: &AgentCommand) -> String {
    std::iter::once(&command.command)
        .chain(&command.args)
        .map(|w| {
            if !w.is_empty() && !w.contains(|c: char| c.is_whitespace() || "\"'\\$`".contains(c)) {
                w.clone()
            } else {
                format!("{w:?}")
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}
