//! Team configs: ours and the peer's `cli-config` 1.1/1.2 (docs/architecture.md §4, §11).
//!
//! [`load_team`] reads either format (auto-detected) and returns a validated [`Team`]; every
//! error names the JSON path and, for a member, its name (`team.members[2] (max): agentType:
//! missing for an AI member`).
//!
//! **Our format** is the camelCase JSON of [`Team`] (`{"id", "name", "members": [{"id",
//! "name", "displayName", "kind": "human"|"ai", "agentType", "systemInstruction", …}],
//! "settings": {…}}`). For hand-written files it is lenient where the meaning is obvious: a
//! member's `id` and `displayName` default to its `name`; the team's `id` and `name` default
//! to each other (or `team`). Unknown fields are ignored, except one of ours written another
//! way (`windowsize`, `window_size`): that is refused naming the key meant, since ignoring it
//! would leave the setting at its default without a word (scenarios likewise).
//!
//! **The peer's format** (`cli-config` 1.1/1.2) is recognised by `schemaVersion` or a `team`
//! object and read by [`crate::peer::cli_config`], which also writes it.

use serde::de::{self, Deserialize, Deserializer};
use serde_json::Value;

use crate::json::{self, Path};
use crate::peer::cli_config;
use crate::team::{member, settings, settings_at, Member, Team, TeamSettings};

pub use crate::team::{join_instruction_lines, ConfigError, UNLIMITED_ROUNDS};

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

/// Reads a team config in either format (auto-detected) and validates it (docs/architecture.md §4).
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
        ConfigFormat::Peer => cli_config::team(value, path),
    }
}

fn ours(value: &Value, path: &Path<'_>) -> Result<Team, ConfigError> {
    let obj = json::object(value, *path)?;
    obj.refuse_near_misses(&["id", "name", "members", "settings"])?;
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
