//! The cost view (`cost-view`, docs/architecture.md §14c), opened from the header's usage: what
//! the runs cost per member and per model, how many runs, what `≥` means, and the team's cost
//! cap ("max cost $") with what is left under it, in one place.

use std::collections::BTreeMap;

use agent_chatter::team::TeamSettings;
use agent_chatter::usage::{runs_word, CapStanding, Silence, Spend, Usd};
use leptos::prelude::*;

use crate::erased::handler;
use crate::host::use_host;
use crate::state::use_state;

/// The group of runs whose member's settings name no model.
pub const NO_MODEL: &str = "model not reported";

/// What a crossing run does, per CLI: said beside the cap, so no one expects the cap to stop a
/// run in flight.
const CROSSING: &str = "No run starts once the runs have cost this much (team changes \
     included). A run that starts under the cap is not stopped by it: Claude Code is given what \
     is left (--max-budget-usd) and stops near the cap; Codex, Gemini and agents over ACP have no \
     such stop, and Codex and Gemini report no cost, so the cap cannot count theirs.";

/// A row's cost in words: `$0.0100`, `≥ $0.0100`, `not reported` when a run's cost is not
/// known, else why its runs reported nothing (`the simulator reports no usage`).
fn cost_words(spend: &Spend, silence: Silence) -> String {
    spend.cost().unwrap_or_else(|| {
        if spend.unpriced > 0 {
            "not reported".to_string()
        } else {
            silence.words().to_string()
        }
    })
}

/// The view's first line: `3 runs cost ≥ $0.0300`, `2 runs: the simulator reports no usage`,
/// `no runs yet`.
pub fn total_words(spend: &Spend, silence: Silence) -> String {
    if spend.runs == 0 {
        return "no runs yet".to_string();
    }
    let runs = runs_word(spend.runs);
    if spend.cost().is_none() && spend.unpriced == 0 {
        return format!("{runs}: {}", silence.words());
    }
    format!("{runs} cost {}", cost_words(spend, silence))
}

/// What `≥` means for this total, in a sentence; `None` when every run reported its cost.
pub fn floor_words(spend: &Spend) -> Option<String> {
    let n = spend.unpriced;
    if n == 0 {
        return None;
    }
    let which = if n == spend.runs {
        format!("none of the {} reported a cost", runs_word(n))
    } else {
        format!("{} of the {} reported no cost", runs_word(n), spend.runs)
    };
    Some(format!(
        "≥ means at least: {which} (Codex and Gemini report none, nor does a run cut short), \
         so what the runs cost is at least the total shown."
    ))
}

/// Where the runs stand against the cap: what is left, or how far past it they went.
pub fn cap_words(standing: Option<CapStanding>) -> String {
    let Some(standing) = standing else {
        return "no cap: runs are not stopped by what they cost".to_string();
    };
    let (limit, spent) = (standing.cap.display_limit(), standing.spent);
    if !standing.reached() {
        format!(
            "{} of {limit} spent: {} left",
            spent.display(),
            standing.left().display()
        )
    } else if let Some(past) = standing.past() {
        format!(
            "cap reached: the runs cost {}, {} past the cap of {limit}; raise it to go on",
            spent.display(),
            past.display()
        )
    } else {
        format!("cap reached: the runs cost {limit}; raise it to go on")
    }
}

/// Members' spends summed per model (`NO_MODEL` for a member whose settings name none), with
/// the members of each, by model name.
pub fn by_model(
    members: &[(String, Spend)],
    model_of: impl Fn(usize) -> Option<String>,
) -> Vec<(String, Vec<String>, Spend)> {
    let mut groups: BTreeMap<String, (Vec<String>, Spend)> = BTreeMap::new();
    for (i, (name, spend)) in members.iter().enumerate() {
        let model = model_of(i).unwrap_or_else(|| NO_MODEL.to_string());
        let group = groups.entry(model).or_default();
        group.0.push(name.clone());
        group.1.add(spend);
    }
    groups.into_iter().map(|(m, (n, s))| (m, n, s)).collect()
}

