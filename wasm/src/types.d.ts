// Generated from the Rust types by wasm/tests/typescript.rs (ts-rs): do not edit.
// Regenerate with `UPDATE_TYPES=1 cargo test -p agent-chatter-wasm --test typescript`.

// ---------------------------------------------------------------------------------------------
// Markers (docs/architecture.md §5)

/** The urgency of a `[NEXT: a !P1]` addressee; default P2. */
export type Intent = "P1" | "P2" | "P3";

/** One `[NEXT: …]` addressee as written, with its intent. */
export interface ParsedAddressee {
  name: string;
  intent: Intent;
}

/** Result of `parseMessage`: the peer's `MessageRouter.parseMessage` result plus `isDone`. */
export interface ParseResult {
  /** `[NEXT]` names, in order. */
  addressees: string[];
  /** The same names with their intent. */
  parsedAddressees: ParsedAddressee[];
  /** `stripRouting(text)`: NEXT, DONE and DROP removed; FROM and TEAM_TASK kept. */
  cleanContent: string;
  /** `[FROM: x]` (first wins), or `null`. */
  fromMember: string | null;
  /** `[TEAM_TASK: x]` (last wins); `""` for `[TEAM_TASK:]` (clears the task); `null` when absent. */
  teamTask: string | null;
  /** `[DROP: a, b]` names; `["ALL"]` for `[DROP: ALL]`; `[]` when absent. */
  dropTargets: string[];
  /** `[DONE]` present. */
  isDone: boolean;
}

// ---------------------------------------------------------------------------------------------
// Prompts and their explain (docs/architecture.md §8, §9)

/** The prompt format an agent type uses (docs/architecture.md §8). */
export type PromptFormat = "claude" | "codex" | "gemini" | "plain";

/** ok < 75% ≤ warning < 90% ≤ critical (docs/architecture.md §19 (seed 003)). */
export type BudgetStatus = "ok" | "warning" | "critical";

/** When extra compactable sections are trimmed (docs/architecture.md §10). */
export type CompactionStrategy = "lazy" | "proactive";

/** Why a deduplicated message left the context. */
export type DedupReason = "sameId" | "sameSpeakerAndContent" | "ownLast";

/** The fate of one stored message for one recipient. */
export type Fate =
  | { fate: "included" }
  | { fate: "outsideWindow" }
  | { fate: "deduplicated"; reason: DedupReason }
  | { fate: "trimmedForBudget" }
  | { fate: "current" }
  | { fate: "pinned" }
  | { fate: "parentContext" }
  | { fate: "related" }
  | { fate: "withheld" };

/** One message's fate. */
export type MessageFate = {
  /**
   * Position of the message in the conversation (0-based, the order of the messages):
   * positions are free to report, ids would cost an allocation per history line.
   */
  index: number;
} & Fate;

/** Size of one emitted (or dropped) section. */
export interface SectionExplain {
  /** `system`, `teamTask`, `context`, `parent`, `related`, `message`, or an extra section's name. */
  name: string;
  /** Bytes it occupies in the output (header included; 0 if dropped). */
  bytes: number;
  /** Estimated tokens, when a token estimator is set. */
  tokens?: number;
  /** True for the Claude system part, which travels as the `--append-system-prompt` flag. */
  inSystemFlag: boolean;
}

/** A cut made to fit the budget. */
export interface Truncation {
  /**
   * What was cut: a section's name (`message`, `system`, `teamTask`, an extra section's
   * name), `parent`, or `system` for Claude's system flag.
   */
  section: string;
  /** Body bytes before and after. */
  fromBytes: number;
  toBytes: number;
}

