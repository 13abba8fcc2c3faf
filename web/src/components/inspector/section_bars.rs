//! The budget: the whole prompt against `maxBytes` with its status and the share of the
//! budget it uses, then one bar per section (`section-bar`) drawn against the prompt's own
//! bytes, so a 1 KB prompt under a 768 KiB budget still shows its parts; tokens when an
//! estimator is set. A what-if budget too small for the prompt's fixed part (its system
//! instruction and team task) says so in one sentence (`whatif-too-small`), in place of the
//! list of cuts it would cause.

use agent_chatter::explain::{BudgetStatus, Explain, SectionExplain};
use leptos::prelude::*;

use crate::components::inspector::extra_sections::BUILT_IN;
use crate::patch::{patch, El};
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

/// `0.09%`, `<0.01%`: how much of `whole` `part` is, as a person reads it.
fn share(part: usize, whole: usize) -> String {
    if whole == 0 {
        return "0%".into();
    }
    let p = part as f64 * 100.0 / whole as f64;
    if p > 0.0 && p < 0.01 {
        "<0.01%".into()
    } else if p < 10.0 {
        format!("{p:.2}%")
    } else {
        format!("{p:.0}%")
    }
}

/// The bytes a prompt's fixed part needs whole: its system instruction and team task with
/// their headers, and what any cut took from them.
pub fn fixed_bytes(explain: &agent_chatter::explain::Explain) -> usize {
    let fixed = |name: &str| name == "system" || name == "teamTask";
    let kept: usize = explain
        .sections
        .iter()
        .filter(|s| fixed(&s.name))
        .map(|s| s.bytes)
        .sum();
    let cut: usize = explain
        .truncations
        .iter()
        .filter(|t| fixed(&t.section))
        .map(|t| t.from_bytes.saturating_sub(t.to_bytes))
        .sum();
    kept + cut
}

/// What the budget shows for one prompt: patched into its two elements, only what changed
/// written (`crate::patch`, docs/architecture.md §13).
#[derive(Debug, Clone, PartialEq)]
struct Budget {
    /// The budget's class (`budget status-…`).
    class: String,
    /// The budget's bar and line.
    budget: Vec<El>,
    /// One `section-bar` per section.
    bars: Vec<El>,
    too_small: Option<String>,
    message_cut: Option<String>,
    truncations: Option<String>,
}

fn budget(e: &Explain, need: usize, whatif_bytes: Option<usize>) -> Budget {
    let status = status_class(e.status);
    let tokens = match (e.total_tokens, e.max_tokens) {
        (Some(t), Some(m)) => format!(" · {t} / {m} tokens"),
        (Some(t), None) => format!(" · ~{t} tokens"),
        _ => String::new(),
    };
    // The message itself cut: said in words, not only in the list of cuts.
    let message_cut = e.message_cut().map(|(from, to)| match to {
        0 => format!(
            "⚠ the message does not reach {}: none of its {from} bytes fit the budget",
            e.recipient
        ),
        _ => format!(
            "⚠ the message reaches {} cut to fit the budget: {to} of its {from} bytes",
            e.recipient
        ),
    });
    // A what-if budget below the fixed part: one clear sentence, not the cuts. `need` is
    // measured on the actual prompt, so it does not move with the what-if budget.
    let too_small = whatif_bytes.filter(|&b| b < need).map(|b| {
        format!(
        "a what-if budget of {b} B is smaller than this prompt's fixed part: {} needs {need} B \
         for its system instruction and team task alone, so they would be cut and the prompt \
         would not make sense; try {need} B or more",
        e.recipient
    )
    });
    let truncations = (!e.truncations.is_empty()).then(|| {
        let cuts: Vec<String> = e
            .truncations
            .iter()
            .map(|t| {
                format!(
                    "{} cut from {} to {} B",
                    t.section, t.from_bytes, t.to_bytes
                )
            })
            .collect();
        format!("truncated: {}", cuts.join("; "))
    });
    let (message_cut, truncations) = if too_small.is_some() {
        (None, None)
    } else {
        (message_cut, truncations)
    };
    // The bar shows the fuller budget, the one that decides the status.
    let fill = match (e.total_tokens, e.max_tokens) {
        (Some(t), Some(m))
            if m > 0 && t as u128 * e.max_bytes as u128 > e.total_bytes as u128 * m as u128 =>
        {
            percent(t, m)
        }
        _ => percent(e.total_bytes, e.max_bytes),
    };
    let line = format!(
        "{} / {} B ({} of the budget) · {}{tokens} · window {} · {} marker{} stripped",
        e.total_bytes,
        e.max_bytes,
        share(e.total_bytes, e.max_bytes),
        status_label(e.status),
        e.window,
        e.markers_stripped,
        if e.markers_stripped == 1 { "" } else { "s" },
    );
    let bars = e
        .sections
        .iter()
        .map(|s| section_bar(e, s, status))
        .collect();
    Budget {
        class: format!("budget {status}"),
        budget: vec![
            El::new("div")
                .attr("class", "bar".into())
                .kid(El::new("div").attr("class", "fill".into()).width(fill)),
            El::new("span")
                .attr("class", "budget-text".into())
                .text(line),
        ],
        bars,
        too_small,
        message_cut,
        truncations,
    }
}

