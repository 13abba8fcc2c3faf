//! The npm package's TypeScript declarations, generated: `wasm/src/types.d.ts` is what this
//! file makes of the Rust types that cross the binding (docs/architecture.md §12), and the test
//! fails when the committed file differs, so a renamed or added field in the core changes
//! the declarations in the same commit.
//!
//! Regenerate after an intended change, then review the diff:
//! `UPDATE_TYPES=1 cargo test -p agent-chatter-wasm --test typescript`.
//!
//! The shapes come from `ts_rs::TS`, derived on the core's serde types behind its `ts`
//! feature (enabled here only, through the dev-dependency: never in a shipped build), with
//! their serde attributes and doc comments. What the binding adds lives below: the shapes
//! the JS half makes or reads itself (`ParseResult`, the peer's `ConversationMessage`,
//! `ContextManagerOptions`, …), the inputs the core reads with its own JSON readers (team
//! configs, scenarios), and, through `#[ts(as = …)]`, the binding's words for a core type
//! whose own doc speaks of Rust calls. `format.rs` lays the result out.
#![cfg(not(target_arch = "wasm32"))]
// The declaration types are only ever read by ts-rs.
#![allow(dead_code)]

#[path = "typescript/format.rs"]
mod format;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use agent_chatter::assemble::{AssemblerInput, ContextLine};
use agent_chatter::context::Prompt;
use agent_chatter::conversation::{
    Action, Delivery, InFlight, Notice, QueuedDelivery, RoutingQueue, RoutingState, Status,
};
use agent_chatter::explain::{
    BudgetStatus, DedupReason, Explain, Fate, MessageFate, SectionExplain, Truncation,
};
use agent_chatter::message::{Addressee, Intent, Message, Routing, Speaker, SpeakerKind};
use agent_chatter::peer::context_manager::AgentContextOptions;
use agent_chatter::peer::message::{
    NewPeerMessage, PeerIntent, PeerResolvedAddressee, PeerRouting, PeerSpeaker,
};
use agent_chatter::scenario::ScenarioMessage;
use agent_chatter::session::{Fact, Failure, PreviewOverrides, SESSION_FORMAT};
use agent_chatter::snapshot::{Snapshot, SNAPSHOT_VERSION};
use agent_chatter::team::{
    CompactionStrategy, DeliveryPolicy, ExtraSection, Member, MemberKind, PermissionMode,
    PromptFormat, Team, TeamSettings,
};
use agent_chatter::tokens::TokenEstimator;
use agent_chatter::usage::{Usage, Usd};
use ts_rs::{Config, TS};

use format::Declaration;

/// The generated file, relative to the repository root.
const OUTPUT: &str = "wasm/src/types.d.ts";
/// How to regenerate it.
const REGENERATE: &str = "UPDATE_TYPES=1 cargo test -p agent-chatter-wasm --test typescript";

// ---------------------------------------------------------------------------------------------
// Shapes the binding makes or reads itself.

/// Result of `parseMessage`: the peer's `MessageRouter.parseMessage` result plus `isDone`.
#[derive(TS)]
#[ts(rename_all = "camelCase")]
struct ParseResult {
    /// `[NEXT]` names, in order.
    addressees: Vec<String>,
    /// The same names with their intent.
    parsed_addressees: Vec<Addressee>,
    /// `stripRouting(text)`: NEXT, DONE and DROP removed; FROM and TEAM_TASK kept.
    clean_content: String,
    /// `[FROM: x]` (first wins), or `null`.
    from_member: Option<String>,
    /// `[TEAM_TASK: x]` (last wins); `""` for `[TEAM_TASK:]` (clears the task); `null` when absent.
    team_task: Option<String>,
    /// `[DROP: a, b]` names; `["ALL"]` for `[DROP: ALL]`; `[]` when absent.
    drop_targets: Vec<String>,
    /// `[DONE]` present.
    is_done: bool,
}

