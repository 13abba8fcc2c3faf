//! One member of the team in use (`member-row`): every field of docs/architecture.md §13, how a
//! bridge answers it (`agent-status`), and, from §14c, what it is doing (`member-status`), what
//! its runs cost (`member-usage`) and its run settings, read only (`run-settings`).

use std::sync::atomic::{AtomicUsize, Ordering};

use agent_chatter::protocol::AgentReport;
use agent_chatter::team::{
    normalize_agent_type, prompt_format, Member, MemberKind, PromptFormat, CLAUDE_CODE,
    GOOGLE_GEMINI, OPENAI_CODEX,
};
use leptos::prelude::*;

use crate::components::team::agent_status::AgentStatus;
use crate::components::team::context_meter::ContextMeter;
use crate::components::team::extra_sections_editor::ExtraSectionsEditor;
use crate::components::team::member_edit::MemberEdit;
use crate::components::team::member_status::MemberStatusView;
use crate::components::team::run_settings::RunSettingsView;
use crate::components::when::When;
use crate::erased::handler;
use crate::host::RunInfo;
use crate::state::{use_state, AppState};
use crate::status::MemberStatus;

/// Agent types the core knows (docs/architecture.md §8); a config may name others (plain format).
const AGENT_TYPES: [&str; 3] = [CLAUDE_CODE, OPENAI_CODEX, GOOGLE_GEMINI];

/// Numbers the rows, for the ids their elements refer to one another by (a member id may
/// hold characters an HTML id cannot).
static ROWS: AtomicUsize = AtomicUsize::new(0);

#[component]
pub fn MemberRow(
    /// The member shown (`None` while it is being removed).
    #[prop(into)]
    member: Signal<Option<Member>>,
    /// How the bridge answers this member (`None` in simulation, or before the bridge says).
    #[prop(into)]
    report: Signal<Option<AgentReport>>,
    /// What the member is doing.
    #[prop(into)]
    status: Signal<MemberStatus>,
    /// The wall clock (ms), ticking each second.
    #[prop(into)]
    clock: Signal<u64>,
    /// What its runs cost in this conversation (`None` before its first run).
    #[prop(into)]
    usage: Signal<Option<String>>,
    /// How full its context window is, as its agent last said: `used` of `size` tokens.
    #[prop(into)]
    context: Signal<Option<(u64, u64)>>,
    /// Its run settings, read only (`None` for a human, or before the bridge says).
    #[prop(into)]
    run_info: Signal<Option<RunInfo>>,
    /// The team's timeout, for a member that sets none.
    #[prop(into)]
    team_timeout_ms: Signal<Option<u64>>,
    /// Whether it has spoken (or a run of its ended) in this conversation: its id is then
    /// fixed, as the log names it by it.
    #[prop(into)]
    spoken: Signal<bool>,
    /// Applies a change to this member; false when it was refused (the banner says why).
    on_edit: Callback<MemberEdit, bool>,
    /// Removes this member from the team.
    on_remove: Callback<()>,
) -> impl IntoView {
    let row = ROWS.fetch_add(1, Ordering::Relaxed);
    // Bumped when an edit is refused: the fields read the member again, so each shows what is
    // in force, not the refused text (the member itself did not change, so nothing else would
    // make them).
    let refused = RwSignal::new(0u32);
    let field = move |read: fn(&Member) -> String| field(member, refused, read);
    let set = move |write: fn(&mut Member, String)| setter(on_edit, refused, write);
    let is_ai = Memo::new(move |_| member.with(|m| m.as_ref().is_some_and(Member::is_ai)));
    view! {
        <fieldset class="member-row" data-testid="member-row">
            {member_head(member, spoken, is_ai, (on_edit, on_remove), refused, row)}
            <MemberStatusView status=status clock=clock/>
            <AgentStatus report=report/>
            {move || usage.get().map(|u| view! {
                <div class="member-usage" data-testid="member-usage" title="what this member's runs reported in this conversation">{u}</div>
            })}
            <ContextMeter fill=context/>
            <RunSettingsView info=run_info team_timeout_ms=team_timeout_ms format=prompt_format_of(member)/>
            <label>"display name"
                <input class="member-display" prop:value=field(|m| m.display_name.clone())
                    on:change=handler(set(|m, v| m.display_name = v))/>
            </label>
            <When when=is_ai>
                {ai_fields(member, on_edit, refused, row)}
            </When>
        </fieldset>
    }
}

/// The member's prompt format, from its agent type (plain for a human).
fn prompt_format_of(member: Signal<Option<Member>>) -> Memo<PromptFormat> {
    Memo::new(move |_| {
        member.with(|m| {
            m.as_ref()
                .map_or(PromptFormat::Plain, Member::prompt_format)
        })
    })
}

