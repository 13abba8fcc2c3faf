//! The sessions survive a reload: without a bridge, the page keeps a library of sessions in
//! `localStorage` (docs/architecture.md §13): an index ([`LIBRARY_KEY`]: each session's name,
//! dates, first message and fact count, and the one open) and each session's fact log under
//! its own key ([`log_key`]). A stored log that no longer reads is never dropped silently: it
//! is moved aside under [`CORRUPT_KEY`] and the user is told. The one log kept before the
//! library ([`SESSION_KEY`]) becomes its first session.

use agent_chatter::session::{Fact, Session};
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

/// Where session `id`'s fact log (a session file, `agent-chatter-session/1`) is kept.
pub fn log_key(id: i64) -> String {
    format!("agent-chatter/session/{id}")
}

/// What the page found in storage for one session.
pub enum Stored {
    /// Nothing stored (first visit, or storage unavailable).
    Nothing,
    Session(Box<Session>),
    /// The stored log did not read; the message says why and where it was put.
    Unreadable(String),
}

fn storage() -> Option<web_sys::Storage> {
    web_sys::window()?.local_storage().ok().flatten()
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
        Stored::Session(session) => {
            let id = library.add(default_name(&session), &session, now);
            if storage.set_item(&log_key(id), &session.export()).is_ok() {
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

/// Reads the log under `key`; one that does not read is moved aside under [`CORRUPT_KEY`]
/// (and removed from `key`).
fn read(storage: &web_sys::Storage, key: &str) -> Stored {
    let Ok(Some(text)) = storage.get_item(key) else {
        return Stored::Nothing;
    };
    match Session::import(&text) {
        Ok(session) => Stored::Session(Box::new(session)),
        Err(e) => {
            let kept = storage.set_item(CORRUPT_KEY, &text).is_ok();
            let _ = storage.remove_item(key);
            let where_ = if kept {
                format!("it was set aside in localStorage under {CORRUPT_KEY:?}")
            } else {
                "it could not be set aside (storage full)".to_string()
            };
            Stored::Unreadable(format!(
                "the session saved in this browser could not be read ({e}); {where_}"
            ))
        }
    }
}

/// Reads session `id`'s log.
pub fn load_log(id: i64) -> Stored {
    match storage() {
        Some(storage) => read(&storage, &log_key(id)),
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
    let text = storage()?.get_item(&log_key(id)).ok()??;
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

/// Stores session `id`'s log (a session file); the error names what failed.
pub fn save_log(id: i64, text: &str) -> Result<(), String> {
    let storage = storage().ok_or(no_storage())?;
    storage.set_item(&log_key(id), text).map_err(|_| {
        format!(
            "the session ({} KiB) could not be saved in localStorage (quota exceeded?): export it as a file to keep it",
            text.len() / 1024
        )
    })
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