/// One section's bar (`section-bar`): its name (an extra section says so), its share of the
/// prompt as a bar, and its bytes, share and tokens in words.
fn section_bar(e: &Explain, s: &SectionExplain, status: &str) -> El {
    let tokens = s.tokens.map(|t| format!(" · ~{t} tok")).unwrap_or_default();
    let flag = if s.in_system_flag {
        " (system flag)"
    } else {
        ""
    };
    let extra = !BUILT_IN.contains(&s.name.as_str());
    let mut name = El::new("span").attr("class", "section-name".into());
    if extra {
        name = name.attr(
            "title",
            "an extra section of this member (team config)".into(),
        );
    }
    let label = if extra { "extra: " } else { "" };
    // The built-in sections by the names the help uses (`teamTask` is JSON's).
    let shown = if !extra && s.name == "teamTask" {
        "team task"
    } else {
        &s.name
    };
    let kind = if extra { "sec-extra" } else { "" };
    El::new("li")
        .attr(
            "class",
            format!("section-bar sec-{} {kind} {status}", s.name),
        )
        .attr("data-testid", "section-bar".into())
        .attr("data-section", s.name.clone())
        .kid(name.text(format!("{label}{shown}{flag}")))
        .kid(
            El::new("span")
                .attr(
                    "title",
                    format!(
                        "{} of the prompt, {} of the budget",
                        share(s.bytes, e.total_bytes),
                        share(s.bytes, e.max_bytes)
                    ),
                )
                .attr("class", "bar".into())
                .kid(
                    El::new("span")
                        .attr("class", "fill".into())
                        .width(percent(s.bytes, e.total_bytes)),
                ),
        )
        .kid(
            El::new("span")
                .attr("class", "section-bytes".into())
                .text(format!(
                    "{} B · {}{tokens}",
                    s.bytes,
                    share(s.bytes, e.total_bytes)
                )),
        )
}

