//! A line diff between two prompts (`diff-view`), by `similar`: the shown prompt against the
//! same recipient's at the previous message or at any other message (`#n`, two points in
//! time, docs/architecture.md §13), against the actual prompt (when a what-if is on), or against
//! another recipient's for the same message.

use agent_chatter::session::PreviewOverrides;
use leptos::prelude::*;
use similar::{ChangeTag, TextDiff};

use crate::components::when::When;
use crate::erased::handler;
use crate::state::use_state;

/// The lines of a diff from `old` to `new`: (`' '`/`'-'`/`'+'`, line).
pub fn diff_lines(old: &str, new: &str) -> Vec<(char, String)> {
    TextDiff::from_lines(old, new)
        .iter_all_changes()
        .map(|c| {
            let sign = match c.tag() {
                ChangeTag::Equal => ' ',
                ChangeTag::Delete => '-',
                ChangeTag::Insert => '+',
            };
            (sign, c.value().trim_end_matches('\n').to_string())
        })
        .collect()
}

/// Unchanged lines shown around each change, as `diff -u` shows three.
pub const CONTEXT_LINES: usize = 3;

/// A row of a diff as shown: a line, or a run of unchanged lines folded into one row.
#[derive(Debug, Clone, PartialEq)]
pub enum Row {
    Line(char, String),
    Folded(usize),
}

/// The rows of a diff as shown: every changed line, with `context` unchanged lines around it;
/// a longer run of unchanged lines becomes one [`Row::Folded`] (a run of one is shown, a fold
/// would hide nothing). Two prompts of 500 KB differ by a few lines and share thousands,
/// which laid out whole took the browser ~0.5 s (docs/architecture.md §13).
pub fn fold_unchanged(lines: Vec<(char, String)>, context: usize) -> Vec<Row> {
    let mut keep = vec![false; lines.len()];
    for i in (0..lines.len()).filter(|&i| lines[i].0 != ' ') {
        let from = i.saturating_sub(context);
        let to = (i + context + 1).min(lines.len());
        keep[from..to].iter_mut().for_each(|k| *k = true);
    }
    let mut rows = Vec::new();
    let mut run = Vec::new();
    let flush = |run: &mut Vec<(char, String)>, rows: &mut Vec<Row>| match run.len() {
        0 => {}
        1 => rows.extend(run.drain(..).map(|(sign, line)| Row::Line(sign, line))),
        n => {
            rows.push(Row::Folded(n));
            run.clear();
        }
    };
    for (line, kept) in lines.into_iter().zip(keep) {
        if kept {
            flush(&mut run, &mut rows);
            rows.push(Row::Line(line.0, line.1));
        } else {
            run.push(line);
        }
    }
    flush(&mut run, &mut rows);
    rows
}

/// What an agent is handed, as one text: Claude's system flag first (when there is one), then
/// the prompt on stdin. The diff and the side-by-side columns compare and show this, so a
/// change of the system part is never left out.
pub fn handed_text(p: &agent_chatter::context::Prompt) -> String {
    match &p.system_flag {
        Some(flag) => format!("{flag}\n\n── stdin ──\n{}", p.prompt),
        None => p.prompt.clone(),
    }
}

