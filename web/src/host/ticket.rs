//! A message handed to a host, named so the host can say when that one message is in the log
//! (docs/architecture.md §14b): a bridge stores it later, or refuses it with an error event.
//! Two messages with the same text are two tickets, so one is never taken for the other.

use std::cell::Cell;

/// One message handed to a host; see [`crate::host::Host::is_stored`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ticket(u64);

impl Ticket {
    /// A ticket no other message of this page holds.
    pub fn issue() -> Self {
        thread_local! {
            static LAST: Cell<u64> = const { Cell::new(0) };
        }
        Ticket(LAST.with(|last| {
            last.set(last.get() + 1);
            last.get()
        }))
    }
}
