//! The prompt inspector: for the selected recipient and message, the exact prompt and system
//! flag, the budget per section, and every history message's fate.

pub mod activity_list;
pub mod delivery_run;
pub mod diff_view;
pub mod extra_sections;
pub mod fate_list;
pub mod prompt_view;
pub mod section_bars;
pub mod side_by_side;
pub mod whatif_panel;

use leptos::prelude::*;

use crate::browser;
use crate::components::inspector::activity_list::ActivityList;
use crate::components::inspector::delivery_run::DeliveryRun;
use crate::components::inspector::diff_view::DiffView;
use crate::components::inspector::extra_sections::ExtraSections;
use crate::components::inspector::fate_list::FateList;
use crate::components::inspector::prompt_view::PromptView;
use crate::components::inspector::section_bars::SectionBars;
use crate::components::inspector::whatif_panel::WhatIfPanel;
use crate::components::when::When;
use crate::erased::handler;
use crate::host::{use_host, Host};
use crate::state::{use_state, AppState};

#[component]
pub fn Inspector() -> impl IntoView {
    let state = use_state();
    let host = use_host();
    // From the members: a settings edit changes the team, not these options.
    let agents = Memo::new(move |_| {
        state.members.with(|members| {
            members
                .iter()
                .filter(|m| m.is_ai())
                .map(|m| {
                    (
                        m.id.clone(),
                        format!(
                            "{} · {}",
                            m.display_name,
                            m.agent_type.as_deref().unwrap_or("")
                        ),
                    )
                })
                .collect::<Vec<_>>()
        })
    });
    let show_diff = RwSignal::new(false);
    let at_label = move || at_label(state, host);
    // For a delivery the host says it made (a bridge): does the page's preview hash to what
    // it sent? Hashed only when there is such a digest, once per change of what is shown.
    let sent_check = Memo::new(move |_| {
        // Only a delivery of this conversation: after a team edit the history goes on under
        // a new team, and the page cannot rebuild what the old one was sent.
        if !state.shown_whatif.get().is_empty() || !state.delivered.get() {
            return None;
        }
        let member = state.shown_recipient.get()?;
        let at = state.shown_at.get()?;
        let message = state
            .session
            .with(|s| s.messages().get(at).map(|m| m.id.0.clone()))?;
        let sent = host.sent_digest(&message, &member)?;
        let previewed = state.actual.with(|p| match p {
            Some(Ok(p)) => Some(p.sha256_hex()),
            _ => None,
        })?;
        Some((previewed == sent, sent))
    });
    let problem = move || {
        state.preview.with(|p| match p {
            Some(Err(e)) => Some(e.clone()),
            _ => None,
        })
    };
    // Performance mark after every inspector update (read by the e2e timing).
    crate::erased::effect(move || {
        state.preview.track();
        browser::mark("inspector-updated");
    });
    view! {
        <div class="inspector" data-testid="inspector">
            <div class="inspector-head">
                <h2>"inspector"</h2>
                <label>"to "
                    <select data-testid="recipient-select"
                        on:change=handler(move |ev| state.recipient.set(Some(event_target_value(&ev))))>
                        {move || agents.get().into_iter().map(|(id, label)| {
                            let selected = {
                                let id = id.clone();
                                move || state.shown_recipient.get().as_deref() == Some(id.as_str())
                            };
                            view! { <option value=id prop:selected=selected>{label}</option> }
                        }).collect_view()}
                    </select>
                </label>
                <span class="at" data-testid="inspector-at">{at_label}</span>
                {move || sent_check.get().map(|(same, sent)| {
                    let short = sent.get(..12).unwrap_or_default().to_string();
                    let (class, text) = if same {
                        ("delivered-badge ok", format!("✓ the bridge sent these exact bytes (sha256 {short}…)"))
                    } else {
                        ("delivered-badge bad", format!("✗ the bridge sent other bytes (sha256 {short}…)"))
                    };
                    view! { <span class=class data-testid="delivered-badge" title=sent>{text}</span> }
                })}
                <When when=Memo::new(move |_| state.selected.get().is_some())>
                    <button on:click=handler(move |_| state.selected.set(None))>"latest"</button>
                </When>
            </div>
            <DeliveryRun/>
            <ActivityList/>
            {move || problem().map(|e| view! { <p class="preview-error">{e}</p> })}
            <WhatIfPanel on_diff=Callback::new(move |()| show_diff.set(true))/>
            <SectionBars/>
            <ExtraSections/>
            <div class="inspector-tabs">
                <button class=move || if show_diff.get() { "tab" } else { "tab on" } on:click=handler(move |_| show_diff.set(false))>"prompt"</button>
                <button data-testid="diff-toggle" class=move || if show_diff.get() { "tab on" } else { "tab" } on:click=handler(move |_| show_diff.set(true))>"diff"</button>
            </div>
            <When when=Memo::new(move |_| show_diff.get()) fallback=|| view! { <PromptView/> }>
                <DiffView/>
            </When>
            <FateList/>
        </div>
    }
}

/// Where the inspector is (`inspector-at`): the message shown (the latest unless one is
/// selected), and what the prompt is for the recipient there — a what-if, delivered (and how
/// its run ended when it did not reply), due or running, a failure notice, or what it would
/// receive.
fn at_label(state: AppState, host: Host) -> String {
    let at = match (state.shown_at.get(), state.selected.get()) {
        (None, _) => return "no message yet (skeleton)".to_string(),
        (Some(at), Some(_)) => format!("at #{}", at + 1),
        (Some(at), None) => format!("at #{} (latest)", at + 1),
    };
    // The delivery still out (its agent running, or due in simulation) is not yet
    // received as "delivered" says: it says which.
    let out = state.due.with(|d| {
        d.as_ref().is_some_and(|d| {
            state
                .shown_recipient
                .with(|r| r.as_deref() == Some(d.to.as_str()))
                && state
                    .session
                    .with(|s| s.store().position(&d.message) == state.shown_at.get())
        })
    });
    let what = if !state.shown_whatif.get().is_empty() {
        "what-if"
    } else if out && host.runs_agents() {
        "delivered · running"
    } else if out {
        "due: what it gets once answered"
    } else if state.delivered.get() {
        // Delivered is what the agent got; when its run then failed, the label says so
        // ("delivered" alone read as a success on a failed run).
        let failed = state.shown_recipient.with(|member| {
            let member = member.as_deref()?;
            let at = state.shown_at.get()?;
            state
                .session
                .with(|s| s.answer(member, at).and_then(|run| run.failed_verb()))
        });
        match failed {
            Some(verb) => return format!("{at} · delivered · its run {verb}"),
            None => "delivered",
        }
    } else if let Some(reaches) = state.session.with(|s| {
        let run = state.shown_at.get().and_then(|at| s.run_at(at))?;
        run.failed.as_ref().map(|_| run.reaches_prompts())
    }) {
        // No agent is ever sent a failure notice as its message: the preview is
        // hypothetical, and says so. Whether later prompts show it in their history is the
        // core's rule (`Failure::reaches_prompts`): a cancel's they never do.
        if reaches {
            "a failure notice: later prompts show it in their history, but no agent gets it as its message; this preview shows what one would get if it did"
        } else {
            "a cancelled run: in no agent's prompt; this preview shows what one would get if it were"
        }
    } else {
        "would receive"
    };
    format!("{at} · {what}")
}
