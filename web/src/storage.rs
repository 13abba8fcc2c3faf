//! The session survives a reload: its fact log is kept in `localStorage`
//! (docs/architecture.md §13). A stored log that no longer reads is never dropped silently: it is
//! moved aside under [`CORRUPT_KEY`] and the user is told, and the page starts from the demo.

use agent_chatter::session::Session;

/// Where the fact log (a session file, `agent-chatter-session/1`) is kept.
pub const SESSION_KEY: &str = "agent-chatter/session";
/// Where an unreadable stored log is set aside, for the user to recover.
pub const CORRUPT_KEY: &str = "agent-chatter/session.unreadable";

/// What the page found in storage at start-up.
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

/// Reads the stored session.
pub fn load_session() -> Stored {
    let Some(storage) = storage() else {
        return Stored::Nothing;
    };
    let Ok(Some(text)) = storage.get_item(SESSION_KEY) else {
        return Stored::Nothing;
    };
    match Session::import(&text) {
        Ok(session) => Stored::Session(Box::new(session)),
        Err(e) => {
            let kept = storage.set_item(CORRUPT_KEY, &text).is_ok();
            let _ = storage.remove_item(SESSION_KEY);
            let where_ = if kept {
                format!("it was set aside in localStorage under {CORRUPT_KEY:?}")
            } else {
                "it could not be set aside (storage full)".to_string()
            };
            Stored::Unreadable(format!(
                "the session saved in this browser could not be read ({e}); {where_}, and the demo was loaded instead"
            ))
        }
    }
}

/// Where the session in use is kept when a shared link replaces it.
pub const BEFORE_LINK_KEY: &str = "agent-chatter/session.before-link";

/// Keeps the stored session aside (a shared link is about to replace it); true if there was one.
pub fn set_aside_for_link() -> bool {
    let Some(storage) = storage() else {
        return false;
    };
    match storage.get_item(SESSION_KEY) {
        Ok(Some(text)) => storage.set_item(BEFORE_LINK_KEY, &text).is_ok(),
        _ => false,
    }
}

/// Stores the session file; the error names what failed.
pub fn save_session(text: &str) -> Result<(), String> {
    let storage = storage().ok_or(
        "this browser gives the page no localStorage: the session will not survive a reload",
    )?;
    storage.set_item(SESSION_KEY, text).map_err(|_| {
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
