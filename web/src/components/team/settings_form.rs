//! Team-wide settings: window, byte budget, pin-first, delivery policy, token estimator and
//! budget, runaway bound, cost cap. A change goes in as a `setSettings` fact; the core refuses an
//! invalid one (e.g. a zero budget) and says which field.

use agent_chatter::team::{DeliveryPolicy, TeamSettings};
use agent_chatter::tokens::TokenEstimator;
use leptos::prelude::*;

use crate::erased::handler;
use crate::host::use_host;
use crate::state::use_state;

#[component]
pub fn SettingsForm() -> impl IntoView {
    let state = use_state();
    let host = use_host();
    let settings = Memo::new(move |_| state.team.with(|t| t.as_ref().map(|t| t.settings.clone())));
    // Bumped when a change is refused: the fields read the settings again, so each shows what
    // is in force, not the refused text.
    let refused = RwSignal::new(0u32);
    let shown = move |read: fn(&TeamSettings) -> String| {
        move || {
            refused.track();
            settings.with(|s| s.as_ref().map(read).unwrap_or_default())
        }
    };
    let set = move |write: fn(&mut TeamSettings, &str) -> Result<(), String>| {
        move |ev: leptos::ev::Event| {
            let value = event_target_value(&ev);
            let Some(mut next) = settings.get_untracked() else {
                return;
            };
            // Checked here by the core's settings rules (a zero budget, …), the ones a
            // `setSettings` fact is checked by, so a bridge is only sent settings it will take.
            let checked =
                write(&mut next, &value).and_then(|()| next.validate().map_err(|e| e.to_string()));
            match checked {
                Ok(()) => host.set_settings(next),
                Err(e) => {
                    state.report(format!("settings not changed: {e}"));
                    refused.update(|n| *n += 1);
                }
            }
        }
    };
    let checked = move |ev: leptos::ev::Event| {
        let Some(mut next) = settings.get_untracked() else {
            return;
        };
        next.pin_first = event_target_checked(&ev);
        host.set_settings(next);
    };
    view! {
        <fieldset class="settings" data-testid="settings">
            <legend>"settings"</legend>
            <label title="window: how many earlier messages each prompt shows (older ones are left out)">"window"
                <input type="number" min="0" data-testid="setting-window" title="window: how many earlier messages each prompt shows (older ones are left out)" prop:value=shown(|s| s.window_size.to_string())
                    on:change=set(|s, v| { s.window_size = number("window", v)?; Ok(()) })/>
            </label>
            <label title="max bytes: the most a prompt may weigh; history is trimmed to fit">"max bytes"
                <input type="number" min="1" data-testid="setting-max-bytes" title="max bytes: the most a prompt may weigh; history is trimmed to fit" prop:value=shown(|s| s.max_bytes.to_string())
                    on:change=set(|s, v| { s.max_bytes = number("max bytes", v)?; Ok(()) })/>
            </label>
            <label class="check" title="pin first message: the conversation's first message stays in every prompt, even outside the window">
                <input type="checkbox" data-testid="setting-pin-first"
                    prop:checked=move || settings.with(|s| s.as_ref().is_some_and(|s| s.pin_first)) on:change=handler(checked)/>
                "pin first message"
            </label>
            <label title="delivery: when one message asks several members, what each is given as its message">"delivery"
                <select data-testid="setting-delivery" title="delivery: when one message asks several members, each gets the latest message (answers of the others included) or the message that asked it (the others' answers beside it)" on:change=set(|s, v| {
                    s.delivery = if v == "parent" { DeliveryPolicy::Parent } else { DeliveryPolicy::Latest };
                    Ok(())
                })>
                    <option value="latest" prop:selected=move || settings.with(|s| s.as_ref().is_some_and(|s| s.delivery == DeliveryPolicy::Latest))>"latest message"</option>
                    <option value="parent" prop:selected=move || settings.with(|s| s.as_ref().is_some_and(|s| s.delivery == DeliveryPolicy::Parent))>"the addressing message"</option>
                </select>
            </label>
            <label title="tokens: a rough count of a prompt's tokens (characters / 4), shown in the inspector; none by default">"tokens"
                <select data-testid="setting-token-estimator" title="tokens: a rough count of a prompt's tokens (characters / 4), shown in the inspector; none by default" on:change=set(|s, v| {
                    s.token_estimator = if v == "charsDiv4" { TokenEstimator::CharsDiv4 } else { TokenEstimator::None };
                    Ok(())
                })>
                    <option value="none" prop:selected=move || settings.with(|s| s.as_ref().is_some_and(|s| s.token_estimator == TokenEstimator::None))>"no estimate"</option>
                    <option value="charsDiv4" prop:selected=move || settings.with(|s| s.as_ref().is_some_and(|s| s.token_estimator == TokenEstimator::CharsDiv4))>"chars / 4"</option>
                </select>
            </label>
            <label title="max tokens: a token budget beside max bytes, by the characters / 4 estimate; empty for none">"max tokens"
                <input type="number" min="1" placeholder="none" data-testid="setting-max-tokens" title="max tokens: a token budget beside max bytes, by the characters / 4 estimate; empty for none"
                    prop:value=shown(|s| s.max_tokens.map(|t| t.to_string()).unwrap_or_default())
                    on:change=set(|s, v| {
                        s.max_tokens = if v.trim().is_empty() { None } else { Some(number("max tokens", v)?) };
                        Ok(())
                    })/>
            </label>
            <label title="max rounds: the most agent replies one human message can lead to, so agents cannot answer each other forever">"max rounds"
                <input type="number" min="1" data-testid="setting-max-rounds" title="max rounds: the most agent replies one human message can lead to, so agents cannot answer each other forever" prop:value=shown(|s| s.max_rounds.to_string())
                    on:change=set(|s, v| { s.max_rounds = number("max rounds", v)?; Ok(()) })/>
            </label>
            // The cap a reached limit's notice asks to raise (docs/architecture.md §14c).
            <label title="max cost $ (maxCostUsd in a team file): no further delivery starts once the runs have cost this much (team changes included); empty for no cap">"max cost $"
                <input type="number" min="0" step="any" placeholder="none" data-testid="setting-max-cost" title="max cost $: no further delivery starts once the runs have cost this much; empty for no cap"
                    prop:value=shown(|s| s.max_cost_usd.map(|c| c.dollars().to_string()).unwrap_or_default())
                    on:change=set(|s, v| { s.max_cost_usd = dollars(v)?; Ok(()) })/>
            </label>
        </fieldset>
    }
}

