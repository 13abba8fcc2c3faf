//! The session library (docs/architecture.md §13): the sessions a user keeps, each named,
//! dated, with its first message and fact count; a search across their texts; and where a
//! message's "continue from here" (fork) cuts the log. Pure: no browser, no clock (times come
//! in as arguments), so it is tested natively. The bridge keeps its own library (its
//! `sessions` and `searchResults` events); without a bridge the page keeps one in this
//! browser ([`crate::storage`]).

use agent_chatter::library::{
    check_search_query, first_message, searchable_text, session_name, MAX_SEARCH_HITS,
};
use agent_chatter::protocol::SnippetPart;
use agent_chatter::session::{Fact, Session};
use agent_chatter::text::floor_char_boundary;
use serde::{Deserialize, Serialize};

/// How much text a search hit shows either side of the match.
const SNIPPET_BYTES: usize = 50;
/// Why `query` is longer than a search may be (the bridge's own rule,
/// [`check_search_query`]: at most 200 characters and 16 words), in the words the library
/// shows instead of searching; `None` when it may be sent. The page's own library keeps it
/// too.
pub fn query_too_long(query: &str) -> Option<String> {
    check_search_query(query).err()
}

/// One session of the library, as the list shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Entry {
    pub id: i64,
    pub name: String,
    /// When it was made and last changed (ms since the epoch).
    pub created_at: u64,
    pub updated_at: u64,
    /// The first human message, as `protocol::first_message` cuts it.
    pub first_message: Option<String>,
    /// How many facts its log holds.
    pub facts: usize,
    /// The name was chosen (typed by the user, or a fork's or a shared case's): it stays. A
    /// name never chosen is its team's, and follows the team (another team opened, a rename
    /// of the team). Entries stored before this field keep their names.
    #[serde(default = "kept")]
    pub chosen: bool,
}

fn kept() -> bool {
    true
}

/// The page's own library (kept in this browser without a bridge): its sessions and the one
/// open.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Library {
    pub current: Option<i64>,
    pub sessions: Vec<Entry>,
}

impl Library {
    /// A fresh id, above every one in use.
    pub fn next_id(&self) -> i64 {
        self.sessions.iter().map(|e| e.id).max().unwrap_or(0) + 1
    }

    pub fn get(&self, id: i64) -> Option<&Entry> {
        self.sessions.iter().find(|e| e.id == id)
    }

    /// Adds `session` as a new entry named `name` at `now`; its id.
    pub fn add(&mut self, name: String, session: &Session, now: u64) -> i64 {
        let id = self.next_id();
        self.sessions.push(Entry {
            id,
            chosen: name != default_name(session),
            name,
            created_at: now,
            updated_at: now,
            first_message: first_message(session.facts()),
            facts: session.facts().len(),
        });
        id
    }

    /// Records that session `id` now holds `session`'s log, changed at `now`.
    pub fn touch(&mut self, id: i64, session: &Session, now: u64) {
        if let Some(e) = self.sessions.iter_mut().find(|e| e.id == id) {
            let facts = session.facts();
            if e.facts != facts.len() || e.first_message.is_none() {
                e.updated_at = now;
            }
            e.facts = facts.len();
            e.first_message = first_message(facts);
            if !e.chosen {
                e.name = default_name(session);
            }
        }
    }

    /// Renames session `id`; the error says what is wrong with the name.
    pub fn rename(&mut self, id: i64, name: &str) -> Result<(), String> {
        let name = session_name(name)?;
        match self.sessions.iter_mut().find(|e| e.id == id) {
            Some(e) => {
                e.name = name;
                e.chosen = true;
                Ok(())
            }
            None => Err("that session is no longer in this browser's library".to_string()),
        }
    }

    /// The entries, most recently changed first.
    pub fn newest_first(&self) -> Vec<Entry> {
        let mut list = self.sessions.clone();
        list.sort_unstable_by(|a, b| b.updated_at.cmp(&a.updated_at).then(b.id.cmp(&a.id)));
        list
    }
}

/// What the library calls a session: the name chosen for it, else its first message without
/// markers (so ten sessions of one team tell apart; [`team_beside`] names the team), else its
/// team's name (before any message).
pub fn title(e: &Entry) -> String {
    match team_beside(e) {
        Some(_) => agent_chatter::markers::strip_all(e.first_message.as_deref().unwrap_or(""))
            .trim()
            .to_string(),
        None => e.name.clone(),
    }
}