#[component]
pub fn DiffView() -> impl IntoView {
    let state = use_state();
    // "previous", "at" (message `#at_number`), "actual", or a member id, once the user
    // chose; until then the actual prompt while a what-if is on (what the what-if changes),
    // else the previous message.
    let chosen = RwSignal::new(None::<String>);
    let against = Memo::new(move |_| {
        chosen.get().unwrap_or_else(|| {
            if state.shown_whatif.with(|o| o.is_empty()) {
                "previous".to_string()
            } else {
                "actual".to_string()
            }
        })
    });
    let at_number = RwSignal::new(1usize);
    let other = Memo::new(move |_| -> Option<Result<String, String>> {
        let member = state.shown_recipient.get()?;
        let at = state.shown_at.get();
        let with = |member: &str, at: Option<usize>, o: &PreviewOverrides| {
            state.session.with(|s| {
                s.preview(member, at, o)
                    .map(|p| handed_text(&p))
                    .map_err(|e| e.to_string())
            })
        };
        match against.get().as_str() {
            "previous" => match at {
                Some(0) | None => Some(Err("there is no earlier message".to_string())),
                Some(at) => Some(with(&member, Some(at - 1), &state.shown_whatif.get())),
            },
            "at" => {
                let n = at_number.get();
                let len = state.session.with(|s| s.messages().len());
                if n == 0 || n > len {
                    Some(Err(format!(
                        "there is no message #{n}: the messages are #1 to #{len}"
                    )))
                } else {
                    Some(with(&member, Some(n - 1), &state.shown_whatif.get()))
                }
            }
            "actual" => state.actual.get().map(|p| p.map(|p| handed_text(&p))),
            id => Some(with(id, at, &PreviewOverrides::default())),
        }
    });
    let lines = Memo::new(move |_| {
        let shown = state.preview.with(|p| match p {
            Some(Ok(p)) => Some(handed_text(p)),
            _ => None,
        })?;
        match other.get()? {
            Ok(old) => Some(Ok(diff_lines(&old, &shown))),
            Err(e) => Some(Err(e)),
        }
    });
    let agents = move || state.agent_names();
    view! {
        <div class="diff" data-testid="diff-view">
            <label>"diff against "
                <select data-testid="diff-against" on:change=handler(move |ev| chosen.set(Some(event_target_value(&ev))))>
                    <option value="previous" prop:selected=move || against.get() == "previous">"the previous message (same recipient)"</option>
                    <option value="at" prop:selected=move || against.get() == "at">"another message (same recipient): #"</option>
                    <option value="actual" prop:selected=move || against.get() == "actual">"the actual prompt (no what-if)"</option>
                    {move || agents().into_iter().map(|(id, name)| {
                        let selected = { let id = id.clone(); move || against.get() == id };
                        view! { <option value=id prop:selected=selected>{format!("{name}'s prompt (same message)")}</option> }
                    }).collect_view()}
                </select>
            </label>
            <When when=Memo::new(move |_| against.get() == "at")>
                <input class="diff-at" data-testid="diff-at" type="number" min="1" aria-label="message number"
                    prop:value=move || at_number.get().to_string()
                    on:change=handler(move |ev| {
                        // Not a whole number: 0, which the diff names as no such message.
                        at_number.set(event_target_value(&ev).trim().parse().unwrap_or(0));
                    })/>
            </When>
            {move || match lines.get() {
                None => view! { <p class="muted">"no prompt to compare"</p> }.into_any(),
                Some(Err(e)) => view! { <p class="muted">{e}</p> }.into_any(),
                Some(Ok(lines)) => {
                    let (added, removed) = lines.iter().fold((0, 0), |(a, r), (s, _)| match s { '+' => (a + 1, r), '-' => (a, r + 1), _ => (a, r) });
                    let rows = fold_unchanged(lines, CONTEXT_LINES);
                    view! {
                        <p class="diff-summary">{format!("{added} line{} added, {removed} removed", if added == 1 { "" } else { "s" })}</p>
                        <pre class="diff-lines">
                            {rows.into_iter().map(|row| match row {
                                Row::Line(sign, line) => {
                                    let class = match sign { '+' => "diff-ins", '-' => "diff-del", _ => "diff-eq" };
                                    view! { <div class=class data-sign=sign.to_string()>{format!("{sign} {line}")}</div> }.into_any()
                                }
                                Row::Folded(n) => view! { <div class="diff-fold" data-testid="diff-fold">{format!("⋯ {n} unchanged lines")}</div> }.into_any(),
                            }).collect_view()}
                        </pre>
                    }.into_any()
                }
            }}
        </div>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(signs: &str) -> Vec<(char, String)> {
        signs
            .chars()
            .enumerate()
            .map(|(i, s)| (s, i.to_string()))
            .collect()
    }

    #[test]
    fn unchanged_lines_far_from_a_change_fold_into_one_row() {
        let line = |i: usize, s: char| Row::Line(s, i.to_string());
        // (signs, context, rows)
        let cases: Vec<(&str, usize, Vec<Row>)> = vec![
            // Nothing changed: one fold.
            ("     ", 1, vec![Row::Folded(5)]),
            // A run of one unchanged line is shown: a fold would hide nothing.
            (
                "  +  ",
                1,
                vec![
                    line(0, ' '),
                    line(1, ' '),
                    line(2, '+'),
                    line(3, ' '),
                    line(4, ' '),
                ],
            ),
            // A change in the middle keeps one line either side.
            (
                "    -    ",
                1,
                vec![
                    Row::Folded(3),
                    line(3, ' '),
                    line(4, '-'),
                    line(5, ' '),
                    Row::Folded(3),
                ],
            ),
            // Two changes whose context meets: nothing folded between them.
            (
                "-  +",
                1,
                vec![line(0, '-'), line(1, ' '), line(2, ' '), line(3, '+')],
            ),
        ];
        for (signs, context, rows) in cases {
            assert_eq!(fold_unchanged(lines(signs), context), rows, "{signs:?}");
        }
    }

    #[test]
    fn a_diff_marks_added_and_removed_lines() {
        let lines = diff_lines("[CONTEXT]\n- a\n- b\n", "[CONTEXT]\n- b\n- c\n");
        assert_eq!(
            lines,
            [
                (' ', "[CONTEXT]".into()),
                ('-', "- a".into()),
                (' ', "- b".into()),
                ('+', "- c".into())
            ]
        );
    }
}
