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
/// (docs/architecture.md §19 (seed 002)). Messages at `withheld` (ascending; no prompt shows
/// them) are not counted: the range reaches back past them, and no omitted count holds them.
pub(super) fn select(current: usize, w: usize, pin_first: bool, withheld: &[usize]) -> Window {
    let within = |range: Range<usize>| {
        withheld.partition_point(|&p| p < range.end)
            - withheld.partition_point(|&p| p < range.start)
    };
    let mut start = current.saturating_sub(w);
    if w > 0 {
        loop {
            let reach = current.saturating_sub(w + within(start..current));
            if reach == start {
                break;
            }
            start = reach;
        }
    }
    if pin_first && w > 0 && start > 0 {
        Window {
            range: start..current,
            pinned: Some(0),
            omitted: start - 1 - within(1..start),
        }
    } else {
        Window {
            range: start..current,
            pinned: None,
            omitted: 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_withheld_message_is_not_counted_in_the_window_nor_in_the_omitted() {
        assert_eq!(select(10, 3, true, &[]), select(10, 3, true, &[10, 11]));
        let w = select(10, 3, true, &[2]);
        assert_eq!((w.range, w.pinned, w.omitted), (7..10, Some(0), 5));
        let w = select(10, 3, true, &[4, 8]);
        assert_eq!((w.range, w.pinned, w.omitted), (6..10, Some(0), 4));
        let w = select(10, 3, true, &[7, 8, 9]);
        assert_eq!((w.range, w.pinned, w.omitted), (4..10, Some(0), 3));
        assert_eq!(select(3, 5, false, &[1]).range, 0..3);
    }
}
