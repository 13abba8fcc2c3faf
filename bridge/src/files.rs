//! The user's files the bridge reads: team configs, scenarios, the agents file, and the
//! members' instruction files (docs/architecture.md §11: the core takes an instruction file as
//! text; the host reads it). Every error names the file and says what is wrong with it in words a
//! user can act on (`no such file`, `not UTF-8 text: invalid byte at line 3, column 7`), never an
//! OS error number.

use std::io;
use std::path::{Path, PathBuf};

use agent_chatter::team::Team;

/// The text of `path`, read as the `what` the user gave (`team config`, `scenario`, …).
pub fn read_text(path: &Path, what: &str) -> Result<String, String> {
    let bytes = std::fs::read(path)
        .map_err(|e| format!("{}: cannot read the {what}: {}", path.display(), reason(&e)))?;
    String::from_utf8(bytes).map_err(|e| {
        let valid = &e.as_bytes()[..e.utf8_error().valid_up_to()];
        // Valid UTF-8 up to here, so lines and characters can be counted.
        let valid = std::str::from_utf8(valid).unwrap_or_default();
        let line = valid.matches('\n').count() + 1;
        let column = valid.rsplit('\n').next().unwrap_or("").chars().count() + 1;
        format!(
            "{}: the {what} is not UTF-8 text: invalid byte at line {line}, column {column} \
             (save it as UTF-8)",
            path.display()
        )
    })
}

/// An I/O error in a user's words: the common kinds by name, others by the system's text
/// without its `(os error N)` suffix.
pub fn reason(e: &io::Error) -> String {
    match e.kind() {
        io::ErrorKind::NotFound => "no such file".to_string(),
        io::ErrorKind::PermissionDenied => "permission denied".to_string(),
        io::ErrorKind::IsADirectory => "it is a directory, not a file".to_string(),
        _ => {
            let text = e.to_string();
            match text.find(" (os error") {
                Some(end) => text[..end].to_string(),
                None => text,
            }
        }
    }
}

/// Where a member's relative paths start: its `baseDir` (itself relative to the config's
/// directory), or the config's directory when it has none. `.` parts are dropped, so messages
/// show `roles/max/inst.md`, not `././roles/max/inst.md`.
fn member_dir(base_dir: Option<&str>, config_dir: &Path) -> PathBuf {
    let joined = match base_dir {
        Some(dir) => config_dir.join(dir),
        None => config_dir.to_path_buf(),
    };
    let clean: PathBuf = joined
        .components()
        .filter(|c| !matches!(c, std::path::Component::CurDir))
        .collect();
    if clean.as_os_str().is_empty() {
        PathBuf::from(".")
    } else {
        clean
    }
}

/// Reads every member's `instructionFile` into its `instruction_file_text`, so the prompts
/// carry it (docs/architecture.md §8: the system body is the instruction, then the file's text).
/// Relative paths resolve against the member's `baseDir`, and a relative `baseDir` against
/// `config_dir` (the directory of the file the team came from: the same result from any working
/// directory). A text given inline (`instructionFileText`) wins and no file is read.
///
/// A file that does not exist is a warning, returned for the caller to show, and the member
/// goes without it: the TypeScript peer's configs name files such as `AGENTS.md` before they
/// are written, and the peer skips them. A file that exists but cannot be read (permissions,
/// not UTF-8, a directory) is an error naming the member and the path. Members without
/// `instructionFile` get no file: unlike the peer, the bridge does not paste
/// `CLAUDE.md`/`AGENTS.md`/`GEMINI.md` by default, as the CLIs read those themselves.
pub fn read_instruction_files(team: &mut Team, config_dir: &Path) -> Result<Vec<String>, String> {
    let mut warnings = Vec::new();
    for member in &mut team.members {
        if member.instruction_file_text.is_some() {
            continue;
        }
        let Some(file) = member.instruction_file.as_deref() else {
            continue;
        };
        let path = member_dir(member.base_dir.as_deref(), config_dir).join(file);
        let configured = format!(
            "member {} (instructionFile {file:?}{})",
            member.id,
            member
                .base_dir
                .as_deref()
                .map_or(String::new(), |d| format!(", baseDir {d:?}"))
        );
        if !path.exists() {
            warnings.push(format!(
                "{configured}: {} does not exist; {}'s prompts go without it",
                path.display(),
                member.id
            ));
            continue;
        }
        let text =
            read_text(&path, "instruction file").map_err(|e| format!("{configured}: {e}"))?;
        member.instruction_file_text = Some(text);
    }
    Ok(warnings)
}

