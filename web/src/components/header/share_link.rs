//! "share" (`share-link`): the scenario of the current view (the messages up to the shown
//! one, the team and settings in force, the recipient) as a link, copied with a "copied ✓"
//! (`share-copied`), and as the case alone (`share-fragment`, `#share=…`) for a copy of the page
//! at another address; "open a shared link" (`open-link`) takes a link from any address, or
//! its `#share=…` part, and opens it here. See [`crate::share`].

use agent_chatter::scenario::Scenario;
use leptos::prelude::*;
use wasm_bindgen::JsCast;

use crate::components::header::popover::{close_menu_of, close_popover_on_outside_or_escape};
use crate::components::when::When;
use crate::erased::handler;
use crate::host::use_host;
use crate::share;
use crate::state::use_state;

fn select_all(ev: leptos::ev::FocusEvent) {
    event_target::<web_sys::HtmlInputElement>(&ev).select();
}

/// Copies `text` and says how it went in `copied`: `Some(true)` copied, `Some(false)` refused.
fn copy(text: String, copied: RwSignal<Option<bool>>) {
    copied.set(None);
    let Some(window) = web_sys::window() else {
        return copied.set(Some(false));
    };
    let promise = window.navigator().clipboard().write_text(&text);
    leptos::task::spawn_local(async move {
        let done = wasm_bindgen_futures::JsFuture::from(promise).await.is_ok();
        copied.set(Some(done));
    });
}

#[component]
pub fn ShareLink() -> impl IntoView {
    let state = use_state();
    let url = RwSignal::new(None::<String>);
    let fragment = RwSignal::new(String::new());
    let copied = RwSignal::new(None::<bool>);
    // When the link opens another prompt than the one shown (a delivery built with earlier
    // settings, a what-if, a routed parent), the box says so rather than let it pass.
    let differs = RwSignal::new(None::<String>);
    let make = move |_| {
        let member = state.shown_recipient.get_untracked();
        let scenario = state.session.with_untracked(|s| {
            let mut team = s.team()?.clone();
            let at = state.shown_at.get_untracked();
            // A delivered prompt travels with the settings it was built with.
            if let Some(settings) = at
                .zip(member.as_deref())
                .and_then(|(at, m)| s.settings_delivered(m, at))
            {
                team.settings = settings;
            }
            let len = at.map_or(0, |at| at + 1);
            let messages = s.shown_history(len);
            Some(Scenario::from_history(
                team,
                &messages,
                s.team_task_after(len),
            ))
        });
        let Some(scenario) = scenario else {
            return state.report("load a team first: there is nothing to share");
        };
        let shown = state.preview.with_untracked(|p| match p {
            Some(Ok(p)) => Some((p.sha256_hex(), p.explain.total_bytes)),
            _ => None,
        });
        let opened = member
            .as_deref()
            .and_then(|m| agent_chatter::scenario::preview(&scenario, m).ok())
            .map(|p| (p.sha256_hex(), p.explain.total_bytes));
        differs.set(match (shown, opened, member.as_deref()) {
            (Some((a, shown)), Some((b, opened)), Some(m)) if a != b => Some(format!(
                "this link opens {m}'s prompt as the case builds it ({opened} B), not the {shown} B shown: it carries the history, the team and the settings of the delivery shown (or those in force now), not a what-if"
            )),
            _ => None,
        });
        // The browser deflates it (asynchronously, a few milliseconds).
        leptos::task::spawn_local(async move {
            match share::encode(&scenario, member.as_deref()).await {
                Ok(made) => {
                    let Some(location) = web_sys::window().map(|w| w.location()) else {
                        return;
                    };
                    let link = share::link(&location.href().unwrap_or_default(), &made);
                    copy(link.clone(), copied);
                    fragment.set(made);
                    url.set(Some(link));
                }
                Err(e) => {
                    url.set(None);
                    state.report(e);
                }
            }
        });
    };
    // Like the header's menus: a click outside the box or Escape closes it, the focus going
    // back to "share".
    let share = NodeRef::<leptos::html::Span>::new();
    let button = NodeRef::<leptos::html::Button>::new();
    close_popover_on_outside_or_escape(
        move || share.get_untracked().map(Into::into),
        move || button.get_untracked().map(Into::into),
        move || url.with_untracked(Option::is_some),
        move || url.set(None),
    );
    let copied_text = move || match copied.get() {
        Some(true) => "copied ✓",
        Some(false) => "select and copy the link",
        None => "",
    };
    view! {
        <span class="share" node_ref=share>
        <button data-testid="share-link" node_ref=button on:click=handler(make) title="a link that opens this view's prompts in any copy of the page (the case travels in the link, not to a server; never the bridge's token)">"share"</button>
        <When when=Memo::new(move |_| url.with(Option::is_some))>
            <span class="share-box">
                <label class="visually-hidden" for="share-url">"share link"</label>
                <input id="share-url" data-testid="share-url" readonly prop:value=move || url.get().unwrap_or_default()
                    title="share link: opens this case on this page's address" on:focus=handler(select_all)/>
                <button data-testid="share-copy" on:click=handler(move |_| copy(url.get_untracked().unwrap_or_default(), copied))>"copy"</button>
                <span data-testid="share-copied" role="status" class="share-copied">{copied_text}</span>
                <label class="share-alone" for="share-fragment" title="for a copy of the page at another address: paste it into that page's \"open a shared link\", or after its address">"the case alone:"</label>
                <input id="share-fragment" data-testid="share-fragment" readonly prop:value=move || fragment.get() on:focus=handler(select_all)/>
                <button on:click=handler(move |_| url.set(None)) aria-label="close the share link" title="close the share link">"×"</button>
                {move || differs.get().map(|text| view! { <span class="share-note" data-testid="share-note">{text}</span> })}
            </span>
        </When>
        </span>
    }
}

/// "open a shared link" (`open-link`), an entry of the "open ▾" menu: the box to paste the
/// link into (`open-link-input`, `open-link-go`) shows in the menu.
#[component]
pub fn OpenLink() -> impl IntoView {
    let state = use_state();
    let host = use_host();
    let opening = RwSignal::new(false);
    let pasted = RwSignal::new(String::new());
    let open = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        match share::fragment_in(&pasted.get_untracked()) {
            Some(found) => {
                opening.set(false);
                pasted.set(String::new());
                close_menu_of(ev.target().and_then(|t| t.dyn_into().ok()));
                host.open_link(&found);
            }
            None => state.report(
                "this is not a shared link: paste a link made with \"share\" (from any address), or its #share=… part",
            ),
        }
    };
    view! {
        <button data-testid="open-link" on:click=handler(move |_| opening.update(|o| *o = !*o)) aria-expanded=move || opening.get().to_string()
            title="open a link someone shared, made on any machine: paste it, or its #share=… part">"open a shared link"</button>
        <When when=Memo::new(move |_| opening.get())>
            <form class="share-box" on:submit=handler(open)>
                <label for="open-link-input">"shared link or #share=…:"</label>
                <input id="open-link-input" data-testid="open-link-input" placeholder="paste a link from any address"
                    prop:value=move || pasted.get() on:input=handler(move |ev| pasted.set(event_target_value(&ev)))/>
                <button type="submit" data-testid="open-link-go">"open"</button>
                <button type="button" on:click=handler(move |_| opening.set(false)) aria-label="close" title="close">"×"</button>
            </form>
        </When>
    }
}
