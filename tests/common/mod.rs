//! Shared builders for the core's integration tests.
#![allow(dead_code)]

use agent_chatter::context::{BuildSettings, Prompt, Recipient, Store, Target, TokenEstimator};
use agent_chatter::message::{MessageId, Millis, Routing, Speaker, SpeakerKind};
use agent_chatter::team::{CompactionStrategy, DeliveryPolicy};

pub fn human(id: &str) -> Speaker {
    Speaker {
        id: id.into(),
        name: id.into(),
        display_name: id.into(),
        kind: SpeakerKind::Human,
    }
}

pub fn ai(id: &str) -> Speaker {
    Speaker {
        id: id.into(),
        name: id.into(),
        display_name: id.into(),
        kind: SpeakerKind::Ai,
    }
}

/// Routing addressed to `names` (resolved ids = names).
pub fn to(names: &[&str]) -> Routing {
    Routing {
        resolved: names.iter().map(|s| s.to_string()).collect(),
        resolved_names: names.iter().map(|s| s.to_string()).collect(),
        ..Routing::default()
    }
}

pub fn answer_to(parent: &str) -> Routing {
    Routing {
        parent: Some(MessageId(parent.into())),
        ..Routing::default()
    }
}

/// Pushes messages (speaker, content, routing) in order and returns the store.
pub fn store_of<S: Into<String>>(
    messages: impl IntoIterator<Item = (Speaker, S, Routing)>,
) -> Store {
    let mut store = Store::new();
    for (i, (speaker, content, routing)) in messages.into_iter().enumerate() {
        store.push(speaker, content.into(), routing, Millis(i as u64));
    }
    store
}

pub fn settings(window: usize, max_bytes: usize) -> BuildSettings {
    BuildSettings {
        window,
        pin_first: false,
        max_bytes,
        delivery: DeliveryPolicy::Latest,
        compaction: CompactionStrategy::Lazy,
        tokens: TokenEstimator::None,
        max_tokens: None,
    }
}

pub fn recipient(id: &str, agent_type: &str) -> Recipient {
    Recipient {
        id: id.into(),
        agent_type: agent_type.into(),
        ..Recipient::default()
    }
}

/// The prompt for `recipient` with the latest message as current.
pub fn latest_prompt(store: &Store, recipient: &Recipient, settings: &BuildSettings) -> Prompt {
    let current = store.latest().expect("store has messages").id.clone();
    agent_chatter::context::build(
        store,
        recipient,
        &Target {
            current,
            parent: None,
        },
        settings,
    )
    .expect("build")
}

/// The prompt for a routed delivery: message `current` as `[MESSAGE]`, addressed by `parent`
/// (1-based message numbers, as in `msg-N`).
pub fn routed_prompt(
    store: &Store,
    recipient: &Recipient,
    current: u64,
    parent: u64,
    settings: &BuildSettings,
) -> Prompt {
    let target = Target {
        current: id(current),
        parent: Some(id(parent)),
    };
    agent_chatter::context::build(store, recipient, &target, settings).expect("build")
}

pub fn id(n: u64) -> MessageId {
    MessageId::from_seq(n)
}
