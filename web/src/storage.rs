//! The sessions survive a reload: without a bridge, the page keeps a library of sessions in
//! `localStorage` (docs/architecture.md §13): an index ([`LIBRARY_KEY`]: each session's name,
//! dates, first message and fact count, and the one open) and each session's fact log under
//! its own keys ([`log_key`] and its parts, [`PART_FACTS`] facts each: a save rewrites only
//! the parts that changed, docs/architecture.md §13 "Storage"). A stored log that no longer
//! reads is never dropped silently: it is moved aside whole under [`CORRUPT_KEY`] and the user
//! is told. The one log kept before the library ([`SESSION_KEY`]) becomes its first session.

use agent_chatter::session::{facts_json, session_file, Fact, Session};
use serde::Deserialize;

use crate::library::{default_name, Library};

/// Where the one fact log was kept before the library; read once, to move it in.
pub const SESSION_KEY: &str = "agent-chatter/session";
/// Where an unreadable stored log is set aside, for the user to recover.
pub const CORRUPT_KEY: &str = "agent-chatter/session.unreadable";
/// The library's index.
pub const LIBRARY_KEY: &str = "agent-chatter/library";
/// Where an index that no longer reads is set aside.
pub const CORRUPT_LIBRARY_KEY: &str = "agent-chatter/library.unreadable";

/// Facts per stored part of a log. A save rewrites the part holding the first unsaved fact
/// and those after it, so saving after an edit serialises at most this many facts however
/// long the session (it was the whole log: ~25 ms on 10⁴ facts, a missed frame).
pub const PART_FACTS: usize = 256;

/// Where session `id`'s log is kept: its head, `{"format": "agent-chatter-session/1",
/// "parts": N, "first": F}`, whose parts (JSON arrays of facts, in order) are under
/// [`part_key`] `F` to `F + N - 1` (a head without `first` starts at 0). A whole session file
/// under this key (as pages before the parts wrote it) reads too.
pub fn log_key(id: i64) -> String {
    format!("agent-chatter/session/{id}")
}

/// Where part `k` of session `id`'s log is kept.
fn part_key(id: i64, k: usize) -> String {
    format!("agent-chatter/session/{id}/{k}")
}

/// What the page found in storage for one session.
pub enum Stored {
    /// Nothing stored (first visit, or storage unavailable).
    Nothing,
    /// The session, and whether its log is kept in parts (then a save appends to them; a
    /// whole file is rewritten in parts by the next save).
    Session(Box<Session>, bool),
    /// The stored log did not read; the message says why and where it was put.
    Unreadable(String),
}

/// A store of texts by key, as `localStorage` is (a map in the tests).
pub trait Kv {
    fn text(&self, key: &str) -> Option<String>;
    /// False when the text was not stored (quota exceeded).
    fn set_text(&self, key: &str, value: &str) -> bool;
    fn remove_text(&self, key: &str);
}

impl Kv for web_sys::Storage {
    fn text(&self, key: &str) -> Option<String> {
        self.get_item(key).ok().flatten()
    }
    fn set_text(&self, key: &str, value: &str) -> bool {
        self.set_item(key, value).is_ok()
    }
    fn remove_text(&self, key: &str) {
        let _ = self.remove_item(key);
    }
}

fn storage() -> Option<web_sys::Storage> {
    web_sys::window()?.local_storage().ok().flatten()
}

/// How a log's head begins; its number of parts, `, "first": F` and `}` follow. Only this
/// page writes it, so it is read as written; a whole session file (`{"format":"…","facts":…`)
/// never begins so.
const HEAD_START: &str = "{\"format\": \"agent-chatter-session/1\", \"parts\": ";
const HEAD_FIRST: &str = ", \"first\": ";

/// Which parts of a log its head names: `first..first + count`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Parts {
    first: usize,
    count: usize,
}

impl Parts {
    fn head(self) -> String {
        format!("{HEAD_START}{}{HEAD_FIRST}{}}}", self.count, self.first)
    }

    fn keys(self) -> std::ops::Range<usize> {
        self.first..self.first + self.count
    }
}

/// The parts a head names; `None` for anything else (a whole session file). Heads written
/// before `first` start at part 0.
fn head_parts(head: &str) -> Option<Parts> {
    let rest = head.strip_prefix(HEAD_START)?.strip_suffix('}')?;
    let (count, first) = match rest.split_once(HEAD_FIRST) {
        Some((count, first)) => (count, first.parse().ok()?),
        None => (rest, 0),
    };
    Some(Parts {
        first,
        count: count.parse().ok()?,
    })
}