/// The row's first line: name, kind and the remove button, with the id hint under them for
/// an AI member (one short line: a human's id is its name's business only). `spoken`: its id
/// is then fixed, and it is removed from now on; `on_edit` applies a change to the member
/// (false when refused, `refused` then bumped), `on_remove` removes it; `row` numbers the
/// hint's id. (A function, not a component: one less props type in the page's wasm.)
fn member_head(
    member: Signal<Option<Member>>,
    spoken: Signal<bool>,
    is_ai: Memo<bool>,
    (on_edit, on_remove): (Callback<MemberEdit, bool>, Callback<()>),
    refused: RwSignal<u32>,
    row: usize,
) -> impl IntoView {
    let set = move |write: fn(&mut Member, String)| setter(on_edit, refused, write);
    let remove = move |_| on_remove.run(());
    // A member who has not spoken is known by its name: its id follows it (as a team file
    // read without ids gives it), so no demo id stays behind a new name. Once it has spoken,
    // the log names it by its id, which then stays.
    let rename = move |ev: leptos::ev::Event| {
        let value = event_target_value(&ev);
        let follow = !spoken.get_untracked();
        let applied = on_edit.run(Box::new(move |m: &mut Member| {
            // A display name that was the name (a new member's) follows it.
            if m.display_name == m.name {
                m.display_name = value.clone();
            }
            if follow {
                m.id = value.trim().to_string();
            }
            m.name = value;
        }));
        if !applied {
            refused.update(|n| *n += 1);
        }
    };
    let hint_id = format!("member-id-hint-{row}");
    let described = {
        let hint_id = hint_id.clone();
        move || is_ai.get().then(|| hint_id.clone())
    };
    let id = move || member.with(|m| m.as_ref().map(|m| m.id.clone()).unwrap_or_default());
    view! {
        <div class="row">
            <input class="member-name" aria-label="name" prop:value=field(member, refused, |m| m.name.clone())
                aria-describedby=described on:change=handler(rename)/>
            <select class="member-kind" aria-label="kind" on:change=set(|m, v| {
                m.kind = if v == "human" { MemberKind::Human } else { MemberKind::Ai };
                if m.kind == MemberKind::Ai && m.agent_type.is_none() {
                    m.agent_type = Some(CLAUDE_CODE.to_string());
                }
            })>
                <option value="human" prop:selected=move || !is_ai.get()>"human"</option>
                <option value="ai" prop:selected=move || is_ai.get()>"ai"</option>
            </select>
            <button class="remove" data-testid="remove-member"
                title=move || remove_words(spoken.get()) aria-label=move || remove_words(spoken.get())
                on:click=handler(remove)>"×"</button>
        </div>
        <When when=is_ai>
            <div class="member-id-hint muted" id=hint_id.clone() data-testid="member-id-hint">
                {move || id_words(spoken.get(), &id())}
            </div>
        </When>
    }
}

/// What only an AI member has: agent type, instructions, window override, extra sections
/// (`refused` and `row` as [`member_head`]'s).
fn ai_fields(
    member: Signal<Option<Member>>,
    on_edit: Callback<MemberEdit, bool>,
    refused: RwSignal<u32>,
    row: usize,
) -> impl IntoView {
    let state = use_state();
    let field = move |read: fn(&Member) -> String| field(member, refused, read);
    let set = move |write: fn(&mut Member, String)| setter(on_edit, refused, write);
    let set_window = move |ev| set_window(state, on_edit, refused, ev);
    view! {
        <AgentTypeField member=member on_edit=on_edit refused=refused row=row/>
        <label>"system instruction"
            <textarea class="member-instruction" rows="2"
                prop:value=field(|m| m.system_instruction.clone().unwrap_or_default())
                on:change=set(|m, v| m.system_instruction = if v.trim().is_empty() { None } else { Some(v) })/>
        </label>
        <label>"instruction file text"
            <textarea class="member-instruction-file" rows="2"
                prop:value=field(|m| m.instruction_file_text.clone().unwrap_or_default())
                on:change=set(|m, v| m.instruction_file_text = if v.trim().is_empty() { None } else { Some(v) })/>
        </label>
        <label>"window override"
            <input class="member-window" type="number" min="0" placeholder="team's"
                prop:value=field(|m| m.window_size.map(|w| w.to_string()).unwrap_or_default())
                on:change=handler(set_window)/>
        </label>
        <ExtraSectionsEditor member=member on_edit=on_edit/>
    }
}

