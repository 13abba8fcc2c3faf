//! A team's invariants (docs/architecture.md §4), checked whichever format it was read from.

use super::{ConfigError, Team, TeamSettings, RESERVED_MEMBER};
use crate::hash::HashMap;
use crate::json::Path;
use crate::markers::normalize_identifier;

impl Team {
    /// Checks the invariants of docs/architecture.md §4: at least one human; unique ids; unique
    /// names once normalised (so `[NEXT: …]` is never ambiguous); an agent type for every AI
    /// member; nobody called `system` (reserved for notices); a positive byte budget and round
    /// bound.
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

impl TeamSettings {
    /// Checks the settings rules (budgets above 0, at least one round), as a `setSettings`
    /// fact is checked: a host can refuse an edit before it becomes a fact, in the same words.
    pub fn validate(&self) -> Result<(), ConfigError> {
        validate_settings(self, &Path::Root)
    }
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

#[cfg(test)]
mod tests {
    use super::TeamSettings;

    /// A change to the default settings.
    type Edit = fn(&mut TeamSettings);

    #[test]
    fn settings_are_checked_alone_in_the_words_of_the_settings_reader() {
        let cases: [(Edit, Option<&str>); 4] = [
            (|_| {}, None),
            (
                |s| s.max_bytes = 0,
                Some("maxBytes: must be greater than 0"),
            ),
            (
                |s| s.max_tokens = Some(0),
                Some("maxTokens: must be greater than 0 (leave it out for no token budget)"),
            ),
            (|s| s.max_rounds = 0, Some("maxRounds: must be at least 1")),
        ];
        for (edit, error) in cases {
            let mut settings = TeamSettings::default();
            edit(&mut settings);
            let read = serde_json::to_string(&settings)
                .and_then(|text| serde_json::from_str::<TeamSettings>(&text));
            assert_eq!(
                settings.validate().err().map(|e| e.to_string()).as_deref(),
                error
            );
            // The same verdict as reading them from a session file.
            assert_eq!(read.is_ok(), error.is_none());
        }
    }
}
