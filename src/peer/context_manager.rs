//! `ContextManager`: the docs/architecture.md §19 (seed 001) API (the TypeScript peer's class) over
//! the same pipeline the conversation uses, so code written against the peer can switch to this
//! engine.
//!
//! Deliberate differences (docs/architecture.md §12): window 0 gives no history; Claude's system
//! part is in the flag only; markers are stripped by the rules of §5; the budget is a hard bound.

use serde::{Deserialize, Serialize};

use crate::assemble::AssemblerInput;
use crate::budget::Budget;
use crate::context::{
    build_as_of, gather_as_of, AsOf, BuildSettings, Prompt, Recipient, Store, Target,
    TeamTaskTruncated, TokenEstimator,
};
use crate::explain::Fate;
use crate::message::{Message, Millis, Routing, Speaker, MAX_MESSAGE_BYTES};
use crate::team::{
    prompt_format, CompactionStrategy, DeliveryPolicy, DEFAULT_MAX_BYTES, DEFAULT_WINDOW_SIZE,
};

/// Constructor options (docs/architecture.md §19 (seed 001) `ContextManagerOptions`, hooks
/// excepted: the host calls its own hooks after each call).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ManagerOptions {
    pub context_window_size: usize,
    pub max_bytes: usize,
}

impl Default for ManagerOptions {
    fn default() -> Self {
        ManagerOptions {
            context_window_size: DEFAULT_WINDOW_SIZE,
            max_bytes: DEFAULT_MAX_BYTES,
        }
    }
}

/// Per-call options of [`ContextManager::context_for_agent`] (`getContextForAgent`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "ts", ts(optional_fields))]
pub struct AgentContextOptions {
    pub window_size_override: Option<usize>,
    /// A string, or lines: blank ones dropped, joined with `\n`, the whole trimmed
    /// (docs/architecture.md §4; the peer also trims each line).
    #[cfg_attr(feature = "ts", ts(type = "string | string[]", optional))]
    pub system_instruction: Option<String>,
    pub instruction_file_text: Option<String>,
}

/// Why a message was refused (nothing is stored).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AddMessageError {
    #[error("speaker.id: missing (every message needs the id of the member who sent it)")]
    MissingSpeakerId,
    #[error("content: over the 1 MiB limit ({limit} bytes), found {bytes} bytes")]
    TooLarge { bytes: usize, limit: usize },
}

/// A prompt was asked for messages this manager does not hold (see
/// [`ContextManager::restart_at`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("messages {needed:?} are needed for this prompt; the manager holds {held:?}")]
pub struct NotHeld {
    pub needed: std::ops::Range<usize>,
    pub held: std::ops::Range<usize>,
}

/// Message store + team task + prompt building, the peer's way.
///
/// A host that keeps the messages itself (the npm package keeps them in JS, as the peer does)
/// may mirror only the suffix its prompts read: [`Self::restart_at`] drops the held messages
/// and holds from a given position on. Positions in inputs and explains stay those of the
/// whole conversation.
#[derive(Debug, Clone, PartialEq)]
pub struct ContextManager {
    store: Store,
    options: ManagerOptions,
    /// Position in the whole conversation of the first held message.
    first_index: usize,
}

impl Default for ContextManager {
    fn default() -> Self {
        Self::new(ManagerOptions::default())
    }
}

impl ContextManager {
    pub fn new(options: ManagerOptions) -> Self {
        ContextManager {
            store: Store::new(),
            options,
            first_index: 0,
        }
    }

    /// Position of the first held message (0 unless [`Self::restart_at`] moved it).
    pub fn first_index(&self) -> usize {
        self.first_index
    }

    /// One past the position of the last held message.
    pub fn end_index(&self) -> usize {
        self.first_index + self.store.len()
    }

    /// Drops the held messages and holds from position `first_index` on (the next message
    /// added is that one); the team task stays.
    pub fn restart_at(&mut self, first_index: usize) {
        let task = self.store.team_task().map(str::to_string);
        self.store.clear();
        self.store.set_team_task(task.as_deref());
        self.first_index = first_index;
    }

    /// The window in force: `window_override`, else the manager's.
    pub fn window(&self, window_override: Option<usize>) -> usize {
        window_override.unwrap_or(self.options.context_window_size)
    }