/// The team's name to show beside a [`title`] that is the session's first message.
pub fn team_beside(e: &Entry) -> Option<&str> {
    (!e.chosen && e.first_message.is_some()).then_some(e.name.as_str())
}

/// The name a new session gets: its team's.
pub fn default_name(session: &Session) -> String {
    session
        .team()
        .map_or_else(|| "untitled".to_string(), |t| t.name.clone())
}

/// The texts of a log a search looks through: what the bridge searches
/// (`protocol::searchable_text`: human messages, replies, failures' reasons, a loaded
/// history's messages).
pub fn texts(facts: &[Fact]) -> impl Iterator<Item = String> + '_ {
    facts.iter().filter_map(searchable_text)
}

/// Where `query` first occurs in `text`, ignoring case: the text around it in parts (the
/// match marked `hit`, as the bridge's search marks its words), with an ellipsis where it
/// was cut. `None` when it does not occur (or the query is blank).
pub fn snippet(text: &str, query: &str) -> Option<Vec<SnippetPart>> {
    let query = query.trim().to_lowercase();
    if query.is_empty() {
        return None;
    }
    // The lowercased text, with where each of its bytes came from in `text`.
    let mut lower = String::with_capacity(text.len());
    let mut origin = Vec::with_capacity(text.len());
    for (at, c) in text.char_indices() {
        for l in c.to_lowercase() {
            lower.push(l);
            origin.resize(lower.len(), at);
        }
    }
    let found = lower.find(&query)?;
    let start = origin[found];
    let end = origin
        .get(found + query.len())
        .copied()
        .unwrap_or(text.len());
    let from = floor_char_boundary(text, start.saturating_sub(SNIPPET_BYTES));
    let to = floor_char_boundary(text, end + SNIPPET_BYTES);
    // Whitespace runs become one space, so a snippet is one line.
    let flat = |s: &str| {
        let mut out = s.split_whitespace().collect::<Vec<_>>().join(" ");
        if s.starts_with(char::is_whitespace) && !out.is_empty() {
            out.insert(0, ' ');
        }
        if s.ends_with(char::is_whitespace) && !out.is_empty() {
            out.push(' ');
        }
        out
    };
    let part = |text: String, hit| SnippetPart { text, hit };
    let before = format!(
        "{}{}",
        if from > 0 { "…" } else { "" },
        flat(&text[from..start])
    );
    let after = format!(
        "{}{}",
        flat(&text[end..to]),
        if to < text.len() { "…" } else { "" }
    );
    Some(
        [
            part(before, false),
            part(text[start..end].to_string(), true),
            part(after, false),
        ]
        .into_iter()
        .filter(|p| !p.text.is_empty())
        .collect(),
    )
}

/// A snippet's text, its match between `[` and `]` (for tests and titles).
pub fn snippet_text(parts: &[SnippetPart]) -> String {
    parts
        .iter()
        .map(|p| {
            if p.hit {
                format!("[{}]", p.text)
            } else {
                p.text.clone()
            }
        })
        .collect()
}

/// One session a search found: its id and name, and the text around the first match (its
/// name when only the name matched).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hit {
    pub session: i64,
    pub name: String,
    pub snippet: Vec<SnippetPart>,
}

/// The library's sessions whose name or texts hold `query` (ignoring case), newest first, at
/// most `MAX_SEARCH_HITS`; `facts_of` gives a session's log (`None`: it no longer reads).
pub fn search(
    library: &Library,
    query: &str,
    mut facts_of: impl FnMut(i64) -> Option<Vec<Fact>>,
) -> Vec<Hit> {
    if query.trim().is_empty() {
        return Vec::new();
    }
    library
        .newest_first()
        .into_iter()
        .filter_map(|e| {
            let in_text =
                facts_of(e.id).and_then(|facts| texts(&facts).find_map(|t| snippet(&t, query)));
            let snippet = in_text.or_else(|| snippet(&e.name, query))?;
            Some(Hit {
                session: e.id,
                name: e.name,
                snippet,
            })
        })
        .take(MAX_SEARCH_HITS)
        .collect()
}

/// The 1-based position (`seq`) in `facts` of the fact that made message `index` (0-based) of
/// the conversation they replay to: "continue from here" keeps the log up to it. A message
/// of a loaded history belongs to the fact that loaded it. `None` when no fact made it, or
/// the log does not replay.
pub fn fact_of_message(facts: &[Fact], index: usize) -> Option<u64> {
    let mut session = Session::new();
    let mut found = None;
    for (i, fact) in facts.iter().enumerate() {
        let resets = matches!(fact, Fact::SetTeam { .. } | Fact::LoadScenario { .. });
        let before = if resets { 0 } else { session.messages().len() };
        session.apply(fact).ok()?;
        let after = session.messages().len();
        if before <= index && index < after {
            found = Some(i as u64 + 1);
        } else if resets {
            // An earlier conversation's message is not this one.
            found = None;
        }
    }
    found
}

