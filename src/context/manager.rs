//! `ContextManager`: the seed 001 API (the TypeScript peer's class) over the same pipeline the
//! conversation uses, so code written against the peer can switch to this engine.
//!
//! Deliberate differences (DESIGN §12): window 0 gives no history; Claude's system part is in
//! the flag only; markers are stripped by the rules of §5; the budget is a hard bound.

use serde::{Deserialize, Serialize};

use super::{
    gather_owned, BuildSettings, Prompt, Recipient, Store, Target, TeamTaskTruncated,
    TokenEstimator,
};
use crate::assemble::AssemblerInput;
use crate::budget::Budget;
use crate::message::{Message, Millis, Routing, Speaker, MAX_MESSAGE_BYTES};
use crate::team::{
    prompt_format, CompactionStrategy, DeliveryPolicy, DEFAULT_MAX_BYTES, DEFAULT_WINDOW_SIZE,
};

/// Constructor options (seed 001 `ContextManagerOptions`, hooks excepted: the host calls its
/// own hooks after each call).
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

/// Per-call options of [`ContextManager::context_for_agent`].
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct AgentContextOptions {
    pub window_size_override: Option<usize>,
    pub system_instruction: Option<String>,
    pub instruction_file_text: Option<String>,
}

/// Why a message was refused (nothing is stored).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AddMessageError {
    #[error("speaker.id: missing (every message needs the id of the member who sent it)")]
    MissingSpeakerId,
    #[error("content: {bytes} bytes, the limit is {limit} bytes")]
    TooLarge { bytes: usize, limit: usize },
}

/// Message store + team task + prompt building, the peer's way.
#[derive(Debug, Clone, PartialEq)]
pub struct ContextManager {
    store: Store,
    options: ManagerOptions,
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
        }
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
    pub fn context_for_agent(
        &self,
        agent_id: &str,
        agent_type: &str,
        options: &AgentContextOptions,
    ) -> AssemblerInput {
        let recipient = Recipient {
            id: agent_id.to_string(),
            agent_type: agent_type.to_string(),
            system_instruction: options.system_instruction.clone(),
            instruction_file_text: options.instruction_file_text.clone(),
            extra_sections: Vec::new(),
        };
        let Some(latest) = self.store.latest() else {
            return AssemblerInput {
                team_task: self.store.team_task().map(str::to_string),
                system_instruction: recipient.system_instruction,
                instruction_file_text: recipient.instruction_file_text,
                max_bytes: self.options.max_bytes,
                agent_id: Some(recipient.id),
                ..AssemblerInput::default()
            };
        };
        let settings = self.settings(options.window_size_override);
        let target = Target {
            current: latest.id.clone(),
            parent: None,
        };
        match gather_owned(&self.store, &recipient, &target, &settings) {
            Ok(input) => input,
            // The latest message is always in the store; keep the signature infallible.
            Err(_) => AssemblerInput {
                max_bytes: self.options.max_bytes,
                ..AssemblerInput::default()
            },
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
        let budget = Budget {
            max_bytes,
            strategy: CompactionStrategy::Lazy,
            tokens: TokenEstimator::None,
            max_tokens: None,
        };
        super::assemble_prompt(prompt_format(agent_type), input, budget)
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