/// The argument of `addMessage`: a message without its id.
#[derive(TS)]
#[ts(rename = "NewConversationMessage")]
struct NewConversationMessage {
    #[ts(flatten)]
    message: NewPeerMessage,
    /// A `Date`, milliseconds since 1970 or a date string (stored as a `Date`); absent, the
    /// stored message has none, as in the peer.
    #[ts(type = "Date | number | string", optional)]
    timestamp: Option<()>,
}

/// A stored message (the peer's `ConversationMessage`).
#[derive(TS)]
struct ConversationMessage {
    /// `msg-1`, `msg-2`, … in the order messages were stored.
    id: String,
    /// When it was said: the `Date` given (one made from milliseconds or a date string). A
    /// message added without one has none (typed as the peer types it).
    #[ts(type = "Date")]
    timestamp: (),
    #[ts(type = "Required<SpeakerInfo>")]
    speaker: PeerSpeaker,
    /// Exactly as given, markers included.
    content: String,
    #[ts(optional)]
    routing: Option<PeerRouting>,
}

/// Constructor options of `ContextManager`.
#[derive(TS)]
#[ts(rename_all = "camelCase", optional_fields)]
struct ContextManagerOptions {
    /// History window in messages (default 10, the peer's; 0 gives no history).
    context_window_size: Option<usize>,
    /// Prompt budget in UTF-8 bytes (default 786432 = 768 KiB).
    max_bytes: Option<usize>,
    /// Called after each `addMessage` with the stored message.
    #[ts(type = "(msg: ConversationMessage) => void", optional)]
    on_message_added: Option<()>,
    /// Called after the team task changes (`setTeamTask`, `clear`, `importSnapshot`).
    #[ts(type = "(task: string | null) => void", optional)]
    on_team_task_changed: Option<()>,
    /// The peer's `ILogger`: `warn` gets the peer's warnings, in its words (a team task cut at
    /// 5 KiB, an unknown agent type assembled as plain text); `debug`, when given, gets the
    /// debug lines of the peer's design (`[ContextManager] Message added: msg-3` for each
    /// `addMessage`, `[ContextManager] Deduplicated context for AI→AI` when
    /// `getContextForAgent` drops an AI→AI duplicate); nothing else is logged.
    #[ts(
        type = "{ warn(message: string, context?: Record<string, unknown>): void; debug?(message: string, context?: Record<string, unknown>): void }",
        optional
    )]
    logger: Option<()>,
    /// An older peer's output sink (`IOutput`); accepted and ignored.
    #[ts(type = "object", optional)]
    output: Option<()>,
    /// The peer's routing-v3 default (its `getContextForRoute`, not offered here): accepted
    /// and unused, so the peer's options compile and run unchanged.
    default_max_siblings: Option<usize>,
    /// The peer's routing-v3 default: accepted and unused.
    default_force_parent_reinsertion: Option<bool>,
    /// The peer's routing-v3 default: accepted and unused.
    sibling_content_max_length: Option<usize>,
    /// The peer's routing-v3 default: accepted and unused.
    parent_reinsertion_max_bytes: Option<usize>,
}

/// `assemblePrompt`'s result: the peer's `{prompt, systemFlag?}` plus the explain.
#[derive(TS)]
#[ts(rename_all = "camelCase")]
struct AssemblerOutput {
    prompt: String,
    /// Claude's system part, passed as `--append-system-prompt`; absent when there is none.
    #[ts(optional)]
    system_flag: Option<String>,
    explain: Explain,
}

/// `exportSnapshot()`'s result and `importSnapshot`'s argument.
#[derive(TS)]
#[ts(rename_all = "camelCase")]
struct ContextSnapshot {
    messages: Vec<ConversationMessage>,
    team_task: Option<String>,
    timestamp: usize,
    version: SnapshotVersion,
}

