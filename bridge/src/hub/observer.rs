//! What a subscriber that keeps no session of its own (the terminal chat) is told of each
//! fact: computed on the actor's thread from the session just before and just after the fact,
//! and published with it (docs/architecture.md §14, "Memory"). The chat implements
//! [`Observer`]; the hub knows nothing of what it prints.

use agent_chatter::conversation::Action;
use agent_chatter::session::{Fact, Session};

/// One line the chat prints, on stdout or on stderr (warnings and errors), or the terminal's
/// bell, rung when a person is waited for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Said {
    Out(String),
    Err(String),
    Bell,
}

/// What an observer says of a fact once it is applied, given the fact, the session after it
/// and the actions it caused; made by [`Observer::before`] from the session before it.
pub(crate) type AfterFact = Box<dyn FnOnce(&Fact, &Session, &[Action]) -> Vec<Said>>;

/// A subscriber told what to make of each fact ([`Hub::report`](super::Hub::report)).
pub(crate) trait Observer: Send {
    /// Looks at the session just before a fact is applied, and returns what says of the fact
    /// once it is.
    fn before(&self, session: &Session) -> AfterFact;

    /// What it says of the actions pending when it subscribes (the notices of the team
    /// loaded).
    fn pending(&self, session: &Session, actions: &[Action]) -> Vec<Said>;
}