/** Everything that decided one prompt. */
export interface Explain {
  recipient: string;
  format: PromptFormat;
  sections: SectionExplain[];
  /**
   * Position of the message this prompt answers (its `[MESSAGE]`); none (`null`) for the
   * skeleton of a conversation with no message yet.
   */
  current: number | null;
  /**
   * Fates of the messages the builder looked at (window, pinned, parent, siblings, current),
   * oldest first. Every other stored message is outside the window: listing them all
   * would make each prompt cost O(history), which §9 forbids.
   */
  messages: MessageFate[];
  /** How many stored messages are not listed (all outside the window). */
  outsideWindow: number;
  /** Marker occurrences removed from the text this prompt shows. */
  markersStripped: number;
  truncations: Truncation[];
  /** `prompt` bytes + `systemFlag` bytes (UTF-8); never above `maxBytes`. */
  totalBytes: number;
  maxBytes: number;
  /** Estimated tokens of the whole output, when a token estimator is set. */
  totalTokens?: number;
  /** The token budget, when one is set (`totalTokens <= maxTokens` then holds). */
  maxTokens?: number;
  /** The fuller of the byte and token budgets decides. */
  status: BudgetStatus;
  strategy: CompactionStrategy;
  /** Window size in force for this recipient. */
  window: number;
}

// ---------------------------------------------------------------------------------------------
// ContextManager: the peer's shapes (@testany/agent-chatter-core 1.1.8, seed 001)

/**
 * Who spoke. `system` is used for notices the conversation records itself (agent failures):
 * never deduplicated, never a recipient.
 */
export type SpeakerType = "human" | "ai" | "system";

/** The peer's `SpeakerInfo`. `displayName` defaults to `name` on input. */
export interface SpeakerInfo {
  id: string;
  name: string;
  displayName?: string;
  type: SpeakerType;
}

/**
 * The peer's `ResolvedAddressee`: an addressee of `[NEXT]` and the member it resolved to
 * (`null`: no member).
 */
export interface ResolvedAddressee {
  identifier: string;
  memberId: string | null;
  memberName: string | null;
}

/**
 * The peer's routing intent, in its long form (`P1_INTERRUPT`, …), typed as the peer types it;
 * the short forms (`P1`, …) and any case are also read, as in snapshots.
 */
export type RoutingIntent = "P1_INTERRUPT" | "P2_REPLY" | "P3_EXTEND";

/** The peer's `MessageRouting` (v3.1), plus our `isDone`. */
export interface MessageRouting {
  rawNextMarkers: string[];
  resolvedAddressees: ResolvedAddressee[];
  parsedAddressees?: ParsedAddressee[];
  parentMessageId?: string;
  intent?: RoutingIntent;
  isDone?: boolean;
}

/** The argument of `addMessage`: a message without its id. */
export interface NewConversationMessage {
  /**
   * A `Date`, milliseconds since 1970 or a date string (stored as a `Date`); absent, the
   * stored message has none, as in the peer.
   */
  timestamp?: Date | number | string;
  speaker: SpeakerInfo;
  content: string;
  routing?: MessageRouting;
}

/** A stored message (the peer's `ConversationMessage`). */
export interface ConversationMessage {
  /** `msg-1`, `msg-2`, … in the order messages were stored. */
  id: string;
  /**
   * When it was said: the `Date` given (one made from milliseconds or a date string). A
   * message added without one has none (typed as the peer types it).
   */
  timestamp: Date;
  speaker: Required<SpeakerInfo>;
  /** Exactly as given, markers included. */
  content: string;
  routing?: MessageRouting;
}

/** Constructor options of `ContextManager`. */
export interface ContextManagerOptions {
  /** History window in messages (default 10, the peer's; 0 gives no history). */
  contextWindowSize?: number;
  /** Prompt budget in UTF-8 bytes (default 786432 = 768 KiB). */
  maxBytes?: number;
  /** Called after each `addMessage` with the stored message. */
  onMessageAdded?: (msg: ConversationMessage) => void;
  /** Called after the team task changes (`setTeamTask`, `clear`, `importSnapshot`). */
  onTeamTaskChanged?: (task: string | null) => void;
  /**
   * The peer's `ILogger`: `warn` gets the peer's warnings, in its words (a team task cut at
   * 5 KiB, an unknown agent type assembled as plain text); `debug`, when given, gets the
   * debug lines of the peer's design (`[ContextManager] Message added: msg-3` for each
   * `addMessage`, `[ContextManager] Deduplicated context for AI→AI` when
   * `getContextForAgent` drops an AI→AI duplicate); nothing else is logged.
   */
  logger?: { warn(message: string, context?: Record<string, unknown>): void; debug?(message: string, context?: Record<string, unknown>): void };
  /** An older peer's output sink (`IOutput`); accepted and ignored. */
  output?: object;
  /**
   * The peer's routing-v3 default (its `getContextForRoute`, not offered here): accepted
   * and unused, so the peer's options compile and run unchanged.
   */
  defaultMaxSiblings?: number;
  /** The peer's routing-v3 default: accepted and unused. */
  defaultForceParentReinsertion?: boolean;
  /** The peer's routing-v3 default: accepted and unused. */
  siblingContentMaxLength?: number;
  /** The peer's routing-v3 default: accepted and unused. */
  parentReinsertionMaxBytes?: number;
}

