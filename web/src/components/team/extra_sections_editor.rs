//! A member's extra sections in the team editor (docs/architecture.md §10): add, edit and
//! remove each one's name, content, priority and compactable flag (`extra-section-editor`).
//! Every change goes through the member's `on_edit`, so the core's team reader checks it (a
//! duplicate or empty name is refused naming the field) and a bridge gets the edited team.

use std::sync::Arc;

use agent_chatter::team::ExtraSection;
use agent_chatter::team::Member;
use leptos::prelude::*;

use crate::components::keyed_list::KeyedList;
use crate::components::team::member_edit::MemberEdit;
use crate::erased::handler;
use crate::state::use_state;

#[component]
pub fn ExtraSectionsEditor(
    /// The member whose sections are edited.
    #[prop(into)]
    member: Signal<Option<Member>>,
    /// Applies a change to the member; false when it was refused.
    on_edit: Callback<MemberEdit, bool>,
) -> impl IntoView {
    let state = use_state();
    // Bumped when an edit is refused, so the fields show what is in force again.
    let refused = RwSignal::new(0u32);
    let edit = move |change: Box<dyn FnOnce(&mut ExtraSection)>, i: usize| {
        let applied = on_edit.run(Box::new(move |m: &mut Member| {
            if let Some(s) = m.extra_sections.get_mut(i) {
                change(s);
            }
        }));
        if !applied {
            refused.update(|n| *n += 1);
        }
    };
    let count =
        Memo::new(move |_| member.with(|m| m.as_ref().map_or(0, |m| m.extra_sections.len())));
    let read = move |i: usize, f: fn(&ExtraSection) -> String| {
        move || {
            refused.track();
            member.with(|m| {
                m.as_ref()
                    .and_then(|m| m.extra_sections.get(i))
                    .map(f)
                    .unwrap_or_default()
            })
        }
    };
    let section = move |i: usize| {
        let set_name = move |ev: leptos::ev::Event| {
            let v = event_target_value(&ev);
            edit(Box::new(move |s| s.name = v.trim().to_string()), i);
        };
        let set_content = move |ev: leptos::ev::Event| {
            let v = event_target_value(&ev);
            edit(Box::new(move |s| s.content = v), i);
        };
        let set_priority = move |ev: leptos::ev::Event| {
            let v = event_target_value(&ev);
            match priority(&v) {
                Ok(p) => edit(Box::new(move |s| s.priority = p), i),
                Err(why) => {
                    state.report(why);
                    refused.update(|n| *n += 1);
                }
            }
        };
        let set_compactable = move |ev: leptos::ev::Event| {
            let on = event_target_checked(&ev);
            edit(Box::new(move |s| s.compactable = on), i);
        };
        let remove = move |_| {
            if !on_edit.run(Box::new(move |m: &mut Member| {
                if i < m.extra_sections.len() {
                    m.extra_sections.remove(i);
                }
            })) {
                refused.update(|n| *n += 1);
            }
        };
        let compactable = move || {
            refused.track();
            member.with(|m| {
                m.as_ref()
                    .and_then(|m| m.extra_sections.get(i))
                    .is_some_and(|s| s.compactable)
            })
        };
        view! {
            <div class="extra-section-editor" data-testid="extra-section-editor">
                <div class="row">
                    <input class="extra-name" aria-label="extra section name" placeholder="name"
                        prop:value=read(i, |s| s.name.clone()) on:change=handler(set_name)/>
                    <button class="remove" title="remove this extra section" aria-label="remove this extra section"
                        on:click=handler(remove)>"×"</button>
                </div>
                <textarea class="extra-content" rows="2" aria-label="extra section content" placeholder="content"
                    prop:value=read(i, |s| s.content.clone()) on:change=handler(set_content)/>
                <div class="row extra-flags">
                    <label>"priority "
                        <input class="extra-priority" type="number" step="1"
                            title="higher is trimmed first among compactable sections"
                            prop:value=read(i, |s| s.priority.to_string()) on:change=handler(set_priority)/>
                    </label>
                    <label class="check" title="compactable sections may be cut before history; others only as a last resort">
                        <input class="extra-compactable" type="checkbox" prop:checked=compactable on:change=handler(set_compactable)/>
                        " compactable"
                    </label>
                </div>
            </div>
        }
    };
    let add = move |_| {
        on_edit.run(Box::new(|m: &mut Member| {
            let section = new_section(m);
            m.extra_sections.push(section);
        }));
    };
    view! {
        <div class="extra-sections-editor">
            <span class="extra-head" title="named sections added to every prompt of this member (plan, memory, tool output)">"extra sections"</span>
            <KeyedList keys=Signal::derive(move || (0..count.get() as u64).collect())
                row=Arc::new(move |i| section(i as usize).into_any())/>
            <button class="add-extra" data-testid="add-extra-section" on:click=handler(add)>"+ extra section"</button>
        </div>
    }
}

/// A priority as typed: a whole number, empty for 0; anything else refused by name.
fn priority(typed: &str) -> Result<i32, String> {
    match typed.trim() {
        "" => Ok(0),
        v => v.parse::<i32>().map_err(|_| {
            format!("team not changed: extra section priority: expected a whole number, found {typed:?}")
        }),
    }
}

/// "+ extra section": an empty section named `section{n}`, `n` the first number from the
/// member's count of sections on that none of them uses.
fn new_section(m: &Member) -> ExtraSection {
    let n = (m.extra_sections.len() + 1..)
        .find(|n| {
            !m.extra_sections
                .iter()
                .any(|s| s.name == format!("section{n}"))
        })
        .unwrap_or(0);
    ExtraSection {
        name: format!("section{n}"),
        content: String::new(),
        priority: 0,
        compactable: false,
    }
}

#[cfg(test)]
mod tests {
    use super::priority;

    #[test]
    fn a_priority_is_a_whole_number_or_empty_for_zero() {
        assert_eq!(priority(" 3 "), Ok(3));
        assert_eq!(priority(" "), Ok(0));
        assert_eq!(
            priority("1.5"),
            Err(
                "team not changed: extra section priority: expected a whole number, found \"1.5\""
                    .into()
            )
        );
    }
}
