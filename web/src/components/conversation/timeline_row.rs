//! One message of the timeline (`timeline-message`): who spoke to whom, the text with markers
//! highlighted, and its fate for the inspector's recipient — window bracket, pinned,
//! deduplicated (struck through, reason on hover), trimmed (greyed), current.

use agent_chatter::explain::{DedupReason, Fate};
use agent_chatter::message::{Message, SpeakerKind};
use leptos::prelude::*;

use crate::components::conversation::marked_text::MarkedText;
use crate::erased::handler;
use crate::host::use_host;
use crate::state::use_state;

/// A row's height in pixels until it is measured (rows show their whole text, so they differ).
pub const ROW_ESTIMATE: f64 = 64.0;

/// The CSS class and the hover text of a fate.
pub fn fate_style(fate: Fate) -> (&'static str, String) {
    match fate {
        Fate::Included => ("fate-included", "in the context".into()),
        Fate::OutsideWindow => ("fate-outside", "outside the window".into()),
        Fate::Deduplicated { reason } => (
            "fate-dedup",
            format!("deduplicated: {}", dedup_reason(reason)),
        ),
        Fate::TrimmedForBudget => ("fate-trimmed", "trimmed to fit the budget".into()),
        Fate::Current => ("fate-current", "the current message ([MESSAGE])".into()),
        Fate::Pinned => ("fate-pinned", "pinned first message".into()),
        Fate::ParentContext => ("fate-parent", "shown as the parent context".into()),
        Fate::Related => ("fate-related", "shown as a related answer".into()),
        Fate::Withheld => (
            "fate-withheld",
            "in no prompt: a run the user cancelled".into(),
        ),
    }
}

pub fn dedup_reason(reason: DedupReason) -> &'static str {
    match reason {
        DedupReason::SameId => "it is the current message itself",
        DedupReason::SameSpeakerAndContent => "same speaker and same text as the current message",
        DedupReason::OwnLast => "the recipient's own last message",
    }
}

#[component]
pub fn TimelineRow(
    index: usize,
    /// Where the row starts in the timeline (the heights of the rows before it).
    #[prop(into)]
    top: Signal<f64>,
) -> impl IntoView {
    let state = use_state();
    let host = use_host();
    // A stored message never changes: the row reads it again only when the messages do
    // (another session shown, or one more), not with every fact (a setting, a reply's run).
    let message = Memo::new(move |_| {
        state.message_count.track();
        let _ = state.runs.get();
        state.session.with_untracked(|s| {
            s.messages().get(index).map(|m| {
                let to = addressee(m);
                (
                    m.speaker.display_name.clone(),
                    to,
                    m.content.as_str().to_owned(),
                    m.routing.intent,
                )
            })
        })
    });
    // How the run that ended here ended, when not plainly: a reply marked incomplete (and
    // why), or a failure with its full reason (the message itself is the short line the
    // agents get).
    let outcome = Memo::new(move |_| {
        let _ = state.runs.get();
        state.session.with_untracked(|s| {
            s.run_at(index)
                .map(|r| (r.incomplete.clone(), r.failed.clone()))
        })
    });
    // Its fate in the inspector's prompt, and whether it came after the message previewed
    // (time travel): such a message did not exist for that prompt, so it has no fate there
    // rather than "outside the window". One memo per row, the only thing a row reads of the
    // preview: an edit marks the preview's dependants once per path to it, so each one less
    // is work saved on every edit (docs/architecture.md §13).
    let fate = Memo::new(move |_| {
        state.preview.with(|p| match p {
            Some(Ok(p)) => {
                let listed = p.explain.messages.iter().any(|m| m.index == index);
                let later = p.explain.current.is_some_and(|current| index > current);
                ((listed || !later).then(|| p.explain.fate_of(index)), later)
            }
            _ => (None, false),
        })
    });
    let class = move || {
        let (shown, later) = fate.get();
        let selected = state.selected.get() == Some(index);
        let ended = outcome.with(|o| o.as_ref().map(|(i, f)| (i.is_some(), f.is_some())));
        row_class(shown, later, selected, ended)
    };
    let hover = move || match fate.get() {
        (Some(f), _) => fate_style(f).1,
        (None, true) => "later: not yet sent at this point".into(),
        (None, false) => String::new(),
    };
    view! {
        // An option of the timeline's listbox; only the shown one is reached by Tab (a roving
        // tabindex: the list moves the focus, docs/architecture.md §13). Enter or Space
        // selects it.
        <div class=class data-testid="timeline-message" data-index=index title=hover
            role="option" tabindex=move || if state.shown_at.get() == Some(index) { "0" } else { "-1" }
            aria-selected=move || if state.selected.get() == Some(index) { "true" } else { "false" }
            style:top=move || format!("{}px", top.get())
            on:click=handler(move |_| state.selected.set(Some(index)))
            on:keydown=handler(move |ev: leptos::ev::KeyboardEvent| {
                if ev.key() == "Enter" || ev.key() == " " {
                    ev.prevent_default();
                    state.selected.set(Some(index));
                }
            })>
            {move || message.get().map(|(from, to, content, intent)| {
                view! {
                <div class="who">
                    <span class="index">"#"{index + 1}</span>
                    <span class="from">{from}</span>" → "<span class="to">{to}</span>
                    {intent.map(|i| view! {
                        <span class="intent" title="intent: P1 interrupts, P2 answers (the default), P3 extends; the queue runs P1 first">{i.to_string()}</span>
                    })}
                    {move || outcome.with(|o| o.as_ref().is_some_and(|(i, _)| i.is_some())).then(|| view! {
                        <span class="incomplete-mark" data-testid="incomplete-mark">"⚠ incomplete"</span>
                    })}
                    <span class="fate-label">{hover}</span>
                    // "Continue from here" (docs/architecture.md §13): a new session whose log
                    // ends at this message; this one stays in the library. A pointer's shortcut
                    // only: an option holds no control (the keyboard's and a screen reader's is
                    // the conversation's "fork from #n", `fork-shown`).
                    <span class="fork" data-testid="fork" aria-hidden="true"
                        title="fork from here: a new session (a copy of the log up to this message) to try another way; this session stays as it is"
                        on:click=handler(move |ev: leptos::ev::MouseEvent| {
                            ev.stop_propagation();
                            host.fork(index);
                        })>
                        "fork from here"
                    </span>
                </div>
                <div class="content"><MarkedText text=content/></div>
                {move || outcome.get().and_then(|(incomplete, failed)| {
                    let (class, testid, text) = match (failed, incomplete) {
                        (Some(why), _) => ("run-reason failure-reason", "failure-reason", format!("why: {why}")),
                        (None, Some(why)) => ("run-reason incomplete-reason", "incomplete-reason", format!("incomplete: {why}")),
                        (None, None) => return None,
                    };
                    let title = text.clone();
                    Some(view! { <div class=class data-testid=testid title=title>{text}</div> })
                })}
            }})}
        </div>
    }
}