    /// The positions a prompt for the first `end` messages reads with `window`: the current
    /// message `end - 1` and the `window` before it.
    pub fn needed(end: usize, window: usize) -> std::ops::Range<usize> {
        end.saturating_sub(1).saturating_sub(window)..end
    }
    pub fn options(&self) -> ManagerOptions {
        self.options
    }

    /// Validates and stores a message under the next `msg-N` id.
    pub fn add_message(
        &mut self,
        speaker: Speaker,
        content: String,
        routing: Routing,
        at: Millis,
    ) -> Result<&Message, AddMessageError> {
        if speaker.id.trim().is_empty() {
            return Err(AddMessageError::MissingSpeakerId);
        }
        if content.len() > MAX_MESSAGE_BYTES {
            return Err(AddMessageError::TooLarge {
                bytes: content.len(),
                limit: MAX_MESSAGE_BYTES,
            });
        }
        Ok(self.store.push(speaker, content, routing, at))
    }

    pub fn messages(&self) -> &[Message] {
        self.store.messages()
    }

    pub fn latest(&self) -> Option<&Message> {
        self.store.latest()
    }

    /// Sets the team task, capped at 5 KiB (an empty task clears it).
    pub fn set_team_task(&mut self, task: &str) -> Option<TeamTaskTruncated> {
        self.store.set_team_task(Some(task))
    }

    pub fn team_task(&self) -> Option<&str> {
        self.store.team_task()
    }

    pub fn clear(&mut self) {
        self.store.clear();
    }

    pub fn store(&self) -> &Store {
        &self.store
    }

    /// Mutable store, for snapshot import (which validates before replacing).
    pub fn store_mut(&mut self) -> &mut Store {
        &mut self.store
    }

    /// The assembler input for `agent_id`: the latest message as current, the window before
    /// it (stripped, AI→AI deduplicated), the team task and the agent's instructions.
    ///
    /// `agent_type` is not used (as in the peer: the format is chosen by `assemble_prompt`).
    pub fn context_for_agent(
        &self,
        agent_id: &str,
        _agent_type: &str,
        options: &AgentContextOptions,
    ) -> AssemblerInput {
        let asked = Asked {
            end: self.end_index(),
            team_task: self.store.team_task(),
            agent_id,
            options,
        };
        // Only a restarted manager can miss the start of the window (its host asks with
        // `context_as_of`, which says so); the peer's signature is infallible.
        self.context_as_of(&asked)
            .unwrap_or_else(|_| self.held_skeleton(&asked))
    }

    /// [`Self::context_for_agent`] as it was when the conversation had `asked.end` messages
    /// and the team task was `asked.team_task` (later messages do not exist for it).
    pub fn context_as_of(&self, asked: &Asked<'_>) -> Result<AssemblerInput, NotHeld> {
        let recipient = asked.recipient();
        let Some(gathered) = self.gather(asked, &recipient)? else {
            return Ok(self.held_skeleton(asked));
        };
        Ok(gathered.to_input(&recipient, self.options.max_bytes, self.first_index))
    }

    /// Whether [`Self::context_as_of`] dropped a history line that repeats the current
    /// message (AI→AI deduplication, docs/architecture.md §7.3): when the npm
    /// `ContextManager` logs `[ContextManager] Deduplicated context for AI→AI` at debug
    /// level (docs/architecture.md §12, §19 (seed 001 §7)).
    pub fn deduplicated_as_of(&self, asked: &Asked<'_>) -> Result<bool, NotHeld> {
        let recipient = asked.recipient();
        Ok(self.gather(asked, &recipient)?.is_some_and(|gathered| {
            gathered
                .fates
                .iter()
                .any(|f| matches!(f.fate, Fate::Deduplicated { .. }))
        }))
    }

    /// Exactly `self.assemble_prompt(agent_type, &self.context_as_of(asked)?)`, without copying
    /// the history into an input first, and with the explain the rest of the core gives for
    /// the same history: the window in force, every message's fate (deduplicated ones too)
    /// and how many messages are outside the window (those before the held part included).
    pub fn prompt_as_of(&self, agent_type: &str, asked: &Asked<'_>) -> Result<Prompt, NotHeld> {
        if asked.end == 0 {
            return Ok(self.assemble_prompt(agent_type, &self.held_skeleton(asked)));
        }
        let settings = self.settings(asked.options.window_size_override);
        let (target, as_of) = self.held_target(asked, &settings)?;
        let recipient = Recipient {
            agent_type: agent_type.to_string(),
            ..asked.recipient()
        };
        // The current message is held (checked above), so building cannot fail.
        let Ok(mut prompt) = build_as_of(&self.store, &recipient, &target, &settings, as_of) else {
            return Ok(self.assemble_prompt(agent_type, &self.held_skeleton(asked)));
        };
        let explain = &mut prompt.explain;
        explain.recipient = asked.agent_id.to_string();
        explain.current = explain.current.map(|p| p + self.first_index);
        explain.outside_window += self.first_index;
        for fate in &mut explain.messages {
            fate.index += self.first_index;
        }
        Ok(prompt)
    }