/// What is stored for one session, as one session file's text.
enum Text {
    Nothing,
    /// The session file; `true` when it was kept in parts.
    File(String, bool),
    /// A part is missing or is no JSON array: what could be put together, and why.
    Damaged(String, String),
}

/// Session `id`'s log as one session file: its head's parts joined in order, or the whole
/// file a page before the parts stored.
fn log_text(kv: &impl Kv, id: i64) -> Text {
    let Some(head) = kv.text(&log_key(id)) else {
        return Text::Nothing;
    };
    let Some(parts) = head_parts(&head) else {
        // A whole session file (or something that is not one: its reader says what).
        return Text::File(head, false);
    };
    let mut facts = Vec::with_capacity(parts.count);
    let mut damage = None;
    for (n, k) in parts.keys().enumerate() {
        let part = kv.text(&part_key(id, k));
        match part.as_deref().map(str::trim) {
            Some(t) if t.len() >= 2 && t.starts_with('[') && t.ends_with(']') => {
                let inner = t[1..t.len() - 1].trim();
                if !inner.is_empty() {
                    facts.push(inner.to_owned());
                }
            }
            found => {
                let what = if found.is_none() {
                    "missing"
                } else {
                    "damaged"
                };
                damage.get_or_insert(format!("part {} of its {} is {what}", n + 1, parts.count));
            }
        }
    }
    let text = session_file(&format!("[{}]", facts.join(",")));
    match damage {
        Some(why) => Text::Damaged(text, why),
        None => Text::File(text, true),
    }
}

/// Writes session `id`'s `facts`, then the head, so that a save cut short (a crash, a full
/// storage) leaves the log saved before it. After `since` facts saved (an append, which never
/// changes a fact already saved), the part holding fact `since` and those after it are
/// rewritten in place. Otherwise (`since` is `None`: another log shown under this id) every
/// part is written under keys the old head does not name, and the old parts are removed
/// after the new head: the two logs never mix.
pub fn write_log(
    kv: &impl Kv,
    id: i64,
    facts: &[Fact],
    since: Option<usize>,
) -> Result<(), String> {
    let count = facts.len().div_ceil(PART_FACTS);
    let old = kv.text(&log_key(id)).as_deref().and_then(head_parts);
    let (parts, from) = match (since, old) {
        (Some(n), Some(old)) if n <= facts.len() => (Parts { count, ..old }, n / PART_FACTS),
        // Ahead of the old parts, or before them when the new log fits there.
        (_, Some(old)) if count > old.first => (
            Parts {
                first: old.first + old.count,
                count,
            },
            0,
        ),
        _ => (Parts { first: 0, count }, 0),
    };
    // The whole session's size, not only what this save wrote (an append writes one part):
    // written out again only when the save failed.
    let full_error = || {
        format!(
            "the session ({} KiB) could not be saved in localStorage (quota exceeded?): export it as a file to keep it",
            facts_json(facts).len() / 1024
        )
    };
    for k in from..count {
        let part = &facts[k * PART_FACTS..((k + 1) * PART_FACTS).min(facts.len())];
        if !kv.set_text(&part_key(id, parts.first + k), &facts_json(part)) {
            return Err(full_error());
        }
    }
    if !kv.set_text(&log_key(id), &parts.head()) {
        return Err(full_error());
    }
    // What the new head no longer names: the old log's parts, or an append's that shrank.
    if let Some(old) = old {
        for k in old.keys().filter(|k| !parts.keys().contains(k)) {
            kv.remove_text(&part_key(id, k));
        }
    }
    Ok(())
}

/// Removes session `id`'s log, its head and its parts.
pub fn remove_log(id: i64) {
    if let Some(storage) = storage() {
        if let Some(parts) = storage.text(&log_key(id)).as_deref().and_then(head_parts) {
            for k in parts.keys() {
                storage.remove_text(&part_key(id, k));
            }
        }
        storage.remove_text(&log_key(id));
    }
}

