//! Reading a team's members and settings from JSON: the part both team-config formats share
//! ([`crate::config`] for ours, [`crate::peer::cli_config`] for the peer's), so a member or
//! a setting means the same, and fails the same way, in either.

use serde_json::Value;

use std::collections::BTreeMap;

use super::validate::validate_settings;
use super::{
    normalize_agent_type, CompactionStrategy, ConfigError, DeliveryPolicy, ExtraSection, Member,
    MemberKind, PermissionMode, RunSettings, TeamSettings,
};
use crate::json::{self, FieldError, Obj, Path};
use crate::tokens::TokenEstimator;
use crate::usage::Usd;

/// One member, in either format; they differ only in the key of the kind (`kind` / `type`).
pub(crate) fn member(
    value: &Value,
    path: &Path<'_>,
    kind_key: &str,
) -> Result<Member, ConfigError> {
    let obj = json::object(value, *path)?;
    if kind_key == "kind" {
        // Ours only: the peer's format ignores unknown keys, as the peer does
        // (docs/architecture.md §11).
        obj.refuse_near_misses(&[
            "id",
            "name",
            "displayName",
            "kind",
            "agentType",
            "systemInstruction",
            "instructionFile",
            "instructionFileText",
            "baseDir",
            "windowSize",
            "env",
            "additionalArgs",
            "model",
            "permissionMode",
            "timeoutMs",
            "extraSections",
        ])?;
    }
    let name = obj.str("name")?.trim();
    let id = obj.opt_str("id")?.map(str::trim).unwrap_or(name);
    let display_name = obj
        .opt_str("displayName")?
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .unwrap_or(name);
    let kinds = [("human", MemberKind::Human), ("ai", MemberKind::Ai)];
    let kind = json::one_of(obj.str(kind_key)?, &kinds, &path.key(kind_key))?;
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
        run: run_settings(&obj)?,
        extra_sections: extra_sections(obj.get("extraSections"), &path.key("extraSections"))?,
    })
}

/// A member's extra sections (docs/architecture.md §10: `[{name, content, priority,
/// compactable}]`), in either format: a team that names them never has them ignored, and an
/// unknown key in one is an error with its path (a misspelt `compactible` would otherwise
/// turn trimming off without a word).
fn extra_sections(
    value: Option<&Value>,
    path: &Path<'_>,
) -> Result<Vec<ExtraSection>, ConfigError> {
    let Some(value) = value else {
        return Ok(Vec::new());
    };
    let mut sections = Vec::new();
    for (i, item) in json::array(value, path)?.iter().enumerate() {
        let at = path.index(i);
        let obj = json::object(item, at)?;
        obj.refuse_unknown(&["name", "content", "priority", "compactable"])?;
        let name = obj.non_empty_str("name")?.trim().to_string();
        if sections.iter().any(|s: &ExtraSection| s.name == name) {
            return Err(at
                .key("name")
                .invalid(format!(
                    "duplicate {name:?}: each section needs its own name"
                ))
                .into());
        }
        let priority = match obj.get("priority") {
            None => 0,
            Some(v) => v
                .as_i64()
                .and_then(|n| i32::try_from(n).ok())
                .ok_or_else(|| at.key("priority").wrong_type("a whole number", v))?,
        };
        sections.push(ExtraSection {
            name,
            content: obj.str("content")?.to_string(),
            priority,
            compactable: obj.opt_bool("compactable")?.unwrap_or(false),
        });
    }
    Ok(sections)
}