/// A delivery to run now: run agent `to` with `prompt.prompt` (and `prompt.systemFlag`).
#[derive(TS)]
#[ts(rename = "Delivery", rename_all = "camelCase")]
struct DeliveryAction {
    #[ts(flatten)]
    delivery: Delivery,
    /// SHA-256 (lowercase hex) of exactly what the agent is given: `prompt.prompt`'s UTF-8 bytes,
    /// then, when there is a system flag, a NUL byte and the flag's bytes (docs/architecture.md
    /// §6b). The bridge sends the same digest, so a host can show that a preview is what was sent.
    prompt_sha256: String,
}

/// `Conversation.exportSession()`'s result and `Conversation.resume`'s argument: the fact log.
#[derive(TS)]
struct ConversationSession {
    format: SessionFormat,
    facts: Vec<Fact>,
}

// ---------------------------------------------------------------------------------------------
// Inputs the core reads with its own JSON readers (`config`, `peer::cli_config`, `scenario`).

/// A member in our team format (`id` and `displayName` default to `name`).
#[derive(TS)]
#[ts(rename_all = "camelCase", optional_fields)]
struct MemberConfig {
    id: Option<String>,
    name: String,
    display_name: Option<String>,
    kind: MemberKind,
    /// Required for AI members: `claude`/`claude-code`, `codex`/`openai-codex`, `gemini`/`google-gemini`, or any other (plain format).
    agent_type: Option<String>,
    /// A string, or lines (joined with `\n`, blank ones dropped).
    #[ts(type = "string | string[]", optional)]
    system_instruction: Option<String>,
    instruction_file: Option<String>,
    /// The instruction file's text (the core never reads files).
    instruction_file_text: Option<String>,
    base_dir: Option<String>,
    /// History window for this member; overrides the team's.
    window_size: Option<usize>,
    /// Run settings (used by a host that runs the agent's CLI): environment variables added.
    env: Option<std::collections::BTreeMap<String, String>>,
    /// Arguments added to the CLI's command.
    additional_args: Option<Vec<String>>,
    /// The model, passed with the CLI's own flag.
    model: Option<String>,
    /// What the agent may do: `"readOnly"`, `"edit"` or `"full"`.
    permission_mode: Option<PermissionMode>,
    /// This member's timeout in ms; overrides the team's.
    timeout_ms: Option<usize>,
    /// Extra named sections of its context (plan, memory, tool output); compactable ones are
    /// trimmed before history.
    extra_sections: Option<Vec<ExtraSection>>,
}

/// Team-wide settings (all optional).
#[derive(TS)]
#[ts(rename_all = "camelCase", optional_fields)]
struct TeamSettingsConfig {
    window_size: Option<usize>,
    max_bytes: Option<usize>,
    pin_first: Option<bool>,
    delivery: Option<DeliveryPolicy>,
    compaction: Option<CompactionStrategy>,
    max_rounds: Option<usize>,
    max_agent_response_ms: Option<usize>,
    /// Token figures in the explain: `"charsDiv4"` (characters ÷ 4, the seeds' estimate)
    /// or `"none"`.
    token_estimator: Option<TokenEstimator>,
    /// A token budget kept beside `maxBytes` (implies the `charsDiv4` estimate).
    max_tokens: Option<usize>,
    /// A spending cap in US dollars: once the runs' reported cost reaches it, no further AI
    /// delivery starts.
    max_cost_usd: Option<f64>,
}

/// Our team format.
#[derive(TS)]
#[ts(optional_fields)]
struct TeamConfig {
    id: Option<String>,
    name: Option<String>,
    members: Vec<MemberConfig>,
    settings: Option<TeamSettingsConfig>,
}

/// A member in the peer's `cli-config` (schema 1.1/1.2); other fields are ignored.
#[derive(TS)]
#[ts(rename_all = "camelCase", optional_fields)]
struct PeerMemberConfig {
    name: String,
    display_name: Option<String>,
    #[ts(rename = "type")]
    kind: MemberKind,
    agent_type: Option<String>,
    #[ts(type = "string | string[]", optional)]
    system_instruction: Option<String>,
    instruction_file: Option<String>,
    base_dir: Option<String>,
    window_size: Option<usize>,
    #[ts(flatten)]
    other: Others,
}

