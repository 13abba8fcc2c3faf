//! The header pane (docs/architecture.md §13), under `Header`: the spend, notifications, the
//! sessions, share, open and save menus (closing as one: [`popover`]), help, what the last
//! open or fork did ([`happened`]); and the banners under it (an error, a shared case).
//!
//! The skip link, title, team name, connection status and the menus.

pub mod error_banner;
pub mod files_menu;
pub mod happened;
pub mod help;
pub mod notify_toggle;
pub mod popover;
pub mod share_link;
pub mod shared_banner;
pub mod usage_total;

use leptos::prelude::*;
use wasm_bindgen::JsCast;

use crate::erased::handler;
use crate::state::use_state;

#[component]
pub fn Header(
    /// The connection status (`connection-status`): the simulation, or the bridge and whether
    /// the page is connected to it.
    #[prop(into)]
    connection: Signal<&'static str>,
    /// What the connection status means, on hover.
    connection_title: &'static str,
    /// The menus, in order (the bridge's sessions, share, files).
    children: Children,
) -> impl IntoView {
    let state = use_state();
    let team_name = Memo::new(move |_| {
        state.team.with(|t| {
            t.as_ref()
                .map(|t| t.name.clone())
                .unwrap_or_else(|| "no team".into())
        })
    });
    let skip = move |ev: leptos::ev::MouseEvent| {
        ev.prevent_default();
        let composer = document()
            .get_element_by_id("composer-input")
            .and_then(|el| el.dyn_into::<web_sys::HtmlElement>().ok());
        if let Some(composer) = composer {
            let _ = composer.focus();
        }
    };
    view! {
        <header class="top">
            // The first Tab stop (docs/architecture.md §13): past the header and the team's
            // fields, straight to the composer. Focused by hand: the URL's fragment is the
            // share link's and the bridge's token, never an anchor.
            <a class="skip-link" href="#composer-input" data-testid="skip-link" on:click=handler(skip)>"skip to the composer"</a>
            // The tagline under the title, cut short (whole on hover) when the width is needed.
            <div class="brand">
                <h1>"agent-chatter"</h1>
                <span class="tagline" data-testid="tagline" title="see exactly what each AI agent is told">"see exactly what each AI agent is told"</span>
            </div>
            <span class="team-name" data-testid="team-name" title=team_name>{team_name}</span>
            <span class="connection" data-testid="connection-status" title=connection_title>
                {move || connection.get()}
            </span>
            {children()}
            <happened::Happened/>
        </header>
    }
}
