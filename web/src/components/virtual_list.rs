//! A virtual list's arithmetic (docs/architecture.md §13): rows of different heights, each
//! placed at the sum of the heights before it, a row not yet measured counting as an
//! estimate; which rows are in the DOM for a scroll position; where to scroll to bring a row
//! into view. Pure functions over the measured heights, so the conversation's list
//! ([`crate::components::conversation::message_list`]) and the deliveries' keep only the DOM and the
//! signals.

use std::ops::Range;

/// Each row's top, and after the last one the list's whole height: `len + 1` offsets, row
/// `i` measured `heights[i]` or, past what was measured, `estimate`.
pub fn offsets(heights: &[f64], len: usize, estimate: f64) -> Vec<f64> {
    let mut offsets = Vec::with_capacity(len + 1);
    let mut y = 0.0;
    offsets.push(y);
    for i in 0..len {
        y += heights.get(i).copied().unwrap_or(estimate);
        offsets.push(y);
    }
    offsets
}

/// The list's whole height (the spacer's), from its [`offsets`].
pub fn total(offsets: &[f64]) -> f64 {
    offsets.last().copied().unwrap_or(0.0)
}

/// The rows in the DOM when the view shows `top..top + viewport`: those in view, and
/// `overscan` more above and below, so scrolling shows no gap.
pub fn visible(offsets: &[f64], top: f64, viewport: f64, overscan: usize) -> Range<usize> {
    let len = offsets.len().saturating_sub(1);
    let bottom = top + viewport;
    // The first row whose bottom is below the top of the view, the last whose top is above
    // its bottom.
    let first = offsets
        .partition_point(|&y| y <= top)
        .saturating_sub(1)
        .min(len);
    let last = offsets.partition_point(|&y| y < bottom).min(len);
    first.saturating_sub(overscan)..(last + overscan).min(len)
}

/// The rows in the DOM when every row is `row` tall, as [`visible`] (no offsets needed):
/// those the view `top..top + viewport` touches, and `overscan` more each side.
pub fn fixed(top: f64, viewport: f64, row: f64, overscan: usize, len: usize) -> Range<usize> {
    let first = (top / row).floor() as usize;
    let last = ((top + viewport) / row).ceil() as usize;
    first.saturating_sub(overscan).min(len)..(last + overscan).min(len)
}

/// Whether a row measured `measured` tall differs from what it counted as (`known`, else
/// `estimate`) by more than rounding: a row not laid out (0) says nothing.
pub fn moved(known: Option<f64>, measured: f64, estimate: f64) -> bool {
    measured > 0.0 && (measured - known.unwrap_or(estimate)).abs() > 0.5
}

/// Records measured heights (`(index, height)`), rows between the last measured one and a
/// new one counting as `estimate`.
pub fn record(heights: &mut Vec<f64>, measured: &[(usize, f64)], estimate: f64) {
    for &(index, height) in measured {
        if heights.len() <= index {
            heights.resize(index + 1, estimate);
        }
        heights[index] = height;
    }
}

/// Where to scroll so row `at` is in a view of `height` now at `view_top`: its top when it
/// starts above the view, its bottom (but never past its top) when it ends below; `None`
/// when it is in view.
pub fn reveal_scroll(offsets: &[f64], at: usize, view_top: f64, height: f64) -> Option<f64> {
    let top = offsets.get(at).copied().unwrap_or(0.0);
    let bottom = offsets.get(at + 1).copied().unwrap_or(top);
    if top < view_top - 1.0 {
        Some(top)
    } else if bottom > view_top + height + 1.0 {
        Some((bottom - height).min(top))
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_not_measured_count_as_the_estimate() {
        assert_eq!(
            offsets(&[10.0, 30.0], 4, 64.0),
            [0.0, 10.0, 40.0, 104.0, 168.0]
        );
        assert_eq!(offsets(&[], 0, 64.0), [0.0]);
        assert_eq!(total(&offsets(&[10.0], 2, 5.0)), 15.0);
        assert_eq!(total(&[]), 0.0);
    }

    #[test]
    fn the_rows_in_view_and_the_overscan_are_in_the_dom() {
        // Ten rows of 100: a view of 250 from 420 shows rows 4 to 6.
        let o = offsets(&[], 10, 100.0);
        assert_eq!(visible(&o, 420.0, 250.0, 0), 4..7);
        assert_eq!(visible(&o, 420.0, 250.0, 2), 2..9);
        // At the top and at the end the overscan stops at the list's edges.
        assert_eq!(visible(&o, 0.0, 250.0, 6), 0..9);
        assert_eq!(visible(&o, 900.0, 250.0, 6), 3..10);
        // A row's bottom on the view's top is out of view; so is a top on its bottom.
        assert_eq!(visible(&o, 400.0, 200.0, 0), 4..6);
    }

    #[test]
    fn an_empty_list_renders_nothing() {
        assert_eq!(visible(&offsets(&[], 0, 64.0), 0.0, 480.0, 6), 0..0);
    }

    #[test]
    fn a_height_moves_the_rows_after_it_only_past_rounding() {
        assert!(moved(Some(40.0), 41.0, 64.0));
        assert!(!moved(Some(40.0), 40.4, 64.0));
        assert!(moved(None, 40.0, 64.0));
        assert!(!moved(None, 64.0, 64.0));
        assert!(!moved(Some(40.0), 0.0, 64.0));
    }

    #[test]
    fn a_height_past_the_measured_ones_fills_the_gap_with_the_estimate() {
        let mut heights = vec![10.0];
        record(&mut heights, &[(3, 30.0), (0, 12.0)], 64.0);
        assert_eq!(heights, [12.0, 64.0, 64.0, 30.0]);
    }

    #[test]
    fn a_row_out_of_view_is_scrolled_to_by_its_nearer_edge() {
        let o = offsets(&[], 10, 100.0);
        // Above: its top; below: its bottom at the view's bottom; in view: nothing.
        assert_eq!(reveal_scroll(&o, 1, 450.0, 300.0), Some(100.0));
        assert_eq!(reveal_scroll(&o, 8, 450.0, 300.0), Some(600.0));
        assert_eq!(reveal_scroll(&o, 5, 450.0, 300.0), None);
        // A row taller than the view: its top.
        let tall = offsets(&[100.0, 900.0], 2, 100.0);
        assert_eq!(reveal_scroll(&tall, 1, 0.0, 300.0), Some(100.0));
    }

    #[test]
    fn rows_of_one_height_are_placed_without_offsets() {
        assert_eq!(fixed(0.0, 400.0, 26.0, 4, 100), 0..20);
        assert_eq!(fixed(260.0, 100.0, 26.0, 4, 12), 6..12);
        assert_eq!(fixed(0.0, 400.0, 26.0, 4, 0), 0..0);
    }
}