#[component]
pub fn SectionBars() -> impl IntoView {
    let state = use_state();
    let shown = Memo::new(move |_| {
        state.preview.with(|p| match p {
            Some(Ok(p)) => {
                let need = state.actual.with(|p| match p {
                    Some(Ok(p)) => fixed_bytes(&p.explain),
                    _ => 0,
                });
                Some(budget(&p.explain, need, state.shown_whatif.get().max_bytes))
            }
            _ => None,
        })
    });
    let note =
        move |f: fn(&Budget) -> Option<String>| move || shown.with(|b| b.as_ref().and_then(f));
    // Built once a prompt is shown; then only their class and contents change.
    let any = Memo::new(move |_| shown.with(Option::is_some));
    let budget_el = NodeRef::<leptos::html::Div>::new();
    let bars_el = NodeRef::<leptos::html::Ul>::new();
    // Both patched in place (`crate::patch`): what was written last is kept beside them.
    let written = StoredValue::new_local((Vec::<El>::new(), Vec::<El>::new()));
    crate::erased::effect(move || {
        let (Some(budget_el), Some(bars_el)) = (budget_el.get(), bars_el.get()) else {
            return;
        };
        shown.with(|b| {
            let Some(b) = b else {
                return;
            };
            if budget_el.class_name() != b.class {
                budget_el.set_class_name(&b.class);
            }
            written.update_value(|(budget, bars)| {
                patch(&budget_el, budget, &b.budget);
                patch(&bars_el, bars, &b.bars);
            });
        });
    });
    view! {
        {move || any.get().then(|| view! {
            <div data-testid="budget" node_ref=budget_el></div>
            <ul class="section-bars" title="each section's share of this prompt" node_ref=bars_el></ul>
        })}
        {move || note(|b| b.too_small.clone())().map(|text| view! { <p class="message-cut" data-testid="whatif-too-small" role="alert">{text}</p> })}
        {move || note(|b| b.message_cut.clone())().map(|text| view! { <p class="message-cut" data-testid="message-cut">{text}</p> })}
        {move || note(|b| b.truncations.clone())().map(|text| view! { <p class="truncations" data-testid="truncations">{text}</p> })}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_chatter::message::Millis;
    use agent_chatter::session::{Fact, PreviewOverrides, Session};

    #[test]
    fn the_fixed_part_is_the_same_whatever_the_budget_cuts() {
        let mut s = Session::new();
        s.apply(&Fact::set_team(agent_chatter::demo::team()))
            .unwrap();
        s.apply(&Fact::human(
            "[FROM: kailai] [TEAM_TASK: ship the notes] go [NEXT: max]",
            Millis(1),
        ))
        .unwrap();
        let with = |bytes: Option<usize>| {
            let o = PreviewOverrides {
                max_bytes: bytes,
                ..Default::default()
            };
            fixed_bytes(&s.preview("max", None, &o).unwrap().explain)
        };
        let whole = with(None);
        assert!(whole > 60, "system instruction and team task: {whole} B");
        assert_eq!(with(Some(40)), whole, "cut to 40 B");
        assert_eq!(with(Some(whole + 4)), whole);
    }

    #[test]
    fn each_section_has_its_bar_with_its_bytes() {
        let mut s = Session::new();
        s.apply(&Fact::set_team(agent_chatter::demo::team()))
            .unwrap();
        s.apply(&Fact::human("[FROM: kailai] go [NEXT: max]", Millis(1)))
            .unwrap();
        let e = s
            .preview("max", None, &PreviewOverrides::default())
            .unwrap()
            .explain;
        let b = budget(&e, 0, None);
        assert_eq!(b.class, "budget status-ok");
        assert_eq!(b.bars.len(), e.sections.len());
        for (bar, section) in b.bars.iter().zip(&e.sections) {
            assert!(bar.attrs.contains(&("data-testid", "section-bar".into())));
            assert!(bar.attrs.contains(&("data-section", section.name.clone())));
            assert!(
                bar.text_content()
                    .contains(&format!("{} B · ", section.bytes)),
                "{bar:?}"
            );
        }
        let line: String = b.budget.iter().map(El::text_content).collect();
        assert!(line.contains(&format!("{} / {} B", e.total_bytes, e.max_bytes)));
        assert_eq!(
            (b.too_small, b.message_cut, b.truncations),
            (None, None, None)
        );
    }

    #[test]
    fn shares_read_as_people_say_them() {
        assert_eq!(share(683, 786_432), "0.09%");
        assert_eq!(share(1, 786_432), "<0.01%");
        assert_eq!(share(49, 100), "49%");
        assert_eq!(share(1, 0), "0%");
    }
}
