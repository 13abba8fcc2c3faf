//! What the bridge did at this page's request, as its answers say it (see
//! [`crate::host::Done`]): a file's team or scenario opened once its fact comes back committed
//! (an error answer or a dropped connection leaves nothing to tell), a fork once the bridge
//! opens the session it made and says so (`session` with `forked`).

use agent_chatter::protocol::Forked;
use agent_chatter::session::Fact;
use leptos::prelude::*;

use super::Bridge;
use crate::host::Done;

impl Bridge {
    /// Sends the fact that opens the file `name` (a team or a scenario); said as opened when
    /// it is back committed. False when not connected (the banner says so).
    pub fn open_file(&self, name: &str, fact: Fact) -> bool {
        let sent = self.apply(fact);
        self.opening.set_value(sent.then(|| name.to_string()));
        sent
    }

    /// A committed fact, applied: the file being opened when it is the team or scenario that
    /// file sent (the bridge answers a page's commands in order).
    pub(super) fn told_fact(&self, fact: &Fact) {
        if !matches!(fact, Fact::SetTeam { .. } | Fact::LoadScenario { .. }) {
            return;
        }
        let Some(name) = self.opening.try_update_value(Option::take).flatten() else {
            return;
        };
        let state = self.state;
        self.done.set(Some(Done::Opened {
            name,
            members: state.members.with_untracked(Vec::len),
            messages: state.message_count.get_untracked(),
            beside: false,
        }));
    }

    /// The bridge refused a command or the connection dropped: the file being opened did not
    /// open (or its answer will not come).
    pub(super) fn forget_opening(&self) {
        self.opening.set_value(None);
    }

    /// The session `into` the bridge opened is the fork it just made, as `forked` says.
    pub(super) fn told_session(&self, into: i64, forked: Option<Forked>) {
        if let Some(Forked { from, at }) = forked {
            self.done.set(Some(Done::Forked {
                at,
                into,
                from: Some(from),
            }));
        }
    }

    /// The last file opened or fork made at the user's request (see [`Done`]).
    pub fn done(&self) -> RwSignal<Option<Done>> {
        self.done
    }
}
