//! Members' run settings (docs/architecture.md §14c): env, working directory, extra arguments,
//! model, permissions, timeout — turned into the command that runs, checked against the
//! installed CLI, and kept to what the machine's files say.
//!
//! Only files on the machine set them (the team file of `serve --team`, `chat --team`, `/team
//! deploy`); the hub holds them by member id (`machine.rs`), and no team in a session log
//! carries them: the page can rename, re-prompt and re-budget a team, never change what runs,
//! where, or with which rights.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use agent_chatter::team::{Member, PromptFormat, RunSettings};
use agent_chatter::usage::Usd;

use super::{AgentCommand, AgentType};

/// The arguments `run`'s model and permission mode add for a CLI read as `kind`, then its
/// `additionalArgs`. A plain command has no known flags: asking it for a model or a mode is
/// an error ([`setting_args`]'s caller names the member).
pub(crate) fn setting_args(kind: AgentType, run: &RunSettings) -> Result<Vec<String>, String> {
    let mut args = Vec::new();
    if let Some(model) = &run.model {
        let flag = match kind {
            AgentType::Claude => "--model",
            AgentType::Codex | AgentType::Gemini => "-m",
            AgentType::Command => {
                return Err("model: a plain command has no model flag; pass it in \
                            additionalArgs"
                    .to_string())
            }
        };
        args.extend([flag.to_string(), model.clone()]);
    }
    if let Some(mode) = run.permission_mode {
        // The core's one table (`PermissionMode::cli_flag`), which the page shows too.
        let format = match kind {
            AgentType::Claude => PromptFormat::Claude,
            AgentType::Codex => PromptFormat::Codex,
            AgentType::Gemini => PromptFormat::Gemini,
            AgentType::Command => PromptFormat::Plain,
        };
        let Some((flag, value)) = mode.cli_flag(format) else {
            return Err(
                "permissionMode: a plain command has no permission flag; pass it in \
                 additionalArgs"
                    .to_string(),
            );
        };
        args.extend([flag.to_string(), value.to_string()]);
    }
    args.extend(run.additional_args.iter().cloned());
    Ok(args)
}

/// `command` as it runs for `member`: its arguments with the member's (before a trailing
/// `-`, the stdin prompt of `codex exec`, which must stay last), its env and working dir.
pub(crate) fn command_for_member(
    command: &AgentCommand,
    kind: AgentType,
    member: &Member,
) -> Result<AgentCommand, String> {
    // Over ACP the model and the mode are set in the session (acp/session.rs): only the
    // member's own arguments are added.
    let extra = if command.acp.is_some() {
        member.run.additional_args.clone()
    } else {
        setting_args(kind, &member.run).map_err(|e| format!("{}: {e}", member.id))?
    };
    let mut args = command.args.clone();
    let at = if args.last().is_some_and(|a| a == "-") {
        args.len() - 1
    } else {
        args.len()
    };
    args.splice(at..at, extra);
    let mut env = command.env.clone();
    env.extend(member.run.env.clone());
    Ok(AgentCommand {
        command: command.command.clone(),
        args,
        output: command.output,
        acp: command.acp,
        env,
        dir: member
            .base_dir
            .as_ref()
            .map(PathBuf::from)
            .or(command.dir.clone()),
    })
}

/// Claude Code's own spending stop (`claude --help`: `--max-budget-usd <amount>`, "Maximum
/// dollar amount to spend on API calls"), in the form [`with_budget`] passes it.
pub(crate) const BUDGET_FLAG: &str = "--max-budget-usd";

/// `command` given what is `left` under the team's cost cap for this run
/// (docs/architecture.md §14c): Claude Code stops itself once a run has spent that much, so the
/// run that crosses the cap ends near it instead of wherever its work ends. Only with a cap,
/// only to Claude run as a command, and not when the member's own arguments already set a
/// budget (their choice stands). The others are given nothing, as they have no such stop:
/// Codex (`codex exec`) and Gemini (`gemini -p`) have no budget flag and report no cost, and
/// over ACP a session has no budget to set (the adapter takes no such setting).
pub(crate) fn with_budget(
    mut command: AgentCommand,
    kind: AgentType,
    left: Option<Usd>,
) -> AgentCommand {
    let Some(left) = left else {
        return command;
    };
    if kind != AgentType::Claude
        || command.acp.is_some()
        || command
            .args
            .iter()
            .any(|a| a == BUDGET_FLAG || a.starts_with(&format!("{BUDGET_FLAG}=")))
    {
        return command;
    }
    let at = if command.args.last().is_some_and(|a| a == "-") {
        command.args.len() - 1
    } else {
        command.args.len()
    };
    command
        .args
        .splice(at..at, [BUDGET_FLAG.to_string(), budget_amount(left)]);
    command
}

