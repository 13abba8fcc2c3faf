//! Every AI member's prompt for the same message, in columns (`side-by-side`), with bytes and
//! status; click a column to inspect it. A column shows its prompt's first
//! [`COLUMN_TEXT_BYTES`] and says how many bytes follow: laying out four prompts of half a
//! megabyte took the browser ~1.5 s on every edit (docs/architecture.md §13), and the whole
//! prompt is one click away, in the inspector.

use leptos::prelude::*;

use crate::components::inspector::section_bars::{status_class, status_label};
use crate::erased::handler;
use crate::state::use_state;

/// How much of a prompt a column shows (a column is ~16 lines high; this is ~200 of them).
pub const COLUMN_TEXT_BYTES: usize = 16 * 1024;

/// `text` cut to at most `max` bytes at a character boundary, and how many bytes were cut.
pub fn column_text(text: &str, max: usize) -> (&str, usize) {
    let end = agent_chatter::text::floor_char_boundary(text, max);
    (&text[..end], text.len() - end)
}

#[component]
pub fn SideBySide() -> impl IntoView {
    let state = use_state();
    view! {
        <section class="side-by-side" data-testid="side-by-side" aria-label="side by side">
            <h2>"side by side"
                <span class="at">{move || state.shown_at.get().map_or(" · skeleton".to_string(), |a| format!(" · at #{}", a + 1))}</span>
            </h2>
            <div class="columns">
                {move || state.side_by_side.get().into_iter().map(|c| {
                    let member = c.member.clone();
                    let whatif = if c.whatif { " · what-if" } else { "" };
                    let (head, body, class) = match &c.prompt {
                        Ok(p) => (
                            format!("{} · {} · {} / {} B · {}{whatif}", c.display_name, c.agent_type, p.explain.total_bytes, p.explain.max_bytes, status_label(p.explain.status)),
                            crate::components::inspector::diff_view::handed_text(p),
                            status_class(p.explain.status),
                        ),
                        Err(e) => (c.display_name.clone(), e.clone(), "status-critical"),
                    };
                    let (shown, more) = column_text(&body, COLUMN_TEXT_BYTES);
                    let shown = shown.to_string();
                    let more = (more > 0).then(|| view! {
                        <p class="column-more" data-testid="column-more">
                            {format!("… {more} more bytes: select this column to read the whole prompt in the inspector")}
                        </p>
                    });
                    view! {
                        <div class=format!("column {class}") data-testid="side-column" data-member=c.member.clone()
                            on:click=handler(move |_| state.recipient.set(Some(member.clone())))>
                            <div class="column-head">{head}</div>
                            <pre class="column-prompt" tabindex="0">{shown}</pre>
                            {more}
                        </div>
                    }
                }).collect_view()}
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
