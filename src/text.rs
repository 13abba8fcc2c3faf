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

/// Where `piece` lies in `whole`, when it is a slice of it (as a borrowed strip is): the byte
/// range, found from the two addresses; `None` for a string held elsewhere.
pub fn range_within(whole: &str, piece: &str) -> Option<std::ops::Range<usize>> {
    let start = (piece.as_ptr() as usize).checked_sub(whole.as_ptr() as usize)?;
    let range = start..start.checked_add(piece.len())?;
    whole.get(range.clone()).map(|_| range)
}

#[cfg(test)]
mod tests {
    use super::range_within;

    #[test]
    fn a_slice_is_found_where_it_lies_and_a_copy_is_not() {
        let whole = "héllo world";
        assert_eq!(range_within(whole, &whole[7..]), Some(7..12));
        assert_eq!(range_within(whole, &whole[..0]), Some(0..0));
        assert_eq!(range_within(whole, &String::from("world")), None);
    }
}
