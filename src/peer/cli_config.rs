//! The peer's team config, `cli-config` 1.1/1.2 (`@testany/agent-chatter-core` 1.1.8,
//! `cli-config-v1.2.schema.json`): read into our [`Team`] and written back
//! ([`to_peer_config`]). [`crate::config::load_team`] tells it from ours (by `schemaVersion` or
//! a `team` object); members and settings are read by the rules both formats share
//! ([`crate::team`]).
//!
//! Mapping:
//! - `team.name` → [`Team::id`], `team.displayName` (else `team.name`) → [`Team::name`];
//! - each member: `name` → id and name (the peer has no separate id; an explicit `id` is
//!   honoured), `displayName` (else `name`), `type` → kind, `agentType` (normalised),
//!   `systemInstruction` (string or array of lines), `instructionFile` and `baseDir` kept as
//!   paths (the host reads the file, §11), `windowSize` (our extension; the peer allows extra
//!   member fields);
//! - `maxRounds` → [`TeamSettings::max_rounds`] (`0`, "unlimited" there, becomes
//!   [`UNLIMITED_ROUNDS`]), `conversation.maxAgentResponseTime` → `max_agent_response_ms`.
//!
//! Not carried over: agent definitions (`agents`), roles, theme colours, `env`, and the
//! team-level `instructionFile` (no place in the model; the bridge may read it itself). The
//! schema's "at least 2 members" rule is kept; its required-but-unused fields (`role`,
//! `description`, `baseDir`) and its member-name pattern are not enforced, as the peer's own
//! code does not either (its multi-role demo lacks `baseDir`).

use serde_json::{json, Map, Value};

use crate::json::{self, Path};
use crate::team::{member, ConfigError, MemberKind, Team, TeamSettings, UNLIMITED_ROUNDS};

/// Schema versions of the peer's format we read.
pub(crate) const PEER_SCHEMA_VERSIONS: [&str; 2] = ["1.1", "1.2"];
/// The schema version [`to_peer_config`] writes.
pub(crate) const PEER_SCHEMA_VERSION: &str = "1.2";
/// The peer's schema requires two members; ours only one human.
pub(crate) const PEER_MIN_MEMBERS: usize = 2;
/// The peer's schema minimum for `conversation.maxAgentResponseTime`.
pub(crate) const PEER_MIN_RESPONSE_MS: u64 = 1000;

pub(crate) fn team(value: &Value, path: &Path<'_>) -> Result<Team, ConfigError> {
    let obj = json::object(value, *path)?;
    let version_path = path.key("schemaVersion");
    match obj.required("schemaVersion")? {
        Value::String(v) if PEER_SCHEMA_VERSIONS.contains(&v.as_str()) => {}
        other => {
            return Err(ConfigError::UnsupportedSchemaVersion {
                path: version_path.to_string(),
                found: match other {
                    Value::String(s) => format!("{s:?}"),
                    v => json::describe(v),
                },
            })
        }
    }
    let team_path = path.key("team");
    let team_obj = json::object(obj.required("team")?, team_path)?;
    let name = team_obj.non_empty_str("name")?.trim();
    let display = team_obj
        .opt_str("displayName")?
        .map(str::trim)
        .filter(|s| !s.is_empty());
    let members_path = team_path.key("members");
    let items = json::array(team_obj.required("members")?, &members_path)?;
    if items.len() < PEER_MIN_MEMBERS {
        return Err(ConfigError::TooFewMembers {
            path: members_path.to_string(),
            min: PEER_MIN_MEMBERS,
            found: items.len(),
        });
    }
    let members = items
        .iter()
        .enumerate()
        .map(|(i, v)| member(v, &members_path.index(i), "type"))
        .collect::<Result<Vec<_>, _>>()?;

    let mut settings = TeamSettings::default();
    if let Some(rounds) = obj.opt_usize("maxRounds")? {
        settings.max_rounds = if rounds == 0 {
            UNLIMITED_ROUNDS
        } else {
            rounds
        };
    }
    let conversation_path = path.key("conversation");
    if let Some(v) = obj.get("conversation") {
        let conversation = json::object(v, conversation_path)?;
        if let Some(ms) = conversation.opt_u64("maxAgentResponseTime")? {
            if ms < PEER_MIN_RESPONSE_MS {
                let at = conversation_path.key("maxAgentResponseTime");
                return Err(at
                    .invalid(format!(
                        "{ms} ms is below the minimum of {PEER_MIN_RESPONSE_MS} ms"
                    ))
                    .into());
            }
            settings.max_agent_response_ms = Some(ms);
        }
    }
    let team = Team {
        id: name.to_string(),
        name: display.unwrap_or(name).to_string(),
        members,
        settings,
    };
    team.validate_at(&members_path, &path.key("settings"))?;
    Ok(team)
}

