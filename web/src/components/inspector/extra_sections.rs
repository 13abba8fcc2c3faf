//! The inspected recipient's extra sections (docs/architecture.md §10: plan, memory, tool
//! output, from the member's `extraSections`), each with its fate in the prompt shown
//! (`extra-section`): kept whole, compacted (cut from → to bytes), or trimmed away.

use agent_chatter::explain::Explain;
use leptos::prelude::*;

use crate::components::when::When;
use crate::state::use_state;

/// The sections every prompt may have; any other name in an explain is an extra section.
pub const BUILT_IN: [&str; 6] = [
    "system", "teamTask", "context", "parent", "related", "message",
];

/// What became of one extra section in a prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExtraFate {
    pub name: String,
    /// From the member's config, when the member still has it: priority and compactable.
    pub config: Option<(i32, bool)>,
    /// Bytes in the prompt (header included).
    pub bytes: usize,
    /// `kept`, `compacted`, `trimmed` or `empty` (`data-fate`).
    pub fate: &'static str,
    /// The fate in words.
    pub words: String,
}

/// Each extra section of `explain` (and each of `configured` it does not list: empty ones),
/// in prompt order, with its fate.
pub fn extra_fates(explain: &Explain, configured: &[(String, i32, bool)]) -> Vec<ExtraFate> {
    let config = |name: &str| {
        configured
            .iter()
            .find(|(n, ..)| n == name)
            .map(|(_, p, c)| (*p, *c))
    };
    let mut fates: Vec<ExtraFate> = explain
        .sections
        .iter()
        .filter(|s| !BUILT_IN.contains(&s.name.as_str()))
        .map(|s| {
            let cut = explain.truncations.iter().find(|t| t.section == s.name);
            let (fate, words) = match cut {
                _ if s.bytes == 0 => ("trimmed", "trimmed away to fit the budget".to_string()),
                Some(t) if t.to_bytes == 0 => (
                    "trimmed",
                    format!("trimmed away to fit the budget (all {} B)", t.from_bytes),
                ),
                Some(t) => (
                    "compacted",
                    format!("compacted: cut from {} to {} B", t.from_bytes, t.to_bytes),
                ),
                None => ("kept", "kept whole".to_string()),
            };
            ExtraFate {
                name: s.name.clone(),
                config: config(&s.name),
                bytes: s.bytes,
                fate,
                words,
            }
        })
        .collect();
    for (name, priority, compactable) in configured {
        if !fates.iter().any(|f| &f.name == name) {
            fates.push(ExtraFate {
                name: name.clone(),
                config: Some((*priority, *compactable)),
                bytes: 0,
                fate: "empty",
                words: "empty: nothing to put in the prompt".to_string(),
            });
        }
    }
    fates
}

#[component]
pub fn ExtraSections() -> impl IntoView {
    let state = use_state();
    let fates = Memo::new(move |_| {
        let configured: Vec<(String, i32, bool)> = state.shown_recipient.with(|id| {
            state.members.with(|members| {
                id.as_ref()
                    .and_then(|id| crate::state::member(members, id))
                    .map_or_else(Vec::new, |m| {
                        m.extra_sections
                            .iter()
                            .map(|s| (s.name.clone(), s.priority, s.compactable))
                            .collect()
                    })
            })
        });
        state.preview.with(|p| match p {
            Some(Ok(p)) => extra_fates(&p.explain, &configured),
            _ => Vec::new(),
        })
    });
    view! {
        <When when=Memo::new(move |_| fates.with(|f| !f.is_empty()))>
            <div class="extra-sections">
                <h3>"extra sections"</h3>
                <ul>
                    {move || fates.get().into_iter().map(|f| {
                        let config = f.config.map(|(priority, compactable)| {
                            let kind = if compactable { "compactable" } else { "never compacted" };
                            format!(" · priority {priority} · {kind}")
                        }).unwrap_or_default();
                        view! {
                            <li class=format!("extra-section extra-{}", f.fate) data-testid="extra-section"
                                data-name=f.name.clone() data-fate=f.fate>
                                <span class="extra-tag">"extra section"</span>" "
                                <span class="extra-name">{f.name.clone()}</span>
                                <span class="extra-config">{config}</span>
                                <span class="extra-fate">{format!(" · {} · {} B in the prompt", f.words, f.bytes)}</span>
                            </li>
                        }
                    }).collect_view()}
                </ul>
            </div>
        </When>
    }
}
