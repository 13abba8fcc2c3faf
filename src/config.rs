//! Team configs: ours and the peer's `cli-config` 1.1/1.2 (DESIGN §4, §11).
//!
//! [`load_team`] reads either format (auto-detected) and returns a validated [`Team`]; every
//! error names the JSON path and, for a member, its name (`team.members[2] (max): agentType:
//! missing for an AI member`).
//!
//! **Our format** is the camelCase JSON of [`Team`] (`{"id", "name", "members": [{"id",
//! "name", "displayName", "kind": "human"|"ai", "agentType", "systemInstruction", …}],
//! "settings": {…}}`). For hand-written files it is lenient where the meaning is obvious: a
//! member's `id` and `displayName` default to its `name`; the team's `id` and `name` default
//! to each other (or `team`). Unknown fields are ignored.
//!
//! **The peer's format** (`@testany/agent-chatter-core` 1.1.8, `cli-config-v1.2.schema.json`)
//! is recognised by `schemaVersion` or a `team` object. Mapping:
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

use crate::hash::HashMap;

use serde::de::{self, Deserialize, Deserializer};
use serde_json::{json, Map, Value};
use thiserror::Error;

use crate::json::{self, Obj, Path};
use crate::json::{FieldError, JsonSyntaxError};
use crate::markers::normalize_identifier;
use crate::team::{
    normalize_agent_type, CompactionStrategy, DeliveryPolicy, Member, MemberKind, Team,
    TeamSettings,
};
use crate::tokens::TokenEstimator;

/// Schema versions of the peer's format we read.
pub const PEER_SCHEMA_VERSIONS: [&str; 2] = ["1.1", "1.2"];
/// The schema version [`to_peer_config`] writes.
pub const PEER_SCHEMA_VERSION: &str = "1.2";
/// The peer's schema requires two members; ours only one human.
pub const PEER_MIN_MEMBERS: usize = 2;
/// The peer's schema minimum for `conversation.maxAgentResponseTime`.
pub const PEER_MIN_RESPONSE_MS: u64 = 1000;
/// The peer's `maxRounds: 0` ("unlimited"): a bound no conversation reaches, and one that
/// reads back on every host (a 64-bit `usize::MAX` would not fit a wasm32 `usize`).
pub const UNLIMITED_ROUNDS: usize = u32::MAX as usize;
/// Reserved for system notices (DESIGN §11b): no member may be called this.
pub const RESERVED_MEMBER: &str = "system";

