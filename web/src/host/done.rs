//! What the host did at the user's request, as it did it (docs/architecture.md §13): a file
//! opened, a session forked. The header's status line (`happened`) says it; the host sets it
//! when the act is done (page alone, at once; a bridge, on its answer), so nothing is guessed
//! from a session's name or from how soon a change followed a click.

/// One act the host performed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Done {
    /// A file opened: its name, the members and messages of what it opened, and whether it
    /// opened as a new session beside the one shown (which stays as it was).
    Opened {
        name: String,
        members: usize,
        messages: usize,
        beside: bool,
    },
    /// A fork at message number `at` into the new session `into`, from session `from` (when it
    /// had an id), which is unchanged.
    Forked {
        at: u64,
        into: i64,
        from: Option<i64>,
    },
}
