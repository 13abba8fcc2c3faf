//! The members' machine settings (docs/architecture.md §14c "Secrets and paths stay on the
//! machine"): run settings (env, arguments, model, permissions, timeout) and working
//! directories, read from the team file on this machine and held by the hub beside the
//! session, never in it. The session's log, its frames, exports, downloads and share links hold
//! none (the core drops them from every team it is given).
//!
//! They are kept by member id as the file gives them, so a member the page renames away and
//! back gets them again, and a member the page adds gets none. On resume they are read again
//! from the file the session remembers ([`MachineSettings::resume`]), never from the database.

use std::collections::BTreeMap;
use std::path::Path;

use agent_chatter::team::{Member, RunSettings, Team};

use crate::store::TeamFile;

/// One member's settings as its team file gives them.
#[derive(Debug, Clone, PartialEq, Eq)]
struct MemberRun {
    /// The agent type they were written for: another CLI may not know their flags.
    agent_type: Option<String>,
    run: RunSettings,
    base_dir: Option<String>,
}

/// Every member's machine settings, where they come from, and what the user should know
/// about that file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MachineSettings {
    members: BTreeMap<String, MemberRun>,
    /// For the page and `chat` (`team file /home/me/team.json`).
    source: String,
    file: Option<TeamFile>,
}

impl MachineSettings {
    /// None at all: the embedded demo team, or a session with no team file.
    pub fn none(source: impl Into<String>) -> MachineSettings {
        MachineSettings {
            members: BTreeMap::new(),
            source: source.into(),
            file: None,
        }
    }

    /// The settings `team` (just read from `file`) gives its members.
    pub fn of_team(team: &Team, file: Option<TeamFile>) -> MachineSettings {
        let members = team
            .members
            .iter()
            .filter(|m| m.has_machine_settings())
            .map(|m| {
                let run = MemberRun {
                    agent_type: m.agent_type.clone(),
                    run: m.run.clone(),
                    base_dir: m.base_dir.clone(),
                };
                (m.id.clone(), run)
            })
            .collect();
        let source = match &file {
            Some(file) => format!("team file {}", file.path.display()),
            None => "the embedded demo team".to_string(),
        };
        MachineSettings {
            members,
            source,
            file,
        }
    }

    /// Reads the team file at `path`: the team (machine settings in, for the caller to check
    /// against the installed CLIs) and its settings.
    pub fn read(path: &Path) -> Result<(Team, MachineSettings), String> {
        let (team, sha256) = crate::files::read_team_with_digest(path)?;
        let path = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        let settings = MachineSettings::of_team(&team, Some(TeamFile { path, sha256 }));
        Ok((team, settings))
    }

    /// The settings of session `session`, read again from the team file it remembers
    /// (`remembered`), and what the user must be told about it: the file is gone or cannot be
    /// read (its members then run with no settings), or it changed since (they run with
    /// the file as it is now).
    pub fn resume(session: i64, remembered: Option<TeamFile>) -> (MachineSettings, Option<String>) {
        let Some(remembered) = remembered else {
            return (
                MachineSettings::none(format!("session {session}: no team file")),
                None,
            );
        };
        let shown = remembered.path.display().to_string();
        match MachineSettings::read(&remembered.path) {
            Ok((_, mut settings)) => {
                let changed = settings
                    .file
                    .as_ref()
                    .is_some_and(|f| f.sha256 != remembered.sha256);
                if !changed {
                    return (settings, None);
                }
                settings.source = format!(
                    "team file {shown} (changed since session {session} began: read again)"
                );
                let note = format!(
                    "session {session}'s team file {shown} changed since it was deployed: its \
                     members run with the file's settings as they are now (model, permissions, \
                     env, working directory); the conversation's team is unchanged"
                );
                (settings, Some(note))
            }
            Err(why) => {
                let note = format!(
                    "session {session}'s team file cannot be read again ({why}): its members run \
                     with no run settings (no model, permissions, env or working directory of \
                     theirs); `/team deploy FILE` in chat, or `serve --team FILE`, sets them"
                );
                let mut settings = MachineSettings::none(format!(
                    "team file {shown}, which cannot be read now: no run settings"
                ));
                settings.file = Some(remembered);
                (settings, Some(note))
            }
        }
    }