/// A team config that cannot be used. `member` fields read like `team.members[2] (max)`.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ConfigError {
    #[error(transparent)]
    Syntax(#[from] JsonSyntaxError),
    #[error(transparent)]
    Field(#[from] FieldError),
    #[error("{path}: unsupported {found}, expected 1.1 or 1.2")]
    UnsupportedSchemaVersion { path: String, found: String },
    #[error("{path}: at least {min} members required, found {found}")]
    TooFewMembers {
        path: String,
        min: usize,
        found: usize,
    },
    #[error("{path}: no human member; a team needs at least one, because the first message must come from a human")]
    NoHuman { path: String },
    #[error("{member}: id: duplicate {id:?}, already used by {first}")]
    DuplicateId {
        member: String,
        id: String,
        first: String,
    },
    #[error("{member}: name: {name:?} is the same as the name of {first} once case, spaces, '-' and '_' are ignored; names must differ so [NEXT: …] can tell them apart")]
    DuplicateName {
        member: String,
        name: String,
        first: String,
    },
    #[error("{member}: agentType: missing for an AI member (e.g. \"claude-code\", \"openai-codex\", \"google-gemini\")")]
    MissingAgentType { member: String },
    #[error("{member}: {field}: \"system\" is reserved for system notices, choose another")]
    Reserved { member: String, field: &'static str },
    #[error("{member}: {field}: {reason}")]
    Member {
        member: String,
        field: &'static str,
        reason: String,
    },
}

/// The two team-config formats [`load_team`] reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConfigFormat {
    /// The camelCase JSON of [`Team`].
    Ours,
    /// The peer's `cli-config` 1.1/1.2.
    Peer,
}

/// Which format `value` is in: the peer's has `schemaVersion` or a `team` object.
pub fn detect_format(value: &Value) -> ConfigFormat {
    let peer =
        value.get("schemaVersion").is_some() || value.get("team").is_some_and(Value::is_object);
    if peer {
        ConfigFormat::Peer
    } else {
        ConfigFormat::Ours
    }
}

/// Reads a team config in either format (auto-detected) and validates it (DESIGN §4).
pub fn load_team(json: &str) -> Result<Team, ConfigError> {
    team_from_value(&json::parse(json)?)
}

/// [`load_team`] for an already parsed value (the npm package and scenarios use this).
pub fn team_from_value(value: &Value) -> Result<Team, ConfigError> {
    team_at(value, &Path::Root)
}

/// Reads and validates the team config at `path` of a larger document.
pub(crate) fn team_at(value: &Value, path: &Path<'_>) -> Result<Team, ConfigError> {
    match detect_format(value) {
        ConfigFormat::Ours => ours(value, path),
        ConfigFormat::Peer => peer(value, path),
    }
}

fn ours(value: &Value, path: &Path<'_>) -> Result<Team, ConfigError> {
    let obj = json::object(value, *path)?;
    let id = obj.opt_str("id")?.map(str::trim).filter(|s| !s.is_empty());
    let name = obj
        .opt_str("name")?
        .map(str::trim)
        .filter(|s| !s.is_empty());
    let members_path = path.key("members");
    let items = json::array(obj.required("members")?, &members_path)?;
    let members = items
        .iter()
        .enumerate()
        .map(|(i, v)| member(v, &members_path.index(i), "kind"))
        .collect::<Result<Vec<_>, _>>()?;
    let settings_path = path.key("settings");
    let settings = match obj.get("settings") {
        Some(v) => settings(json::object(v, settings_path)?)?,
        None => TeamSettings::default(),
    };
    let team = Team {
        id: id.or(name).unwrap_or("team").to_string(),
        name: name.or(id).unwrap_or("team").to_string(),
        members,
        settings,
    };
    team.validate_at(&members_path, &settings_path)?;
    Ok(team)
}

fn peer(value: &Value, path: &Path<'_>) -> Result<Team, ConfigError> {
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

/// One member, in either format; they differ only in the key of the kind (`kind` / `type`).
fn member(value: &Value, path: &Path<'_>, kind_key: &str) -> Result<Member, ConfigError> {
    let obj = json::object(value, *path)?;
    let name = obj.str("name")?.trim();
    let id = obj.opt_str("id")?.map(str::trim).unwrap_or(name);
    let display_name = obj
        .opt_str("displayName")?
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .unwrap_or(name);
    let kind_path = path.key(kind_key);
    let kind = match obj.str(kind_key)? {
        "human" => MemberKind::Human,
        "ai" => MemberKind::Ai,
        other => {
            return Err(kind_path
                .invalid(format!("expected \"human\" or \"ai\", found {other:?}"))
                .into())
        }
    };
    let agent_type = obj
        .opt_str("agentType")?
        .map(normalize_agent_type)
        .filter(|t| !t.is_empty());
    let system_instruction =
        system_instruction_at(obj.get("systemInstruction"), &path.key("systemInstruction"))?;
    Ok(Member {
        id: id.to_string(),
        name: name.to_string(),
        display_name: display_name.to_string(),
        kind,
        agent_type,
        system_instruction,
        instruction_file: owned(obj.opt_str("instructionFile")?),
        instruction_file_text: owned(obj.opt_str("instructionFileText")?),
        base_dir: owned(obj.opt_str("baseDir")?),
        window_size: obj.opt_usize("windowSize")?,
    })
}

fn owned(s: Option<&str>) -> Option<String> {
    s.map(str::to_string)
}

/// Reads and checks team settings on their own (a session's `setSettings` fact).
pub(crate) fn settings_at(value: &Value, path: &Path<'_>) -> Result<TeamSettings, ConfigError> {
    let s = settings(json::object(value, *path)?)?;
    validate_settings(&s, path)?;
    Ok(s)
}

/// The settings rules: budgets above 0, at least one round.
pub(crate) fn validate_settings(s: &TeamSettings, path: &Path<'_>) -> Result<(), ConfigError> {
    if s.max_bytes == 0 {
        return Err(path
            .key("maxBytes")
            .invalid("must be greater than 0")
            .into());
    }
    if s.max_tokens == Some(0) {
        return Err(path
            .key("maxTokens")
            .invalid("must be greater than 0 (leave it out for no token budget)")
            .into());
    }
    if s.max_rounds == 0 {
        return Err(path.key("maxRounds").invalid("must be at least 1").into());
    }
    Ok(())
}

fn settings(obj: Obj<'_, '_>) -> Result<TeamSettings, ConfigError> {
    let mut s = TeamSettings::default();
    if let Some(w) = obj.opt_usize("windowSize")? {
        s.window_size = w;
    }
    if let Some(b) = obj.opt_usize("maxBytes")? {
        s.max_bytes = b;
    }
    if let Some(p) = obj.opt_bool("pinFirst")? {
        s.pin_first = p;
    }
    if let Some(d) = obj.opt_str("delivery")? {
        s.delivery = match d {
            "latest" => DeliveryPolicy::Latest,
            "parent" => DeliveryPolicy::Parent,
            other => {
                let reason = format!("expected \"latest\" or \"parent\", found {other:?}");
                return Err(obj.path.key("delivery").invalid(reason).into());
            }
        };
    }
    if let Some(c) = obj.opt_str("compaction")? {
        s.compaction = match c {
            "lazy" => CompactionStrategy::Lazy,
            "proactive" => CompactionStrategy::Proactive,
            other => {
                let reason = format!("expected \"lazy\" or \"proactive\", found {other:?}");
                return Err(obj.path.key("compaction").invalid(reason).into());
            }
        };
    }
    if let Some(r) = obj.opt_usize("maxRounds")? {
        s.max_rounds = r;
    }
    s.max_agent_response_ms = obj.opt_u64("maxAgentResponseMs")?;
    if let Some(e) = obj.opt_str("tokenEstimator")? {
        s.token_estimator = match e {
            "none" => TokenEstimator::None,
            "charsDiv4" => TokenEstimator::CharsDiv4,
            other => {
                let reason = format!("expected \"none\" or \"charsDiv4\", found {other:?}");
                return Err(obj.path.key("tokenEstimator").invalid(reason).into());
            }
        };
    }
    s.max_tokens = obj.opt_usize("maxTokens")?;
    Ok(s)
}

/// Joins system-instruction lines (DESIGN §4): blank entries dropped, joined with `\n`, the
/// result trimmed; nothing left → `None`. A single string is one entry.
pub fn join_instruction_lines<'a>(lines: impl IntoIterator<Item = &'a str>) -> Option<String> {
    let joined = lines
        .into_iter()
        .filter(|l| !l.trim().is_empty())
        .collect::<Vec<_>>()
        .join("\n");
    let trimmed = joined.trim();
    (!trimmed.is_empty()).then(|| trimmed.to_string())
}

/// `systemInstruction` as a string or an array of strings; a non-string entry is an error
/// naming its index (`…systemInstruction[1]: expected a string, found 123`).
pub(crate) fn system_instruction_at(
    value: Option<&Value>,
    path: &Path<'_>,
) -> Result<Option<String>, FieldError> {
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(join_instruction_lines([s.as_str()])),
        Some(Value::Array(items)) => {
            let lines = items
                .iter()
                .enumerate()
                .map(|(i, v)| json::string(v, &path.index(i)))
                .collect::<Result<Vec<_>, _>>()?;
            Ok(join_instruction_lines(lines))
        }
        Some(other) => Err(path.wrong_type("a string or an array of strings", other)),
    }
}