/** Per-call options of `ContextManager::context_for_agent` (`getContextForAgent`). */
export interface AgentContextOptions {
  windowSizeOverride?: number;
  /**
   * A string, or lines: blank ones dropped, joined with `\n`, the whole trimmed
   * (docs/architecture.md §4; the peer also trims each line).
   */
  systemInstruction?: string | string[];
  instructionFileText?: string;
}

/**
 * One history line as the agent sees it: `from`, `to` and stripped content.
 *
 * Shaped like the peer's `PromptContextMessage` (`{from, to, content}`), plus the position of
 * the message it shows (for the explain).
 */
export interface PromptContextMessage {
  from: string;
  /**
   * Resolved addressees' names joined by `, `, or `all` (also when absent or `null`, as
   * the peer prints it).
   */
  to?: string;
  content: string;
  /** Position of the message in the conversation (0-based), when known. */
  index?: number;
}

/**
 * An extra named section of a member's context (docs/architecture.md §19 (seed 003) plugins: plan,
 * memory, tool output).
 */
export interface ExtraSection {
  name: string;
  content: string;
  /** Higher is trimmed first among compactable sections. */
  priority?: number;
  /**
   * Compactable sections may be trimmed (before history); others never are, unless the
   * budget cannot hold them at all (the hard invariant wins, and the explain says so).
   */
  compactable?: boolean;
}

/**
 * Everything an assembler needs (docs/architecture.md §19 (seed 001) `AssemblerInput`, plus route
 * context, extra sections and the pin-first marker). The owned form, for the `ContextManager` API.
 */
export interface AssemblerInput {
  /** History lines, oldest first (already stripped and deduplicated). */
  contextMessages: PromptContextMessage[];
  /** The `[MESSAGE]` body, stripped of every marker. */
  currentMessage: string;
  /** Position of the current message in the conversation, when known. */
  currentIndex?: number;
  teamTask: string | null;
  /**
   * Read from a string or, as the peer's `AssemblerInput` allows, an array of lines
   * (joined as a member's instruction lines are, docs/architecture.md §4).
   */
  systemInstruction?: string | string[];
  instructionFileText?: string;
  /** Budget in UTF-8 bytes, greater than 0; absent (0) uses the manager's. */
  maxBytes: number;
  /**
   * Pin-first policy (docs/architecture.md §19 (seed 002)): the pinned first message, shown
   * before the window.
   */
  pinned?: PromptContextMessage;
  /** Messages skipped between the pinned one and the window (`[N earlier messages omitted]`). */
  omitted?: number;
  /**
   * `[PARENT_CONTEXT]`: the routed parent, when it is not the message and fell out of the
   * window. Read as `parentContext` too, the peer's name for it.
   */
  parent?: PromptContextMessage;
  /**
   * `[RELATED_CONTEXT]`: sibling answers to the same parent, newest first.
   * Read as `siblingContext` too, the peer's name for it.
   */
  related?: PromptContextMessage[];
  extraSections?: ExtraSection[];
  /** The recipient, for the explain. */
  agentId?: string;
}

/** `assemblePrompt`'s result: the peer's `{prompt, systemFlag?}` plus the explain. */
export interface AssemblerOutput {
  prompt: string;
  /** Claude's system part, passed as `--append-system-prompt`; absent when there is none. */
  systemFlag?: string;
  explain: Explain;
}

/** `exportSnapshot()`'s result and `importSnapshot`'s argument. */
export interface ContextSnapshot {
  messages: ConversationMessage[];
  teamTask: string | null;
  timestamp: number;
  version: 1;
}

