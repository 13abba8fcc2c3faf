//! Every history message the builder looked at, with its fate and the reason (`fate-row`),
//! and how many older ones lie outside the window; a click on a row selects its message.
//!
//! The list is patched in place (`crate::patch`) rather than built as a view: it changes with
//! every edit, and a rebuild removes and sets every attribute of every row again
//! (docs/architecture.md §13).

use leptos::prelude::*;
use wasm_bindgen::JsCast;

use crate::components::conversation::timeline_row::fate_style;
use crate::erased::handler;
use crate::patch::{patch, El};
use crate::state::use_state;

#[component]
pub fn FateList() -> impl IntoView {
    let state = use_state();
    let rows = Memo::new(move |_| {
        state.preview.with(|p| {
            let Some(Ok(p)) = p else {
                return Vec::new();
            };
            state.session.with(|s| rows(&p.explain, s.messages()))
        })
    });
    let list = NodeRef::<leptos::html::Ul>::new();
    let written = StoredValue::new_local(Vec::<El>::new());
    crate::erased::effect(move || {
        let Some(list) = list.get() else {
            return;
        };
        rows.with(|rows| written.update_value(|written| patch(&list, written, rows)));
    });
    // One listener for the list: the row clicked, by its `data-index`.
    let on_click = move |ev: leptos::ev::MouseEvent| {
        let index = ev
            .target()
            .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
            .and_then(|el| el.closest("[data-index]").ok().flatten())
            .and_then(|row| row.get_attribute("data-index")?.parse().ok());
        if let Some(index) = index {
            state.selected.set(Some(index));
        }
    };
    view! {
        <div class="fates">
            <h3 title="what happened to each earlier message in this prompt: in the context, deduplicated (already there), trimmed to fit the budget, pinned (the first message, always kept) or outside the window (too old)">"history fates"</h3>
            <ul on:click=handler(on_click) node_ref=list></ul>
        </div>
    }
}

/// The list's rows: how many earlier messages lie outside the window, then each message the
/// builder looked at (`#n`, who spoke, its fate).
fn rows(
    explain: &agent_chatter::explain::Explain,
    messages: &[agent_chatter::message::Message],
) -> Vec<El> {
    let mut rows = Vec::with_capacity(explain.messages.len() + 1);
    if explain.outside_window > 0 {
        rows.push(
            El::new("li")
                .attr("class", "fate-row fate-outside".into())
                .text(format!(
                    "{} earlier message(s): outside the window",
                    explain.outside_window
                )),
        );
    }
    for m in &explain.messages {
        let who = messages
            .get(m.index)
            .map_or("", |msg| msg.speaker.display_name.as_str());
        let (class, why) = fate_style(m.fate);
        rows.push(
            El::new("li")
                .attr("class", format!("fate-row {class}"))
                .attr("data-testid", "fate-row".into())
                .attr("data-index", m.index.to_string())
                .kid(
                    El::new("span")
                        .attr("class", "index".into())
                        .text(format!("#{}", m.index + 1)),
                )
                .text(" ".into())
                .kid(
                    El::new("span")
                        .attr("class", "from".into())
                        .text(who.to_string()),
                )
                .text(format!(": {why}")),
        );
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::rows;
    use crate::patch::{El, Kid};
    use agent_chatter::message::Millis;
    use agent_chatter::session::{Fact, PreviewOverrides, Session};

    fn session(name: &str) -> Session {
        let mut team = agent_chatter::demo::team();
        team.members[0].display_name = name.to_string();
        let mut s = Session::new();
        s.apply(&Fact::set_team(team)).unwrap();
        s.apply(&Fact::human("[FROM: kailai] one [NEXT: max]", Millis(1)))
            .unwrap();
        s.apply(&Fact::human("[FROM: kailai] two [NEXT: max]", Millis(2)))
            .unwrap();
        s
    }

    /// The fate rows Max's prompt gets when Kailai is displayed as `name`.
    fn rows_for(name: &str) -> Vec<El> {
        let s = session(name);
        let p = s
            .preview("max", None, &PreviewOverrides::default())
            .unwrap();
        rows(&p.explain, s.messages())
    }

    #[test]
    fn each_row_says_its_number_who_spoke_and_its_fate() {
        let rows = rows_for("Kailai");
        let first = &rows[0];
        assert_eq!(
            first.attrs,
            [
                ("class", "fate-row fate-included".to_string()),
                ("data-testid", "fate-row".to_string()),
                ("data-index", "0".to_string()),
            ]
        );
        assert_eq!(first.text_content(), "#1 Kailai: in the context");
        assert!(rows[1].attrs.contains(&("data-index", "1".to_string())));
    }

    #[test]
    fn a_name_that_looks_like_html_stays_text() {
        let name = "<img src=x onerror=alert(1)> & \"Co\"";
        let rows = rows_for(name);
        // Written as a text node, never parsed: the name is the text itself.
        let Kid::El(from) = &rows[0].kids[2] else {
            panic!("{:?}", rows[0]);
        };
        assert_eq!(from.kids, [Kid::Text(name.to_string())]);
    }
}