/// The one team reader behind serde too: `serde_json::from_str::<Team>` reads either format
/// and validates, exactly as [`load_team`] (its error text is [`ConfigError`]'s).
impl<'de> Deserialize<'de> for Team {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        team_from_value(&Value::deserialize(d)?).map_err(de::Error::custom)
    }
}

/// A member read by serde goes through the team reader's member rules (our format).
impl<'de> Deserialize<'de> for Member {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        member(&Value::deserialize(d)?, &Path::Root, "kind").map_err(de::Error::custom)
    }
}

/// Settings read by serde go through the settings reader and its checks.
impl<'de> Deserialize<'de> for TeamSettings {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        settings_at(&Value::deserialize(d)?, &Path::Root).map_err(de::Error::custom)
    }
}

impl Team {
    /// Checks the invariants of DESIGN §4: at least one human; unique ids; unique names once
    /// normalised (so `[NEXT: …]` is never ambiguous); an agent type for every AI member;
    /// nobody called `system` (reserved for notices); a positive byte budget and round bound.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let root = Path::Root;
        self.validate_at(&root.key("members"), &root.key("settings"))
    }

    pub(crate) fn validate_at(
        &self,
        members: &Path<'_>,
        settings: &Path<'_>,
    ) -> Result<(), ConfigError> {
        let label = |i: usize| format!("{} ({})", members.index(i), self.members[i].name);
        let mut ids: HashMap<&str, usize> = HashMap::default();
        let mut names: HashMap<String, usize> = HashMap::default();
        for (i, m) in self.members.iter().enumerate() {
            let field_error = |field: &'static str, reason: &str| ConfigError::Member {
                member: label(i),
                field,
                reason: reason.to_string(),
            };
            if m.id.trim().is_empty() {
                return Err(field_error("id", "empty"));
            }
            let normalized = normalize_identifier(&m.name);
            if normalized.is_empty() {
                return Err(field_error(
                    "name",
                    "empty once spaces, '-' and '_' are removed",
                ));
            }
            if normalized == RESERVED_MEMBER {
                return Err(ConfigError::Reserved {
                    member: label(i),
                    field: "name",
                });
            }
            if normalize_identifier(&m.id) == RESERVED_MEMBER {
                return Err(ConfigError::Reserved {
                    member: label(i),
                    field: "id",
                });
            }
            if m.is_ai() && m.agent_type.as_deref().is_none_or(|t| t.trim().is_empty()) {
                return Err(ConfigError::MissingAgentType { member: label(i) });
            }
            if let Some(&first) = ids.get(m.id.as_str()) {
                return Err(ConfigError::DuplicateId {
                    member: label(i),
                    id: m.id.clone(),
                    first: label(first),
                });
            }
            ids.insert(&m.id, i);
            if let Some(&first) = names.get(&normalized) {
                return Err(ConfigError::DuplicateName {
                    member: label(i),
                    name: m.name.clone(),
                    first: label(first),
                });
            }
            names.insert(normalized, i);
        }
        if self.humans().next().is_none() {
            return Err(ConfigError::NoHuman {
                path: members.to_string(),
            });
        }
        validate_settings(&self.settings, settings)?;
        Ok(())
    }
}

