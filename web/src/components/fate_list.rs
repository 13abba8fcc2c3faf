//! Every history message the builder looked at, with its fate and the reason (`fate-row`),
//! and how many older ones lie outside the window.

use leptos::prelude::*;

use crate::components::timeline_row::fate_style;
use crate::state::use_state;

#[component]
pub fn FateList() -> impl IntoView {
    let state = use_state();
    let rows = Memo::new(move |_| {
        state.preview.with(|p| {
            let Some(Ok(p)) = p else {
                return (Vec::new(), 0);
            };
            let rows = state.session.with(|s| {
                p.explain
                    .messages
                    .iter()
                    .map(|m| {
                        let who = s
                            .messages()
                            .get(m.index)
                            .map_or(String::new(), |msg| msg.speaker.display_name.clone());
                        let (class, why) = fate_style(m.fate);
                        (m.index, who, class, why)
                    })
                    .collect::<Vec<_>>()
            });
            (rows, p.explain.outside_window)
        })
    });
    view! {
        <div class="fates">
            <h3 title="what happened to each earlier message in this prompt: in the context, deduplicated (already there), trimmed to fit the budget, pinned (the first message, always kept) or outside the window (too old)">"history fates"</h3>
            <ul>
                {move || {
                    let (rows, outside) = rows.get();
                    let outside = (outside > 0).then(|| view! {
                        <li class="fate-row fate-outside">{format!("{outside} earlier message(s): outside the window")}</li>
                    });
                    view! {
                        {outside}
                        {rows.into_iter().map(|(index, who, class, why)| view! {
                            <li class=format!("fate-row {class}") data-testid="fate-row" data-index=index
                                on:click=move |_| state.selected.set(Some(index))>
                                <span class="index">"#"{index + 1}</span>" "<span class="from">{who}</span>": "{why}
                            </li>
                        }).collect_view()}
                    }
                }}
            </ul>
        </div>
    }
}
