//! What the user's last act on files and sessions did, in one sentence (`happened`, a status
//! line): "Opened team.json: 4 members, 0 messages", "Forked at #3 into session 5 — the
//! original (session 2) is unchanged" (issue 44.6). Said from what the host reports it did
//! ([`crate::host::Done`]); it stays until the next such act or until dismissed.

use leptos::prelude::*;

use crate::erased::handler;
use crate::host::{use_host, Done};

/// The sentence for `done`.
pub fn done_words(done: &Done) -> String {
    match done {
        Done::Opened {
            name,
            members,
            messages,
            beside,
        } => opened_words(name, *members, *messages, *beside),
        Done::Forked { at, into, from } => {
            let original = from.map_or("the original".to_string(), |id| {
                format!("the original (session {id})")
            });
            format!("Forked at #{at} into session {into} — {original} is unchanged")
        }
    }
}

/// `Opened team.json: 4 members, 120 messages`, and where it opened when not in place.
fn opened_words(name: &str, members: usize, messages: usize, beside: bool) -> String {
    let plural = |n: usize, one: &str| format!("{n} {one}{}", if n == 1 { "" } else { "s" });
    let mut text = format!(
        "Opened {name}: {}, {}",
        plural(members, "member"),
        plural(messages, "message")
    );
    if beside {
        text.push_str(" — as a new session; the one shown before is unchanged");
    }
    text
}

/// The status line: what the host did, with a button to dismiss it.
#[component]
pub fn Happened() -> impl IntoView {
    let done = use_host().done();
    view! {
        <div class="happened" data-testid="happened" role="status" class:empty=move || done.with(Option::is_none)>
            {move || done.with(|d| d.as_ref().map(done_words)).map(|text| view! {
                <span>{text}</span>
                <button class="library-close" aria-label="dismiss"
                    on:click=handler(move |_| done.set(None))>"×"</button>
            })}
        </div>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_the_host_did_is_said_with_its_numbers_and_sessions() {
        let fork = Done::Forked {
            at: 3,
            into: 5,
            from: Some(2),
        };
        assert_eq!(
            done_words(&fork),
            "Forked at #3 into session 5 — the original (session 2) is unchanged"
        );
        let opened = |members, messages, beside| Done::Opened {
            name: "team.json".into(),
            members,
            messages,
            beside,
        };
        assert_eq!(
            done_words(&opened(4, 120, false)),
            "Opened team.json: 4 members, 120 messages"
        );
        assert!(done_words(&opened(1, 1, true)).ends_with(
            "1 member, 1 message — as a new session; the one shown before is unchanged"
        ));
    }
}