/// Writes `team` in the peer's `cli-config` 1.2 format, so a team edited here runs there too.
///
/// The schema's required fields we do not model get neutral values (`description: ""`,
/// `role` = the member's kind); `baseDir`, `instructionFile` and `systemInstruction` are
/// written when set. Lost on the way (the schema has no place for them): the window, byte
/// budget, pin-first, delivery and compaction settings and the instruction file's text; a
/// member's `windowSize` is kept (members allow extra fields). Reading the result back with
/// [`load_team`] gives the same team apart from those.
/// Why `team` cannot be written as the peer's cli-config, which needs at least
/// [`PEER_MIN_MEMBERS`] members (ours allows a lone human); `None` when it can. Found by
/// fuzzing: exporting such a team gave a file no reader accepts.
pub fn peer_export_problem(team: &Team) -> Option<String> {
    (team.members.len() < PEER_MIN_MEMBERS).then(|| {
        format!(
            "the peer's cli-config needs at least {PEER_MIN_MEMBERS} members and this team has {}: add a member, or save the team in our format",
            team.members.len()
        )
    })
}

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
                ("systemInstruction", &m.system_instruction),
                ("instructionFile", &m.instruction_file),
                ("baseDir", &m.base_dir),
            ];
            for (key, value) in optional {
                if let Some(v) = value {
                    o.insert(key.into(), json!(v));
                }
            }
            if let Some(w) = m.window_size {
                o.insert("windowSize".into(), json!(w));
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