/// When `at` was, as a list says it, in the user's local time (`offset_minutes` east of
/// UTC): "today 14:02", "yesterday 09:15", a weekday within the week ("Mon 14:02"), else the
/// date ("2026-03-01").
pub fn when(at: u64, now: u64, offset_minutes: i64) -> String {
    const DAY: i64 = 86_400_000;
    let local = |ms: u64| ms as i64 + offset_minutes * 60_000;
    let (at, now) = (local(at), local(now));
    let (day, today) = (at.div_euclid(DAY), now.div_euclid(DAY));
    let minute = at.rem_euclid(DAY) / 60_000;
    let clock = format!("{:02}:{:02}", minute / 60, minute % 60);
    match today - day {
        0 => format!("today {clock}"),
        1 => format!("yesterday {clock}"),
        2..=6 => {
            // 1970-01-01 was a Thursday.
            let weekday =
                ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"][day.rem_euclid(7) as usize];
            format!("{weekday} {clock}")
        }
        _ => {
            let (y, m, d) = civil_from_days(day);
            format!("{y:04}-{m:02}-{d:02}")
        }
    }
}

/// The calendar date of a day count since 1970-01-01 (Howard Hinnant's algorithm).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_chatter::library::{MAX_SEARCH_QUERY_CHARS, MAX_SEARCH_QUERY_WORDS};
    use agent_chatter::message::Millis;

    #[test]
    fn a_query_longer_than_a_search_may_be_says_by_how_much() {
        assert_eq!(query_too_long("zanzibar release notes"), None);
        let words = vec!["w"; MAX_SEARCH_QUERY_WORDS].join(" ");
        assert_eq!(query_too_long(&words), None);
        assert_eq!(
            query_too_long(&format!("{words} w")).as_deref(),
            Some("the search has 17 words; search for at most 16")
        );
        let long = "é".repeat(MAX_SEARCH_QUERY_CHARS);
        assert_eq!(query_too_long(&long), None, "characters, not bytes");
        assert_eq!(
            query_too_long(&format!("{long}x")).as_deref(),
            Some("the search is 201 characters long; search for at most 200 (a few words)")
        );
    }

    fn demo_facts(humans: &[&str]) -> Vec<Fact> {
        let mut facts = vec![Fact::set_team(agent_chatter::demo::team())];
        for (i, text) in humans.iter().enumerate() {
            facts.push(Fact::Human {
                text: text.to_string().into(),
                sender: Some("kailai".into()),
                at: Millis(1000 + i as u64),
            });
        }
        facts
    }

    #[test]
    fn a_search_ignores_case_and_shows_the_text_around_the_match() {
        let text = format!("{} the Release went out {}", "a".repeat(80), "b".repeat(80));
        let hit = snippet_text(&snippet(&text, "release WENT").unwrap());
        assert!(hit.starts_with('…') && hit.ends_with('…'), "{hit}");
        assert!(hit.contains("the [Release went] out"), "{hit}");
        assert_eq!(
            snippet_text(&snippet("short text", "TEXT").unwrap()),
            "short [text]"
        );
        assert_eq!(snippet("short text", "absent"), None);
        assert_eq!(snippet("short text", "  "), None);
        // A character whose lowercase is longer never puts the cut inside a character.
        assert_eq!(
            snippet_text(&snippet("İstanbul ok", "ok").unwrap()),
            "İstanbul [ok]"
        );
    }

    #[test]
    fn a_search_finds_sessions_by_their_texts_or_names_newest_first() {
        let one = Session::replay(demo_facts(&["[NEXT: max] the budget draft"])).unwrap();
        let two = Session::replay(demo_facts(&["nothing here"])).unwrap();
        let mut library = Library::default();
        let a = library.add("First".into(), &one, 10);
        let b = library.add("Budget talk".into(), &two, 20);
        let logs = [(a, one.facts().to_vec()), (b, two.facts().to_vec())];
        let facts_of = |id| logs.iter().find(|(i, _)| *i == id).map(|(_, f)| f.clone());
        let hits = search(&library, "BUDGET", facts_of);
        let found: Vec<(i64, String)> = hits
            .iter()
            .map(|h| (h.session, snippet_text(&h.snippet)))
            .collect();
        assert_eq!(
            found,
            [
                (b, "[Budget] talk".to_string()),
                (a, "[NEXT: max] the [budget] draft".to_string())
            ]
        );
        assert!(search(&library, "absent", facts_of).is_empty());
    }

    #[test]
    fn a_message_belongs_to_the_fact_that_made_it() {
        // setTeam, then three humans: message #2 (index 1) is the third fact.
        let facts = demo_facts(&["one", "two", "three"]);
        assert_eq!(fact_of_message(&facts, 1), Some(3));
        assert_eq!(fact_of_message(&facts, 0), Some(2));
        assert_eq!(fact_of_message(&facts, 3), None);
    }

    #[test]
    fn a_message_after_a_new_team_is_counted_from_it() {
        let mut facts = demo_facts(&["one", "two"]);
        facts.extend(demo_facts(&["three"]));
        // The second setTeam (fact 4) starts over: message index 0 is now "three" (fact 5).
        assert_eq!(fact_of_message(&facts, 0), Some(5));
        assert_eq!(fact_of_message(&facts, 1), None);
    }

    #[test]
    fn a_name_never_chosen_follows_the_team_and_a_chosen_one_stays() {
        let demo = Session::replay(demo_facts(&["hello"])).unwrap();
        let mut library = Library::default();
        let plain = library.add(default_name(&demo), &demo, 10);
        let typed = library.add(default_name(&demo), &demo, 10);
        library.rename(typed, "Mine").unwrap();
        let fork = library.add(format!("{} (fork at #1)", default_name(&demo)), &demo, 10);
        let mut team = agent_chatter::demo::team();
        team.name = "Big team".into();
        let other = Session::replay(vec![Fact::set_team(team)]).unwrap();
        for id in [plain, typed, fork] {
            library.touch(id, &other, 20);
        }
        let name = |id| library.get(id).unwrap().name.clone();
        assert_eq!(name(plain), "Big team");
        assert_eq!(name(typed), "Mine");
        assert_eq!(name(fork), "Release notes crew (fork at #1)");
    }

    #[test]
    fn a_session_is_titled_by_its_first_message_beside_its_team_until_named() {
        let session = Session::replay(demo_facts(&["[NEXT: max] ship the webhook"])).unwrap();
        let empty = Session::replay(demo_facts(&[])).unwrap();
        let mut library = Library::default();
        let a = library.add(default_name(&session), &session, 10);
        let b = library.add(default_name(&empty), &empty, 10);
        let title_of = |l: &Library, id| {
            let e = l.get(id).unwrap();
            (title(e), team_beside(e).map(str::to_string))
        };
        let team = || Some("Release notes crew".to_string());
        assert_eq!(title_of(&library, a), ("ship the webhook".into(), team()));
        assert_eq!(title_of(&library, b), ("Release notes crew".into(), None));
        library.rename(a, "Webhooks").unwrap();
        assert_eq!(title_of(&library, a), ("Webhooks".into(), None));
    }

    #[test]
    fn a_rename_and_a_touch_change_only_that_entry() {
        let session = Session::replay(demo_facts(&["hello"])).unwrap();
        let mut library = Library::default();
        let a = library.add("A".into(), &session, 10);
        let b = library.add("B".into(), &session, 10);
        library.rename(a, " Renamed ").unwrap();
        let longer = Session::replay(demo_facts(&["hello", "again"])).unwrap();
        library.touch(b, &longer, 30);
        assert_eq!(library.get(a).unwrap().name, "Renamed");
        assert_eq!(library.get(a).unwrap().updated_at, 10);
        assert_eq!(library.get(b).unwrap().facts, 3);
        assert_eq!(library.newest_first()[0].id, b);
        assert_eq!(library.next_id(), 3);
    }

    #[test]
    fn a_date_is_said_relative_to_today_in_local_time() {
        let day = 86_400_000;
        // 2026-11-26 14:02 UTC.
        let now = 1_795_701_720_000;
        assert_eq!(when(now, now, 0), "today 14:02");
        assert_eq!(when(now, now, 60), "today 15:02");
        assert_eq!(when(now - day, now, 0), "yesterday 14:02");
        assert_eq!(when(now - 3 * day, now, 0), "Mon 14:02");
        assert_eq!(when(now - 30 * day, now, 0), "2026-10-27");
    }
}
