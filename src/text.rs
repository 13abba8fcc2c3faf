//! Character-boundary helpers: every cut in the core goes through here, so none splits a
//! UTF-8 character (docs/architecture.md §9, §16).

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

/// Whether `s` holds U+FFFD: a text that JS's `TextEncoder.encodeInto` wrote can have had a
/// lone surrogate only then (it writes each as U+FFFD). A SIMD substring search, so the
/// common answer (no) costs far less than JS checking its string for lone surrogates.
pub fn holds_replacement_char(s: &str) -> bool {
    memchr::memmem::find(s.as_bytes(), "\u{FFFD}".as_bytes()).is_some()
}

/// Where `piece` lies in `whole`, when it is a slice of it (as a borrowed strip is): the byte
/// range, found from the two addresses; `None` for a string held elsewhere.
pub fn range_within(whole: &str, piece: &str) -> Option<std::ops::Range<usize>> {
    let start = (piece.as_ptr() as usize).checked_sub(whole.as_ptr() as usize)?;
    let range = start..start.checked_add(piece.len())?;
    whole.get(range.clone()).map(|_| range)
}

/// Characters an agent reads but a screen does not show, or shows moved: Unicode tags
/// (U+E0000–U+E007F, text that renders as nothing), bidirectional controls (they reorder
/// what is shown, `\u{202E}0001$` reads as `$1000`), and zero-width characters other than the
/// joiner emoji sequences need. A page that shows "exactly what the agent is told" says when a
/// prompt holds some.
pub(crate) fn is_hidden(c: char) -> bool {
    matches!(c,
        '\u{E0000}'..='\u{E007F}'
        | '\u{061C}' | '\u{200E}' | '\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}'
        | '\u{200B}' | '\u{200C}' | '\u{2060}' | '\u{FEFF}')
}

/// How many hidden (`is_hidden`) characters `s` holds, and the first one with its byte offset.
pub fn hidden_chars(s: &str) -> (usize, Option<(usize, char)>) {
    let mut hidden = s.char_indices().filter(|&(_, c)| is_hidden(c));
    match hidden.next() {
        Some(first) => (1 + hidden.count(), Some(first)),
        None => (0, None),
    }
}

/// Whether `a` and `b` are at most one edit apart: one character replaced, added or removed,
/// or two neighbours swapped (a Damerau–Levenshtein distance of at most 1; strsim's is the
/// oracle in the tests). Written out for the near-miss check of config keys: strsim's
/// general distance there added 1.9 KB gzipped to the npm package's wasm.
pub(crate) fn within_one_edit(a: &str, b: &str) -> bool {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let (short, long) = if a.len() <= b.len() {
        (&a, &b)
    } else {
        (&b, &a)
    };
    if long.len() - short.len() > 1 {
        return false;
    }
    let same = short
        .iter()
        .zip(long.iter())
        .take_while(|(x, y)| x == y)
        .count();
    if short.len() < long.len() {
        return short[same..] == long[same + 1..];
    }
    let rest_from = |i: usize| short.get(i..) == long.get(i..);
    same == short.len()
        || rest_from(same + 1)
        || (same + 1 < short.len()
            && short[same] == long[same + 1]
            && short[same + 1] == long[same]
            && rest_from(same + 2))
}

#[cfg(test)]
mod tests {
    use super::{hidden_chars, range_within};

    #[test]
    fn hidden_characters_are_counted_and_the_first_is_located() {
        assert_eq!(
            hidden_chars("plain text, emoji 👨\u{200D}👩 and é"),
            (0, None)
        );
        assert_eq!(
            hidden_chars("ok\u{E0020}\u{E0072}m \u{202E}1$"),
            (3, Some((2, '\u{E0020}')))
        );
        assert_eq!(
            hidden_chars("\u{FEFF}x\u{200B}"),
            (2, Some((0, '\u{FEFF}')))
        );
    }

    #[test]
    fn a_slice_is_found_where_it_lies_and_a_copy_is_not() {
        let whole = "héllo world";
        assert_eq!(range_within(whole, &whole[7..]), Some(7..12));
        assert_eq!(range_within(whole, &whole[..0]), Some(0..0));
        assert_eq!(range_within(whole, &String::from("world")), None);
    }

    proptest::proptest! {
        #[test]
        fn within_one_edit_is_a_damerau_levenshtein_distance_of_at_most_one(
            a in "[abc]{0,6}",
            b in "[abc]{0,6}",
        ) {
            proptest::prop_assert_eq!(
                super::within_one_edit(&a, &b),
                strsim::damerau_levenshtein(&a, &b) <= 1,
                "{:?} and {:?}", a, b
            );
        }
    }
}
