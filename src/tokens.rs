//! Token estimates (seed 002): `ceil(chars / 4)`.

/// Estimated tokens of `text`: one per four characters, rounded up.
pub fn estimate_chars_div4(text: &str) -> usize {
    text.chars().count().div_ceil(4)
}