/// The peer's `cli-config` (schema 1.1/1.2); other fields are ignored.
#[derive(TS)]
#[ts(rename_all = "camelCase", optional_fields)]
struct PeerCliConfig {
    #[ts(type = r#""1.1" | "1.2""#, optional)]
    schema_version: Option<()>,
    #[ts(inline)]
    team: PeerTeam,
    max_rounds: Option<usize>,
    #[ts(inline)]
    conversation: Option<PeerConversation>,
    #[ts(flatten)]
    other: Others,
}

#[derive(TS)]
#[ts(rename_all = "camelCase", optional_fields)]
struct PeerTeam {
    name: String,
    display_name: Option<String>,
    members: Vec<PeerMemberConfig>,
    #[ts(flatten)]
    other: Others,
}

#[derive(TS)]
#[ts(rename_all = "camelCase", optional_fields)]
struct PeerConversation {
    max_agent_response_time: Option<usize>,
    #[ts(flatten)]
    other: Others,
}

/// A scenario (docs/architecture.md §11b): a team, settings and a history to preview.
#[derive(TS)]
#[ts(rename_all = "camelCase")]
struct ScenarioInput {
    #[ts(type = "TeamConfig | PeerCliConfig")]
    team: (),
    /// Settings in force exactly as given (`windowSize: 0` means no history).
    #[ts(inline, optional)]
    context: Option<ScenarioContextInput>,
    /// Applied after the messages and wins; `null` clears; absent lets the markers decide.
    #[ts(optional = nullable)]
    team_task: Option<String>,
    #[ts(inline)]
    messages: Vec<ScenarioMessage>,
}

#[derive(TS)]
#[ts(rename_all = "camelCase", optional_fields)]
struct ScenarioContextInput {
    window_size: Option<usize>,
    max_bytes: Option<usize>,
    pin_first: Option<bool>,
    max_tokens: Option<usize>,
}

// ---------------------------------------------------------------------------------------------
// Core shapes, documented in the binding's words (the core's own docs name Rust calls).

/// The prompt a member receives, and why (`preview`, `Scenario.preview`).
#[derive(TS)]
#[ts(rename = "Preview", as = "Prompt")]
struct PreviewDoc;

/// What the host must do next:
/// - `deliver`: run the agent, then call `agentReplied` or `agentFailed` exactly once;
/// - `awaitHuman`: prompt this human; their next input without `[FROM]` is theirs;
/// - `finished`: `[DONE]` was said; nothing more until a human speaks;
/// - `notice`: show it.
#[derive(TS)]
#[ts(rename = "Action", as = "Action")]
struct ActionDoc;

/// One input of a session (docs/architecture.md §6b); `at` is in milliseconds since the
/// epoch. `loadScenario`: a recorded history was opened: team, settings and messages from a
/// scenario (no routing). `memberLeft`: a member leaves the team from now on (their messages
/// stay theirs; they get no more messages).
#[derive(TS)]
#[ts(rename = "Fact", as = "Fact")]
struct FactDoc;

/// A member of a validated team (our format).
#[derive(TS)]
#[ts(rename = "Member", as = "Member")]
struct MemberDoc;

/// A validated team's settings: every setting, with its default where the config left it out.
#[derive(TS)]
#[ts(rename = "TeamSettings", as = "TeamSettings")]
struct TeamSettingsDoc;

/// A validated team with all its settings.
#[derive(TS)]
#[ts(rename = "Team", as = "Team")]
struct TeamDoc;

/// Informational events; show them, never treat them as fatal. `roundLimitReached` ends the
/// current AI run (a human must speak to continue).
#[derive(TS)]
#[ts(rename = "Notice", as = "Notice")]
struct NoticeDoc;

