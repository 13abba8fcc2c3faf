//! What the user's last act on files and sessions did, in one sentence (`happened`, a status
//! line): "Opened team.json: 4 members, 0 messages", "Forked at #3 into session 5 — the
//! original is unchanged" (issue 44.6). It stays until the next such act or until dismissed.

use leptos::prelude::*;

use crate::erased::handler;

thread_local! {
    // Not owned by any component: the menus that act and the line that tells share it.
    static HAPPENED: ArcRwSignal<Option<String>> = ArcRwSignal::new(None);
}

/// Says what just happened (replacing what was said before).
pub fn say(text: impl Into<String>) {
    HAPPENED.with(|h| h.set(Some(text.into())));
}

/// `Forked at #3 into session 5 — the original (session 2) is unchanged` for a session
/// named as a fork is (`… (fork at #3)`, `library::fork_name`), shown in place of `from`;
/// `None` for another name.
pub fn fork_words(name: &str, into: i64, from: Option<i64>) -> Option<String> {
    let (_, tail) = name.rsplit_once(" (fork at #")?;
    let number: u64 = tail.strip_suffix(')')?.parse().ok()?;
    let original = from.map_or("the original".to_string(), |id| {
        format!("the original (session {id})")
    });
    Some(format!(
        "Forked at #{number} into session {into} — {original} is unchanged"
    ))
}

/// `Opened team.json: 4 members, 120 messages`, and where it opened when not in place.
pub fn opened_words(name: &str, members: usize, messages: usize, beside: bool) -> String {
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

/// The status line: what happened, with a button to dismiss it.
#[component]
pub fn Happened() -> impl IntoView {
    let said = HAPPENED.with(Clone::clone);
    let shown = said.clone();
    let dismiss = said.clone();
    view! {
        <div class="happened" data-testid="happened" role="status" class:empty=move || shown.with(Option::is_none)>
            {move || said.get().map(|text| view! {
                <span>{text}</span>
                <button class="library-close" aria-label="dismiss"
                    on:click=handler({
                        let dismiss = dismiss.clone();
                        move |_| dismiss.set(None)
                    })>"×"</button>
            })}
        </div>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fork_is_told_by_its_number_and_sessions_and_another_name_is_not() {
        assert_eq!(
            fork_words("Crew (fork at #3)", 5, Some(2)).as_deref(),
            Some("Forked at #3 into session 5 — the original (session 2) is unchanged")
        );
        assert_eq!(fork_words("Crew", 5, Some(2)), None);
        assert_eq!(fork_words("Crew (fork at #x)", 5, None), None);
        assert_eq!(
            opened_words("team.json", 4, 120, false),
            "Opened team.json: 4 members, 120 messages"
        );
        assert!(opened_words("s.json", 1, 1, true).ends_with(
            "1 member, 1 message — as a new session; the one shown before is unchanged"
        ));
    }
}
