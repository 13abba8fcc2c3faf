//! Every AI member's prompt for the same message, in columns (`side-by-side`), with bytes and
//! status; click a column to inspect it. A column shows its prompt's first
//! [`COLUMN_TEXT_BYTES`] and says how many bytes follow: laying out four prompts of half a
//! megabyte took the browser ~1.5 s on every edit (docs/architecture.md §13), and the whole
//! prompt is one click away, in the inspector.

use std::sync::Arc;

use leptos::prelude::*;

use crate::components::inspector::section_bars::{status_class, status_label};
use crate::components::keyed_list::KeyedList;
use crate::erased::handler;
use crate::state::use_state;

/// How much of a prompt a column shows (a column is ~16 lines high; this is ~200 of them).
pub const COLUMN_TEXT_BYTES: usize = 16 * 1024;

/// `text` cut to at most `max` bytes at a character boundary, and how many bytes were cut.
pub fn column_text(text: &str, max: usize) -> (&str, usize) {
    let end = agent_chatter::text::floor_char_boundary(text, max);
    (&text[..end], text.len() - end)
}

/// What a column shows, as text: built once per change of its prompt, and compared, so an
/// edit that leaves a column as it was writes nothing to it.
#[derive(Clone, PartialEq)]
struct ColumnText {
    member: String,
    head: String,
    class: &'static str,
    shown: String,
    more: usize,
}

impl ColumnText {
    fn of(c: &crate::state::Column) -> Self {
        let whatif = if c.whatif { " · what-if" } else { "" };
        let (head, body, class) = match &c.prompt {
            Ok(p) => (
                format!(
                    "{} · {} · {} / {} B · {}{whatif}",
                    c.display_name,
                    c.agent_type,
                    p.explain.total_bytes,
                    p.explain.max_bytes,
                    status_label(p.explain.status)
                ),
                crate::components::inspector::diff_view::handed_text(p),
                status_class(p.explain.status),
            ),
            Err(e) => (c.display_name.clone(), e.clone(), "status-critical"),
        };
        let (shown, more) = column_text(&body, COLUMN_TEXT_BYTES);
        ColumnText {
            member: c.member.clone(),
            head,
            class,
            shown: shown.to_string(),
            more,
        }
    }
}

#[component]
pub fn SideBySide() -> impl IntoView {
    let state = use_state();
    // One column per AI member, kept by position: selecting another message changes their
    // texts in place instead of building every column again (it ran before the inspector's
    // own update on each selection, docs/architecture.md §13).
    let keys =
        Signal::derive(move || (0..state.side_by_side.with(Vec::len) as u64).collect::<Vec<_>>());
    let column = Arc::new(move |k: u64| {
        let text = Memo::new(move |_| {
            state
                .side_by_side
                .with(|cols| cols.get(k as usize).map(ColumnText::of))
        });
        let field = move |f: fn(&ColumnText) -> String| {
            move || text.with(|t| t.as_ref().map(f).unwrap_or_default())
        };
        let more = move || {
            let more = text.with(|t| t.as_ref().map_or(0, |t| t.more));
            (more > 0).then(|| view! {
                <p class="column-more" data-testid="column-more">
                    {format!("… {more} more bytes: select this column to read the whole prompt in the inspector")}
                </p>
            })
        };
        view! {
            <div class=move || text.with(|t| format!("column {}", t.as_ref().map_or("", |t| t.class)))
                data-testid="side-column" data-member=field(|t| t.member.clone())
                on:click=handler(move |_| {
                    if let Some(member) = text.with_untracked(|t| t.as_ref().map(|t| t.member.clone())) {
                        state.recipient.set(Some(member));
                    }
                })>
                <div class="column-head">{field(|t| t.head.clone())}</div>
                <pre class="column-prompt" tabindex="0">{field(|t| t.shown.clone())}</pre>
                {more}
            </div>
        }
        .into_any()
    });
    view! {
        <section class="side-by-side" data-testid="side-by-side" aria-label="side by side">
            <h2>"side by side"
                <span class="at">{move || state.shown_at.get().map_or(" · skeleton".to_string(), |a| format!(" · at #{}", a + 1))}</span>
            </h2>
            <div class="columns">
                <KeyedList keys=keys row=column/>
            </div>
        </section>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_column_cuts_a_long_prompt_at_a_character_boundary_and_counts_the_rest() {
        // (text, max, shown, bytes more)
        let cases: [(&str, usize, &str, usize); 4] = [
            ("short", 16, "short", 0),
            ("exactly", 7, "exactly", 0),
            ("abcdef", 4, "abcd", 2),
            // "é" is two bytes: a cut inside it moves back before it.
            ("aé", 2, "a", 2),
        ];
        for (text, max, shown, more) in cases {
            assert_eq!(column_text(text, max), (shown, more), "{text:?} at {max}");
        }
    }
}
