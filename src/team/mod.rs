//! Team members and their settings (docs/architecture.md §4).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

mod error;
mod read;
mod validate;

pub use error::ConfigError;
pub use read::join_instruction_lines;
pub(crate) use read::{member, settings, settings_at};
pub(crate) use validate::validate_settings;

use crate::markers::normalize_identifier;
use crate::message::{MemberId, Speaker, SpeakerKind};
use crate::tokens::TokenEstimator;
use crate::usage::Usd;

/// Human or AI member.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum MemberKind {
    Human,
    Ai,
}

/// The prompt format an agent type uses (docs/architecture.md §8).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum PromptFormat {
    /// `claude-code`: system part passed as `--append-system-prompt`, not in the prompt.
    Claude,
    /// `openai-codex`: `[SYSTEM]` inline.
    Codex,
    /// `google-gemini`: plain headings, no brackets.
    Gemini,
    /// Any other agent type: bodies without headers.
    Plain,
}

/// Canonical agent type names.
pub const CLAUDE_CODE: &str = "claude-code";
pub const OPENAI_CODEX: &str = "openai-codex";
pub const GOOGLE_GEMINI: &str = "google-gemini";
/// The built-in simulator (`crate::demo`) answers this member: a known type, with the plain
/// prompt format, chosen in a team config so no real agent is ever run for it.
pub const SIMULATED: &str = "simulated";

/// Normalises an agent type, case-insensitively: `claude`→`claude-code`, `codex`→`openai-codex`,
/// `gemini`→`google-gemini`; anything else stays as given (and uses the plain assembler).
pub fn normalize_agent_type(agent_type: &str) -> String {
    let t = agent_type.trim();
    match t.to_ascii_lowercase().as_str() {
        "claude" | "claude-code" => CLAUDE_CODE.to_string(),
        "codex" | "openai-codex" => OPENAI_CODEX.to_string(),
        "gemini" | "google-gemini" => GOOGLE_GEMINI.to_string(),
        "simulated" => SIMULATED.to_string(),
        _ => t.to_string(),
    }
}

/// The prompt format of an agent type (normalised first).
pub fn prompt_format(agent_type: &str) -> PromptFormat {
    match normalize_agent_type(agent_type).as_str() {
        CLAUDE_CODE => PromptFormat::Claude,
        OPENAI_CODEX => PromptFormat::Codex,
        GOOGLE_GEMINI => PromptFormat::Gemini,
        _ => PromptFormat::Plain,
    }
}

/// A team member. Read by [`crate::config`] (also through serde), which alone knows the
/// formats.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "ts", ts(optional_fields))]
pub struct Member {
    pub id: MemberId,
    pub name: String,
    pub display_name: String,
    pub kind: MemberKind,
    /// Normalised agent type (`claude-code`, …); required for AI members.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_type: Option<String>,
    /// A string or an array of lines in config files (docs/architecture.md §4), joined by
    /// [`join_instruction_lines`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_instruction: Option<String>,
    /// Path of the instruction file as configured (read by the bridge, never by the core).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instruction_file: Option<String>,
    /// The instruction file's text, supplied by the host.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instruction_file_text: Option<String>,
    /// Directory the member's relative paths are resolved against (host's concern).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_dir: Option<String>,
    /// Per-member history window; overrides the team's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window_size: Option<usize>,
    /// How the member's agent runs (env, arguments, model, permissions, timeout): read with
    /// the team, used only by a host that runs agents, and only from files on its machine.
    #[serde(flatten)]
    #[cfg_attr(feature = "ts", ts(flatten))]
    pub run: RunSettings,
    /// Extra named sections of this member's context (docs/architecture.md §10): plan, memory,
    /// tool output; compactable ones are trimmed before history.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(feature = "ts", ts(as = "Option<_>", optional))]
    pub extra_sections: Vec<ExtraSection>,
}

/// An extra named section of a member's context (docs/architecture.md §19 (seed 003) plugins: plan,
/// memory, tool output).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ExtraSection {
    pub name: String,
    pub content: String,
    /// Higher is trimmed first among compactable sections.
    #[serde(default)]
    #[cfg_attr(feature = "ts", ts(as = "Option<_>", optional))]
    pub priority: i32,
    /// Compactable sections may be trimmed (before history); others never are, unless the
    /// budget cannot hold them at all (the hard invariant wins, and the explain says so).
    #[serde(default)]
    #[cfg_attr(feature = "ts", ts(as = "Option<_>", optional))]
    pub compactable: bool,
}

