//! The chosen delivery's details, under the list (`delivery-details`, docs/architecture.md
//! §13): how its run went and what it cost (`—` when not reported), the model that answered,
//! and what can be done with it: run it again (`retry`: a failed, cancelled or timed-out run
//! that is its member's latest; the old run stays in the history), read its kept output (a
//! bridge's, on demand, cut at 64 KB with the command that prints it whole) and copy the
//! command that ran (program and arguments, shell-quoted; no environment variable).
//!
//! The actions are buttons here, not in the row: a row is an option of a listbox, which may
//! hold no control of its own.

use agent_chatter::protocol::{RunDetails, MAX_DETAILS_OUTPUT_BYTES};
use agent_chatter::session::{Fact, Session};
use leptos::prelude::*;

use super::{reported_cost, DeliveryStatus, Entry};
use crate::browser;
use crate::erased::handler;
use crate::host::{use_host, Host};
use crate::state::use_state;

/// What the panel shows of one delivery, from the session alone.
#[derive(Debug, Clone, PartialEq)]
struct Known {
    head: String,
    /// The cost, or `—`.
    cost: String,
    /// The run's member id and when its outcome was written (ms): what a host keeps its
    /// details by. `None` while it has not ended.
    run: Option<(String, u64)>,
    /// Retry: `Ok` when it can run again, else why not (`None`: not a run to retry).
    retry: Option<Result<(), String>>,
}

#[component]
pub fn DeliveryDetails(
    /// The delivery chosen in the list.
    #[prop(into)]
    chosen: Signal<Option<Entry>>,
) -> impl IntoView {
    let state = use_state();
    let host = use_host();
    let known = Memo::new(move |_| {
        let entry = chosen.get()?;
        state.session.with(|s| Some(known(s, &entry)))
    });
    // The host's details of the run (a bridge is asked once; the page alone keeps none).
    let details = Memo::new(move |_| {
        known
            .with(|k| k.as_ref()?.run.clone())
            .and_then(|(to, at)| host.run_details(&to, at))
    });
    let show_output = RwSignal::new(false);
    let copied = RwSignal::new(None::<Result<(), String>>);
    Effect::new(move |_| {
        chosen.track();
        show_output.set(false);
        copied.set(None);
    });
    move || {
        let k = known.get()?;
        let entry = chosen.get_untracked()?;
        let model = move || model_words(host, &entry.to, details.get().as_ref());
        Some(view! {
            <section class="delivery-details" data-testid="delivery-details" aria-label="the chosen delivery"
                // Focusable: it scrolls when it holds more than its room, buttons or not.
                tabindex="0">
                <p><strong>{k.head.clone()}</strong></p>
                <p>"cost: "<span data-testid="details-cost" title="— : the run's CLI reported no cost">{k.cost.clone()}</span></p>
                <p data-testid="details-model">{model}</p>
                {retry_view(host, &chosen, k.retry.clone())}
                {k.run.clone().map(|(to, at)| output_view(host, details, show_output, to, at))}
                {k.run.is_some().then(|| command_view(host, details, copied))}
            </section>
        })
    }
}

/// What the panel knows of `entry` from the session.
fn known(s: &Session, entry: &Entry) -> Known {
    // A member who left the team is still named (`memberLeft`: their runs stay theirs).
    let name = s.display_name(&entry.to).unwrap_or(&entry.to).to_string();
    let run = entry.run.and_then(|i| s.runs().get(i));
    let head = format!("#{} to {name} · {}", entry.at + 1, entry.status.label());
    let cost = run
        .and_then(reported_cost)
        .map_or_else(|| "—".to_string(), |c| c.display());
    let ended = run.and_then(|r| {
        let at = s.messages().get(r.message)?.at.0;
        Some((r.to.clone(), at))
    });
    let stopped = matches!(
        entry.status,
        DeliveryStatus::Failed | DeliveryStatus::Cancelled | DeliveryStatus::TimedOut
    );
    let latest =
        entry.run.is_some() && entry.run == s.runs().iter().rposition(|r| r.to == entry.to);
    let retry = stopped.then(|| {
        if !latest {
            Err(format!(
                "a later run of {name} came after this one: only the latest can run again"
            ))
        } else if let Some(cap) = s.cap_standing().filter(|c| c.reached()) {
            Err(format!(
                "the cost cap is reached (max cost {}): raise it in the header's usage to run {name} again",
                cap.cap.display_limit()
            ))
        } else if s.can_retry(&entry.to) {
            Ok(())
        } else {
            Err(format!(
                "{name} is running or queued again: wait for that run"
            ))
        }
    });
    Known {
        head,
        cost,
        run: ended,
        retry,
    }
}

/// The model that answered, as the run's CLI said it; else the one the member's settings ask
/// for, labelled as configured (or the CLI's default); in simulation, the simulator's.
pub fn model_words(host: Host, to: &str, details: Option<&RunDetails>) -> String {
    if let Some(model) = details.and_then(|d| d.model.as_deref()) {
        return format!("model: {model} (as its CLI said)");
    }
    if !host.runs_agents() {
        return "model: none, the simulator (or you) answers in the page alone".to_string();
    }
    let configured = details
        .and_then(|d| d.configured_model.clone())
        .or_else(|| {
            host.run_info(&to.to_string())
                .and_then(|i| i.settings.model)
        });
    match configured {
        Some(model) => format!("model: {model} (configured; its CLI did not say which answered)"),
        None => {
            "model: the CLI's default (configured; its CLI did not say which answered)".to_string()
        }
    }
}