/// The library kept in this browser, with what went wrong reading it, if anything: a log
/// kept before the library is moved in as its first session (one that no longer reads is set
/// aside), and an index that no longer reads is set aside and a new one started.
pub fn load_library(now: u64) -> (Library, Option<String>) {
    let Some(storage) = storage() else {
        return (Library::default(), None);
    };
    if let Ok(Some(text)) = storage.get_item(LIBRARY_KEY) {
        return match serde_json::from_str::<Library>(&text) {
            Ok(library) => (library, None),
            Err(e) => {
                let _ = storage.set_item(CORRUPT_LIBRARY_KEY, &text);
                let _ = storage.remove_item(LIBRARY_KEY);
                (
                    Library::default(),
                    Some(format!(
                        "the list of sessions saved in this browser could not be read ({e}); it was set aside in localStorage under {CORRUPT_LIBRARY_KEY:?} (the sessions' logs are still under \"agent-chatter/session/…\")"
                    )),
                )
            }
        };
    }
    // Before the library: one log, which becomes its first session.
    let mut library = Library::default();
    let problem = match read(&storage, SESSION_KEY) {
        Stored::Session(session, _) => {
            let id = library.add(default_name(&session), &session, now);
            if write_log(&storage, id, session.facts(), None).is_ok() {
                library.current = Some(id);
                let _ = storage.remove_item(SESSION_KEY);
                let _ = write_library(&storage, &library);
                None
            } else {
                library = Library::default();
                Some("the saved session could not be moved into the library (storage full?): it stays under \"agent-chatter/session\"".to_string())
            }
        }
        Stored::Unreadable(message) => Some(message),
        Stored::Nothing => None,
    };
    (library, problem)
}

/// Reads the session file under `key` (the log kept before the library); one that does not
/// read is moved aside under [`CORRUPT_KEY`] (and removed from `key`).
fn read(storage: &web_sys::Storage, key: &str) -> Stored {
    match storage.text(key) {
        None => Stored::Nothing,
        Some(text) => settle(storage, Text::File(text, false), || {
            storage.remove_text(key)
        }),
    }
}

/// Replays a stored log's text; one that does not read is set aside whole under
/// [`CORRUPT_KEY`] and `remove`d.
fn settle(kv: &impl Kv, text: Text, remove: impl FnOnce()) -> Stored {
    let (text, problem) = match text {
        Text::Nothing => return Stored::Nothing,
        Text::File(text, parts) => match Session::import(&text) {
            Ok(session) => return Stored::Session(Box::new(session), parts),
            Err(e) => (text, e.to_string()),
        },
        Text::Damaged(text, why) => (text, why),
    };
    let kept = kv.set_text(CORRUPT_KEY, &text);
    remove();
    let where_ = if kept {
        format!("it was set aside in localStorage under {CORRUPT_KEY:?}")
    } else {
        "it could not be set aside (storage full)".to_string()
    };
    Stored::Unreadable(format!(
        "the session saved in this browser could not be read ({problem}); {where_}"
    ))
}

/// Reads session `id`'s log.
pub fn load_log(id: i64) -> Stored {
    match storage() {
        Some(storage) => {
            let text = log_text(&storage, id);
            settle(&storage, text, || remove_log(id))
        }
        None => Stored::Nothing,
    }
}

/// Session `id`'s facts, without replaying them (what a search reads); `None` when they do
/// not read.
pub fn read_facts(id: i64) -> Option<Vec<Fact>> {
    #[derive(Deserialize)]
    struct File {
        facts: Vec<Fact>,
    }
    let Text::File(text, _) = log_text(&storage()?, id) else {
        return None;
    };
    serde_json::from_str::<File>(&text).ok().map(|f| f.facts)
}

fn write_library(storage: &web_sys::Storage, library: &Library) -> Result<(), String> {
    let text = serde_json::to_string(library).unwrap_or_default();
    storage.set_item(LIBRARY_KEY, &text).map_err(|_| {
        "the list of sessions could not be saved in localStorage (quota exceeded?)".to_string()
    })
}

fn no_storage() -> &'static str {
    "this browser gives the page no localStorage: the session will not survive a reload"
}

/// Stores the library's index.
pub fn save_library(library: &Library) -> Result<(), String> {
    write_library(&storage().ok_or(no_storage())?, library)
}

/// Stores session `id`'s `facts`, rewriting only the parts from the one holding fact
/// `since` on (all of them when `None`); the error names what failed.
pub fn save_log(id: i64, facts: &[Fact], since: Option<usize>) -> Result<(), String> {
    write_log(&storage().ok_or(no_storage())?, id, facts, since)
}