/// How one member's agent CLI runs (docs/architecture.md §14c). The core reads and checks them
/// with the team; the bridge applies them, and takes them only from files on its machine
/// (a team sent from the page never changes env, arguments or permissions).
///
/// Deserialize reads them back from the bridge's protocol frames only; a team file's are read,
/// and checked, by the team reader.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "ts", ts(optional_fields))]
pub struct RunSettings {
    /// Environment variables added to the bridge's own for this agent.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[cfg_attr(feature = "ts", ts(as = "Option<_>", optional))]
    pub env: BTreeMap<String, String>,
    /// Arguments added to the CLI's command (after its own, before a trailing `-`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(feature = "ts", ts(as = "Option<_>", optional))]
    pub additional_args: Vec<String>,
    /// The model, passed with the CLI's own flag (Claude `--model`, Codex and Gemini `-m`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// What the agent may do, in one vocabulary mapped to each CLI's flag.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub permission_mode: Option<PermissionMode>,
    /// This member's timeout; overrides the team's `maxAgentResponseMs`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
}

impl RunSettings {
    /// The settings that change what runs or with which rights (env, arguments, model,
    /// permissions): those a page may never set.
    pub fn without_timeout(&self) -> RunSettings {
        RunSettings {
            timeout_ms: None,
            ..self.clone()
        }
    }

    pub fn is_empty(&self) -> bool {
        *self == RunSettings::default()
    }
}

/// What an agent may do on the machine, one small vocabulary mapped to each CLI's own flag
/// (docs/architecture.md §14c):
///
/// | ours | Claude `--permission-mode` | Codex `-s` | Gemini `--approval-mode` |
/// |---|---|---|---|
/// | `readOnly` | `plan` | `read-only` | `plan` |
/// | `edit` | `acceptEdits` | `workspace-write` | `auto_edit` |
/// | `full` | `bypassPermissions` | `danger-full-access` | `yolo` |
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum PermissionMode {
    /// Reads and plans; changes nothing.
    ReadOnly,
    /// Edits files in its working directory without asking.
    Edit,
    /// Anything, without asking (no sandbox).
    Full,
}

impl PermissionMode {
    /// Every mode with its name in a team file.
    pub const ALL: [(&'static str, PermissionMode); 3] = [
        ("readOnly", PermissionMode::ReadOnly),
        ("edit", PermissionMode::Edit),
        ("full", PermissionMode::Full),
    ];

    pub fn name(self) -> &'static str {
        match self {
            PermissionMode::ReadOnly => "readOnly",
            PermissionMode::Edit => "edit",
            PermissionMode::Full => "full",
        }
    }

    /// What the mode lets an agent do, in a newcomer's words.
    pub fn allows(self) -> &'static str {
        match self {
            PermissionMode::ReadOnly => "reads and plans; changes nothing",
            PermissionMode::Edit => "edits files in its working directory without asking",
            PermissionMode::Full => "does anything without asking (no sandbox)",
        }
    }

    /// The flag and value a CLI of `format` is run with for this mode (the table above, the
    /// one place it is written: the bridge runs it, the page shows it); `None` for a plain
    /// command, which has no such flag.
    pub fn cli_flag(self, format: PromptFormat) -> Option<(&'static str, &'static str)> {
        use PermissionMode::{Edit, Full, ReadOnly};
        Some(match (format, self) {
            (PromptFormat::Claude, ReadOnly) => ("--permission-mode", "plan"),
            (PromptFormat::Claude, Edit) => ("--permission-mode", "acceptEdits"),
            (PromptFormat::Claude, Full) => ("--permission-mode", "bypassPermissions"),
            (PromptFormat::Codex, ReadOnly) => ("-s", "read-only"),
            (PromptFormat::Codex, Edit) => ("-s", "workspace-write"),
            (PromptFormat::Codex, Full) => ("-s", "danger-full-access"),
            (PromptFormat::Gemini, ReadOnly) => ("--approval-mode", "plan"),
            (PromptFormat::Gemini, Edit) => ("--approval-mode", "auto_edit"),
            (PromptFormat::Gemini, Full) => ("--approval-mode", "yolo"),
            (PromptFormat::Plain, _) => return None,
        })
    }
}

impl Member {
    /// Whether it holds settings that are its machine's alone (docs/architecture.md §14c): run
    /// settings (env, arguments, model, permissions, timeout) or a working directory.
    pub fn has_machine_settings(&self) -> bool {
        !self.run.is_empty() || self.base_dir.is_some()
    }

