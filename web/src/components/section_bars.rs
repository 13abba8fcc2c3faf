//! The budget: the whole prompt against `maxBytes` with its status, then one bar per section
//! (`section-bar`), and tokens when an estimator is set.

use agent_chatter::explain::BudgetStatus;
use leptos::prelude::*;

use crate::components::extra_sections::BUILT_IN;
use crate::state::use_state;

pub fn status_class(status: BudgetStatus) -> &'static str {
    match status {
        BudgetStatus::Ok => "status-ok",
        BudgetStatus::Warning => "status-warning",
        BudgetStatus::Critical => "status-critical",
    }
}

pub fn status_label(status: BudgetStatus) -> &'static str {
    match status {
        BudgetStatus::Ok => "ok",
        BudgetStatus::Warning => "warning",
        BudgetStatus::Critical => "critical",
    }
}

/// Width of `part` of `whole` as a CSS percentage; anything non-empty is at least visible.
fn percent(part: usize, whole: usize) -> String {
    if whole == 0 {
        return "0%".into();
    }
    let p = part as f64 * 100.0 / whole as f64;
    let p = if part > 0 { p.max(0.5) } else { 0.0 };
    format!("{:.2}%", p.min(100.0))
}

#[component]
pub fn SectionBars() -> impl IntoView {
    let state = use_state();
    let explain = Memo::new(move |_| {
        state.preview.with(|p| match p {
            Some(Ok(p)) => Some(p.explain.clone()),
            _ => None,
        })
    });
    view! {
        {move || explain.get().map(|e| {
            let status = status_class(e.status);
            let tokens = match (e.total_tokens, e.max_tokens) {
                (Some(t), Some(m)) => format!(" · {t} / {m} tokens"),
                (Some(t), None) => format!(" · ~{t} tokens"),
                _ => String::new(),
            };
            let truncations = e.truncations.iter().map(|t| format!("{} cut from {} to {} B", t.section, t.from_bytes, t.to_bytes)).collect::<Vec<_>>();
            // The message itself cut: said in words, not only in the list of cuts.
            let message_cut = e.message_cut().map(|(from, to)| match to {
                0 => format!("⚠ the message does not reach {}: none of its {from} bytes fit the budget", e.recipient),
                _ => format!("⚠ the message reaches {} cut to fit the budget: {to} of its {from} bytes", e.recipient),
            });
            // The bar shows the fuller budget, the one that decides the status.
            let fill = match (e.total_tokens, e.max_tokens) {
                (Some(t), Some(m)) if m > 0 && t as u128 * e.max_bytes as u128 > e.total_bytes as u128 * m as u128 => percent(t, m),
                _ => percent(e.total_bytes, e.max_bytes),
            };
            view! {
                <div class=format!("budget {status}") data-testid="budget">
                    <div class="bar"><div class="fill" style:width=fill></div></div>
                    <span class="budget-text">
                        {format!("{} / {} B · {}{tokens} · window {} · {} marker(s) stripped",
                            e.total_bytes, e.max_bytes, status_label(e.status), e.window, e.markers_stripped)}
                    </span>
                </div>
                <ul class="section-bars">
                    {e.sections.iter().map(|s| {
                        let tokens = s.tokens.map(|t| format!(" · ~{t} tok")).unwrap_or_default();
                        let flag = if s.in_system_flag { " (system flag)" } else { "" };
                        let extra = !BUILT_IN.contains(&s.name.as_str());
                        let kind = if extra { "sec-extra" } else { "" };
                        view! {
                            <li class=format!("section-bar sec-{} {kind} {status}", s.name) data-testid="section-bar" data-section=s.name.clone()>
                                <span class="section-name" title=extra.then_some("an extra section of this member (team config)")>{extra.then_some("extra: ")}{s.name.clone()}{flag}</span>
                                <span class="bar"><span class="fill" style:width=percent(s.bytes, e.max_bytes)></span></span>
                                <span class="section-bytes">{format!("{} B{tokens}", s.bytes)}</span>
                            </li>
                        }
                    }).collect_view()}
                </ul>
                {message_cut.map(|text| view! { <p class="message-cut" data-testid="message-cut">{text}</p> })}
                {(!truncations.is_empty()).then(|| view! {
                    <p class="truncations" data-testid="truncations">{format!("truncated: {}", truncations.join("; "))}</p>
                })}
            }
        })}
    }
}