/// Whose sessions a draft belongs to. The page's own library and each bridge database number
/// their sessions from 1, and one address can show several (the bridge's, with and without its
/// launch token; two databases served in turn on one port), so their drafts are kept apart: a
/// draft for session 3 of one never shows in session 3 of another.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Drafts {
    Library,
    /// A bridge's database, known by a 64-bit FNV-1a hash of its launch token (the token is
    /// stable per database; the hash keeps the 256-bit secret itself out of the key names).
    Bridge(u64),
}

impl Drafts {
    /// The drafts of the bridge whose launch token is `token`.
    pub fn of_bridge(token: &str) -> Drafts {
        // FNV-1a: fixed for good (a key must not change with the toolchain, as std's hasher
        // may), and a key name needs no more.
        let hash = token.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
        });
        Drafts::Bridge(hash)
    }

    fn prefix(self) -> String {
        match self {
            Drafts::Library => "agent-chatter/draft/".to_string(),
            Drafts::Bridge(database) => format!("agent-chatter/bridge-draft/{database}/"),
        }
    }
}

/// Where the composer's text for session `session` is kept while it is typed, so a reload
/// loses no draft and each session keeps its own (`agent-chatter/draft/3`).
fn draft_key(of: Drafts, session: Option<i64>) -> String {
    let prefix = of.prefix();
    match session {
        Some(id) => format!("{prefix}{id}"),
        None => prefix.trim_end_matches('/').to_string(),
    }
}

/// The composer's text for `session` when it was left (empty: none).
pub fn draft(of: Drafts, session: Option<i64>) -> String {
    storage()
        .and_then(|s| s.get_item(&draft_key(of, session)).ok().flatten())
        .unwrap_or_default()
}

/// Keeps the composer's text for `session` (an empty text removes it). A storage that is
/// full or off keeps nothing; the text stays in the composer all the same.
pub fn set_draft(of: Drafts, session: Option<i64>, text: &str) {
    if let Some(storage) = storage() {
        let key = draft_key(of, session);
        let _ = if text.is_empty() {
            storage.remove_item(&key)
        } else {
            storage.set_item(&key, text)
        };
    }
}

/// Removes the drafts of sessions that are gone (`live` lists those still there): ids are
/// given again after a session is removed, and a new session must not show an old draft.
pub fn prune_drafts(of: Drafts, live: &[i64]) {
    let Some(storage) = storage() else { return };
    let keys = (0..storage.length().unwrap_or(0)).filter_map(|i| storage.key(i).ok().flatten());
    for key in stale_drafts(of, keys, live) {
        let _ = storage.remove_item(&key);
    }
}

/// The keys among `keys` of drafts of `of`'s sessions not in `live`.
fn stale_drafts(of: Drafts, keys: impl Iterator<Item = String>, live: &[i64]) -> Vec<String> {
    let prefix = of.prefix();
    keys.filter(|key| {
        key.strip_prefix(prefix.as_str())
            .and_then(|id| id.parse::<i64>().ok())
            .is_some_and(|id| !live.contains(&id))
    })
    .collect()
}

/// Where the user's choice to be notified is kept.
pub const NOTIFY_KEY: &str = "agent-chatter/notify";

/// Whether the user asked to be notified (in an earlier visit).
pub fn notify_wanted() -> bool {
    storage().is_some_and(|s| matches!(s.get_item(NOTIFY_KEY), Ok(Some(v)) if v == "1"))
}

