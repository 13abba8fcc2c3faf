//! What-if (`whatif-panel`): for the shown recipient, try another window, byte budget, token
//! budget or pin-first without changing the session. Every view shows the what-if prompt
//! while it is on; *reset* drops it, *apply to team* makes it real (the window as this
//! member's override, the rest as team settings).

use agent_chatter::message::MemberId;
use agent_chatter::session::PreviewOverrides;
use leptos::prelude::*;

use crate::components::when::When;
use crate::erased::handler;
use crate::host::{use_host, Host};
use crate::state::{use_state, AppState};

/// How one input changes the what-if settings; an error (a value that is not a whole number)
/// changes nothing.
type Change = Box<dyn Fn(&mut PreviewOverrides, &str) -> Result<(), String>>;

/// A what-if number: empty is "as set"; anything but a whole number is refused by name, never
/// read as "as set" (which `1e3` or `2.5` silently were).
fn number(field: &str, value: &str) -> Result<Option<usize>, String> {
    if value.is_empty() {
        return Ok(None);
    }
    value.parse::<usize>().map(Some).map_err(|_| {
        format!(
            "what-if {field}: expected a whole number (digits only), found {value:?}; \
             leave it empty for the setting in force"
        )
    })
}

/// A what-if budget: a [`number`] above 0 (a budget of 0 leaves no room for any prompt).
fn budget(field: &str, value: &str) -> Result<Option<usize>, String> {
    match number(field, value)? {
        Some(0) => Err(format!(
            "what-if {field}: 0 leaves no room for any prompt; enter a number above 0, or leave \
             it empty for the setting in force"
        )),
        n => Ok(n),
    }
}

/// What a what-if field refuses before reading its number (`ev` is its change): text the
/// browser could not read as a number (it then gives `""`, which would read as "as set"), and
/// a number below zero.
fn refuse_early(ev: &leptos::ev::Event, value: &str) -> Result<(), String> {
    use wasm_bindgen::JsCast;
    let input = ev
        .target()
        .and_then(|t| t.dyn_into::<web_sys::HtmlInputElement>().ok());
    let Some(input) = input else {
        return Ok(());
    };
    // `whatif-max-bytes` → `max bytes`.
    let field = input
        .get_attribute("data-testid")
        .map(|t| t.trim_start_matches("whatif-").replace('-', " "))
        .unwrap_or_default();
    if value.is_empty() && input.matches(":invalid").unwrap_or(false) {
        return Err(format!(
            "what-if {field}: that is not a number; expected a whole number (digits only), or \
             leave it empty for the setting in force"
        ));
    }
    if let Some(below) = value.strip_prefix('-') {
        return Err(format!(
            "what-if {field}: −{below} is below zero; a window or a budget cannot be negative \
             (leave it empty for the setting in force)"
        ));
    }
    Ok(())
}