/// A member's run settings (docs/architecture.md §14c), checked here so a bad one is refused
/// with its path wherever the team is read: an env name a shell could not hold, an empty
/// model, a mode outside the vocabulary, a zero timeout.
fn run_settings(obj: &Obj<'_, '_>) -> Result<RunSettings, ConfigError> {
    let mut env = BTreeMap::new();
    if let Some(value) = obj.get("env") {
        let path = obj.path.key("env");
        let vars = json::object(value, path)?;
        for (name, value) in vars.map {
            let var_path = path.key(name);
            let valid = name
                .chars()
                .next()
                .is_some_and(|c| c == '_' || c.is_ascii_alphabetic())
                && name.chars().all(|c| c == '_' || c.is_ascii_alphanumeric());
            if !valid {
                return Err(var_path
                    .invalid(format!(
                        "{name:?} is not an environment variable name (letters, digits and _, \
                         not starting with a digit)"
                    ))
                    .into());
            }
            env.insert(name.clone(), json::string(value, &var_path)?.to_string());
        }
    }
    let additional_args = match obj.get("additionalArgs") {
        None => Vec::new(),
        Some(value) => {
            let path = obj.path.key("additionalArgs");
            json::array(value, &path)?
                .iter()
                .enumerate()
                .map(|(i, v)| json::string(v, &path.index(i)).map(str::to_string))
                .collect::<Result<_, _>>()?
        }
    };
    let model = match obj.opt_str("model")?.map(str::trim) {
        Some("") => return Err(obj.path.key("model").invalid("empty").into()),
        other => other.map(str::to_string),
    };
    let permission_mode = obj
        .opt_str("permissionMode")?
        .map(|m| json::one_of(m, &PermissionMode::ALL, &obj.path.key("permissionMode")))
        .transpose()?;
    let timeout_ms = obj.opt_u64("timeoutMs")?;
    if timeout_ms == Some(0) {
        return Err(obj
            .path
            .key("timeoutMs")
            .invalid("must be greater than 0 (leave it out for the team's timeout)")
            .into());
    }
    Ok(RunSettings {
        env,
        additional_args,
        model,
        permission_mode,
        timeout_ms,
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

pub(crate) fn settings(obj: Obj<'_, '_>) -> Result<TeamSettings, ConfigError> {
    obj.refuse_near_misses(&[
        "windowSize",
        "maxBytes",
        "pinFirst",
        "delivery",
        "compaction",
        "maxRounds",
        "maxAgentResponseMs",
        "tokenEstimator",
        "maxTokens",
        "maxCostUsd",
    ])?;
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
        let choices = [
            ("latest", DeliveryPolicy::Latest),
            ("parent", DeliveryPolicy::Parent),
        ];
        s.delivery = json::one_of(d, &choices, &obj.path.key("delivery"))?;
    }
    if let Some(c) = obj.opt_str("compaction")? {
        let choices = [
            ("lazy", CompactionStrategy::Lazy),
            ("proactive", CompactionStrategy::Proactive),
        ];
        s.compaction = json::one_of(c, &choices, &obj.path.key("compaction"))?;
    }
    if let Some(r) = obj.opt_usize("maxRounds")? {
        s.max_rounds = r;
    }
    s.max_agent_response_ms = obj.opt_u64("maxAgentResponseMs")?;
    if let Some(e) = obj.opt_str("tokenEstimator")? {
        let choices = [
            ("none", TokenEstimator::None),
            ("charsDiv4", TokenEstimator::CharsDiv4),
        ];
        s.token_estimator = json::one_of(e, &choices, &obj.path.key("tokenEstimator"))?;
    }
    s.max_tokens = obj.opt_usize("maxTokens")?;
    if let Some(v) = obj.get("maxCostUsd") {
        let path = obj.path.key("maxCostUsd");
        let dollars = v
            .as_f64()
            .ok_or_else(|| path.wrong_type("a number of dollars", v))?;
        match Usd::new(dollars) {
            Some(max) if dollars > 0.0 => s.max_cost_usd = Some(max),
            _ => {
                return Err(path
                    .invalid(format!(
                        "must be more than 0 dollars, found {dollars} (leave it out for no cap)"
                    ))
                    .into())
            }
        }
    }
    Ok(s)
}

/// Joins system-instruction lines (docs/architecture.md §4): blank entries dropped, joined with
/// `\n`, the result trimmed; nothing left → `None`. A single string is one entry.
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