/// A budget as the CLI reads it: dollars to the nearest millionth (what floating point leaves
/// of `0.015 - 0.01` reads `0.005`), without trailing zeros: `0.04`, `1.5`, `0`.
fn budget_amount(left: Usd) -> String {
    let micro = (left.dollars() * 1e6).round() / 1e6;
    let text = format!("{micro:.6}");
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// The flags a member's settings pass to its CLI: the names (`--model`, `-s`) of the
/// arguments that start with `-`, without a `=value`.
fn flags(args: &[String]) -> Vec<&str> {
    args.iter()
        .filter(|a| a.starts_with('-') && a.len() > 1 && *a != "--")
        .map(|a| a.split('=').next().unwrap_or(a))
        .collect()
}

/// Whether `help` names `flag` as a word of its own (`-m` in `-m, --model`, not in `-mx`).
fn help_mentions(help: &str, flag: &str) -> bool {
    let is_word = |c: char| c.is_ascii_alphanumeric() || c == '-' || c == '_';
    help.match_indices(flag).any(|(at, _)| {
        let before = help[..at].chars().next_back();
        let after = help[at + flag.len()..].chars().next();
        !before.is_some_and(is_word) && !after.is_some_and(is_word)
    })
}

/// The `--help` text of `program` with `subcommand` (e.g. `codex exec`), 10 s at most.
fn help_text(program: &Path, subcommand: &[String]) -> Result<String, String> {
    let mut args = subcommand.to_vec();
    args.push("--help".to_string());
    super::answer_of(program, &args, std::time::Duration::from_secs(10)).map_err(|why| match why {
        super::NoAnswer::DoesNotStart(e) => {
            format!("{} --help does not start: {e}", program.display())
        }
        super::NoAnswer::Late => format!("{} --help gave no answer within 10 s", program.display()),
    })
}

/// Checks, once at start (docs/architecture.md §14c), that each member's CLI knows every flag
/// its run settings pass: `(member id, program, its subcommand, the flags)`; the first flag
/// one does not know is an error naming the member and the flag. Each CLI's help is read
/// once.
pub(crate) fn check_flags(
    uses: &[(String, PathBuf, Vec<String>, Vec<String>)],
) -> Result<(), String> {
    let mut helps: BTreeMap<(PathBuf, Vec<String>), String> = BTreeMap::new();
    for (member, program, subcommand, args) in uses {
        let wanted = flags(args);
        if wanted.is_empty() {
            continue;
        }
        let key = (program.clone(), subcommand.clone());
        if !helps.contains_key(&key) {
            let help = help_text(program, subcommand).map_err(|e| format!("{member}: {e}"))?;
            helps.insert(key.clone(), help);
        }
        let help = &helps[&key];
        let shown = std::iter::once(program.display().to_string())
            .chain(subcommand.iter().cloned())
            .collect::<Vec<_>>()
            .join(" ");
        if let Some(flag) = wanted.into_iter().find(|f| !help_mentions(help, f)) {
            return Err(format!(
                "{member}: the installed CLI does not know the flag {flag} (it is not in \
                 `{shown} --help`); fix the member's model, permissionMode or additionalArgs \
                 in the team file"
            ));
        }
    }
    Ok(())
}

/// The subcommand words `command`'s own arguments start with (`exec` of `codex exec --json`),
/// whose `--help` lists the flags that apply.
pub(crate) fn subcommand(command: &AgentCommand) -> Vec<String> {
    command
        .args
        .iter()
        .take_while(|a| !a.starts_with('-') && !a.is_empty())
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_chatter::team::PermissionMode;

    fn member(run: RunSettings) -> Member {
        let mut team = agent_chatter::demo::team();
        let mut m = team.members.remove(1);
        m.run = run;
        m
    }

    #[test]
    fn model_and_permission_map_to_each_clis_own_flags() {
        let run = RunSettings {
            model: Some("m1".into()),
            permission_mode: Some(PermissionMode::ReadOnly),
            additional_args: vec!["--max-turns".into(), "3".into()],
            ..RunSettings::default()
        };
        let cases = [
            (
                AgentType::Claude,
                vec![
                    "--model",
                    "m1",
                    "--permission-mode",
                    "plan",
                    "--max-turns",
                    "3",
                ],
            ),
            (
                AgentType::Codex,
                vec!["-m", "m1", "-s", "read-only", "--max-turns", "3"],
            ),
            (
                AgentType::Gemini,
                vec!["-m", "m1", "--approval-mode", "plan", "--max-turns", "3"],
            ),
        ];
        for (kind, want) in cases {
            assert_eq!(setting_args(kind, &run).unwrap(), want, "{kind:?}");
        }
        for (mode, claude, codex, gemini) in [
            (
                PermissionMode::Edit,
                "acceptEdits",
                "workspace-write",
                "auto_edit",
            ),
            (
                PermissionMode::Full,
                "bypassPermissions",
                "danger-full-access",
                "yolo",
            ),
        ] {
            let run = RunSettings {
                permission_mode: Some(mode),
                ..RunSettings::default()
            };
            assert_eq!(setting_args(AgentType::Claude, &run).unwrap()[1], claude);
            assert_eq!(setting_args(AgentType::Codex, &run).unwrap()[1], codex);
            assert_eq!(setting_args(AgentType::Gemini, &run).unwrap()[1], gemini);
        }
        assert!(setting_args(AgentType::Command, &run)
            .unwrap_err()
            .starts_with("model: a plain command has no model flag"));
    }

    #[test]
    fn a_members_arguments_go_before_codexs_trailing_dash_with_its_env_and_dir() {
        let codex = super::super::default_command("openai-codex").unwrap();
        let mut m = member(RunSettings {
            model: Some("gpt-x".into()),
            env: BTreeMap::from([("OPENAI_LOG".to_string(), "debug".to_string())]),
            ..RunSettings::default()
        });
        m.base_dir = Some("/tmp".into());
        let cmd = command_for_member(&codex, AgentType::Codex, &m).unwrap();
        assert_eq!(
            cmd.args,
            [
                "exec",
                "--json",
                "--skip-git-repo-check",
                "-m",
                "gpt-x",
                "-"
            ]
        );
        assert_eq!(cmd.env.get("OPENAI_LOG").map(String::as_str), Some("debug"));
        assert_eq!(cmd.dir.as_deref(), Some(Path::new("/tmp")));
        assert_eq!(subcommand(&codex), ["exec"]);
    }

    #[test]
    fn only_claude_run_as_a_command_is_given_what_is_left_under_the_cap() {
        let claude = super::super::default_command("claude-code").unwrap();
        // 0.05 - 0.01 is 0.04000000000000001 in floating point: read as 0.04.
        let left = Usd::new(0.05 - 0.01);
        let given = with_budget(claude.clone(), AgentType::Claude, left);
        assert_eq!(
            given.args[given.args.len() - 2..],
            ["--max-budget-usd", "0.04"]
        );
        assert_eq!(with_budget(claude.clone(), AgentType::Claude, None), claude);
        let mut own = claude.clone();
        own.args
            .extend(["--max-budget-usd".to_string(), "9".to_string()]);
        assert_eq!(with_budget(own.clone(), AgentType::Claude, left), own);
        let codex = super::super::default_command("openai-codex").unwrap();
        assert_eq!(with_budget(codex.clone(), AgentType::Codex, left), codex);
        let gemini = super::super::default_command("google-gemini").unwrap();
        assert_eq!(with_budget(gemini.clone(), AgentType::Gemini, left), gemini);
        let acp = super::super::acp_profile("claude-code").unwrap();
        assert_eq!(with_budget(acp.clone(), AgentType::Claude, left), acp);
        for (dollars, text) in [
            (1.5, "1.5"),
            (0.0, "0"),
            (0.1234567, "0.123457"),
            (0.015 - 0.01, "0.005"),
            (3.0, "3"),
        ] {
            assert_eq!(budget_amount(Usd::new(dollars).unwrap()), text);
        }
    }

    #[test]
    fn an_unknown_flag_is_named_with_its_member() {
        assert!(help_mentions("  -m, --model <MODEL>  the model", "-m"));
        assert!(help_mentions("  -m, --model <MODEL>", "--model"));
        assert!(!help_mentions("  --model-name <X>", "--model"));
        assert!(!help_mentions("  -mx", "-m"));
        // `sh --help` on a POSIX shell prints no list of our flags.
        let uses = vec![(
            "max".to_string(),
            PathBuf::from("/bin/echo"),
            vec![],
            vec!["--permission-mode".to_string(), "plan".to_string()],
        )];
        // echo prints its arguments: "--help" only, so no --permission-mode.
        let err = check_flags(&uses).unwrap_err();
        assert!(
            err.starts_with("max: the installed CLI does not know the flag --permission-mode"),
            "{err}"
        );
        let fine = vec![(
            "max".to_string(),
            PathBuf::from("/bin/echo"),
            vec!["--model".to_string()],
            vec!["--model".to_string(), "m".to_string()],
        )];
        check_flags(&fine).unwrap();
    }
}
