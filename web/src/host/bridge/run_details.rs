//! What a bridge keeps of an ended run beyond its fact (`runDetails`, docs/architecture.md
//! §14b): its argv, the model, its kept output. Asked once per run, when the page first shows
//! it, and kept by (session, member, the time its run ended). An ask whose answer cannot come
//! any more (the bridge answered an error, or the connection dropped) is forgotten, so the run
//! is asked again when shown again.

use agent_chatter::protocol::{Command, RunDetails};
use leptos::prelude::*;

use super::Bridge;

/// A run of a session: (session id, member id, when its outcome's fact was written).
pub(super) type RunKey = (i64, String, u64);

impl Bridge {
    /// What the bridge keeps of `to`'s run in the session shown that ended at `at` (reactive):
    /// `None` until its answer came; asked of the bridge on the first call.
    pub fn run_details(&self, to: &str, at: u64) -> Option<RunDetails> {
        let session = self.session_id.get()?;
        let key = (session, to.to_string(), at);
        if let Some(known) = self.details.with(|d| d.get(&key).cloned()) {
            return Some(known);
        }
        let asked = self.details_asked.with_value(|a| a.contains(&key));
        if !asked
            && self.send(&Command::RunDetails {
                session,
                to: to.to_string(),
                at,
            })
        {
            self.details_asked.update_value(|a| {
                a.insert(key);
            });
        }
        None
    }

    /// The bridge's answer to a `runDetails`.
    pub(super) fn on_run_details(&self, details: RunDetails) {
        let key = (details.session, details.to.clone(), details.at);
        self.details_asked.update_value(|a| {
            a.remove(&key);
        });
        self.details.update(|d| {
            d.insert(key, details);
        });
    }

    /// Forgets the runs asked and not answered: the bridge answered an error (which names no
    /// command, so any ask may be the one refused) or the connection dropped with them. Each
    /// is asked again the next time it is shown.
    pub(super) fn forget_unanswered_details(&self) {
        self.details_asked.update_value(|a| a.clear());
    }

    /// Shows again every run's details (after a reconnection): what was forgotten unanswered
    /// is asked again now for the views that show it.
    pub(super) fn ask_shown_details_again(&self) {
        self.details.update(|_| {});
    }
}
