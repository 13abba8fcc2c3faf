//! What the page keeps of a running agent's streamed output (`output` events, docs/architecture.md
//! §14b): its last [`KEPT_OUTPUT_BYTES`], cut at a character boundary, and how many bytes came
//! before them. An agent may print hundreds of megabytes; the page shows the end of it, says
//! that earlier output was cut, and holds no more than this however long the run. Dropped
//! when the run ends (the bridge's next fact), as before.

/// How much of a run's streamed output the page keeps: its last MiB.
pub const KEPT_OUTPUT_BYTES: usize = 1 << 20;

/// Appends `delta` to the output `kept`, then drops from its front what passes
/// [`KEPT_OUTPUT_BYTES`], at the first character boundary that leaves at most that many
/// bytes; returns how many bytes of output were dropped by this push.
pub fn push_kept(kept: &mut String, delta: &str) -> usize {
    let over = (kept.len() + delta.len()).saturating_sub(KEPT_OUTPUT_BYTES);
    if over >= kept.len() {
        // Nothing kept so far survives: the end of `delta` alone (never copying more of it
        // than is kept).
        let cut = ceil_char_boundary(delta, over - kept.len());
        let dropped = kept.len() + cut;
        kept.clear();
        kept.push_str(&delta[cut..]);
        return dropped;
    }
    let cut = ceil_char_boundary(kept, over);
    kept.drain(..cut);
    kept.push_str(delta);
    cut
}

/// What the view says above the output once `dropped` bytes of its start were dropped.
pub fn cut_note(dropped: u64) -> Option<String> {
    (dropped > 0).then(|| {
        let dropped = dropped as f64;
        let size = if dropped < 1024.0 * 1024.0 {
            format!("{:.0} KiB", (dropped / 1024.0).ceil())
        } else {
            format!("{:.1} MiB", dropped / (1024.0 * 1024.0))
        };
        format!(
            "earlier output cut: the page keeps a run's last {} MiB; {size} before it not shown",
            KEPT_OUTPUT_BYTES >> 20
        )
    })
}

/// The smallest index `>= at` that is a char boundary of `s` (never splits UTF-8).
fn ceil_char_boundary(s: &str, at: usize) -> usize {
    (at..s.len())
        .find(|&i| s.is_char_boundary(i))
        .unwrap_or(s.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `deltas` streamed in turn: what is kept and how many bytes were dropped in all.
    fn stream<'a>(deltas: impl IntoIterator<Item = &'a str>) -> (String, usize) {
        let mut kept = String::new();
        let dropped = deltas.into_iter().map(|d| push_kept(&mut kept, d)).sum();
        (kept, dropped)
    }

    #[test]
    fn output_under_the_limit_is_kept_whole() {
        assert_eq!(stream(["hello ", "world"]), ("hello world".to_string(), 0));
        assert_eq!(cut_note(0), None);
    }

    #[test]
    fn a_long_output_keeps_its_last_mib_and_counts_what_was_dropped() {
        let line = "x".repeat(1000) + "\n";
        let deltas = std::iter::once("HEAD ")
            .chain(std::iter::repeat_n(line.as_str(), 3000))
            .chain(["TAIL"]);
        let (kept, dropped) = stream(deltas);
        let total = 5 + 3000 * line.len() + 4;
        assert_eq!(kept.len(), KEPT_OUTPUT_BYTES);
        assert!(kept.ends_with("xxx\nTAIL"));
        assert!(!kept.contains("HEAD"));
        assert_eq!(dropped, total - KEPT_OUTPUT_BYTES);
    }

    #[test]
    fn one_delta_longer_than_the_limit_keeps_its_own_end() {
        let big = "a".repeat(KEPT_OUTPUT_BYTES + 10) + "END";
        let (kept, dropped) = stream(["before", &big]);
        assert_eq!(kept.len(), KEPT_OUTPUT_BYTES);
        assert!(kept.ends_with("aEND"));
        assert_eq!(dropped, 6 + 13);
    }

    #[test]
    fn the_cut_never_splits_a_character() {
        // "é" is two bytes, "€" three, "𝄞" four: every cut lands inside one of them somewhere.
        for (ch, pad) in [("é", 0), ("é", 1), ("€", 0), ("€", 1), ("€", 2), ("𝄞", 3)] {
            let mut kept = "-".repeat(pad);
            let (mut pushed, mut dropped) = (pad, 0);
            let piece = ch.repeat(1000);
            while pushed < 3 * KEPT_OUTPUT_BYTES {
                dropped += push_kept(&mut kept, &piece);
                pushed += piece.len();
            }
            assert!(kept.len() <= KEPT_OUTPUT_BYTES, "{ch} {pad}");
            assert!(kept.len() > KEPT_OUTPUT_BYTES - 4, "{ch} {pad}");
            assert!(kept.chars().all(|c| c.to_string() == ch), "{ch} {pad}");
            assert_eq!(dropped + kept.len(), pushed, "{ch} {pad}");
        }
    }

    #[test]
    fn the_note_says_how_much_came_before() {
        assert_eq!(
            cut_note(100).as_deref(),
            Some(
                "earlier output cut: the page keeps a run's last 1 MiB; 1 KiB before it not shown"
            )
        );
        assert_eq!(
            cut_note(3 << 20).as_deref(),
            Some("earlier output cut: the page keeps a run's last 1 MiB; 3.0 MiB before it not shown")
        );
    }
}
