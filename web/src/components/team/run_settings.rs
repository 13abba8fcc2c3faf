//! How an AI member's agent runs (`run-settings`, docs/architecture.md §14c), read only: model,
//! permission mode, timeout, environment variable names, additional arguments, working
//! directory, and where they come from. They come from files on the machine that runs the
//! agents; the page shows them and cannot change them.

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
                or_default(settings.permission_mode.map(|p| p.name().to_string())),
            ),
            ("timeout", timeout),
            ("env (names only)", env),
            ("additional args", args),
            (
                "working directory",
                dir.unwrap_or_else(|| "the runner's own".into()),
            ),
            ("from", source.unwrap_or_else(|| "defaults".into())),
        ];
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
                        let title = value.clone();
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