    /// Where the settings come from, for the page and `chat`.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// The team file to remember with the session.
    pub fn file(&self) -> Option<&TeamFile> {
        self.file.as_ref()
    }

    /// `member` (of the team in force) with the settings its id has in the team file.
    pub fn dress(&self, member: &Member) -> Member {
        let mut dressed = member.clone();
        if let Some(file) = self.members.get(&member.id) {
            dressed.run = file.run.clone();
            dressed.base_dir = file.base_dir.clone();
        }
        dressed
    }

    /// Whether `member` runs with settings of the team file.
    pub fn has(&self, member: &str) -> bool {
        self.members.contains_key(member)
    }

    /// Checks a team sent from the page: a member whose team file gives settings must keep
    /// the agent type they were written for (another CLI would get flags it does not know, or
    /// a permission mode meant for another vendor).
    pub fn check_page_team(&self, team: &Team) -> Result<(), String> {
        for member in &team.members {
            let Some(file) = self.members.get(&member.id) else {
                continue;
            };
            if file.agent_type != member.agent_type {
                let shown = |t: &Option<String>| t.clone().unwrap_or_else(|| "none".to_string());
                return Err(format!(
                    "{}: its run settings in the {} are for agent type {}, and the team sent \
                     makes it {}; change its agentType in that file instead",
                    member.id,
                    self.source,
                    shown(&file.agent_type),
                    shown(&member.agent_type)
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;

    fn team(members: &str) -> Team {
        agent_chatter::config::load_team(&format!(
            r#"{{"id": "t", "name": "T", "members": [
                {{"id": "kailai", "name": "kailai", "displayName": "Kailai", "kind": "human"}},
                {members}]}}"#
        ))
        .unwrap()
    }

    fn file() -> Option<TeamFile> {
        Some(TeamFile {
            path: PathBuf::from("/home/me/team.json"),
            sha256: "00".into(),
        })
    }

    #[test]
    fn settings_follow_the_member_id_of_the_file_whatever_the_team_in_force_was_renamed_to() {
        let from_file = team(
            r#"{"id": "a1", "name": "a1", "displayName": "A1", "kind": "ai", "agentType": "claude",
                "model": "opus", "env": {"K": "v"}}"#,
        );
        let machine = MachineSettings::of_team(&from_file, file());
        let mut in_force = from_file.clone();
        in_force.strip_machine_settings();
        let renamed_away = Member {
            id: "a1x".into(),
            ..in_force.members[1].clone()
        };
        assert!(machine.dress(&renamed_away).run.is_empty());
        let back = Member {
            id: "a1".into(),
            ..renamed_away
        };
        let dressed = machine.dress(&back);
        assert_eq!(dressed.run.model.as_deref(), Some("opus"));
        assert_eq!(dressed.run.env["K"], "v");
    }

    #[test]
    fn a_page_team_that_moves_a_member_with_settings_to_another_cli_is_refused() {
        let from_file = team(
            r#"{"id": "a1", "name": "a1", "displayName": "A1", "kind": "ai", "agentType": "claude",
                "additionalArgs": ["--verbose"]}"#,
        );
        let machine = MachineSettings::of_team(&from_file, file());
        let mut sent = from_file.clone();
        sent.members[1].agent_type = Some("codex".into());
        let err = machine.check_page_team(&sent).unwrap_err();
        assert!(
            err.contains("a1") && err.contains("claude") && err.contains("codex"),
            "{err}"
        );
        assert!(machine.check_page_team(&from_file).is_ok());
    }
}