/// A cost cap typed in dollars: empty for none, else more than 0 (as a team file's
/// `maxCostUsd`).
fn dollars(value: &str) -> Result<Option<agent_chatter::usage::Usd>, String> {
    let value = value.trim();
    if value.is_empty() {
        return Ok(None);
    }
    // Read as JSON reads it (the page has that reader already; `str::parse::<f64>` would add
    // another).
    match serde_json::from_str::<f64>(value)
        .ok()
        .and_then(agent_chatter::usage::Usd::new)
    {
        Some(cap) if cap.dollars() > 0.0 => Ok(Some(cap)),
        _ => Err(format!(
            "max cost: expected more than 0 dollars, found {value:?} (leave it empty for no cap)"
        )),
    }
}

/// A whole number typed in a number field. The browser gives `""` for text that is no number
/// (`e`, `1e`), so an empty value is named as what it is.
fn number(field: &str, value: &str) -> Result<usize, String> {
    let value = value.trim();
    if value.is_empty() {
        return Err(format!("{field}: expected a whole number"));
    }
    value
        .parse()
        .map_err(|_| format!("{field}: expected a whole number, found {value:?}"))
}

#[cfg(test)]
mod tests {
    use super::dollars;

    #[test]
    fn a_cost_cap_is_more_than_zero_dollars_or_none() {
        assert_eq!(dollars(" 1.5 ").unwrap().map(|c| c.dollars()), Some(1.5));
        assert_eq!(dollars("").unwrap(), None);
        for bad in ["0", "-2", "abc"] {
            let e = dollars(bad).unwrap_err();
            assert!(
                e.starts_with("max cost: expected more than 0 dollars"),
                "{bad}: {e}"
            );
        }
    }
}
