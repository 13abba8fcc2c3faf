//! Internals the crate's own integration tests (`tests/`, docs/architecture.md §15) check
//! directly: the budget's cut and note (§9), AI→AI deduplication (§7.3), the related-context
//! summary (§7), the fuzzy identifier form (§5) and the token estimate (§9); and the team the
//! session tests share, so the unit tests and `tests/` build it once.
//!
//! Only with the `testing` feature, which the crate's dev-dependency on itself turns on, or in
//! the crate's own unit tests: not part of the API, and never in a host's build. Each internal
//! forwards to the one the pipeline uses.

use crate::explain::DedupReason;
use crate::message::Message;
use crate::team::Team;

/// The crew the session tests talk with: Kailai (human) and Max (claude), Sarah (codex) and
/// Bob (gemini), each with a display name that differs from its id.
pub fn crew() -> Team {
    crate::config::load_team(
        r#"{"name": "Crew", "members": [
        {"name": "kailai", "displayName": "Kailai", "kind": "human"},
        {"name": "max", "displayName": "Max", "kind": "ai", "agentType": "claude"},
        {"name": "sarah", "displayName": "Sarah", "kind": "ai", "agentType": "codex"},
        {"name": "bob", "displayName": "Bob", "kind": "ai", "agentType": "gemini"}]}"#,
    )
    .expect("a valid team")
}

/// The visible note that ends a cut body ([`cut_with_note`]).
pub fn truncation_note(removed: usize) -> String {
    crate::budget::truncation_note(removed)
}

/// Cuts `text` so that it plus its truncation note fit in `max` bytes. `None` when not even
/// the note fits.
pub fn cut_with_note(text: &str, max: usize) -> Option<String> {
    crate::budget::cut_with_note(text, max)
}

/// The highest byte count whose status is still `Ok` (just under the 75% warning line).
pub fn headroom_target(max_bytes: usize) -> usize {
    crate::budget::headroom_target(max_bytes)
}

/// Whether the last history line (`last`, with its stripped content) repeats `current`.
pub fn repeats_current(
    last: &Message,
    last_stripped: &str,
    current: &Message,
    current_stripped: &str,
) -> Option<DedupReason> {
    crate::context::dedup::repeats_current(last, last_stripped, current, current_stripped)
}

/// A sibling answer as shown in related context (code blocks omitted, capped).
pub fn summarize_related(stripped: &str) -> String {
    crate::context::route::summarize_related(stripped)
}

/// The fuzzy identifier form names are compared in (lowercase, no whitespace, `-` or `_`).
pub fn normalize_identifier(s: &str) -> String {
    crate::markers::normalize_identifier(s)
}

/// Estimated tokens of `text`: one per four characters, rounded up.
pub fn estimate_chars_div4(text: &str) -> usize {
    crate::tokens::estimate_chars_div4(text)
}