// ---------------------------------------------------------------------------------------------
// Team configs and scenarios (docs/architecture.md §4, §11, §11b)

/** Human or AI member. */
export type MemberKind = "human" | "ai";

/** How parallel `[NEXT: a, b, c]` deliveries choose their `[MESSAGE]` (docs/architecture.md §6). */
export type DeliveryPolicy = "latest" | "parent";

/** Which token estimate the explain reports and a token budget (`maxTokens`) is kept with. */
export type TokenEstimator = "none" | "charsDiv4";

/**
 * What an agent may do on the machine, one small vocabulary mapped to each CLI's own flag
 * (docs/architecture.md §14c):
 *
 * | ours | Claude `--permission-mode` | Codex `-s` | Gemini `--approval-mode` |
 * |---|---|---|---|
 * | `readOnly` | `plan` | `read-only` | `plan` |
 * | `edit` | `acceptEdits` | `workspace-write` | `auto_edit` |
 * | `full` | `bypassPermissions` | `danger-full-access` | `yolo` |
 */
export type PermissionMode = "readOnly" | "edit" | "full";

/** A member in our team format (`id` and `displayName` default to `name`). */
export interface MemberConfig {
  id?: string;
  name: string;
  displayName?: string;
  kind: MemberKind;
  /** Required for AI members: `claude`/`claude-code`, `codex`/`openai-codex`, `gemini`/`google-gemini`, or any other (plain format). */
  agentType?: string;
  /** A string, or lines (joined with `\n`, blank ones dropped). */
  systemInstruction?: string | string[];
  instructionFile?: string;
  /** The instruction file's text (the core never reads files). */
  instructionFileText?: string;
  baseDir?: string;
  /** History window for this member; overrides the team's. */
  windowSize?: number;
  /** Run settings (used by a host that runs the agent's CLI): environment variables added. */
  env?: { [other: string]: string };
  /** Arguments added to the CLI's command. */
  additionalArgs?: string[];
  /** The model, passed with the CLI's own flag. */
  model?: string;
  /** What the agent may do: `"readOnly"`, `"edit"` or `"full"`. */
  permissionMode?: PermissionMode;
  /** This member's timeout in ms; overrides the team's. */
  timeoutMs?: number;
  /**
   * Extra named sections of its context (plan, memory, tool output); compactable ones are
   * trimmed before history.
   */
  extraSections?: ExtraSection[];
}

/** Team-wide settings (all optional). */
export interface TeamSettingsConfig {
  windowSize?: number;
  maxBytes?: number;
  pinFirst?: boolean;
  delivery?: DeliveryPolicy;
  compaction?: CompactionStrategy;
  maxRounds?: number;
  maxAgentResponseMs?: number;
  /**
   * Token figures in the explain: `"charsDiv4"` (characters ÷ 4, the seeds' estimate)
   * or `"none"`.
   */
  tokenEstimator?: TokenEstimator;
  /** A token budget kept beside `maxBytes` (implies the `charsDiv4` estimate). */
  maxTokens?: number;
  /**
   * A spending cap in US dollars: once the runs' reported cost reaches it, no further AI
   * delivery starts.
   */
  maxCostUsd?: number;
}

/** Our team format. */
export interface TeamConfig {
  id?: string;
  name?: string;
  members: MemberConfig[];
  settings?: TeamSettingsConfig;
}

/** A member in the peer's `cli-config` (schema 1.1/1.2); other fields are ignored. */
export interface PeerMemberConfig {
  name: string;
  displayName?: string;
  type: MemberKind;
  agentType?: string;
  systemInstruction?: string | string[];
  instructionFile?: string;
  baseDir?: string;
  windowSize?: number;
  [other: string]: unknown;
}

/** The peer's `cli-config` (schema 1.1/1.2); other fields are ignored. */
export interface PeerCliConfig {
  schemaVersion?: "1.1" | "1.2";
  team: { name: string; displayName?: string; members: PeerMemberConfig[]; [other: string]: unknown };
  maxRounds?: number;
  conversation?: { maxAgentResponseTime?: number; [other: string]: unknown };
  [other: string]: unknown;
}

