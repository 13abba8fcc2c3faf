//! A failure's reason as recorded: bounded in size, durations in exact words.

use std::time::Duration;

/// The longest failure reason recorded (an agent's own error text can be megabytes).
pub(crate) const MAX_REASON: usize = 4 * 1024;

/// A failure reason of at most [`MAX_REASON`] bytes, cut at a character boundary.
pub(crate) fn cap(reason: String) -> String {
    cap_to(reason, MAX_REASON)
}

/// `text` cut to about `max` bytes at a character boundary, saying how much was left out.
pub(crate) fn cap_to(text: String, max: usize) -> String {
    if text.len() <= max {
        return text;
    }
    let end = agent_chatter::text::floor_char_boundary(&text, max);
    format!("{} … ({} more bytes)", &text[..end], text.len() - end)
}

/// `300 ms`, `1.5 s`, `30 s`, `30 min`: exact, so a timeout set to 1500 ms never reads `1 s`.
pub(crate) fn human(d: Duration) -> String {
    let ms = d.as_millis();
    match (ms / 1000, ms % 1000) {
        (0, _) => format!("{ms} ms"),
        (s, 0) if s % 60 == 0 => format!("{} min", s / 60),
        (s, 0) => format!("{s} s"),
        (s, rest) => format!("{}.{} s", s, format!("{rest:03}").trim_end_matches('0')),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_exactly() {
        for (ms, want) in [
            (300, "300 ms"),
            (1500, "1.5 s"),
            (1250, "1.25 s"),
            (30_000, "30 s"),
            (1_800_000, "30 min"),
            (90_000, "90 s"),
        ] {
            assert_eq!(human(Duration::from_millis(ms)), want);
        }
    }
}