/// Keeps the user's choice to be notified for the next visits.
pub fn set_notify_wanted(on: bool) {
    if let Some(storage) = storage() {
        let _ = if on {
            storage.set_item(NOTIFY_KEY, "1")
        } else {
            storage.remove_item(NOTIFY_KEY)
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_chatter::message::Millis;
    use std::cell::RefCell;
    use std::collections::BTreeMap;

    /// `localStorage` as a map, recording the keys written; with `writes_left`, the writes
    /// after that many fail (a full storage, or a save cut short).
    #[derive(Default)]
    struct Map {
        texts: RefCell<BTreeMap<String, String>>,
        written: RefCell<Vec<String>>,
        writes_left: std::cell::Cell<Option<usize>>,
    }

    impl Kv for Map {
        fn text(&self, key: &str) -> Option<String> {
            self.texts.borrow().get(key).cloned()
        }
        fn set_text(&self, key: &str, value: &str) -> bool {
            match self.writes_left.get() {
                Some(0) => return false,
                Some(n) => self.writes_left.set(Some(n - 1)),
                None => {}
            }
            self.written.borrow_mut().push(key.to_string());
            self.texts.borrow_mut().insert(key.into(), value.into());
            true
        }
        fn remove_text(&self, key: &str) {
            self.texts.borrow_mut().remove(key);
        }
    }

    /// A session of the demo team with `messages` human messages.
    fn facts(messages: usize) -> Vec<Fact> {
        facts_saying(messages, "note")
    }

    /// The same, each message saying `word` and its number.
    fn facts_saying(messages: usize, word: &str) -> Vec<Fact> {
        let mut s = Session::new();
        s.apply(&Fact::set_team(agent_chatter::demo::team()))
            .unwrap();
        for i in 0..messages {
            s.apply(&Fact::human(
                format!("[FROM: kailai] {word} {i} \u{1f600} \"quoted\""),
                Millis(i as u64),
            ))
            .unwrap();
        }
        s.facts().to_vec()
    }

    fn read_back(map: &Map, id: i64) -> (Vec<Fact>, bool) {
        match log_text(map, id) {
            Text::File(text, parts) => (Session::import(&text).unwrap().facts().to_vec(), parts),
            Text::Nothing => panic!("nothing stored"),
            Text::Damaged(_, why) => panic!("damaged: {why}"),
        }
    }

    #[test]
    fn a_log_written_in_parts_reads_back_fact_for_fact() {
        for n in [0, 1, PART_FACTS - 1, PART_FACTS, 700] {
            let map = Map::default();
            let facts = &facts(n)[..n];
            write_log(&map, 7, facts, None).unwrap();
            assert_eq!(read_back(&map, 7), (facts.to_vec(), true), "{n} facts");
        }
    }

    #[test]
    fn a_save_after_an_edit_rewrites_only_the_last_part_and_the_head() {
        let all = facts(701);
        let map = Map::default();
        write_log(&map, 7, &all[..700], None).unwrap();
        map.written.borrow_mut().clear();
        write_log(&map, 7, &all, Some(700)).unwrap();
        assert_eq!(
            *map.written.borrow(),
            ["agent-chatter/session/7/2", "agent-chatter/session/7"]
        );
        assert_eq!(read_back(&map, 7).0, all);
    }

    #[test]
    fn a_whole_session_file_from_before_the_parts_still_reads() {
        let session = Session::replay(facts(3)).unwrap();
        let map = Map::default();
        map.set_text(&log_key(7), &session.export());
        assert_eq!(read_back(&map, 7), (session.facts().to_vec(), false));
    }

    #[test]
    fn the_drafts_of_sessions_gone_are_stale_and_only_those_of_their_own_kind() {
        let (one, other) = (
            Drafts::of_bridge("token one"),
            Drafts::of_bridge("token two"),
        );
        assert_ne!(one, other, "two databases keep their drafts apart");
        let keys = [
            "agent-chatter/draft/1".to_string(),
            "agent-chatter/draft/2".to_string(),
            "agent-chatter/draft".to_string(),
            draft_key(one, Some(2)),
            draft_key(other, Some(2)),
            "agent-chatter/draft/x".to_string(),
            "agent-chatter/session/2".to_string(),
        ];
        let keys = || keys.iter().cloned();
        assert_eq!(
            stale_drafts(Drafts::Library, keys(), &[1]),
            ["agent-chatter/draft/2"]
        );
        assert_eq!(stale_drafts(one, keys(), &[1]), [draft_key(one, Some(2))]);
        assert!(stale_drafts(one, keys(), &[2]).is_empty());
        assert!(draft_key(one, Some(2)).starts_with("agent-chatter/bridge-draft/"));
    }

    #[test]
    fn a_rewrite_removes_the_parts_of_the_longer_log_it_replaced() {
        let all = facts(700);
        let map = Map::default();
        write_log(&map, 7, &all, None).unwrap();
        write_log(&map, 7, &all[..10], None).unwrap();
        assert!(map.text(&part_key(7, 1)).is_none() && map.text(&part_key(7, 2)).is_none());
        assert_eq!(read_back(&map, 7).0, &all[..10]);
        // A count saved that the log no longer reaches is a rewrite too.
        write_log(&map, 7, &all[..5], Some(10)).unwrap();
        assert_eq!(read_back(&map, 7).0, &all[..5]);
    }

    #[test]
    fn a_log_shown_anew_is_written_beside_the_old_one_never_over_it() {
        let old = facts(700);
        let new = facts_saying(600, "other");
        // Cut short after each of its writes (three parts, then the head): until the head
        // is written, the old log reads whole; after it, the new one does.
        for writes in 0..=4 {
            let map = Map::default();
            write_log(&map, 7, &old, None).unwrap();
            map.writes_left.set(Some(writes));
            let saved = write_log(&map, 7, &new, None);
            let expected = if writes < 4 { &old } else { &new };
            assert_eq!(saved.is_ok(), writes == 4);
            assert_eq!(&read_back(&map, 7).0, expected, "cut after {writes} writes");
        }
    }

    #[test]
    fn a_log_head_names_the_session_format_the_core_reads() {
        // The head's text is spelled out (a `const` cannot be put together from another);
        // this holds it to the core's format name.
        let head = Parts { first: 2, count: 3 }.head();
        let format = format!(
            "{{\"format\": \"{}\",",
            agent_chatter::session::SESSION_FORMAT
        );
        assert!(head.starts_with(&format), "{head}");
        assert_eq!(head_parts(&head), Some(Parts { first: 2, count: 3 }));
    }

    #[test]
    fn a_full_storage_is_reported_with_the_whole_sessions_size_even_for_an_append() {
        let all = facts(3 * PART_FACTS);
        let map = Map::default();
        write_log(&map, 7, &all[..all.len() - 1], None).unwrap();
        // The append rewrites only the last part, and that write fails.
        map.writes_left.set(Some(0));
        let why = write_log(&map, 7, &all, Some(all.len() - 1)).unwrap_err();
        let kib = facts_json(&all).len() / 1024;
        assert!(kib > 2, "a session of several KiB ({kib})");
        assert!(
            why.starts_with(&format!("the session ({kib} KiB) could not be saved")),
            "{why}"
        );
        assert_eq!(
            read_back(&map, 7).0,
            all[..all.len() - 1].to_vec(),
            "nothing saved is lost"
        );
    }

    #[test]
    fn the_parts_of_a_log_shown_anew_go_back_to_the_start_when_they_fit_before_the_old() {
        let all = facts(700);
        let map = Map::default();
        write_log(&map, 7, &all[..300], None).unwrap();
        assert_eq!(
            head_parts(&map.text(&log_key(7)).unwrap()),
            Some(Parts { first: 0, count: 2 })
        );
        write_log(&map, 7, &all[..600], None).unwrap();
        assert_eq!(
            head_parts(&map.text(&log_key(7)).unwrap()),
            Some(Parts { first: 2, count: 3 })
        );
        write_log(&map, 7, &all[..10], None).unwrap();
        assert_eq!(
            head_parts(&map.text(&log_key(7)).unwrap()),
            Some(Parts { first: 0, count: 1 })
        );
        // Only the head and the parts it names are left.
        let keys: Vec<String> = map.texts.borrow().keys().cloned().collect();
        assert_eq!(keys, [log_key(7), part_key(7, 0)]);
        assert_eq!(read_back(&map, 7).0, &all[..10]);
        // Appends go on where the head says.
        write_log(&map, 7, &all[..300], Some(10)).unwrap();
        assert_eq!(
            head_parts(&map.text(&log_key(7)).unwrap()),
            Some(Parts { first: 0, count: 2 })
        );
        assert_eq!(read_back(&map, 7).0, &all[..300]);
    }

    #[test]
    fn a_head_written_before_first_was_named_starts_at_part_0() {
        let all = facts(300);
        let map = Map::default();
        write_log(&map, 7, &all, None).unwrap();
        map.set_text(
            &log_key(7),
            "{\"format\": \"agent-chatter-session/1\", \"parts\": 2}",
        );
        assert_eq!(read_back(&map, 7), (all, true));
    }

    #[test]
    fn a_missing_or_damaged_part_is_named() {
        let map = Map::default();
        write_log(&map, 7, &facts(600), None).unwrap();
        map.remove_text(&part_key(7, 1));
        let Text::Damaged(_, why) = log_text(&map, 7) else {
            panic!("not damaged")
        };
        assert_eq!(why, "part 2 of its 3 is missing");
        map.set_text(&part_key(7, 1), "{\"type\"");
        let Text::Damaged(_, why) = log_text(&map, 7) else {
            panic!("not damaged")
        };
        assert_eq!(why, "part 2 of its 3 is damaged");
    }
}
