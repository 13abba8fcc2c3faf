//! The wall clock: the one place the bridge reads the time. The core reads none; time enters
//! it with each fact (docs/architecture.md §6b).

use agent_chatter::message::Millis;

/// The wall clock in ms since the Unix epoch (0 before it).
pub fn now() -> Millis {
    Millis(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64),
    )
}
