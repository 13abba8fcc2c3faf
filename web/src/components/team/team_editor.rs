//! The team in use: its members and settings (`team-editor`). Member edits rewrite the team
//! and go on with the conversation under it ([`crate::host::Host::edit_team`]); settings go in
//! as a `setSettings` fact. A member who has spoken is removed from now on
//! ([`crate::host::Host::leave_team`], a `memberLeft` fact at the end: their messages stay
//! theirs), once the user confirms. A removed member can be put back (`member-undo`) until the
//! next edit: one who had not spoken as if never removed; one who left as a team edit that
//! names them again (page alone: as if they never left; a bridge: the history under the team
//! with them, a team fact at the end).

use std::sync::Arc;

use agent_chatter::message::MemberId;
use agent_chatter::team::{Member, MemberKind, Team};
use leptos::prelude::*;

use crate::components::keyed_list::KeyedList;
use crate::components::team::member_edit::MemberEdit;
use crate::components::team::member_row::MemberRow;
use crate::components::team::settings_form::SettingsForm;
use crate::erased::handler;
use crate::host::{use_host, Host};
use crate::state::{use_state, AppState};
use crate::status::usage_words;

/// A change to the team, applied by the host; whether it was taken.
type TeamEdit = Box<dyn FnOnce(&mut Team)>;

/// Applies team edits through the host; an edit taken forgets the member last removed (its
/// undo is offered until the next edit). `Copy`, handed to each row.
#[derive(Clone, Copy)]
struct Editor {
    host: Host,
    removed: RwSignal<Option<Removed>>,
}

impl Editor {
    /// Applies `change` to a copy of the team in use; whether it was taken.
    fn edit(self, change: TeamEdit) -> bool {
        let applied = self.host.edit_team(change);
        if applied {
            self.removed.set(None);
        }
        applied
    }
}

/// The member last removed: where it stood, who, and whether it left from now on (it had
/// spoken) rather than as if never in the team.
#[derive(Clone)]
struct Removed {
    at: usize,
    member: Member,
    from_now_on: bool,
}

#[component]
pub fn TeamEditor() -> impl IntoView {
    let state = use_state();
    let host = use_host();
    // Rows are keyed by member id: an edit or a removal keeps every other row (and what is
    // typed in it) where it is. The list's keys are numbers: each id seen gets the next one,
    // for as long as the page is open.
    let seen = StoredValue::new(Vec::<MemberId>::new());
    // The member last removed, for "undo"; the next edit forgets it.
    let removed = RwSignal::new(None::<Removed>);
    let editor = Editor { host, removed };
    let ids = row_keys(state, seen);
    let add = move |_| {
        editor.edit(Box::new(|team: &mut Team| {
            let member = new_member(team);
            team.members.push(member);
        }));
    };
    let team_name = move || {
        state
            .team
            .with(|t| t.as_ref().map(|t| t.name.clone()).unwrap_or_default())
    };
    // A rename is a team edit like any other: the team reader checks it (an empty name is
    // refused naming the field), and a bridge gets the renamed team.
    let rename = move |ev: leptos::ev::Event| {
        let name = event_target_value(&ev).trim().to_string();
        if !editor.edit(Box::new(move |team: &mut Team| team.name = name)) {
            // Refused: the field shows the name in use again.
            event_target::<web_sys::HtmlInputElement>(&ev).set_value(&team_name());
        }
    };
    view! {
        <div class="team-editor" data-testid="team-editor">
            <h2>"team"</h2>
            <label class="team-name-field">"name"
                <input data-testid="team-name-input" prop:value=team_name on:change=handler(rename)
                    aria-label="the team's name"/>
            </label>
            <KeyedList keys=ids row=Arc::new(move |k| {
                let id = seen.with_value(|seen| seen[k as usize].clone());
                member_row(state, id, editor).into_any()
            })/>
            {member_undo(editor)}
            {members_left(state)}
            <button class="add-member" on:click=handler(add)>"+ member"</button>
            <SettingsForm/>
        </div>
    }
}

/// The list's keys: each member id seen gets the next number, for as long as the page is open.
fn row_keys(state: AppState, seen: StoredValue<Vec<MemberId>>) -> Memo<Vec<u64>> {
    Memo::new(move |_| {
        state.members.with(|members| {
            seen.try_update_value(|seen| {
                members
                    .iter()
                    .map(|m| match seen.iter().position(|id| *id == m.id) {
                        Some(k) => k as u64,
                        None => {
                            seen.push(m.id.clone());
                            (seen.len() - 1) as u64
                        }
                    })
                    .collect::<Vec<u64>>()
            })
            .unwrap_or_default()
        })
    })
}

