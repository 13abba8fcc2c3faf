//! History window (docs/architecture.md §7.1, §19 (seed 002) pin-first).

use std::ops::Range;

/// Which stored messages before the current one are history.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Window {
    /// Positions of the window, oldest first; ends right before the current message.
    pub range: Range<usize>,
    /// Pin-first: position 0, shown before the window when it fell out of it.
    pub pinned: Option<usize>,
    /// Messages skipped between the pinned one and the window.
    pub omitted: usize,
}

/// The `w` messages before position `current`; `w = 0` gives none. With `pin_first`, the first
/// message is kept when it falls out, and the skipped ones are counted
/// (docs/architecture.md §19 (seed 002)).
pub(super) fn select(current: usize, w: usize, pin_first: bool) -> Window {
    let start = current.saturating_sub(w);
    if pin_first && w > 0 && start > 0 {
        Window {
            range: start..current,
            pinned: Some(0),
            omitted: start - 1,
        }
    } else {
        Window {
            range: start..current,
            pinned: None,
            omitted: 0,
        }
    }
}
