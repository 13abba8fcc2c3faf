//! AI→AI deduplication (docs/architecture.md §7.3, §19 (seed 000 D3)).
//!
//! When the current message comes from an AI, the last history line may repeat it: drop it
//! when it is the current message itself (same id) or has the same speaker **id** and the same
//! stripped content (the peer compares names, so a human and an AI with one name dedupe each
//! other). Human messages are never deduplicated.

use crate::explain::DedupReason;
use crate::message::{Message, SpeakerKind};

/// Whether the last history line (`last`, with its stripped content) repeats `current`.
pub(crate) fn repeats_current(
    last: &Message,
    last_stripped: &str,
    current: &Message,
    current_stripped: &str,
) -> Option<DedupReason> {
    if current.speaker.kind != SpeakerKind::Ai || last.speaker.kind != SpeakerKind::Ai {
        return None;
    }
    if last.id == current.id {
        Some(DedupReason::SameId)
    } else if last.speaker.id == current.speaker.id && last_stripped == current_stripped {
        Some(DedupReason::SameSpeakerAndContent)
    } else {
        None
    }
}
