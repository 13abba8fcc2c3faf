//! Every history message the builder looked at, with its fate and the reason (`fate-row`),
//! and how many older ones lie outside the window; a click on a row selects its message.
//!
//! The list is written as one piece of HTML (every text escaped) rather than as a view
//! rebuilt element by element: it changes with every edit, and a rebuild removes and sets
//! every attribute of every row again (docs/architecture.md §13).

use agent_chatter::transcript::escape_html;
use leptos::prelude::*;
use wasm_bindgen::JsCast;

use crate::components::timeline_row::fate_style;
use crate::erased::handler;
use crate::state::use_state;

#[component]
pub fn FateList() -> impl IntoView {
    let state = use_state();
    let html = Memo::new(move |_| {
        state.preview.with(|p| {
            let Some(Ok(p)) = p else {
                return String::new();
            };
            state.session.with(|s| rows_html(&p.explain, s.messages()))
        })
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
            <ul on:click=handler(on_click) inner_html=html></ul>
        </div>
    }
}

/// The list's rows: how many earlier messages lie outside the window, then each message the
/// builder looked at (`#n`, who spoke, its fate), as HTML with every text escaped.
fn rows_html(
    explain: &agent_chatter::explain::Explain,
    messages: &[agent_chatter::message::Message],
) -> String {
    let mut html = String::new();
    if explain.outside_window > 0 {
        html.push_str(&format!(
            "<li class=\"fate-row fate-outside\">{} earlier message(s): outside the window</li>",
            explain.outside_window
        ));
    }
    for m in &explain.messages {
        let who = messages
            .get(m.index)
            .map_or("", |msg| msg.speaker.display_name.as_str());
        let (class, why) = fate_style(m.fate);
        html.push_str(&format!(
            "<li class=\"fate-row {class}\" data-testid=\"fate-row\" data-index=\"{}\"><span class=\"index\">#{}</span> <span class=\"from\">{}</span>: {}</li>",
            m.index,
            m.index + 1,
            escape_html(who),
            escape_html(&why)
        ));
    }
    html
}

#[cfg(test)]
mod tests {
    use super::rows_html;
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
    fn rows_for(name: &str) -> String {
        let s = session(name);
        let p = s
            .preview("max", None, &PreviewOverrides::default())
            .unwrap();
        rows_html(&p.explain, s.messages())
    }

    #[test]
    fn each_row_says_its_number_who_spoke_and_its_fate() {
        let html = rows_for("Kailai");
        assert!(
            html.contains("<li class=\"fate-row fate-included\" data-testid=\"fate-row\" data-index=\"0\"><span class=\"index\">#1</span> <span class=\"from\">Kailai</span>: in the context</li>"),
            "{html}"
        );
        assert!(html.contains("data-index=\"1\""), "{html}");
    }

    #[test]
    fn a_name_that_looks_like_html_stays_text() {
        let html = rows_for("<img src=x onerror=alert(1)> & \"Co\"");
        assert!(!html.contains("<img"), "{html}");
        assert!(
            html.contains("&lt;img src=x onerror=alert(1)&gt; &amp; &quot;Co&quot;"),
            "{html}"
        );
    }
}
