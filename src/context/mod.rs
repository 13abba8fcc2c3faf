//! The context for one delivery (DESIGN §7): window → strip → dedup → route context → assemble
//! → budget, recording each message's fate on the way.

pub mod dedup;
pub mod route;
pub mod store;
pub mod window;

use serde::{Deserialize, Serialize};

pub use store::{Store, TeamTaskTruncated, MAX_TEAM_TASK_BYTES};

use crate::explain::Explain;
use crate::message::{MemberId, MessageId};
use crate::team::{CompactionStrategy, DeliveryPolicy, Member, PromptFormat, Team};

/// An extra named section of a member's context (seed 003 plugins: plan, memory, tool output).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExtraSection {
    pub name: String,
    pub content: String,
    /// Higher is trimmed first among compactable sections.
    #[serde(default)]
    pub priority: i32,
    /// Compactable sections may be trimmed (before history); others never are, unless the
    /// budget cannot hold them at all (the hard invariant wins, and the explain says so).
    #[serde(default)]
    pub compactable: bool,
}

/// Who receives the prompt and what they carry beyond the shared history.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Recipient {
    pub id: MemberId,
    /// Agent type as configured (normalised inside).
    pub agent_type: String,
    pub system_instruction: Option<String>,
    pub instruction_file_text: Option<String>,
    #[serde(default)]
    pub extra_sections: Vec<ExtraSection>,
}

impl Recipient {
    pub fn from_member(member: &Member) -> Self {
        Recipient {
            id: member.id.clone(),
            agent_type: member.agent_type.clone().unwrap_or_default(),
            system_instruction: member.system_instruction.clone(),
            instruction_file_text: member.instruction_file_text.clone(),
            extra_sections: Vec::new(),
        }
    }

    pub fn format(&self) -> PromptFormat {
        crate::team::prompt_format(&self.agent_type)
    }
}

/// Pluggable token estimate (seed 002: `chars / 4`, rounded up).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum TokenEstimator {
    /// No token figures.
    #[default]
    None,
    /// `ceil(chars / 4)`.
    CharsDiv4,
}

/// Settings of one build.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BuildSettings {
    pub window: usize,
    pub pin_first: bool,
    pub max_bytes: usize,
    pub delivery: DeliveryPolicy,
    pub compaction: CompactionStrategy,
    pub tokens: TokenEstimator,
}

impl BuildSettings {
    /// The settings in force for `member` of `team`.
    pub fn for_member(team: &Team, member: &Member) -> Self {
        BuildSettings {
            window: team.window_for(member),
            pin_first: team.settings.pin_first,
            max_bytes: team.settings.max_bytes,
            delivery: team.settings.delivery,
            compaction: team.settings.compaction,
            tokens: TokenEstimator::None,
        }
    }
}

/// Which message the prompt answers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Target {
    /// The message that becomes `[MESSAGE]`.
    pub current: MessageId,
    /// For routed deliveries: the message that addressed the recipient.
    pub parent: Option<MessageId>,
}

/// The result of a build: exactly what the agent receives, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Prompt {
    pub prompt: String,
    /// Claude's system part, passed as `--append-system-prompt`; `None` when empty or for
    /// other formats.
    pub system_flag: Option<String>,
    pub explain: Explain,
}