    pub fn is_ai(&self) -> bool {
        self.kind == MemberKind::Ai
    }

    pub(crate) fn is_human(&self) -> bool {
        self.kind == MemberKind::Human
    }

    /// The speaker record for messages this member sends.
    pub fn speaker(&self) -> Speaker {
        Speaker {
            id: self.id.clone(),
            name: self.name.clone(),
            display_name: self.display_name.clone(),
            kind: match self.kind {
                MemberKind::Human => SpeakerKind::Human,
                MemberKind::Ai => SpeakerKind::Ai,
            },
        }
    }

    /// The prompt format of this member's agent type (plain for humans / unknown types).
    pub fn prompt_format(&self) -> PromptFormat {
        self.agent_type
            .as_deref()
            .map_or(PromptFormat::Plain, prompt_format)
    }

    /// Fuzzy match (docs/architecture.md §5): lowercase, without spaces, `-`, `_`, against id, name
    /// and display name.
    pub fn matches(&self, identifier: &str) -> bool {
        let wanted = normalize_identifier(identifier);
        !wanted.is_empty()
            && [&self.id, &self.name, &self.display_name]
                .iter()
                .any(|s| normalize_identifier(s) == wanted)
    }
}

/// How parallel `[NEXT: a, b, c]` deliveries choose their `[MESSAGE]` (docs/architecture.md §6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum DeliveryPolicy {
    /// Each agent gets the newest message (docs/architecture.md §19 (seed 000 §2.4)).
    #[default]
    Latest,
    /// Each agent gets the message that addressed it, with sibling answers as related context.
    Parent,
}

/// When extra compactable sections are trimmed (docs/architecture.md §10).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum CompactionStrategy {
    /// Trim only what exceeds the budget.
    #[default]
    Lazy,
    /// Trim down to just under the warning threshold whenever it is reached.
    Proactive,
}

/// The peer's `maxRounds: 0` ("unlimited"): a bound no conversation reaches, and one that
/// reads back on every host (a 64-bit `usize::MAX` would not fit a wasm32 `usize`).
pub const UNLIMITED_ROUNDS: usize = u32::MAX as usize;
/// Reserved for system notices (docs/architecture.md §11b): no member may be called this.
pub(crate) const RESERVED_MEMBER: &str = "system";

/// Default history window (docs/architecture.md §19 (seeds 000/001)).
pub(crate) const DEFAULT_WINDOW_SIZE: usize = 5;
/// Default prompt budget: 768 KiB (docs/architecture.md §19 (seed 001)).
pub const DEFAULT_MAX_BYTES: usize = 768 * 1024;
/// Default bound on AI deliveries per human message.
pub const DEFAULT_MAX_ROUNDS: usize = 50;

/// Team-wide settings. Read by [`crate::config`] (also through serde).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct TeamSettings {
    pub window_size: usize,
    pub max_bytes: usize,
    /// Pin the first message and show `[N earlier messages omitted]`
    /// (docs/architecture.md §19 (seed 002)). Off by default.
    pub pin_first: bool,
    pub delivery: DeliveryPolicy,
    pub compaction: CompactionStrategy,
    /// Bound on AI deliveries per human message (`maxRounds`).
    pub max_rounds: usize,
    /// `conversation.maxAgentResponseTime` in ms, for hosts that run agents.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub max_agent_response_ms: Option<u64>,
    /// Token estimate shown in the explain (docs/architecture.md §9); `maxTokens` implies
    /// `charsDiv4`.
    #[serde(skip_serializing_if = "is_no_estimator")]
    #[cfg_attr(feature = "ts", ts(as = "Option<_>", optional))]
    pub token_estimator: TokenEstimator,
    /// Optional token budget, kept beside the byte budget with the `chars/4` estimate.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub max_tokens: Option<usize>,
    /// Spending cap (docs/architecture.md §14c): once the runs' reported cost reaches it, no
    /// further AI delivery starts.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub max_cost_usd: Option<Usd>,
}

fn is_no_estimator(e: &TokenEstimator) -> bool {
    *e == TokenEstimator::None
}

impl Default for TeamSettings {
    fn default() -> Self {
        TeamSettings {
            window_size: DEFAULT_WINDOW_SIZE,
            max_bytes: DEFAULT_MAX_BYTES,
            pin_first: false,
            delivery: DeliveryPolicy::Latest,
            compaction: CompactionStrategy::Lazy,
            max_rounds: DEFAULT_MAX_ROUNDS,
            max_agent_response_ms: None,
            token_estimator: TokenEstimator::None,
            max_tokens: None,
            max_cost_usd: None,
        }
    }
}

