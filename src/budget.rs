//! Byte budget: trim in the order of DESIGN §9 so `prompt + system_flag <= max_bytes`, always.

/// The largest index `<= max` that is a char boundary of `s` (never splits UTF-8).
pub fn floor_char_boundary(s: &str, max: usize) -> usize {
    if max >= s.len() {
        return s.len();
    }
    // A UTF-8 char is at most 4 bytes, so at most 3 steps back.
    (max.saturating_sub(3)..=max).rev().find(|&i| s.is_char_boundary(i)).unwrap_or(0)
}