/// The cap typed in dollars: empty for none, else more than 0 (as a team file's `maxCostUsd`).
fn cap_typed(value: &str) -> Result<Option<Usd>, String> {
    let value = value.trim();
    if value.is_empty() {
        return Ok(None);
    }
    match serde_json::from_str::<f64>(value).ok().and_then(Usd::new) {
        Some(cap) if cap.dollars() > 0.0 => Ok(Some(cap)),
        _ => Err(format!(
            "max cost: expected more than 0 dollars, found {value:?} (leave it empty for no cap)"
        )),
    }
}

#[component]
pub fn CostView(
    /// Every run's spend in this session.
    #[prop(into)]
    usage: Signal<Spend>,
    /// Where the runs stand against the team's cap (`None`: no cap).
    #[prop(into)]
    cap: Signal<Option<CapStanding>>,
    /// Why runs report no usage, as the host knows it (the simulator has none to report).
    #[prop(into)]
    silence: Signal<Silence>,
    on_close: Callback<()>,
) -> impl IntoView {
    let state = use_state();
    let host = use_host();
    // Per member (display names, a member who left by the name they had), rebuilt when the
    // runs or the team change.
    let members = Memo::new(move |_| {
        let _ = state.runs.get();
        state.members.track();
        state.session.with_untracked(|s| {
            s.usage_by_member()
                .into_iter()
                .map(|(id, spend)| {
                    let name = s.display_name(&id).unwrap_or(&id).to_string();
                    (id, name, spend)
                })
                .collect::<Vec<_>>()
        })
    });
    let member_rows = move || {
        members
            .get()
            .into_iter()
            .map(|(id, name, spend)| {
                let cost = cost_words(&spend, host.usage_silence(Some(&id)));
                view! {
                    <tr><th scope="row">{name}</th><td>{spend.runs}</td><td>{cost}</td></tr>
                }
            })
            .collect_view()
    };
    let model_rows = move || {
        let all = members.get();
        let named: Vec<(String, Spend)> = all.iter().map(|(_, n, s)| (n.clone(), *s)).collect();
        let model_of = |i: usize| host.run_info(&all[i].0).and_then(|r| r.settings.model);
        by_model(&named, model_of)
            .into_iter()
            .map(|(model, names, spend)| {
                view! {
                    <tr><th scope="row">{model}</th><td>{names.join(", ")}</td><td>{spend.runs}</td><td>{cost_words(&spend, silence.get())}</td></tr>
                }
            })
            .collect_view()
    };
    let refused = RwSignal::new(0u32);
    let on_cap = move |ev: leptos::ev::Event| {
        let value = event_target_value(&ev);
        let Some(mut next): Option<TeamSettings> = state
            .team
            .with_untracked(|t| t.as_ref().map(|t| t.settings.clone()))
        else {
            return;
        };
        let checked = cap_typed(&value).and_then(|c| {
            next.max_cost_usd = c;
            next.validate().map_err(|e| e.to_string())
        });
        match checked {
            Ok(()) => host.set_settings(next),
            Err(e) => {
                state.report(format!("settings not changed: {e}"));
                refused.update(|n| *n += 1);
            }
        }
    };
    let cap_value = move || {
        refused.track();
        cap.get()
            .map(|c| c.cap.dollars().to_string())
            .unwrap_or_default()
    };
    view! {
        <div class="cost-view" data-testid="cost-view" role="dialog" aria-label="what the runs cost">
            <div class="cost-bar">
                <h2>"what the runs cost"</h2>
                <button class="library-close" aria-label="close the cost view"
                    on:click=handler(move |_| on_close.run(()))>"×"</button>
            </div>
            <p class="cost-total" data-testid="cost-total">{move || usage.with(|u| total_words(u, silence.get()))}</p>
            {move || usage.with(floor_words).map(|w| view! { <p class="cost-floor" data-testid="cost-floor">{w}</p> })}
            <table class="cost-table" data-testid="cost-by-member">
                <caption>"by member"</caption>
                <thead><tr><th scope="col">"member"</th><th scope="col">"runs"</th><th scope="col">"cost"</th></tr></thead>
                <tbody>{member_rows}</tbody>
            </table>
            <table class="cost-table" data-testid="cost-by-model">
                <caption>"by model (as each member's run settings name it)"</caption>
                <thead><tr><th scope="col">"model"</th><th scope="col">"members"</th><th scope="col">"runs"</th><th scope="col">"cost"</th></tr></thead>
                <tbody>{model_rows}</tbody>
            </table>
            <div class="cost-cap">
                <label>"max cost $ "
                    <input type="number" min="0" step="any" placeholder="none" data-testid="cost-cap-input"
                        aria-describedby="cost-cap-hint" prop:value=cap_value on:change=handler(on_cap)/>
                </label>
                <p data-testid="cost-cap-state">{move || cap_words(cap.get())}</p>
                <p class="muted" id="cost-cap-hint">{CROSSING}</p>
            </div>
        </div>
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_chatter::usage::Usage;

    fn spend(costs: &[Option<f64>]) -> Spend {
        let mut s = Spend::default();
        for c in costs {
            let u = Usage {
                input_tokens: Some(10),
                cost_usd: c.and_then(Usd::new),
                ..Usage::default()
            };
            s.add_run(Some(&u), false);
        }
        s
    }

    #[test]
    fn the_floor_is_explained_in_words_and_only_when_a_run_reported_no_cost() {
        let s = spend(&[Some(0.01), None, Some(0.02)]);
        assert_eq!(total_words(&s, Silence::Simulated), "3 runs cost ≥ $0.0300");
        assert!(floor_words(&s)
            .unwrap()
            .starts_with("≥ means at least: 1 run of the 3 reported no cost"));
        assert_eq!(floor_words(&spend(&[Some(0.01)])), None);
        assert!(floor_words(&spend(&[None, None]))
            .unwrap()
            .contains("none of the 2 runs reported a cost"));
        assert_eq!(
            total_words(&Spend::default(), Silence::Simulated),
            "no runs yet"
        );
    }

    #[test]
    fn runs_that_reported_nothing_say_why_as_the_host_knows_it() {
        let mut quiet = Spend::default();
        quiet.add_run(None, false);
        quiet.add_run(None, false);
        assert_eq!(
            total_words(&quiet, Silence::Simulated),
            "2 runs: the simulator reports no usage"
        );
        assert_eq!(
            total_words(&quiet, Silence::NotReported),
            "2 runs: no usage reported"
        );
        assert_eq!(
            cost_words(&quiet, Silence::Simulated),
            "the simulator reports no usage"
        );
        // A run whose cost is not known is not the simulator's silence.
        let unknown = spend(&[None]);
        assert_eq!(
            total_words(&unknown, Silence::Simulated),
            "1 run cost not reported"
        );
        assert_eq!(cost_words(&unknown, Silence::Simulated), "not reported");
    }

    #[test]
    fn the_cap_says_what_is_left_or_how_far_past_it_the_runs_went() {
        let standing = |cap, spent| {
            Some(CapStanding {
                cap: Usd::new(cap).unwrap(),
                spent: Usd::new(spent).unwrap(),
            })
        };
        assert_eq!(
            cap_words(standing(0.05, 0.03)),
            "$0.0300 of $0.05 spent: $0.0200 left"
        );
        assert_eq!(
            cap_words(standing(0.02, 0.03)),
            "cap reached: the runs cost $0.0300, $0.0100 past the cap of $0.02; raise it to go on"
        );
        assert_eq!(
            cap_words(standing(0.02, 0.02)),
            "cap reached: the runs cost $0.02; raise it to go on"
        );
        assert!(cap_words(None).starts_with("no cap"));
        assert_eq!(cap_typed(" "), Ok(None));
        assert!(cap_typed("0").is_err());
        assert_eq!(cap_typed("0.5"), Ok(Usd::new(0.5)));
    }

    #[test]
    fn members_without_a_model_are_grouped_as_not_reported() {
        let members = vec![
            ("Max".to_string(), spend(&[Some(0.01)])),
            ("Sarah".to_string(), spend(&[None])),
            ("Ann".to_string(), spend(&[Some(0.02)])),
        ];
        let models = [Some("sonnet"), None, Some("sonnet")];
        let groups = by_model(&members, |i| models[i].map(str::to_string));
        let got: Vec<_> = groups
            .iter()
            .map(|(m, n, s)| (m.as_str(), n.join(","), s.runs, s.cost()))
            .collect();
        assert_eq!(
            got,
            [
                (NO_MODEL, "Sarah".to_string(), 1, None),
                (
                    "sonnet",
                    "Max,Ann".to_string(),
                    2,
                    Some("$0.0300".to_string())
                ),
            ]
        );
    }
}