/** A scenario (docs/architecture.md §11b): a team, settings and a history to preview. */
export interface ScenarioInput {
  team: TeamConfig | PeerCliConfig;
  /** Settings in force exactly as given (`windowSize: 0` means no history). */
  context?: { windowSize?: number; maxBytes?: number; pinFirst?: boolean; maxTokens?: number };
  /** Applied after the messages and wins; `null` clears; absent lets the markers decide. */
  teamTask?: string | null;
  messages: {
    /** A member's id or name, or `system` for a system notice. */
    from: string;
    /** Raw text, markers included. */
    content: string;
    /** Explicit addressees; absent = from the `[NEXT]` markers, empty = everyone (`all`). */
    to?: string[];
  }[];
}

/** The prompt a member receives, and why (`preview`, `Scenario.preview`). */
export interface Preview {
  prompt: string;
  /**
   * Claude's system part, passed as `--append-system-prompt`; none (`null`) when empty or
   * for other formats.
   */
  systemFlag: string | null;
  explain: Explain;
}

// ---------------------------------------------------------------------------------------------
// Conversation: the routing state machine (docs/architecture.md §6)

/** A member of a validated team (our format). */
export interface Member {
  id: string;
  name: string;
  displayName: string;
  kind: MemberKind;
  /** Normalised agent type (`claude-code`, …); required for AI members. */
  agentType?: string;
  /**
   * A string or an array of lines in config files (docs/architecture.md §4), joined by
   * `join_instruction_lines`.
   */
  systemInstruction?: string;
  /** Path of the instruction file as configured (read by the bridge, never by the core). */
  instructionFile?: string;
  /** The instruction file's text, supplied by the host. */
  instructionFileText?: string;
  /** Directory the member's relative paths are resolved against (host's concern). */
  baseDir?: string;
  /** Per-member history window; overrides the team's. */
  windowSize?: number;
  /**
   * Extra named sections of this member's context (docs/architecture.md §10): plan, memory,
   * tool output; compactable ones are trimmed before history.
   */
  extraSections?: ExtraSection[];
  /** Environment variables added to the bridge's own for this agent. */
  env?: { [other: string]: string };
  /** Arguments added to the CLI's command (after its own, before a trailing `-`). */
  additionalArgs?: string[];
  /** The model, passed with the CLI's own flag (Claude `--model`, Codex and Gemini `-m`). */
  model?: string;
  /** What the agent may do, in one vocabulary mapped to each CLI's flag. */
  permissionMode?: PermissionMode;
  /** This member's timeout; overrides the team's `maxAgentResponseMs`. */
  timeoutMs?: number;
}

/** A validated team's settings: every setting, with its default where the config left it out. */
export interface TeamSettings {
  windowSize: number;
  maxBytes: number;
  /**
   * Pin the first message and show `[N earlier messages omitted]`
   * (docs/architecture.md §19 (seed 002)). Off by default.
   */
  pinFirst: boolean;
  delivery: DeliveryPolicy;
  compaction: CompactionStrategy;
  /** Bound on AI deliveries per human message (`maxRounds`). */
  maxRounds: number;
  /** `conversation.maxAgentResponseTime` in ms, for hosts that run agents. */
  maxAgentResponseMs?: number;
  /**
   * Token estimate shown in the explain (docs/architecture.md §9); `maxTokens` implies
   * `charsDiv4`.
   */
  tokenEstimator?: TokenEstimator;
  /** Optional token budget, kept beside the byte budget with the `chars/4` estimate. */
  maxTokens?: number;
  /**
   * Spending cap (docs/architecture.md §14c): once the runs' reported cost reaches it, no
   * further AI delivery starts.
   */
  maxCostUsd?: Usd;
}

/** A validated team with all its settings. */
export interface Team {
  id: string;
  name: string;
  members: Member[];
  settings: TeamSettings;
}

/**
 * The speaker of a message, copied from the member at the time it spoke so history stays
 * readable after the team changes.
 */
export interface Speaker {
  id: string;
  name: string;
  displayName: string;
  kind: SpeakerType;
}

