//! The conversation's head (`timeline-head`): "jump to #n" (`jump-to`), where a number and
//! Enter select that message (Escape goes back to the shown one); "fork from #n"
//! (`fork-shown`), which forks at the shown message (the rows' own "fork from here" is
//! for a pointer, as an option holds no control); and the team task (`team-task`).

use leptos::prelude::*;

use crate::components::when::When;
use crate::erased::handler;
use crate::host::use_host;
use crate::state::use_state;

/// The head; `jump` is the "jump to #n" box (the list's `g` focuses it), `on_select` selects
/// a message from the keyboard (the focus follows it into the list).
pub fn timeline_head(
    jump: NodeRef<leptos::html::Input>,
    on_select: Callback<usize>,
) -> impl IntoView {
    let state = use_state();
    let host = use_host();
    let on_jump = move |ev: leptos::ev::KeyboardEvent| {
        let Some(input) = jump.get_untracked() else {
            return;
        };
        match ev.key().as_str() {
            "Enter" => {
                ev.prevent_default();
                let typed = input.value();
                let len = state.message_count.get_untracked();
                match jump_target(&typed, len) {
                    Ok(at) => {
                        input.set_value("");
                        state.error.set(None);
                        on_select.run(at);
                    }
                    Err(why) => state.report(why),
                }
            }
            "Escape" => {
                ev.prevent_default();
                input.set_value("");
                if let Some(at) = state.shown_at.get_untracked() {
                    on_select.run(at);
                }
            }
            _ => {}
        }
    };
    let team_task = move || {
        state
            .session
            .with(|s| s.store().team_task().map(str::to_string))
    };
    view! {
        <div class="timeline-head">
            <h2>"conversation"</h2>
            <span class="jump">
                <label class="visually-hidden" for="jump-to">"jump to message number (g in the conversation)"</label>
                <input id="jump-to" data-testid="jump-to" type="text" inputmode="numeric" size="4"
                    placeholder="#n" title="jump to message #n: type its number and Enter (g in the conversation)"
                    node_ref=jump on:keydown=handler(on_jump)/>
            </span>
            // The rows' "fork from here" for the keyboard: the shown message. Built once; a
            // selection changes its number only.
            <When when=Memo::new(move |_| state.shown_at.with(Option::is_some))>
                <button class="fork-shown" data-testid="fork-shown"
                    on:click=handler(move |_| if let Some(at) = state.shown_at.get_untracked() { host.fork(at) })
                    title="fork from here: a new session (a copy of the log up to this message) to try another way; this session stays as it is">
                    "fork from #"{move || state.shown_at.get().map_or(0, |at| at + 1)}
                </button>
            </When>
            <span class="team-task" data-testid="team-task">
                {move || team_task().map_or_else(|| "no team task".to_string(), |t| format!("team task: {t}"))}
            </span>
        </div>
    }
}

/// The message index that "jump to" text names: `12` or `#12`, from 1 to `len`.
fn jump_target(typed: &str, len: usize) -> Result<usize, String> {
    let number = typed.trim().trim_start_matches('#').trim();
    let range = match len {
        0 => return Err("jump to: the conversation has no message yet".to_string()),
        1 => "#1, the only message".to_string(),
        _ => format!("a number from 1 to {len}"),
    };
    match number.parse::<usize>() {
        Ok(n) if (1..=len).contains(&n) => Ok(n - 1),
        Ok(n) => Err(format!(
            "jump to #{n}: there is no such message; type {range}"
        )),
        Err(_) => Err(format!(
            "jump to {:?}: not a message number; type {range}",
            typed.trim()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::jump_target;

    #[test]
    fn a_number_with_or_without_its_hash_names_that_message() {
        assert_eq!(jump_target("12", 500), Ok(11));
        assert_eq!(jump_target(" #500 ", 500), Ok(499));
        assert_eq!(jump_target("#1", 500), Ok(0));
    }

    #[test]
    fn a_number_outside_the_conversation_is_refused_saying_the_range() {
        assert_eq!(
            jump_target("#501", 500),
            Err("jump to #501: there is no such message; type a number from 1 to 500".into())
        );
        assert_eq!(
            jump_target("0", 3),
            Err("jump to #0: there is no such message; type a number from 1 to 3".into())
        );
    }

    #[test]
    fn text_that_is_no_number_is_refused_quoting_it() {
        assert_eq!(
            jump_target("twelve", 2),
            Err("jump to \"twelve\": not a message number; type a number from 1 to 2".into())
        );
        assert_eq!(
            jump_target("", 0),
            Err("jump to: the conversation has no message yet".into())
        );
    }
}