#[component]
pub fn WhatIfPanel(
    /// Shows the diff against the actual prompt (the inspector's diff tab).
    #[prop(optional)]
    on_diff: Option<Callback<()>>,
) -> impl IntoView {
    let state = use_state();
    let host = use_host();
    let active = move || !state.shown_whatif.get().is_empty();
    // Bumped when a value is refused: the fields read the what-if again and show what is on.
    let refused = RwSignal::new(0u32);
    // Why the last value was refused, said by the fields too (never applied).
    let problem = RwSignal::new(None::<String>);
    let update = move |change: Change| {
        move |ev: leptos::ev::Event| {
            let value = event_target_value(&ev);
            let Some(member) = state.shown_recipient.get_untracked() else {
                return;
            };
            let mut o = state
                .whatif
                .with_untracked(|w| w.get(&member).cloned().unwrap_or_default());
            match refuse_early(&ev, value.trim()).and_then(|()| change(&mut o, value.trim())) {
                Ok(()) => keep(state, problem, member, o),
                Err(e) => {
                    problem.set(Some(e.clone()));
                    state.report(e);
                    refused.update(|n| *n += 1);
                }
            }
        }
    };
    // Actual against what-if, in bytes, while one is on; the diff compares them line by line.
    let summary = move || {
        if !active() {
            return None;
        }
        let bytes =
            |p: Option<Result<std::sync::Arc<agent_chatter::context::Prompt>, String>>| match p {
                Some(Ok(p)) => Some(p.explain.total_bytes),
                _ => None,
            };
        let (actual, whatif) = (bytes(state.actual.get())?, bytes(state.preview.get())?);
        let change = whatif as i64 - actual as i64;
        Some(format!(
            "actual {actual} B → what-if {whatif} B ({change:+} B)"
        ))
    };
    let shown = move |read: fn(&PreviewOverrides) -> Option<String>| {
        move || {
            refused.track();
            read(&state.shown_whatif.get()).unwrap_or_default()
        }
    };
    let reset = move |_| {
        problem.set(None);
        if let Some(member) = state.shown_recipient.get_untracked() {
            state.whatif.update(|w| {
                w.remove(&member);
            });
        }
    };
    let apply = move |_| apply_to_team(state, host);
    view! {
        <fieldset class=move || if active() { "whatif active" } else { "whatif" } data-testid="whatif-panel">
            <legend>{move || if active() { "what-if (on: the session is unchanged)" } else { "what-if" }}</legend>
            <label>"window"
                <input type="number" min="0" placeholder="as set" data-testid="whatif-window"
                    prop:value=shown(|o| o.window_size.map(|v| v.to_string()))
                    on:change=update(Box::new(|o, v| {
                        o.window_size = number("window", v)?;
                        Ok(())
                    }))/>
            </label>
            <label>"max bytes"
                <input type="number" min="1" placeholder="as set" data-testid="whatif-max-bytes"
                    prop:value=shown(|o| o.max_bytes.map(|v| v.to_string()))
                    on:change=update(Box::new(|o, v| {
                        o.max_bytes = budget("max bytes", v)?;
                        Ok(())
                    }))/>
            </label>
            <label>"max tokens"
                <input type="number" min="1" placeholder="as set" data-testid="whatif-max-tokens"
                    prop:value=shown(|o| o.max_tokens.map(|v| v.to_string()))
                    on:change=update(Box::new(|o, v| {
                        o.max_tokens = budget("max tokens", v)?;
                        Ok(())
                    }))/>
            </label>
            <label>"pin first"
                <select data-testid="whatif-pin-first" on:change=update(Box::new(|o, v| {
                    o.pin_first = match v {
                        "on" => Some(true),
                        "off" => Some(false),
                        _ => None,
                    };
                    Ok(())
                }))>
                    <option value="" prop:selected=move || state.shown_whatif.get().pin_first.is_none()>"as set"</option>
                    <option value="on" prop:selected=move || state.shown_whatif.get().pin_first == Some(true)>"on"</option>
                    <option value="off" prop:selected=move || state.shown_whatif.get().pin_first == Some(false)>"off"</option>
                </select>
            </label>
            {move || problem.get().map(|e| view! { <p class="whatif-error" data-testid="whatif-error" role="alert">{e}</p> })}
            <When when=Memo::new(move |_| active())>
                <p class="whatif-summary" data-testid="whatif-summary">
                    {summary}
                    {on_diff.map(|show| view! { " " <button data-testid="whatif-show-diff" on:click=handler(move |_| show.run(()))>"diff against the actual prompt"</button> })}
                </p>
                <div class="whatif-actions">
                    <button data-testid="whatif-reset" on:click=handler(reset)>"reset"</button>
                    <button data-testid="whatif-apply" on:click=handler(apply)>"apply to team"</button>
                </div>
            </When>
        </fieldset>
    }
}

/// "apply to team": the shown recipient's what-if becomes the team's (its window the member's,
/// the budget and pin-first the settings'), and the what-if is dropped.
fn apply_to_team(state: AppState, host: Host) {
    let Some(member) = state.shown_recipient.get_untracked() else {
        return;
    };
    let o = state.shown_whatif.get_untracked();
    if let Some(window) = o.window_size {
        host.edit_team(|team| {
            if let Some(m) = team.members.iter_mut().find(|m| m.id == member) {
                m.window_size = Some(window);
            }
        });
    }
    if o.max_bytes.is_some() || o.max_tokens.is_some() || o.pin_first.is_some() {
        if let Some(mut settings) = state
            .team
            .with_untracked(|t| t.as_ref().map(|t| t.settings.clone()))
        {
            if let Some(b) = o.max_bytes {
                settings.max_bytes = b;
            }
            if let Some(t) = o.max_tokens {
                settings.max_tokens = Some(t);
            }
            if let Some(p) = o.pin_first {
                settings.pin_first = p;
            }
            host.set_settings(settings);
        }
    }
    state.whatif.update(|w| {
        w.remove(&member);
    });
}

/// Keeps what-if `o` for `member` (none left when it is empty), the problem said by the
/// fields mended, and the banner's copy of it with it.
fn keep(state: AppState, problem: RwSignal<Option<String>>, member: MemberId, o: PreviewOverrides) {
    // The banner's copy of a refused value goes with the panel's, once mended.
    if problem.get_untracked().is_some_and(|p| {
        state
            .error
            .with_untracked(|e| e.as_deref() == Some(p.as_str()))
    }) {
        state.error.set(None);
    }
    problem.set(None);
    state.whatif.update(|w| {
        if o.is_empty() {
            w.remove(&member);
        } else {
            w.insert(member, o);
        }
    })
}