/** The routing parsed from a message, stored beside the raw text. */
export interface Routing {
  /** Every `[NEXT]` addressee as written, in order. */
  rawNext: ParsedAddressee[];
  /**
   * The member ids the addressees resolved to (unknown names are left out and reported).
   * Empty means "everyone" and prints as `all`.
   */
  resolved: string[];
  /**
   * Member names for `resolved`, in the same order, as the context line prints them
   * (`- from -> to: …`). Kept so history renders the same after the team changes.
   */
  resolvedNames: string[];
  /** The message carried `[DONE]`. */
  isDone: boolean;
  /** The message this one answers (a routed delivery's parent). */
  parent: string | null;
  /** The intent this message was delivered with, if it was a routed answer. */
  intent: Intent | null;
}

/** A stored message: raw content plus parsed routing. */
export interface Message {
  /** `msg-1`, `msg-2`, … in the order messages were stored. */
  id: string;
  speaker: Speaker;
  /** Exactly what was sent, markers included. */
  content: string;
  routing: Routing;
  /** Milliseconds since 1970, as given by the host. */
  at: number;
}

/** Where the conversation stands. */
export type Status = "idle" | "running" | "awaitingHuman" | "completed";

/** One pending delivery: `to` must answer `parent`. */
export interface QueuedDelivery {
  /** The member who will receive it. */
  to: string;
  /** The message that addressed `to`. */
  parent: string;
  /** The intent it runs with (after any demotion). */
  intent: Intent;
  /** Enqueue order, unique within a conversation; FIFO means lowest first. */
  seq: number;
}

/** The delivery whose outcome the machine is waiting for. */
export interface InFlight {
  to: string;
  /** The `[MESSAGE]` of its prompt. */
  message: string;
  /** The message that addressed `to`; the reply is stored with this parent. */
  parent: string;
  intent: Intent;
  /** When it was emitted (the time given to the call that emitted it). */
  since: number;
}

/** A delivery to run now: run agent `to` with `prompt.prompt` (and `prompt.systemFlag`). */
export interface Delivery {
  /**
   * SHA-256 (lowercase hex) of exactly what the agent is given: `prompt.prompt`'s UTF-8 bytes,
   * then, when there is a system flag, a NUL byte and the flag's bytes (docs/architecture.md
   * §6b). The bridge sends the same digest, so a host can show that a preview is what was sent.
   */
  promptSha256: string;
  /** The agent to run. */
  to: string;
  /** The message the prompt shows as `[MESSAGE]`. */
  message: string;
  /** The message that addressed `to` (its reply will be stored with this parent). */
  parent: string | null;
  intent: Intent;
  /** Exactly what the agent receives, built from the store at emission time, with its explain. */
  prompt: Preview;
}

/**
 * Informational events; show them, never treat them as fatal. `roundLimitReached` ends the
 * current AI run (a human must speak to continue).
 */
export type Notice =
  | { kind: "teamTaskTruncated"; from: number; to: number }
  | { kind: "unresolvedAddressees"; message: string; names: string[] }
  | { kind: "unresolvedDropTargets"; message: string; names: string[] }
  | { kind: "selfAddressed"; message: string; member: string }
  | { kind: "dropped"; message: string; removed: string[] }
  | { kind: "nextIgnoredAfterDone"; message: string; names: string[] }
  | { kind: "notRoutedAfterDone"; message: string }
  | { kind: "fromIgnored"; message: string; member: string }
  | { kind: "queueFull"; to: string; parent: string; limit: number }
  | { kind: "demoted"; to: string; parent: string; from: Intent; limit: number }
  | { kind: "alreadyQueued"; to: string; parent: string; intent: Intent }
  | { kind: "roundLimitReached"; limit: number; dropped: string[] }
  | { kind: "costLimitReached"; limit: Usd; spent: Usd; passedBy: Usd | null; dropped: string[] }
  | {
    kind: "budgetCrossed";
    to: string;
    status: BudgetStatus;
    totalBytes: number;
    maxBytes: number;
  }
  | { kind: "unknownAgentType"; member: string; agentType: string }
  | { kind: "promptFailed"; to: string; error: string }
  | { kind: "messageCut"; to: string; message: string; fromBytes: number; toBytes: number }
  | { kind: "memberLeft"; member: string; name: string; after: number; dropped: number };