/// The agent type: any type may be typed (docs/architecture.md §4: unknown ones use the
/// plain format); the list offers the three the core formats, and a hint names the format.
#[component]
fn AgentTypeField(
    /// The member shown.
    member: Signal<Option<Member>>,
    /// Applies a change to this member; false when it was refused.
    on_edit: Callback<MemberEdit, bool>,
    /// The row's refusal count, bumped when an edit is refused (the field reads again).
    refused: RwSignal<u32>,
    /// The row's number, for the datalist's id.
    row: usize,
) -> impl IntoView {
    view! {
        <label>"agent type"
            <input class="member-agent-type" list=format!("agent-types-{row}")
                prop:value=field(member, refused, |m| m.agent_type.clone().unwrap_or_default())
                on:change=setter(on_edit, refused, |m, v| {
                    let v = v.trim();
                    m.agent_type = (!v.is_empty()).then(|| normalize_agent_type(v));
                })/>
            <datalist id=format!("agent-types-{row}")>
                {AGENT_TYPES.iter().map(|t| view! { <option value=*t/> }).collect_view()}
            </datalist>
            <span class="format-hint" data-testid="agent-format">{move || {
                member.with(|m| m.as_ref().and_then(|m| m.agent_type.as_deref()).map(format_hint))
            }}</span>
        </label>
    }
}

/// A field's text, read from the member; it reads again when an edit is refused (`refused`
/// bumped), so it shows what is in force, not the refused text.
fn field(
    member: Signal<Option<Member>>,
    refused: RwSignal<u32>,
    read: fn(&Member) -> String,
) -> impl Fn() -> String + Copy {
    move || {
        refused.track();
        member.with(|m| m.as_ref().map(read).unwrap_or_default())
    }
}

/// A field's change handler: `write` the typed value into the member; a refusal bumps
/// `refused`.
fn setter(
    on_edit: Callback<MemberEdit, bool>,
    refused: RwSignal<u32>,
    write: fn(&mut Member, String),
) -> impl Fn(leptos::ev::Event) + Copy {
    move |ev: leptos::ev::Event| {
        let value = event_target_value(&ev);
        if !on_edit.run(Box::new(move |m: &mut Member| write(m, value))) {
            refused.update(|n| *n += 1);
        }
    }
}

/// Applies the window override typed in `ev`'s field, or refuses it by name
/// ([`window_override`]), `refused` bumped so the field shows what is in force.
fn set_window(
    state: AppState,
    on_edit: Callback<MemberEdit, bool>,
    refused: RwSignal<u32>,
    ev: leptos::ev::Event,
) {
    let value = event_target_value(&ev);
    let value = value.trim();
    match window_override(value) {
        Ok(window) => {
            if !on_edit.run(Box::new(move |m: &mut Member| m.window_size = window)) {
                refused.update(|n| *n += 1);
            }
        }
        Err(why) => {
            state.report(why);
            refused.update(|n| *n += 1);
        }
    }
}

/// A window override as typed: a whole number, or nothing for the team's window; anything
/// else is refused by name (`2.5` used to become "the team's window" without a word).
fn window_override(value: &str) -> Result<Option<usize>, String> {
    match value {
        "" => Ok(None),
        v => v.parse::<usize>().map(Some).map_err(|_| {
            format!(
                "team not changed: window override: expected a whole number of messages \
                 (0 or more), found {v:?}; leave it empty for the team's window"
            )
        }),
    }
}

/// What the remove button does, said before the click: a member who has spoken is removed
/// from now on (its messages stay its own); one who has not is taken out, with an undo.
fn remove_words(spoken: bool) -> &'static str {
    if spoken {
        "remove from now on: their messages stay theirs; they get no more messages"
    } else {
        "remove this member (undo is offered)"
    }
}

/// The hint under an AI member's name, one short line: what a rename does to its id
/// (`[NEXT: …]` and the team file know it by it).
fn id_words(spoken: bool, id: &str) -> String {
    if spoken {
        format!("id {id} · fixed: it has spoken")
    } else {
        format!("id {id} · follows the name")
    }
}

/// The prompt format an agent type is given (docs/architecture.md §4).
fn format_hint(agent_type: &str) -> &'static str {
    match prompt_format(agent_type) {
        PromptFormat::Plain => "plain format (not a type the core knows)",
        PromptFormat::Claude => "Claude Code format",
        PromptFormat::Codex => "Codex format",
        PromptFormat::Gemini => "Gemini format",
    }
}

#[cfg(test)]
mod tests {
    use super::window_override;

    #[test]
    fn a_window_override_is_a_whole_number_or_nothing() {
        assert_eq!(window_override(""), Ok(None));
        assert_eq!(window_override("12"), Ok(Some(12)));
        assert_eq!(
            window_override("2.5"),
            Err(
                "team not changed: window override: expected a whole number of messages \
                 (0 or more), found \"2.5\"; leave it empty for the team's window"
                    .to_string()
            )
        );
    }
}
