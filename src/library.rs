//! The session library's rules, shared by every host that keeps one (the bridge's store, the
//! page's browser storage) so a session is named, listed and searched alike everywhere
//! (docs/architecture.md §13, §14b): a session's name ([`session_name`], [`fork_name`]), the
//! first message it is listed by ([`first_message`]), the text a search reads
//! ([`searchable_text`]) and how long a search may be ([`check_search_query`]).

use crate::session::Fact;

/// The most characters of a session's name.
pub const MAX_NAME_CHARS: usize = 120;
/// The most characters of [`SessionInfo::first_message`](crate::protocol::SessionInfo::first_message)
/// (then `…`).
pub const FIRST_MESSAGE_CHARS: usize = 120;
/// The most hits (sessions) `searchSessions` answers with.
pub const MAX_SEARCH_HITS: usize = 50;
/// The most characters of a `searchSessions` query: a search is for a few words, and a long
/// one costs the database time in proportion (a page caps its box to it).
pub const MAX_SEARCH_QUERY_CHARS: usize = 200;
/// The most words (whitespace-separated) of a `searchSessions` query.
pub const MAX_SEARCH_QUERY_WORDS: usize = 16;

/// Checks a search query against [`MAX_SEARCH_QUERY_CHARS`] and [`MAX_SEARCH_QUERY_WORDS`],
/// saying in words what is too long.
pub fn check_search_query(query: &str) -> Result<(), String> {
    let chars = query.chars().count();
    if chars > MAX_SEARCH_QUERY_CHARS {
        return Err(format!(
            "the search is {chars} characters long; search for at most \
             {MAX_SEARCH_QUERY_CHARS} (a few words)"
        ));
    }
    let words = query.split_whitespace().count();
    if words > MAX_SEARCH_QUERY_WORDS {
        return Err(format!(
            "the search has {words} words; search for at most {MAX_SEARCH_QUERY_WORDS}"
        ));
    }
    Ok(())
}

/// A session's name as given by a user: trimmed, and refused, in words, when empty or longer
/// than [`MAX_NAME_CHARS`] characters.
pub fn session_name(given: &str) -> Result<String, String> {
    let name = given.trim();
    let chars = name.chars().count();
    if chars == 0 {
        Err("a session's name cannot be empty".into())
    } else if chars > MAX_NAME_CHARS {
        Err(format!(
            "a session's name is at most {MAX_NAME_CHARS} characters (this one has {chars})"
        ))
    } else {
        Ok(name.to_string())
    }
}

/// The name of a fork of session `name` at message #`number` (numbered as the page numbers
/// messages, never by fact): `Crew (fork at #7)`, the original name cut (with `…`) so that
/// the whole stays within [`MAX_NAME_CHARS`].
pub fn fork_name(name: &str, number: u64) -> String {
    let suffix = format!(" (fork at #{number})");
    let room = MAX_NAME_CHARS - suffix.chars().count();
    format!("{}{suffix}", cut(name.trim(), room))
}

/// What the session library shows as a session's first message: the first human message's
/// text (or the first message of a scenario opened in it), its whitespace runs made single
/// spaces, cut to [`FIRST_MESSAGE_CHARS`] characters (ending in `…` when cut).
pub fn first_message(facts: &[Fact]) -> Option<String> {
    facts.iter().find_map(|fact| {
        let text = match fact {
            Fact::Human { text, .. } => text.as_str(),
            Fact::LoadScenario { scenario } => &scenario.messages.first()?.content,
            _ => return None,
        };
        let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
        (!text.is_empty()).then(|| cut(&text, FIRST_MESSAGE_CHARS))
    })
}

/// The text of `fact` that `searchSessions` searches: a human message, a reply, a failure's
/// whole reason (what the people read: "which run hit the rate limit?"), or a scenario's
/// messages (one per line); none for the others.
pub fn searchable_text(fact: &Fact) -> Option<String> {
    match fact {
        Fact::Human { text, .. } | Fact::Replied { text, .. } => Some(text.as_str().to_owned()),
        Fact::Failed { reason, .. } => Some(reason.clone()),
        Fact::LoadScenario { scenario } => Some(
            scenario
                .messages
                .iter()
                .map(|m| m.content.as_str())
                .collect::<Vec<_>>()
                .join("\n"),
        ),
        _ => None,
    }
}

/// `text` cut to at most `max` characters, the last of them `…` when it was cut.
fn cut(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let mut out: String = text.chars().take(max.saturating_sub(1)).collect();
    out.truncate(out.trim_end().len());
    out.push('…');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::Millis;

    #[test]
    fn a_session_name_is_trimmed_and_between_1_and_120_characters() {
        assert_eq!(
            session_name("  Release notes  "),
            Ok("Release notes".into())
        );
        assert_eq!(
            session_name(" \n "),
            Err("a session's name cannot be empty".into())
        );
        assert_eq!(session_name(&"é".repeat(120)), Ok("é".repeat(120)));
        assert_eq!(
            session_name(&"é".repeat(121)),
            Err("a session's name is at most 120 characters (this one has 121)".into())
        );
    }

    #[test]
    fn a_fork_is_named_after_its_origin_and_seq_within_the_name_limit() {
        assert_eq!(fork_name("Crew", 7), "Crew (fork at #7)");
        let long = fork_name(&"x".repeat(120), 12);
        assert_eq!(long.chars().count(), MAX_NAME_CHARS);
        assert!(long.ends_with("x… (fork at #12)"), "{long}");
        assert_eq!(session_name(&long), Ok(long.clone()));
    }

    #[test]
    fn the_first_message_is_the_first_human_text_on_one_line_cut_at_a_character() {
        let team = Fact::set_team(crate::demo::team());
        assert_eq!(first_message(std::slice::from_ref(&team)), None);
        let facts = [
            team.clone(),
            Fact::human("  Draft the\n\nrelease notes ", Millis(1)),
            Fact::human("second", Millis(2)),
        ];
        assert_eq!(
            first_message(&facts).as_deref(),
            Some("Draft the release notes")
        );
        let long = first_message(&[team, Fact::human("ü".repeat(300), Millis(1))]).unwrap();
        assert_eq!(long.chars().count(), FIRST_MESSAGE_CHARS);
        assert!(long.ends_with("ü…"), "{long}");
    }
}
