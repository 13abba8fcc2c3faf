//! What-if (`whatif-panel`): for the shown recipient, try another window, byte budget, token
//! budget or pin-first without changing the session. Every view shows the what-if prompt
//! while it is on; *reset* drops it, *apply to team* makes it real (the window as this
//! member's override, the rest as team settings).

use agent_chatter::session::PreviewOverrides;
use leptos::prelude::*;

use crate::components::team_editor::edit;
use crate::host;
use crate::state::use_state;

/// How one input changes the what-if settings.
type Change = Box<dyn Fn(&mut PreviewOverrides, &str)>;

#[component]
pub fn WhatIfPanel() -> impl IntoView {
    let state = use_state();
    let active = move || !state.shown_whatif.get().is_empty();
    let update = move |change: Change| {
        move |ev: leptos::ev::Event| {
            let value = event_target_value(&ev);
            let Some(member) = state.shown_recipient.get_untracked() else {
                return;
            };
            state.whatif.update(|w| {
                let o = w.entry(member.clone()).or_default();
                change(o, value.trim());
                if o.is_empty() {
                    w.remove(&member);
                }
            });
        }
    };
    let number = |v: &str| v.parse::<usize>().ok();
    let shown = move |read: fn(&PreviewOverrides) -> Option<String>| {
        move || read(&state.shown_whatif.get()).unwrap_or_default()
    };
    let reset = move |_| {
        if let Some(member) = state.shown_recipient.get_untracked() {
            state.whatif.update(|w| {
                w.remove(&member);
            });
        }
    };
    let apply = move |_| {
        let Some(member) = state.shown_recipient.get_untracked() else {
            return;
        };
        let o = state.shown_whatif.get_untracked();
        if let Some(window) = o.window_size {
            edit(&state, |team| {
                if let Some(m) = team.members.iter_mut().find(|m| m.id == member) {
                    m.window_size = Some(window);
                }
            });
        }
        if o.max_bytes.is_some() || o.max_tokens.is_some() || o.pin_first.is_some() {
            if let Some(mut settings) = state.team.get_untracked().map(|t| t.settings) {
                if let Some(b) = o.max_bytes {
                    settings.max_bytes = b;
                }
                if let Some(t) = o.max_tokens {
                    settings.max_tokens = Some(t);
                }
                if let Some(p) = o.pin_first {
                    settings.pin_first = p;
                }
                host::set_settings(&state, settings);
            }
        }
        state.whatif.update(|w| {
            w.remove(&member);
        });
    };
    view! {
        <fieldset class=move || if active() { "whatif active" } else { "whatif" } data-testid="whatif-panel">
            <legend>{move || if active() { "what-if (on: the session is unchanged)" } else { "what-if" }}</legend>
            <label>"window"
                <input type="number" min="0" placeholder="as set" data-testid="whatif-window"
                    prop:value=shown(|o| o.window_size.map(|v| v.to_string()))
                    on:change=update(Box::new(move |o, v| o.window_size = number(v)))/>
            </label>
            <label>"max bytes"
                <input type="number" min="1" placeholder="as set" data-testid="whatif-max-bytes"
                    prop:value=shown(|o| o.max_bytes.map(|v| v.to_string()))
                    on:change=update(Box::new(move |o, v| o.max_bytes = number(v)))/>
            </label>
            <label>"max tokens"
                <input type="number" min="1" placeholder="as set" data-testid="whatif-max-tokens"
                    prop:value=shown(|o| o.max_tokens.map(|v| v.to_string()))
                    on:change=update(Box::new(move |o, v| o.max_tokens = number(v)))/>
            </label>
            <label>"pin first"
                <select data-testid="whatif-pin-first" on:change=update(Box::new(|o, v| o.pin_first = match v {
                    "on" => Some(true),
                    "off" => Some(false),
                    _ => None,
                }))>
                    <option value="" prop:selected=move || state.shown_whatif.get().pin_first.is_none()>"as set"</option>
                    <option value="on" prop:selected=move || state.shown_whatif.get().pin_first == Some(true)>"on"</option>
                    <option value="off" prop:selected=move || state.shown_whatif.get().pin_first == Some(false)>"off"</option>
                </select>
            </label>
            <Show when=active>
                <div class="whatif-actions">
                    <button data-testid="whatif-reset" on:click=reset>"reset"</button>
                    <button data-testid="whatif-apply" on:click=apply>"apply to team"</button>
                </div>
            </Show>
        </fieldset>
    }
}