    /// The current message and the history as of `asked`, in the held store's positions; an
    /// error when the window reaches before what is held.
    fn held_target<'s>(
        &self,
        asked: &Asked<'s>,
        settings: &BuildSettings,
    ) -> Result<(Target, AsOf<'s>), NotHeld> {
        let needed = Self::needed(asked.end, settings.window);
        let held = self.first_index..self.end_index();
        if needed.start < held.start || needed.end > held.end {
            return Err(NotHeld { needed, held });
        }
        let local_end = asked.end - self.first_index;
        let target = Target {
            current: self.store.messages()[local_end - 1].id.clone(),
            parent: None,
        };
        let as_of = AsOf {
            len: local_end,
            team_task: asked.team_task,
        };
        Ok((target, as_of))
    }

    /// The gathered input of `asked`, or `None` when it has no message.
    fn gather<'s>(
        &'s self,
        asked: &Asked<'s>,
        recipient: &'s Recipient,
    ) -> Result<Option<crate::context::Gathered<'s>>, NotHeld> {
        if asked.end == 0 {
            return Ok(None);
        }
        let settings = self.settings(asked.options.window_size_override);
        let (target, as_of) = self.held_target(asked, &settings)?;
        // The current message is held (checked above), so gathering cannot fail.
        Ok(gather_as_of(&self.store, recipient, &target, &settings, as_of).ok())
    }

    /// The input of a conversation with no message: team task and instructions only.
    fn held_skeleton(&self, asked: &Asked<'_>) -> AssemblerInput {
        AssemblerInput {
            team_task: asked.team_task.map(str::to_string),
            system_instruction: asked.options.system_instruction.clone(),
            instruction_file_text: asked.options.instruction_file_text.clone(),
            max_bytes: self.options.max_bytes,
            agent_id: Some(asked.agent_id.to_string()),
            ..AssemblerInput::default()
        }
    }

    /// Assembles `input` in the format of `agent_type` within `input.max_bytes` (or the
    /// manager's budget when the input carries none).
    pub fn assemble_prompt(&self, agent_type: &str, input: &AssemblerInput) -> Prompt {
        let max_bytes = if input.max_bytes == 0 {
            self.options.max_bytes
        } else {
            input.max_bytes
        };
        crate::context::assemble_prompt(prompt_format(agent_type), input, self.budget(max_bytes))
    }

    fn budget(&self, max_bytes: usize) -> Budget {
        Budget {
            max_bytes,
            strategy: CompactionStrategy::Lazy,
            tokens: TokenEstimator::None,
            max_tokens: None,
        }
    }

    fn settings(&self, window_override: Option<usize>) -> BuildSettings {
        BuildSettings {
            window: window_override.unwrap_or(self.options.context_window_size),
            pin_first: false,
            max_bytes: self.options.max_bytes,
            delivery: DeliveryPolicy::Latest,
            compaction: CompactionStrategy::Lazy,
            tokens: TokenEstimator::None,
            max_tokens: None,
        }
    }
}

/// What a prompt is asked for: the conversation's first `end` messages with `team_task` in
/// force, for `agent_id` with `options`.
#[derive(Debug, Clone, Copy)]
pub struct Asked<'a> {
    pub end: usize,
    pub team_task: Option<&'a str>,
    pub agent_id: &'a str,
    pub options: &'a AgentContextOptions,
}

impl Asked<'_> {
    fn recipient(&self) -> Recipient {
        Recipient {
            id: self.agent_id.to_string(),
            agent_type: String::new(),
            system_instruction: self.options.system_instruction.clone(),
            instruction_file_text: self.options.instruction_file_text.clone(),
            extra_sections: Vec::new(),
        }
    }
}
