//! The bridge's one session (docs/architecture.md §6b, §14) as an actor: one thread owns the
//! core's `Session`, its fact log in SQLite and the running agent; the server and the terminal
//! chat hold a [`Hub`] handle and send it commands over a channel, each with a oneshot for the
//! answer. Finished runs report into the same inbox, so every change to the session happens in
//! one place, one at a time. Every fact is committed before the actions it causes run; every
//! page connected sees the same facts, in `seq` order.
//!
//! The actor is a dedicated OS thread, not an async task: SQLite's calls block, and they never
//! hold up an async worker. Agent runs are async tasks on the runtime that started the hub.
//!
//! - `handle.rs`: [`Hub`], the handle the server and the chat hold; each command a message
//!   with a oneshot for its answer.
//! - `actor.rs`: the actor's state and loop, and applying a fact (committed, published,
//!   then performed).
//! - `sessions.rs`: opening, creating, forking, renaming and reloading sessions.
//! - `delivery.rs`: one delivery in steps: resolve the launch, announce it, spawn the run
//!   (an agent's CLI or the simulator); a run a stop interrupted is recorded instead.
//! - `relay.rs`: a run's stream relayed to every page, and kept for a page that connects.
//! - `approvals.rs`: a person's answer to the running agent's question, checked and passed on.
//! - `outcome.rs`: a finished run becomes a fact (a pure step), which is then recorded.
//! - `members.rs`: how each AI member is answered here (the `agents` event, the cost cap).
//! - `observer.rs`: what a subscriber with no session of its own (the chat) is told.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use agent_chatter::protocol::{encode_event, Event};
use agent_chatter::session::{SessionError, SessionFileError};
use thiserror::Error;
use tokio::sync::broadcast;
use tokio_tungstenite::tungstenite::Utf8Bytes;

use crate::store::StoreError;

mod actor;
mod approvals;
mod delivery;
mod handle;
mod members;
mod observer;
mod outcome;
mod relay;
mod sessions;

pub use actor::wait_for_actors;
pub use handle::Hub;
pub(crate) use observer::{AfterFact, Observer, Said};

/// Events kept for pages that are behind.
pub(crate) const EVENT_BUFFER: usize = 256;
/// How often a run's outcome that could not be written is tried again.
const UNSTORED_RETRY: Duration = Duration::from_secs(2);

/// Why the hub refused or could not do what it was asked.
#[derive(Debug, Error)]
pub enum HubError {
    /// The core refused the fact (an unknown sender, no team, …): nothing changed.
    #[error("{0}")]
    Refused(#[from] SessionError),
    /// The fact was not committed, so not applied; the session is what the database holds.
    #[error("{0}; the session was reloaded from the database")]
    NotStored(StoreError),
    #[error("{0}")]
    Store(#[from] StoreError),
    #[error("session {id}: {error}")]
    DoesNotReplay { id: i64, error: SessionFileError },
    /// A session command (`rename`, `fork`) that could not be done: nothing changed.
    #[error("{what}: {why}")]
    Library { what: &'static str, why: String },
    /// An approval answer that cannot be given (no such question, no such option).
    #[error("answerApproval: {0}")]
    Approval(String),
    #[error("cancel: {0} is not running")]
    NotRunning(String),
    /// The run ended, but its outcome is not yet in the database (it is being written again).
    #[error("cancel: {0}'s run has ended; its outcome could not be written to the database yet and is tried again every {secs} s", secs = UNSTORED_RETRY.as_secs())]
    Unstored(String),
    /// A member's run settings cannot be used on this machine: nothing changed.
    #[error("{0}")]
    Settings(String),
    #[error("cannot start the session's thread: {0}")]
    Thread(std::io::Error),
    /// The actor is gone (the bridge is stopping).
    #[error("the bridge is stopping: the session no longer takes commands")]
    Stopped,
}

/// An event as every subscriber receives it; its frame text is made once, by whichever
/// connection sends it first, and shared by the others (each sends the same bytes, not a
/// copy).
#[derive(Debug)]
pub(crate) struct Published {
    event: Event,
    frame: OnceLock<Utf8Bytes>,
    /// For a fact, what the chat prints of it when a chat is subscribed ([`Hub::report`]).
    said: Vec<Said>,
}

impl Published {
    fn new(event: Event) -> Arc<Published> {
        Self::with(event, Vec::new())
    }

    fn with(event: Event, said: Vec<Said>) -> Arc<Published> {
        Arc::new(Published {
            event,
            frame: OnceLock::new(),
            said,
        })
    }

    pub(crate) fn event(&self) -> &Event {
        &self.event
    }

    /// What the chat prints of this fact (nothing for other events, or with no chat).
    pub(crate) fn said(&self) -> &[Said] {
        &self.said
    }

    /// The event's protocol frame.
    pub(crate) fn frame(&self) -> Utf8Bytes {
        self.frame
            .get_or_init(|| encode_event(&self.event).into())
            .clone()
    }
}

/// What a page needs when it connects: the events from now on, and the log and agents as
/// they are at that instant (taken together, so nothing falls between them).
pub(crate) struct Attached {
    pub events: broadcast::Receiver<Arc<Published>>,
    pub session: Event,
    pub agents: Event,
    /// What the run in flight has streamed so far and the questions it has open, if any.
    pub live: Vec<Event>,
}