/// Why `team` cannot be written as the peer's cli-config, which needs at least
/// `PEER_MIN_MEMBERS` members (ours allows a lone human); `None` when it can. Found by
/// fuzzing: exporting such a team gave a file no reader accepts.
pub fn peer_export_problem(team: &Team) -> Option<String> {
    (team.members.len() < PEER_MIN_MEMBERS).then(|| {
        format!(
            "the peer's cli-config needs at least {PEER_MIN_MEMBERS} members and this team has {}: add a member, or save the team in our format",
            team.members.len()
        )
    })
}

/// Writes `team` in the peer's `cli-config` 1.2 format, so a team edited here runs there too.
///
/// The schema's required fields we do not model get neutral values (`description: ""`,
/// `role` = the member's kind), and so do those it requires of every member: a member without
/// `systemInstruction` gets `""` (read back as none) and one without `baseDir` gets `"."`
/// (the bridge resolves both `.` and no `baseDir` to the config file's directory; the peer,
/// to the directory it runs in). `instructionFile` is written when set. Lost on the way (the schema has no place for them): the window, byte
/// budget, pin-first, delivery and compaction settings and the instruction file's text; a
/// member's `windowSize` and run settings are kept (members allow extra fields). Reading the result back with
/// [`crate::config::load_team`] gives the same team apart from those.
pub fn to_peer_config(team: &Team) -> Value {
    let members: Vec<Value> = team
        .members
        .iter()
        .map(|m| {
            let mut o = Map::new();
            o.insert("name".into(), json!(m.name));
            if m.id != m.name {
                o.insert("id".into(), json!(m.id));
            }
            o.insert("displayName".into(), json!(m.display_name));
            let kind = match m.kind {
                MemberKind::Human => "human",
                MemberKind::Ai => "ai",
            };
            o.insert("type".into(), json!(kind));
            o.insert("role".into(), json!(kind));
            let optional = [
                ("agentType", &m.agent_type),
                ("instructionFile", &m.instruction_file),
            ];
            for (key, value) in optional {
                if let Some(v) = value {
                    o.insert(key.into(), json!(v));
                }
            }
            // Required of every member by the schema (TeamMemberConfig).
            o.insert(
                "systemInstruction".into(),
                json!(m.system_instruction.as_deref().unwrap_or("")),
            );
            o.insert(
                "baseDir".into(),
                json!(m.base_dir.as_deref().unwrap_or(".")),
            );
            if let Some(w) = m.window_size {
                o.insert("windowSize".into(), json!(w));
            }
            // `env` and `additionalArgs` are the peer's own; the others ride along as extra
            // member fields, which its reader keeps.
            if let Ok(Value::Object(run)) = serde_json::to_value(&m.run) {
                o.extend(run);
            }
            Value::Object(o)
        })
        .collect();
    let mut root = Map::new();
    root.insert("schemaVersion".into(), json!(PEER_SCHEMA_VERSION));
    root.insert(
        "team".into(),
        json!({
            "name": team.id,
            "displayName": team.name,
            "description": "",
            "members": members,
        }),
    );
    // `UNLIMITED_ROUNDS` (or more, natively) is the peer's `0`.
    let rounds = match u32::try_from(team.settings.max_rounds) {
        Ok(r) if r < u32::MAX => team.settings.max_rounds,
        _ => 0,
    };
    root.insert("maxRounds".into(), json!(rounds));
    if let Some(ms) = team.settings.max_agent_response_ms {
        root.insert("conversation".into(), json!({ "maxAgentResponseTime": ms }));
    }
    Value::Object(root)
}