/// What-if settings for `Conversation.preview`; left out = the setting in force.
#[derive(TS)]
#[ts(rename = "PreviewOverrides", as = "PreviewOverrides")]
struct PreviewOverridesDoc;

// ---------------------------------------------------------------------------------------------
// Literal and open types.

/// `[other: string]: unknown`: the keys a reader ignores.
type Others = HashMap<String, Unknown>;

struct Unknown;

impl TS for Unknown {
    type WithoutGenerics = Self;
    type OptionInnerType = Self;

    fn name(_: &Config) -> String {
        "unknown".to_owned()
    }

    fn inline(cfg: &Config) -> String {
        Self::name(cfg)
    }
}

/// The `format` of a session file, as a string literal type.
struct SessionFormat;

impl TS for SessionFormat {
    type WithoutGenerics = Self;
    type OptionInnerType = Self;

    fn name(_: &Config) -> String {
        format!("\"{SESSION_FORMAT}\"")
    }

    fn inline(cfg: &Config) -> String {
        Self::name(cfg)
    }
}

/// The snapshot `version`, as a number literal type.
struct SnapshotVersion;

impl TS for SnapshotVersion {
    type WithoutGenerics = Self;
    type OptionInnerType = Self;

    fn name(_: &Config) -> String {
        SNAPSHOT_VERSION.to_string()
    }

    fn inline(cfg: &Config) -> String {
        Self::name(cfg)
    }
}

// ---------------------------------------------------------------------------------------------
// The file.

/// Integers are JS numbers (every count and time the core writes is below 2^53).
fn config() -> Config {
    Config::new().with_large_int("number")
}

fn declaration<T: TS + 'static>() -> Declaration {
    let cfg = config();
    Declaration {
        name: T::ident(&cfg),
        docs: T::docs(),
        decl: T::decl(&cfg),
    }
}

/// The declarations in the order of the file, by section.
fn sections() -> Vec<(&'static str, Vec<Declaration>)> {
    vec![
        (
            "Markers (docs/architecture.md §5)",
            vec![
                declaration::<Intent>(),
                declaration::<Addressee>(),
                declaration::<ParseResult>(),
            ],
        ),
        (
            "Prompts and their explain (docs/architecture.md §8, §9)",
            vec![
                declaration::<PromptFormat>(),
                declaration::<BudgetStatus>(),
                declaration::<CompactionStrategy>(),
                declaration::<DedupReason>(),
                declaration::<Fate>(),
                declaration::<MessageFate>(),
                declaration::<SectionExplain>(),
                declaration::<Truncation>(),
                declaration::<Explain>(),
            ],
        ),
        (
            "ContextManager: the peer's shapes (@testany/agent-chatter-core 1.1.8, seed 001)",
            vec![
                declaration::<SpeakerKind>(),
                declaration::<PeerSpeaker>(),
                declaration::<PeerResolvedAddressee>(),
                declaration::<PeerIntent>(),
                declaration::<PeerRouting>(),
                declaration::<NewConversationMessage>(),
                declaration::<ConversationMessage>(),
                declaration::<ContextManagerOptions>(),
                declaration::<AgentContextOptions>(),
                declaration::<ContextLine>(),
                declaration::<ExtraSection>(),
                declaration::<AssemblerInput>(),
                declaration::<AssemblerOutput>(),
                declaration::<ContextSnapshot>(),
            ],
        ),
        (
            "Team configs and scenarios (docs/architecture.md §4, §11, §11b)",
            vec![
                declaration::<MemberKind>(),
                declaration::<DeliveryPolicy>(),
                declaration::<TokenEstimator>(),
                declaration::<PermissionMode>(),
                declaration::<MemberConfig>(),
                declaration::<TeamSettingsConfig>(),
                declaration::<TeamConfig>(),
                declaration::<PeerMemberConfig>(),
                declaration::<PeerCliConfig>(),
                declaration::<ScenarioInput>(),
                declaration::<PreviewDoc>(),
            ],
        ),
        (
            "Conversation: the routing state machine (docs/architecture.md §6)",
            vec![
                declaration::<MemberDoc>(),
                declaration::<TeamSettingsDoc>(),
                declaration::<TeamDoc>(),
                declaration::<Speaker>(),
                declaration::<Routing>(),
                declaration::<Message>(),
                declaration::<Status>(),
                declaration::<QueuedDelivery>(),
                declaration::<InFlight>(),
                declaration::<DeliveryAction>(),
                declaration::<NoticeDoc>(),
                declaration::<ActionDoc>(),
                declaration::<Snapshot>(),
                declaration::<RoutingQueue>(),
                declaration::<RoutingState>(),
                declaration::<Usd>(),
                declaration::<Usage>(),
                declaration::<Failure>(),
                declaration::<FactDoc>(),
                declaration::<ConversationSession>(),
                declaration::<PreviewOverridesDoc>(),
            ],
        ),
    ]
}