/// A note for each member whose `instructionFile` is named but not read (`preview` without
/// `--instruction-files`): its prompts here lack the file's text, as the npm package's and the
/// page's previews of the same file do, while `chat` and `serve` would send it.
pub fn unread_instruction_files(team: &Team) -> Vec<String> {
    team.members
        .iter()
        .filter(|m| m.instruction_file_text.is_none())
        .filter_map(|m| {
            let file = m.instruction_file.as_deref()?;
            Some(format!(
                "member {} names instructionFile {file:?}, which is not read: this is the \
                 preview the npm package and the page give; --instruction-files adds it, as \
                 chat and serve do",
                m.id
            ))
        })
        .collect()
}

/// A team config from `path`, with its members' instruction files read; warnings (a named
/// instruction file that does not exist) are printed on stderr.
pub fn read_team(path: &Path) -> Result<Team, String> {
    read_team_with_digest(path).map(|(team, _)| team)
}

/// [`read_team`], and the SHA-256 (hex) of the file's bytes as read.
pub fn read_team_with_digest(path: &Path) -> Result<(Team, String), String> {
    let text = read_text(path, "team config")?;
    let digest = {
        use sha2::{Digest, Sha256};
        Sha256::digest(text.as_bytes())
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<String>()
    };
    let mut team =
        agent_chatter::config::load_team(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    // Each member's working directory, checked and made absolute (docs/architecture.md §14c).
    resolve_base_dirs(&mut team, &parent_dir(path))
        .map_err(|e| format!("{}: {e}", path.display()))?;
    let warnings = read_instruction_files(&mut team, &parent_dir(path))
        .map_err(|e| format!("{}: {e}", path.display()))?;
    warn(path, &warnings);
    Ok((team, digest))
}

/// Resolves every member's `baseDir` against `config_dir` (the team file's directory, so the
/// same file works from any working directory) into an absolute path, and checks it is a
/// directory: an agent never starts in a place that does not exist.
fn resolve_base_dirs(team: &mut Team, config_dir: &Path) -> Result<(), String> {
    for (i, member) in team.members.iter_mut().enumerate() {
        let Some(dir) = member.base_dir.as_deref() else {
            continue;
        };
        let joined = config_dir.join(dir);
        let resolved = match std::fs::canonicalize(&joined) {
            Ok(path) if path.is_dir() => path,
            Ok(path) => {
                return Err(format!(
                    "members[{i}] ({}).baseDir: {} is not a directory",
                    member.id,
                    path.display()
                ))
            }
            Err(e) => {
                return Err(format!(
                    "members[{i}] ({}).baseDir: {} {}",
                    member.id,
                    joined.display(),
                    if e.kind() == std::io::ErrorKind::NotFound {
                        "does not exist".to_string()
                    } else {
                        format!("cannot be used: {}", reason(&e))
                    }
                ))
            }
        };
        member.base_dir = Some(resolved.to_string_lossy().into_owned());
    }
    Ok(())
}

/// Prints each warning about `path` on stderr.
pub fn warn(path: &Path, warnings: &[String]) {
    for warning in warnings {
        eprintln!("agent-chatter: warning: {}: {warning}", path.display());
    }
}

/// The directory `path` is in (`.` for a bare file name).
pub fn parent_dir(path: &Path) -> PathBuf {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn team_with(member_fields: &str) -> Team {
        agent_chatter::config::load_team(&format!(
            r#"{{"name": "t", "members": [
                {{"name": "kailai", "kind": "human"}},
                {{"name": "max", "kind": "ai", "agentType": "claude", {member_fields}}}]}}"#
        ))
        .unwrap()
    }

    #[test]
    fn an_instruction_file_is_read_relative_to_the_members_base_dir() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("roles/max")).unwrap();
        std::fs::write(dir.path().join("roles/max/inst.md"), "Be brief.\n").unwrap();
        let mut team = team_with(r#""instructionFile": "inst.md", "baseDir": "roles/max""#);
        read_instruction_files(&mut team, dir.path()).unwrap();
        assert_eq!(
            team.members[1].instruction_file_text.as_deref(),
            Some("Be brief.\n")
        );
    }

    #[test]
    fn without_a_base_dir_the_configs_directory_is_the_base() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("inst.md"), "From the config's dir.").unwrap();
        let mut team = team_with(r#""instructionFile": "inst.md""#);
        read_instruction_files(&mut team, dir.path()).unwrap();
        assert_eq!(
            team.members[1].instruction_file_text.as_deref(),
            Some("From the config's dir.")
        );
    }

    #[test]
    fn an_inline_instruction_file_text_wins_and_no_file_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let mut team =
            team_with(r#""instructionFile": "missing.md", "instructionFileText": "inline""#);
        read_instruction_files(&mut team, dir.path()).unwrap();
        assert_eq!(
            team.members[1].instruction_file_text.as_deref(),
            Some("inline")
        );
    }

    #[test]
    fn a_missing_instruction_file_is_a_warning_naming_member_and_path() {
        let dir = tempfile::tempdir().unwrap();
        let mut team = team_with(r#""instructionFile": "missing.md", "baseDir": "./roles""#);
        let warnings = read_instruction_files(&mut team, dir.path()).unwrap();
        let path = dir.path().join("roles").join("missing.md");
        assert_eq!(
            warnings,
            [format!(
                "member max (instructionFile \"missing.md\", baseDir \"./roles\"): {} does not \
                 exist; max's prompts go without it",
                path.display()
            )]
        );
        assert_eq!(team.members[1].instruction_file_text, None);
    }

    #[test]
    fn an_instruction_file_that_exists_but_cannot_be_read_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("inst.md")).unwrap();
        let mut team = team_with(r#""instructionFile": "inst.md""#);
        let error = read_instruction_files(&mut team, dir.path()).unwrap_err();
        assert_eq!(
            error,
            format!(
                "member max (instructionFile \"inst.md\"): {}: cannot read the instruction \
                 file: it is a directory, not a file",
                dir.path().join("inst.md").display()
            )
        );
    }

    #[test]
    fn a_file_that_is_not_utf8_is_refused_at_its_line_and_column() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.json");
        std::fs::write(&path, b"{\n  \"name\": \"caf\xe9\"\n}").unwrap();
        assert_eq!(
            read_text(&path, "team config").unwrap_err(),
            format!(
                "{}: the team config is not UTF-8 text: invalid byte at line 2, column 15 \
                 (save it as UTF-8)",
                path.display()
            )
        );
    }

    #[test]
    fn io_errors_read_as_words_without_os_error_numbers() {
        let dir = tempfile::tempdir().unwrap();
        let cases = [
            (dir.path().join("nothing.json"), "no such file"),
            (dir.path().to_path_buf(), "it is a directory, not a file"),
        ];
        for (path, want) in cases {
            let error = read_text(&path, "scenario").unwrap_err();
            assert!(error.ends_with(want), "{error}");
            assert!(!error.contains("os error"), "{error}");
        }
    }

    #[test]
    fn a_base_dir_must_exist_and_is_resolved_against_the_team_files_directory() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("work")).unwrap();
        let mut team = agent_chatter::demo::team();
        team.members[1].base_dir = Some("work".into());
        resolve_base_dirs(&mut team, dir.path()).unwrap();
        let want = std::fs::canonicalize(dir.path().join("work")).unwrap();
        assert_eq!(team.members[1].base_dir.as_deref(), want.to_str());
        team.members[2].base_dir = Some("nope".into());
        let err = resolve_base_dirs(&mut team, dir.path()).unwrap_err();
        assert!(
            err.starts_with("members[2] (sarah).baseDir: ") && err.ends_with("nope does not exist"),
            "{err}"
        );
    }
}