/// Who a message reached, as the timeline says it where a prompt's context line says "all"
/// (docs/architecture.md §8): a notice, the end of the conversation, no one (naming the
/// addressees that are no member), or its recipients.
fn addressee(m: &Message) -> String {
    if m.speaker.kind == SpeakerKind::System {
        "(notice)".to_string()
    } else if m.routing.is_done {
        "(done)".to_string()
    } else if m.routing.resolved.is_empty() && !m.routing.raw_next.is_empty() {
        let names: Vec<&str> = m.routing.raw_next.iter().map(|a| a.name.as_str()).collect();
        format!("no one ({} is no member)", names.join(", "))
    } else {
        m.to_label()
    }
}

/// A row's classes: its fate in the inspector's prompt (`shown`; none and `later` when it
/// came after the message previewed), `selected`, and how the run that ended there ended
/// (`ended`: incomplete, failed).
fn row_class(
    shown: Option<Fate>,
    later: bool,
    selected: bool,
    ended: Option<(bool, bool)>,
) -> String {
    let mut class = String::from("timeline-message");
    if let Some(fate) = shown {
        class.push(' ');
        class.push_str(fate_style(fate).0);
        if matches!(
            fate,
            Fate::Included
                | Fate::Pinned
                | Fate::Deduplicated { .. }
                | Fate::TrimmedForBudget
                | Fate::Current
        ) {
            class.push_str(" in-window");
        }
    }
    if shown.is_none() && later {
        class.push_str(" fate-later");
    }
    if selected {
        class.push_str(" selected");
    }
    match ended {
        Some((_, true)) => class.push_str(" run-failed"),
        Some((true, false)) => class.push_str(" run-incomplete"),
        _ => {}
    }
    class
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_row_in_the_window_failed_and_selected_says_all_three() {
        assert_eq!(
            row_class(Some(Fate::Included), false, true, Some((true, true))),
            "timeline-message fate-included in-window selected run-failed"
        );
        assert_eq!(
            row_class(Some(Fate::OutsideWindow), false, false, Some((true, false))),
            "timeline-message fate-outside run-incomplete"
        );
    }

    #[test]
    fn a_message_after_the_one_previewed_has_no_fate_but_later() {
        assert_eq!(
            row_class(None, true, false, None),
            "timeline-message fate-later"
        );
        assert_eq!(row_class(None, false, false, None), "timeline-message");
    }
}
