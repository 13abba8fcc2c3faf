//! A shared case waiting for the user's decision (docs/architecture.md §13, "share"): a link
//! opened here shows as a new session with a banner, "shared case: <team> at #n for <member> —
//! keep / discard". Until the user decides, the decision is kept in `localStorage` under
//! [`PENDING_KEY`] (which session the case opened as, and which one it replaced), so a reload
//! still shows the banner and discard still restores what was shown before. The sessions
//! themselves are kept by the host (the page's library, or the bridge).

use leptos::prelude::*;
use serde::{Deserialize, Serialize};

use crate::share::Shared;

/// Where an undecided shared case is recorded.
pub const PENDING_KEY: &str = "agent-chatter/shared.pending";

/// An undecided shared case.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Pending {
    /// What the banner says of the case: `Release notes crew at #5 for max`.
    pub label: String,
    /// The session the case opened as (the host's id), when known.
    pub shared: Option<i64>,
    /// The session shown before, which discard shows again; `None` when there was none.
    pub before: Option<i64>,
}

/// `<team> at #n for <member>`: what a shared case shows (`at the start` with no message).
pub fn label(shared: &Shared) -> String {
    let team = &shared.scenario.team;
    let at = match shared.scenario.messages.len() {
        0 => "at the start".to_string(),
        n => format!("at #{n}"),
    };
    let member = shared.member.as_deref().map(|m| {
        let name = team.find(m).map_or(m, |m| m.display_name.as_str());
        format!(" for {name}")
    });
    format!("{} {at}{}", team.name, member.unwrap_or_default())
}

thread_local! {
    // Not owned by any component: the hosts and the banner share it for the page's lifetime.
    static PENDING: ArcRwSignal<Option<Pending>> = ArcRwSignal::new(read());
}

/// The undecided shared case (reactive).
pub fn pending() -> ArcRwSignal<Option<Pending>> {
    PENDING.with(Clone::clone)
}

fn storage() -> Option<web_sys::Storage> {
    web_sys::window()?.local_storage().ok().flatten()
}

fn read() -> Option<Pending> {
    let text = storage()?.get_item(PENDING_KEY).ok()??;
    serde_json::from_str(&text).ok()
}

/// A case was opened as session `shared`, replacing `before`: the banner shows until the user
/// decides. A case opened over another undecided one keeps the first one's `before`, so
/// discard goes back to what the user had before any link.
pub fn begin(label: String, shared: Option<i64>, before: Option<i64>) {
    let signal = pending();
    let before = signal
        .get_untracked()
        .map_or(before, |earlier| earlier.before);
    let case = Pending {
        label,
        shared,
        before,
    };
    if let (Some(storage), Ok(text)) = (storage(), serde_json::to_string(&case)) {
        let _ = storage.set_item(PENDING_KEY, &text);
    }
    signal.set(Some(case));
}

/// Sets the session the case opened as, once the host knows it (a bridge's new session).
pub fn opened_as(shared: i64) {
    let signal = pending();
    if let Some(mut case) = signal.get_untracked().filter(|c| c.shared.is_none()) {
        case.shared = Some(shared);
        if let (Some(storage), Ok(text)) = (storage(), serde_json::to_string(&case)) {
            let _ = storage.set_item(PENDING_KEY, &text);
        }
        signal.set(Some(case));
    }
}

/// The user decided (keep or discard): the banner goes; returns the case decided on.
pub fn decide() -> Option<Pending> {
    if let Some(storage) = storage() {
        let _ = storage.remove_item(PENDING_KEY);
    }
    let signal = pending();
    let case = signal.get_untracked();
    signal.set(None);
    case
}