/**
 * What the host must do next:
 * - `deliver`: run the agent, then call `agentReplied` or `agentFailed` exactly once;
 * - `awaitHuman`: prompt this human; their next input without `[FROM]` is theirs;
 * - `finished`: `[DONE]` was said; nothing more until a human speaks;
 * - `notice`: show it.
 */
export type Action =
  | ({ type: "deliver" } & Delivery)
  | { type: "awaitHuman"; member: string }
  | { type: "finished" }
  | ({ type: "notice" } & Notice);

/**
 * The state of a conversation's store (docs/architecture.md §19 (seed 001 §2.4)): messages, team
 * task, when it was taken.
 */
export interface Snapshot {
  /** Always 1 (`SNAPSHOT_VERSION`). */
  version: 1;
  messages: Message[];
  /** `null` when there is no team task. */
  teamTask: string | null;
  /**
   * When the snapshot was taken (ms since 1970), supplied by the host (the core reads no
   * clock).
   */
  timestamp: number;
}

/** The pending deliveries, in enqueue order, plus the scheduler's run counter. */
export interface RoutingQueue {
  items: QueuedDelivery[];
  nextSeq: number;
  /** Consecutive picks made by rule 2 (children of the last completed message). */
  localRun: number;
}

/** Everything `Conversation` holds besides the team and the store. */
export interface RoutingState {
  queue: RoutingQueue;
  status: Status;
  waitingFor: string | null;
  inFlight: InFlight | null;
  /** `[DONE]` was said while the delivery in flight ran: its reply will be stored, not routed. */
  inFlightAfterDone: boolean;
  lastCompleted: string | null;
  rounds: number;
}

/**
 * An amount in US dollars, as a CLI reports it (`total_cost_usd`). Always finite and not
 * negative (the reader refuses anything else), so it compares as a value.
 */
export type Usd = number;

/**
 * What one run cost, as far as its CLI said. In JSON (camelCase, absent figures left out):
 * `{"inputTokens": 1200, "outputTokens": 80, "cachedTokens": 1000, "costUsd": 0.0031,
 * "durationMs": 5400}`.
 */
export interface Usage {
  /** Tokens read, cached ones included. */
  inputTokens?: number;
  outputTokens?: number;
  /** Of the input, tokens read from the provider's prompt cache. */
  cachedTokens?: number;
  costUsd?: Usd;
  /** How long the run took (the CLI's own figure, else the host's clock). */
  durationMs?: number;
}

/**
 * The kind of an agent's failure: what the other agents' context says of it, in words, where
 * the full reason (a CLI's stderr, an address, a stack) would only mislead them or leak.
 */
export type Failure =
  | "timeout"
  | "cancelled"
  | "crashed"
  | "agentError"
  | "emptyReply"
  | "tooLarge"
  | "cutOff"
  | "cannotRun"
  | "interrupted";

/**
 * One input of a session (docs/architecture.md §6b); `at` is in milliseconds since the
 * epoch. `loadScenario`: a recorded history was opened: team, settings and messages from a
 * scenario (no routing). `memberLeft`: a member leaves the team from now on (their messages
 * stay theirs; they get no more messages).
 */
export type Fact =
  | { type: "setTeam"; team: Team; settings?: TeamSettings }
  | { type: "setSettings"; settings: TeamSettings }
  | { type: "human"; text: string; sender: string | null; at: number }
  | {
    type: "replied";
    to: string;
    text: string;
    at: number;
    incomplete?: string;
    /**
     * What the run cost, as its CLI reported it (docs/architecture.md §14c). Absent in
     * logs written before it was recorded, which replay as they always did.
     */
    usage?: Usage;
  }
  | { type: "failed"; to: string; reason: string; at: number; failure?: Failure; usage?: Usage }
  | { type: "retry"; to: string; at: number }
  | { type: "loadScenario"; scenario: ScenarioInput }
  | { type: "memberLeft"; member: string; at: number };

/** `Conversation.exportSession()`'s result and `Conversation.resume`'s argument: the fact log. */
export interface ConversationSession {
  format: "agent-chatter-session/1";
  facts: Fact[];
}

/** What-if settings for `Conversation.preview`; left out = the setting in force. */
export interface PreviewOverrides {
  windowSize?: number;
  maxBytes?: number;
  pinFirst?: boolean;
  maxTokens?: number;
}
