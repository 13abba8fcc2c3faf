//! How full an AI member's context window is, as its agent last said (`context-meter`, DESIGN
//! §14d): a bar with `used` of `size` tokens, and the numbers in words for screen readers.

use leptos::prelude::*;

#[component]
pub fn ContextMeter(
    /// The last fill the member's agent reported: `used` of `size` tokens.
    #[prop(into)]
    fill: Signal<Option<(u64, u64)>>,
) -> impl IntoView {
    move || {
        fill.get().map(|(used, size)| {
            let words = meter_words(used, size);
            view! {
                <div class="context-meter" data-testid="context-meter" title=words.clone()>
                    <span class="muted" aria-hidden="true">"context "</span>
                    <meter min="0" max=size.to_string() value=used.min(size).to_string()
                        aria-label=words.clone()></meter>
                    <span class="muted" aria-hidden="true">{format!(" {} %", percent(used, size))}</span>
                </div>
            }
        })
    }
}

/// `context 1 200 of 200 000 tokens (1 %)`.
pub fn meter_words(used: u64, size: u64) -> String {
    format!(
        "context {} of {} tokens ({} %)",
        grouped(used),
        grouped(size),
        percent(used, size)
    )
}

/// `used` of `size` in whole percent, rounded.
fn percent(used: u64, size: u64) -> u64 {
    if size == 0 {
        return 0;
    }
    (used.saturating_mul(100) + size / 2) / size
}

/// Digits in groups of three, spaced: `200 000`.
fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(' ');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::meter_words;

    #[test]
    fn the_meter_says_its_numbers_in_words() {
        assert_eq!(
            meter_words(1200, 200_000),
            "context 1 200 of 200 000 tokens (1 %)"
        );
        assert_eq!(meter_words(0, 0), "context 0 of 0 tokens (0 %)");
        assert_eq!(meter_words(150, 200), "context 150 of 200 tokens (75 %)");
    }
}