/// The retry button of a failed, cancelled or timed-out run, or why it cannot run again.
fn retry_view(
    host: Host,
    chosen: &Signal<Option<Entry>>,
    retry: Option<Result<(), String>>,
) -> Option<AnyView> {
    let to = chosen.get_untracked()?.to;
    Some(match retry? {
        Ok(()) => view! {
            <p>
                <button data-testid="details-retry" on:click=handler(move |_| {
                    host.apply(Fact::Retry { to: to.clone(), at: browser::now() });
                })>"retry"</button>
                <span class="muted">" runs the same delivery again to the same member: a new run; this one stays in the history"</span>
            </p>
        }
        .into_any(),
        Err(why) => view! {
            <p class="muted" data-testid="details-retry-why">{format!("retry: {why}")}</p>
        }
        .into_any(),
    })
}

/// The run's kept output on demand: a bridge's, cut at [`MAX_DETAILS_OUTPUT_BYTES`] with the
/// command that prints it whole; the page alone keeps none and says so.
fn output_view(
    host: Host,
    details: Memo<Option<RunDetails>>,
    show: RwSignal<bool>,
    to: String,
    at: u64,
) -> AnyView {
    if !host.runs_agents() {
        return view! { <p class="muted" data-testid="details-no-output">"output: none kept: in the page alone no agent's CLI runs (a bridge keeps a failed run's output)"</p> }.into_any();
    }
    let session = move || {
        host.shown_session()
            .get()
            .map_or_else(|| "SESSION".to_string(), |s| s.to_string())
    };
    view! {
        <div class="details-output">
            {move || match details.get() {
                None => view! { <p class="muted">"output: asking the bridge…"</p> }.into_any(),
                Some(RunDetails { output: None, .. }) => view! {
                    <p class="muted" data-testid="details-no-output">"output: none kept (only a failed run's output, or a reply above the message limit, is kept)"</p>
                }.into_any(),
                Some(RunDetails { output: Some(text), output_bytes, .. }) => {
                    let whole = format!("agent-chatter outputs {} --member {to} --at {at}", session());
                    let cut = (output_bytes as usize > text.len()).then(|| format!(
                        "cut at {} KB of {} KB: `{whole}` prints it whole",
                        MAX_DETAILS_OUTPUT_BYTES / 1024,
                        output_bytes.div_ceil(1024)
                    ));
                    view! {
                        <p>
                            <button data-testid="details-show-output" aria-expanded=move || show.get().to_string()
                                on:click=handler(move |_| show.update(|s| *s = !*s))>
                                {move || if show.get() { "hide output" } else { "show output" }}
                            </button>
                            <span class="muted">{format!(" {output_bytes} bytes kept · in a terminal: {whole}")}</span>
                        </p>
                        <Show when=move || show.get()>
                            <pre class="details-pre" data-testid="details-output" tabindex="0" aria-label="the run's kept output">{text.clone()}</pre>
                            {cut.clone().map(|c| view! { <p class="muted" data-testid="details-output-cut">{c}</p> })}
                        </Show>
                    }.into_any()
                }
            }}
        </div>
    }
    .into_any()
}

/// The command that ran, shell-quoted, with a copy button that says "copied" once the
/// clipboard holds it (or why it could not); the prompt went on its stdin and no environment
/// variable is shown.
fn command_view(
    host: Host,
    details: Memo<Option<RunDetails>>,
    copied: RwSignal<Option<Result<(), String>>>,
) -> impl IntoView {
    let line = Memo::new(move |_| {
        details.with(|d| {
            d.as_ref()
                .filter(|d| !d.argv.is_empty())
                .map(|d| shell_line(&d.argv))
        })
    });
    move || {
        if !host.runs_agents() {
            return None;
        }
        Some(match line.get() {
            None => view! { <p class="muted" data-testid="details-no-command">"command: not noted (a simulated run, or one from before the bridge kept it)"</p> }.into_any(),
            Some(line) => {
                let copy = {
                    let line = line.clone();
                    move |_| {
                        copied.set(None);
                        browser::copy_then(line.clone(), move |done| copied.set(Some(done)));
                    }
                };
                view! {
                    <div class="details-command">
                        <p>"command that ran "
                            <button data-testid="details-copy-command" on:click=handler(copy)>"copy"</button>
                            <span class="muted" role="status" data-testid="details-copied">{move || copied_words(copied.get())}</span>
                            <span class="muted">" (the prompt went on its stdin; environment variables are not shown)"</span>
                        </p>
                        <pre class="details-pre" data-testid="details-command" tabindex="0" aria-label="the command that ran">{line}</pre>
                    </div>
                }.into_any()
            }
        })
    }
}

/// What the copy button's status says: nothing until the clipboard answered.
fn copied_words(copied: Option<Result<(), String>>) -> String {
    match copied {
        None => String::new(),
        Some(Ok(())) => " copied".to_string(),
        Some(Err(why)) => format!(" could not copy: {why}"),
    }
}

/// `argv` as one line a POSIX shell reads back as the same words: each word bare when it is
/// only safe characters, else in single quotes (a `'` inside written `'\''`).
pub fn shell_line(argv: &[String]) -> String {
    argv.iter()
        .map(|a| shell_word(a))
        .collect::<Vec<_>>()
        .join(" ")
}

fn shell_word(word: &str) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || "_@%+=:,./-".contains(c);
    if !word.is_empty() && word.chars().all(safe) {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_is_quoted_for_a_shell() {
        let argv: Vec<String> = [
            "/usr/bin/claude",
            "-p",
            "--model",
            "opus",
            "--append-system-prompt",
            "You are Max. It's $HOME; `x`",
            "",
        ]
        .map(String::from)
        .to_vec();
        assert_eq!(
            shell_line(&argv),
            r"/usr/bin/claude -p --model opus --append-system-prompt 'You are Max. It'\''s $HOME; `x`' ''"
        );
    }
}