/// A validated team: ≥1 human, unique ids and normalised names, AI members have an agent type.
/// Read by [`crate::config`] (also through serde: `serde_json::from_str::<Team>` runs the same
/// reader as [`crate::config::load_team`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Team {
    pub id: String,
    pub name: String,
    pub members: Vec<Member>,
    pub settings: TeamSettings,
}

impl Team {
    /// Drops every member's run settings and working directory, and says whether there were
    /// any. They are the machine's, read from its files by the host that runs the agents, and
    /// never part of a conversation (docs/architecture.md §14c): a team in a session log, a
    /// frame, a download or a share link holds none. No prompt depends on them.
    pub fn strip_machine_settings(&mut self) -> bool {
        let mut stripped = false;
        for member in self.members.iter_mut().filter(|m| m.has_machine_settings()) {
            member.run = RunSettings::default();
            member.base_dir = None;
            stripped = true;
        }
        stripped
    }

    /// Whether any member holds settings of its machine ([`Member::has_machine_settings`]).
    pub fn has_machine_settings(&self) -> bool {
        self.members.iter().any(Member::has_machine_settings)
    }

    pub fn member(&self, id: &str) -> Option<&Member> {
        self.members.iter().find(|m| m.id == id)
    }

    /// Fuzzy lookup by id, name or display name.
    pub fn find(&self, identifier: &str) -> Option<&Member> {
        self.member(identifier)
            .or_else(|| self.members.iter().find(|m| m.matches(identifier)))
    }

    /// [`Self::find`], or the error every host shows for a name that is no member: the name
    /// and the members there are, so the user can correct it.
    pub(crate) fn find_or_explain(&self, identifier: &str) -> Result<&Member, NotAMember> {
        self.find(identifier).ok_or_else(|| NotAMember {
            name: identifier.to_string(),
            members: self
                .members
                .iter()
                .map(|m| m.id.as_str())
                .collect::<Vec<_>>()
                .join(", "),
        })
    }

    /// The member a mistyped `name` most likely meant ("did you mean"): the closest id, name
    /// or display name by edit distance (strsim's optimal string alignment: a swap of
    /// neighbours counts one edit; 1.4 KB gzipped less in the page than the unrestricted
    /// Damerau–Levenshtein) on normalised names (lowercase, without spaces, `-`,
    /// `_`, as [`Member::matches`] compares them), within a third of the name's length (at
    /// least 1). `None` when `name` is a member, or nothing is that close. Team order breaks
    /// ties.
    pub fn suggest(&self, name: &str) -> Option<&Member> {
        let wanted = crate::markers::normalize_identifier(name);
        if wanted.is_empty() || self.find(name).is_some() {
            return None;
        }
        let limit = (wanted.chars().count() / 3).max(1);
        self.members
            .iter()
            .filter_map(|m| {
                let distance = [&m.id, &m.name, &m.display_name]
                    .iter()
                    .map(|s| {
                        strsim::osa_distance(&crate::markers::normalize_identifier(s), &wanted)
                    })
                    .min()?;
                (distance <= limit).then_some((distance, m))
            })
            .min_by_key(|(distance, _)| *distance)
            .map(|(_, m)| m)
    }

    /// Every `[NEXT]` name in `text` that is no member, as written, with the member it most
    /// likely meant ([`Self::suggest`]): what a composer warns of before the message is sent.
    /// Names are listed once, in order; markers inside code fences are text, as the router
    /// reads them.
    pub fn unknown_addressees<'t>(&'t self, text: &str) -> Vec<(String, Option<&'t Member>)> {
        let mut out: Vec<(String, Option<&Member>)> = Vec::new();
        for a in crate::markers::parse(text).next {
            if self.find(&a.name).is_none() && !out.iter().any(|(n, _)| *n == a.name) {
                let suggestion = self.suggest(&a.name);
                out.push((a.name, suggestion));
            }
        }
        out
    }

    pub(crate) fn humans(&self) -> impl Iterator<Item = &Member> {
        self.members.iter().filter(|m| m.is_human())
    }

    /// The window for `member`: member override → team setting.
    pub(crate) fn window_for(&self, member: &Member) -> usize {
        member.window_size.unwrap_or(self.settings.window_size)
    }
}

/// A name that names no member of the team (scenario messages, previews).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{name:?} is not a member (members: {members})")]
pub struct NotAMember {
    pub name: String,
    /// The team's member ids, joined by `, `.
    pub members: String,
}
