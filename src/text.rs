//! Character-boundary helpers: every cut in the core goes through here, so none splits a
//! UTF-8 character (DESIGN §9, §16).

/// The largest index `<= max` that is a char boundary of `s` (never splits UTF-8).
pub fn floor_char_boundary(s: &str, max: usize) -> usize {
    if max >= s.len() {
        return s.len();
    }
    // A UTF-8 char is at most 4 bytes, so at most 3 steps back.
    (max.saturating_sub(3)..=max)
        .rev()
        .find(|&i| s.is_char_boundary(i))
        .unwrap_or(0)
}