/// The text of `wasm/src/types.d.ts`.
fn generate() -> String {
    let mut out = format!(
        "// Generated from the Rust types by wasm/tests/typescript.rs (ts-rs): do not edit.\n\
         // Regenerate with `{REGENERATE}`.\n"
    );
    for (title, declarations) in sections() {
        out.push_str(&format!("\n// {}\n// {title}\n", "-".repeat(93)));
        for d in format::declarations(&declarations) {
            out.push('\n');
            out.push_str(&d);
        }
    }
    out
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

#[test]
fn the_committed_declarations_are_the_generated_ones() {
    let generated = generate();
    let path = root().join(OUTPUT);
    if std::env::var_os("UPDATE_TYPES").is_some() {
        std::fs::write(&path, &generated).expect("writes the declarations");
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    if committed != generated {
        let line = committed
            .lines()
            .zip(generated.lines())
            .position(|(a, b)| a != b)
            .unwrap_or_else(|| committed.lines().count().min(generated.lines().count()));
        panic!(
            "{OUTPUT} is not what the Rust types generate (first difference at line {}):\n  \
             committed: {}\n  generated: {}\nRegenerate it with `{REGENERATE}` and review the diff.",
            line + 1,
            committed.lines().nth(line).unwrap_or("(end of file)"),
            generated.lines().nth(line).unwrap_or("(end of file)"),
        );
    }
}

/// Every name a declaration uses is declared in the file or is TypeScript's own, and no
/// `any` slipped in (docs/architecture.md §12).
#[test]
fn every_name_used_is_declared_and_nothing_is_any() {
    const BUILT_IN: [&str; 6] = [
        "Date",
        "Record",
        "Required",
        "Array",
        "ArrayBuffer",
        "object",
    ];
    let text = generate();
    let declared: Vec<String> = sections()
        .into_iter()
        .flat_map(|(_, ds)| ds.into_iter().map(|d| d.name))
        .collect();
    let mut code = String::new();
    for line in text.lines() {
        let line = line.trim_start();
        if !(line.starts_with("//") || line.starts_with("/**") || line.starts_with('*')) {
            code.push_str(line);
            code.push('\n');
        }
    }
    // Strip string literals, then read the words that name types.
    let mut words = Vec::new();
    let mut in_string = false;
    let mut word = String::new();
    for c in code.chars() {
        if c == '"' {
            in_string = !in_string;
        } else if !in_string && (c.is_alphanumeric() || c == '_') {
            word.push(c);
            continue;
        }
        if !word.is_empty() {
            words.push(std::mem::take(&mut word));
        }
    }
    assert!(
        !words.iter().any(|w| w == "any"),
        "{OUTPUT} would declare `any`"
    );
    for w in words {
        let type_name = w.starts_with(|c: char| c.is_ascii_uppercase());
        if type_name && !declared.contains(&w) && !BUILT_IN.contains(&w.as_str()) {
            panic!("{OUTPUT} uses `{w}`, which it does not declare");
        }
    }
}