/// The row of member `id`, reading what it shows through memos: a value that did not change
/// stops there, so a setting edit re-renders nothing of a row but what it changed.
fn member_row(state: AppState, id: MemberId, editor: Editor) -> impl IntoView {
    let host = editor.host;
    let member = Memo::new({
        let id = id.clone();
        move |_| {
            state
                .members
                .with(|ms| crate::state::member(ms, &id).cloned())
        }
    });
    let report = Memo::new({
        let id = id.clone();
        move |_| host.agent_report(&id)
    });
    let status = Memo::new({
        let id = id.clone();
        move |_| host.member_status(&id)
    });
    let usage = usage_memo(state, host, id.clone());
    // Read again when a message, a run or the team changes, not on every fact: each fact
    // marked every member's row (a setting edit, a message on a 10⁴ session).
    let spoken = Memo::new({
        let id = id.clone();
        move |_| {
            state.message_count.track();
            state.runs.track();
            state.team.track();
            state.session.with_untracked(|s| s.can_remove(&id).is_err())
        }
    });
    let context = Memo::new({
        let id = id.clone();
        move |_| host.context_fill(&id)
    });
    let run_info = Memo::new({
        let id = id.clone();
        move |_| host.run_info(&id)
    });
    let team_timeout_ms = Memo::new(move |_| {
        state
            .team
            .with(|t| t.as_ref().and_then(|t| t.settings.max_agent_response_ms))
    });
    let on_edit = Callback::new({
        let id = id.clone();
        move |change: MemberEdit| {
            let id = id.clone();
            editor.edit(Box::new(move |team: &mut Team| {
                if let Some(m) = team.members.iter_mut().find(|m| m.id == id) {
                    change(m);
                }
            }))
        }
    });
    let on_remove = Callback::new(move |()| remove(state, &id, spoken, editor));
    view! {
        <MemberRow member=member report=report status=status clock=state.clock usage=usage context=context
            run_info=run_info team_timeout_ms=team_timeout_ms spoken=spoken on_edit=on_edit on_remove=on_remove/>
    }
}

/// What member `id`'s runs cost in words; summed only when the runs change, not with every
/// fact. When nothing is reported, the host says why (the simulator reports none).
fn usage_memo(state: AppState, host: Host, id: MemberId) -> Memo<Option<String>> {
    Memo::new(move |_| {
        let _ = state.runs.get();
        let silence = host.usage_silence(Some(&id));
        state
            .session
            .with_untracked(|s| usage_words(&s.usage(Some(&id)), silence))
    })
}

/// Removes member `id`: one who has not spoken as if never in the team (a team edit); one who
/// has, from now on, once the user agrees (`memberLeft`). Either can be undone until the next
/// edit.
fn remove(state: AppState, id: &MemberId, spoken: Memo<bool>, editor: Editor) {
    let Some((at, member)) = state.team.with_untracked(|t| {
        let t = t.as_ref()?;
        let i = t.members.iter().position(|m| m.id == *id)?;
        Some((i, t.members[i].clone()))
    }) else {
        return;
    };
    let from_now_on = spoken.get_untracked();
    let done = if from_now_on {
        let name = &member.display_name;
        crate::browser::confirm(&format!(
            "Remove {name} from now on? {name}'s messages stay {name}'s; {name} gets no more \
             messages ([NEXT: {}] will reach no one).",
            member.name
        )) && editor.host.leave_team(id)
    } else {
        let id = id.clone();
        editor.edit(Box::new(move |team: &mut Team| {
            team.members.retain(|m| m.id != id)
        }))
    };
    if done {
        editor.removed.set(Some(Removed {
            at,
            member,
            from_now_on,
        }));
    }
}

/// "Undo" for the member last removed, until the next edit: it goes back where it stood.
/// (Functions, not components, here: no props type in the page's wasm.)
fn member_undo(editor: Editor) -> impl IntoView {
    let removed = editor.removed;
    let undo = move |_| {
        let Some(Removed { at, member, .. }) = removed.get_untracked() else {
            return;
        };
        editor.edit(Box::new(move |team: &mut Team| {
            let at = at.min(team.members.len());
            team.members.insert(at, member);
        }));
    };
    move || {
        removed.with(|r| {
            r.as_ref().map(|r| {
                let name = &r.member.display_name;
                let said = if r.from_now_on {
                    format!("{name} left the team from now on.")
                } else {
                    format!("{name} removed from the team.")
                };
                view! {
                    <div class="member-undo" role="status" data-testid="member-undo">
                        {said}" "
                        <button data-testid="member-undo-button" on:click=handler(undo)
                            title="put the member back where it was (offered until the next team edit)">"Undo"</button>
                    </div>
                }
            })
        })
    }
}

/// Who left the team from now on since the last team change, and when: their messages are
/// still theirs in the conversation, and they are in no list of members here.
fn members_left(state: AppState) -> impl IntoView {
    let left = Memo::new(move |_| {
        state.team.track();
        state.session.with_untracked(|s| {
            s.left_members()
                .iter()
                .map(|l| match l.after {
                    0 => format!("{} (before the first message)", l.member.display_name),
                    n => format!("{} at #{n}", l.member.display_name),
                })
                .collect::<Vec<_>>()
                .join(", ")
        })
    });
    move || {
        let left = left.get();
        (!left.is_empty()).then(|| {
            view! { <p class="members-left muted" data-testid="members-left">"Left the team: "{left}</p> }
        })
    }
}

/// "+ member": a Claude Code member named `agent{n}`, `n` the first number from the team's
/// size on that no member uses.
fn new_member(team: &Team) -> Member {
    let n = (team.members.len() + 1..)
        .find(|n| team.find(&format!("agent{n}")).is_none())
        .unwrap_or(0);
    let name = format!("agent{n}");
    Member {
        id: name.clone(),
        name: name.clone(),
        display_name: name,
        kind: MemberKind::Ai,
        agent_type: Some(agent_chatter::team::CLAUDE_CODE.to_string()),
        system_instruction: None,
        instruction_file: None,
        instruction_file_text: None,
        base_dir: None,
        window_size: None,
        run: Default::default(),
        extra_sections: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::new_member;

    #[test]
    fn a_new_member_takes_the_first_agent_name_free_from_the_team_size_on() {
        let mut team = agent_chatter::demo::team();
        let n = team.members.len();
        let first = new_member(&team);
        assert_eq!(first.id, format!("agent{}", n + 1));
        assert!(first.is_ai());
        team.members.push(first);
        assert_eq!(new_member(&team).id, format!("agent{}", n + 2));
    }
}
