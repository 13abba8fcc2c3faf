//! Shared support for the core's integration tests (docs/architecture.md §2, §15): builders
//! for speakers, members, stores, settings and prompts, and the harness for the conversation
//! state machine, in the spirit of quinn's `Pair` and str0m's `progress()`: agents' replies are
//! scripted per member, `drive` drains actions until the machine is idle (with a step bound
//! that panics on livelock), and every action is recorded for assertions.

#![allow(dead_code)]

use std::collections::{HashMap, VecDeque};
use std::path::Path;

use agent_chatter::context::{BuildSettings, Prompt, Recipient, Store, Target, TokenEstimator};
use agent_chatter::conversation::{Action, Conversation, Delivery, HumanInput, InputError, Notice};
use agent_chatter::message::{Message, MessageId, Millis, Routing, Speaker, SpeakerKind};
use agent_chatter::team::{CompactionStrategy, DeliveryPolicy, Member, MemberKind, Team};

/// Loads a team from `tests/fixtures/conversation/<name>`.
pub fn team(name: &str) -> Team {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/conversation")
        .join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// An AI member (id = name = display name) with a known agent type.
pub fn ai_member(id: &str) -> Member {
    Member {
        id: id.to_string(),
        name: id.to_string(),
        display_name: id.to_string(),
        kind: MemberKind::Ai,
        agent_type: Some("claude-code".to_string()),
        system_instruction: None,
        instruction_file: None,
        instruction_file_text: None,
        base_dir: None,
        window_size: None,
        run: Default::default(),
        extra_sections: Vec::new(),
    }
}

/// The speaker of [`ai_member`]`(id)`.
pub fn ai(id: &str) -> Speaker {
    ai_member(id).speaker()
}

/// A human speaker (id = name = display name).
pub fn human(id: &str) -> Speaker {
    Speaker {
        id: id.into(),
        name: id.into(),
        display_name: id.into(),
        kind: SpeakerKind::Human,
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

/// What a scripted agent does when it receives a delivery.
#[derive(Debug, Clone)]
pub enum Script {
    Reply(String),
    Fail(String),
    /// Replies this text to every delivery, forever.
    Always(String),
}

/// Drives a [`Conversation`] with scripted agents and records every action.
pub struct Harness {
    pub conv: Conversation,
    scripts: HashMap<String, VecDeque<Script>>,
    /// Every action drained, in order.
    pub log: Vec<Action>,
    /// Deliveries received by each agent, in order (also in `log`).
    pub now: u64,
    /// Bound on actions drained by one `drive` (livelock guard).
    pub max_steps: usize,
}

impl Harness {
    pub fn new(team: Team) -> Self {
        Harness {
            conv: Conversation::with_team(team),
            scripts: HashMap::new(),
            log: Vec::new(),
            now: 0,
            max_steps: 10_000,
        }
    }

    /// Queues `text` as `member`'s next reply.
    pub fn reply(&mut self, member: &str, text: &str) -> &mut Self {
        self.push(member, Script::Reply(text.to_string()))
    }

    /// `member`'s next delivery fails with `reason`.
    pub fn fail(&mut self, member: &str, reason: &str) -> &mut Self {
        self.push(member, Script::Fail(reason.to_string()))
    }

    /// `member` answers every delivery with `text`.
    pub fn always(&mut self, member: &str, text: &str) -> &mut Self {
        self.push(member, Script::Always(text.to_string()))
    }

    fn push(&mut self, member: &str, script: Script) -> &mut Self {
        self.scripts
            .entry(member.to_string())
            .or_default()
            .push_back(script);
        self
    }

    fn tick(&mut self) -> Millis {
        self.now += 1;
        Millis(self.now)
    }

    /// A human types `text` (sender resolved by the machine); then drives until idle.
    pub fn say(&mut self, text: &str) -> Result<MessageId, InputError> {
        let at = self.tick();
        let id = self.conv.handle_human_input(HumanInput::text(text), at)?;
        self.drive();
        Ok(id)
    }

    /// Human `sender` (explicit id) types `text`; then drives until idle.
    pub fn say_as(&mut self, sender: &str, text: &str) -> Result<MessageId, InputError> {
        let at = self.tick();
        let id = self
            .conv
            .handle_human_input(HumanInput::from(sender, text), at)?;
        self.drive();
        Ok(id)
    }

    /// Drains actions; a delivery to an agent with a script is answered at once, one without
    /// stays in flight. Panics after `max_steps` actions (livelock).
    pub fn drive(&mut self) {
        let mut steps = 0;
        while let Some(action) = self.conv.poll_action() {
            steps += 1;
            assert!(
                steps <= self.max_steps,
                "no idle after {} actions: livelock",
                self.max_steps
            );
            self.log.push(action.clone());
            let Action::Deliver(d) = action else { continue };
            let script = match self.scripts.get_mut(&d.to) {
                Some(q) => match q.front() {
                    Some(Script::Always(t)) => Some(Script::Always(t.clone())),
                    Some(_) => q.pop_front(),
                    None => None,
                },
                None => None,
            };
            let at = self.tick();
            match script {
                Some(Script::Reply(text)) | Some(Script::Always(text)) => {
                    self.conv
                        .handle_agent_replied(&d.to, text, at)
                        .expect("in-flight reply accepted");
                }
                Some(Script::Fail(reason)) => {
                    self.conv
                        .handle_agent_failed(&d.to, reason, at)
                        .expect("in-flight failure accepted");
                }
                None => {}
            }
        }
    }

    /// Answers the in-flight delivery by hand (for agents left without a script).
    pub fn answer(&mut self, member: &str, text: &str) -> Result<MessageId, InputError> {
        let at = self.tick();
        let id = self
            .conv
            .handle_agent_replied(member, text.to_string(), at)?;
        self.drive();
        Ok(id)
    }

    pub fn deliveries(&self) -> Vec<&Delivery> {
        self.log
            .iter()
            .filter_map(|a| match a {
                Action::Deliver(d) => Some(&**d),
                _ => None,
            })
            .collect()
    }

    /// Who received deliveries, in order.
    pub fn delivered_to(&self) -> Vec<&str> {
        self.deliveries().iter().map(|d| d.to.as_str()).collect()
    }

    pub fn notices(&self) -> Vec<&Notice> {
        self.log
            .iter()
            .filter_map(|a| match a {
                Action::Notice(n) => Some(n),
                _ => None,
            })
            .collect()
    }

    /// Humans awaited, in order.
    pub fn awaited(&self) -> Vec<&str> {
        self.log
            .iter()
            .filter_map(|a| match a {
                Action::AwaitHuman { member } => Some(member.as_str()),
                _ => None,
            })
            .collect()
    }

    pub fn finished_count(&self) -> usize {
        self.log
            .iter()
            .filter(|a| matches!(a, Action::Finished))
            .count()
    }

    /// The actions logged so far, then clears the log.
    pub fn take_log(&mut self) -> Vec<Action> {
        std::mem::take(&mut self.log)
    }

    pub fn message(&self, id: &MessageId) -> &Message {
        self.conv
            .store()
            .get(id)
            .unwrap_or_else(|| panic!("{id} not stored"))
    }

    /// The raw content of the message each delivery showed as `[MESSAGE]`.
    pub fn delivered_messages(&self) -> Vec<(&str, &str)> {
        self.deliveries()
            .iter()
            .map(|d| (d.to.as_str(), self.message(&d.message).content.as_str()))
            .collect()
    }

    /// Stored messages as (speaker id, raw content).
    pub fn transcript(&self) -> Vec<(&str, &str)> {
        self.conv
            .store()
            .messages()
            .iter()
            .map(|m| (m.speaker.id.as_str(), m.content.as_str()))
            .collect()
    }
}
