//! How an AI member's agent runs (`run-settings`, docs/architecture.md §14c), read only: model,
//! permission mode, timeout, environment variable names, additional arguments, working
//! directory, and where they come from. They come from files on the machine that runs the
//! agents; the page shows them and cannot change them.

use agent_chatter::team::{PermissionMode, PromptFormat};
use leptos::prelude::*;

use crate::host::RunInfo;
use crate::status::duration_words;

#[component]
pub fn RunSettingsView(
    /// The settings shown (`None`: a human, or the bridge has not said yet).
    #[prop(into)]
    info: Signal<Option<RunInfo>>,
    /// The team's timeout (`maxAgentResponseMs`), which applies when the member sets none.
    #[prop(into)]
    team_timeout_ms: Signal<Option<u64>>,
    /// The member's prompt format: which CLI's own permission mode ours becomes.
    #[prop(into)]
    format: Signal<PromptFormat>,
) -> impl IntoView {
    move || {
        let RunInfo {
            settings,
            dir,
            source,
            note,
        } = info.get()?;
        let or_default = |v: Option<String>| v.unwrap_or_else(|| "the CLI's default".into());
        let timeout = match settings.timeout_ms {
            Some(ms) => duration_words(ms),
            None => match team_timeout_ms.get() {
                Some(ms) => format!("{} (the team's)", duration_words(ms)),
                None => "30 min (the default)".into(),
            },
        };
        let env = if settings.env.is_empty() {
            "none".to_string()
        } else {
            settings.env.keys().cloned().collect::<Vec<_>>().join(", ")
        };
        let args = if settings.additional_args.is_empty() {
            "none".to_string()
        } else {
            settings.additional_args.join(" ")
        };
        let rows = [
            ("model", or_default(settings.model.clone())),
            (
                "permission mode",
                or_default(
                    settings
                        .permission_mode
                        .map(|p| mode_words(p, format.get())),
                ),
            ),
            ("timeout", timeout),
            ("env (names only)", env),
            ("additional args", args),
            (
                "working directory",
                dir.unwrap_or_else(|| "the runner's own".into()),
            ),
            (
                "from",
                source.map_or_else(|| "defaults".into(), |s| file_name_only(&s)),
            ),
        ];
        let modes = modes_hint(format.get_untracked());
        let brief = {
            let model = settings
                .model
                .clone()
                .unwrap_or_else(|| "default model".into());
            let mode = settings
                .permission_mode
                .map_or("default permissions", |p| p.name());
            format!("{model} · {mode}")
        };
        Some(view! {
            <details class="run-settings" data-testid="run-settings">
                <summary>"run settings (read only): "{brief}</summary>
                <dl>
                    {rows.into_iter().map(|(name, value)| {
                        let title = if name == "permission mode" { modes.clone() } else { value.clone() };
                        view! {
                            <div class="run-setting" data-setting=name>
                                <dt>{name}</dt><dd title=title>{value}</dd>
                            </div>
                        }
                    }).collect_view()}
                </dl>
                <p class="run-settings-note">{note}</p>
            </details>
        })
    }
}

/// `edit: edits files … (Claude Code: --permission-mode acceptEdits)`: our mode, what it
/// allows, and the CLI's own mode it becomes for this member.
fn mode_words(mode: PermissionMode, format: PromptFormat) -> String {
    format!(
        "{}: {} ({})",
        mode.name(),
        mode.allows(),
        vendor_mode(mode, format)
    )
}

/// The CLI's own mode `mode` becomes for a member of `format` (the core's one table).
fn vendor_mode(mode: PermissionMode, format: PromptFormat) -> String {
    let cli = match format {
        PromptFormat::Claude => "Claude Code",
        PromptFormat::Codex => "Codex",
        PromptFormat::Gemini => "Gemini",
        PromptFormat::Plain => return "a plain command has no permission flag".to_string(),
    };
    match mode.cli_flag(format) {
        Some((flag, value)) => format!("{cli}: {flag} {value}"),
        None => format!("{cli}: no permission flag"),
    }
}

/// Every mode, what it allows and what it becomes for this member, for the row's hint.
fn modes_hint(format: PromptFormat) -> String {
    PermissionMode::ALL
        .iter()
        .map(|(_, mode)| mode_words(*mode, format))
        .collect::<Vec<_>>()
        .join("; ")
}

/// `team file /home/me/crew/team.json (…)` as `team file team.json (…)`: the file by its
/// name, never the directories above it (a home directory says who the user is).
fn file_name_only(source: &str) -> String {
    let Some(rest) = source.strip_prefix("team file ") else {
        return source.to_string();
    };
    let end = [" (", ", "]
        .iter()
        .filter_map(|cut| rest.find(cut))
        .min()
        .unwrap_or(rest.len());
    let (path, after) = rest.split_at(end);
    let name = path.rsplit(['/', '\\']).next().unwrap_or(path);
    format!("team file {name}{after}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_source_names_its_file_without_its_directories() {
        assert_eq!(
            file_name_only("team file /home/me/crew/team.json"),
            "team file team.json"
        );
        assert_eq!(
            file_name_only("team file /srv/t.json (changed since session 3 began: read again)"),
            "team file t.json (changed since session 3 began: read again)"
        );
        assert_eq!(
            file_name_only("session 3: no team file"),
            "session 3: no team file"
        );
    }

    #[test]
    fn a_mode_says_what_it_allows_and_the_clis_own_mode() {
        assert_eq!(
            mode_words(PermissionMode::Edit, PromptFormat::Claude),
            "edit: edits files in its working directory without asking \
             (Claude Code: --permission-mode acceptEdits)"
        );
        assert!(modes_hint(PromptFormat::Codex).contains(
            "full: does anything without asking (no sandbox) (Codex: -s danger-full-access)"
        ));
    }
}
