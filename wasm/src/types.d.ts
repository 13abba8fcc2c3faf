/** Intent of a `[NEXT: name !P1]` addressee; `P2` when not written. */
export type Intent = "P1" | "P2" | "P3";

/** One `[NEXT]` addressee as written. */
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
// Prompts and their explain (DESIGN §8, §9)

/** The prompt format an agent type uses. */
export type PromptFormat = "claude" | "codex" | "gemini" | "plain";

/** ok < 75% ≤ warning < 90% ≤ critical of the budget. */
export type BudgetStatus = "ok" | "warning" | "critical";

/** When compactable extra sections are trimmed. */
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
  | { fate: "related" };

/** One message's fate: its position in the conversation (0-based, the order of the messages) and the fate fields. */
export type MessageFate = { index: number } & Fate;

/** Size of one emitted (or dropped) section. */
export interface SectionExplain {
  /** `system`, `teamTask`, `context`, `parent`, `related`, `message`, or an extra section's name. */
  name: string;
  /** Bytes it occupies in the output, header included; 0 if dropped. */
  bytes: number;
  /** Estimated tokens, when a token estimator is set. */
  tokens?: number;
  /** True for Claude's system part, which travels as the `--append-system-prompt` flag. */
  inSystemFlag: boolean;
}

/** A cut made to fit the budget. */
export interface Truncation {
  section: string;
  fromBytes: number;
  toBytes: number;
}

/** Everything that decided one prompt. */
export interface Explain {
  recipient: string;
  format: PromptFormat;
  sections: SectionExplain[];
  /** Position of the message this prompt answers; `null` for the skeleton of an empty conversation. */
  current: number | null;
  /** Fates of the messages the builder looked at, oldest first; every other message is outside the window. */
  messages: MessageFate[];
  /** How many stored messages are outside the window and not listed. */
  outsideWindow: number;
  /** Marker occurrences removed from the text this prompt shows. */
  markersStripped: number;
  truncations: Truncation[];
  /** `prompt` bytes + `systemFlag` bytes (UTF-8); never above `maxBytes`. */
  totalBytes: number;
  maxBytes: number;
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

/** Who spoke. */
export type SpeakerType = "human" | "ai" | "system";

/** The peer's `SpeakerInfo`. `displayName` defaults to `name` on input. */
export interface SpeakerInfo {
  id: string;
  name: string;
  displayName?: string;
  type: SpeakerType;
}

/** An addressee of `[NEXT]` and the member it resolved to (`null`: no member). */
export interface ResolvedAddressee {
  identifier: string;
  memberId: string | null;
  memberName: string | null;
}

/** The peer's routing intent; the short forms are accepted on input. */
export type RoutingIntent = "P1_INTERRUPT" | "P2_REPLY" | "P3_EXTEND" | Intent;

/** The peer's `MessageRouting`, plus `isDone`. */
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
  speaker: SpeakerInfo;
  content: string;
  routing?: MessageRouting;
  /** A `Date`, milliseconds since 1970 or a date string; absent means now. */
  timestamp?: Date | number | string;
}

/** A stored message (the peer's `ConversationMessage`). */
export interface ConversationMessage {
  /** `msg-1`, `msg-2`, … in the order messages were stored. */
  id: string;
  timestamp: Date;
  speaker: Required<SpeakerInfo>;
  /** Exactly as given, markers included. */
  content: string;
  routing?: MessageRouting;
}

/** Constructor options of `ContextManager`. */
export interface ContextManagerOptions {
  /** History window in messages (default 5; 0 gives no history). */
  contextWindowSize?: number;
  /** Prompt budget in UTF-8 bytes (default 786432 = 768 KiB). */
  maxBytes?: number;
  /** Called after each `addMessage` with the stored message. */
  onMessageAdded?: (msg: ConversationMessage) => void;
  /** Called after the team task changes (`setTeamTask`, `clear`, `importSnapshot`). */
  onTeamTaskChanged?: (task: string | null) => void;
  /**
   * The peer's `ILogger`: `warn` gets the peer's warnings, in its words (a team task cut at
   * 5 KiB, an unknown agent type assembled as plain text); nothing else is logged.
   */
  logger?: { warn(message: string, context?: Record<string, unknown>): void };
  /** An older peer's output sink (`IOutput`); accepted and ignored. */
  output?: object;
}

/** Per-call options of `getContextForAgent`. */
export interface AgentContextOptions {
  windowSizeOverride?: number;
  /** A string, or lines: blank ones dropped, joined with `\n`, the whole trimmed (DESIGN §4; the peer also trims each line). */
  systemInstruction?: string | string[];
  instructionFileText?: string;
}

/** One history line as the agent sees it (the peer's `PromptContextMessage`). */
export interface PromptContextMessage {
  from: string;
  /** Addressees' names joined by `, `, or `all` (the default). */
  to?: string;
  content: string;
  /** Position of the stored message this line shows (for the explain). */
  index?: number;
}

/** An extra named section (plan, memory, tool output). */
export interface ExtraSection {
  name: string;
  content: string;
  /** Higher is trimmed first among compactable sections. */
  priority?: number;
  compactable?: boolean;
}

/** Everything an assembler needs (the peer's `AssemblerInput`, plus optional extras). */
export interface AssemblerInput {
  contextMessages: PromptContextMessage[];
  currentMessage: string;
  teamTask: string | null;
  /** A string, or lines: blank ones dropped, joined with `\n`, the whole trimmed (DESIGN §4; the peer also trims each line). */
  systemInstruction?: string | string[];
  instructionFileText?: string;
  /** Budget in UTF-8 bytes, greater than 0; absent uses the manager's. */
  maxBytes: number;
  /** Position of the current message (for the explain). */
  currentIndex?: number;
  pinned?: PromptContextMessage;
  omitted?: number;
  parent?: PromptContextMessage;
  related?: PromptContextMessage[];
  extraSections?: ExtraSection[];
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
// Team configs and scenarios (DESIGN §4, §11, §11b)

/** A member in our team format (`id` and `displayName` default to `name`). */
export interface MemberConfig {
  id?: string;
  name: string;
  displayName?: string;
  kind: "human" | "ai";
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
}

/** Team-wide settings (all optional). */
export interface TeamSettingsConfig {
  windowSize?: number;
  maxBytes?: number;
  pinFirst?: boolean;
  delivery?: "latest" | "parent";
  compaction?: "lazy" | "proactive";
  maxRounds?: number;
  maxAgentResponseMs?: number;
  /** Token figures in the explain: `"charsDiv4"` (seed 002's estimate) or `"none"`. */
  tokenEstimator?: "none" | "charsDiv4";
  /** A token budget kept beside `maxBytes` (implies the `charsDiv4` estimate). */
  maxTokens?: number;
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
  type: "human" | "ai";
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
  team: {
    name: string;
    displayName?: string;
    members: PeerMemberConfig[];
    [other: string]: unknown;
  };
  maxRounds?: number;
  conversation?: { maxAgentResponseTime?: number; [other: string]: unknown };
  [other: string]: unknown;
}

/** A scenario (DESIGN §11b): a team, settings and a history to preview. */
export interface ScenarioInput {
  team: TeamConfig | PeerCliConfig;
  /** Settings in force exactly as given (`windowSize: 0` means no history). */
  context?: { windowSize?: number; maxBytes?: number; pinFirst?: boolean; maxTokens?: number };
  /** Applied after the messages and wins; `null` clears; absent lets the markers decide. */
  teamTask?: string | null;
  messages: {
    /** A member id or name, or `system` for a system notice. */
    from: string;
    /** Raw text, markers included. */
    content: string;
    /** Addressees; absent = from `[NEXT]`, `[]` = everyone (`all`). */
    to?: string[];
  }[];
}

/** The prompt a member receives, and why (`preview`, `Scenario.preview`). */
export interface Preview {
  prompt: string;
  /** Claude's system part, passed as `--append-system-prompt`; `null` when there is none. */
  systemFlag: string | null;
  explain: Explain;
}

// ---------------------------------------------------------------------------------------------
// Conversation: the routing state machine (DESIGN §6)

/** A member of a validated team (our format). */
export interface Member {
  id: string;
  name: string;
  displayName: string;
  kind: "human" | "ai";
  agentType?: string;
  systemInstruction?: string;
  instructionFile?: string;
  instructionFileText?: string;
  baseDir?: string;
  windowSize?: number;
}

/** A validated team with all its settings. */
export interface Team {
  id: string;
  name: string;
  members: Member[];
  settings: Required<Omit<TeamSettingsConfig, "maxAgentResponseMs" | "tokenEstimator" | "maxTokens">> &
    Pick<TeamSettingsConfig, "maxAgentResponseMs" | "tokenEstimator" | "maxTokens">;
}

/** The speaker of a stored message (copied from the member when it spoke). */
export interface Speaker {
  id: string;
  name: string;
  displayName: string;
  kind: SpeakerType;
}

/** The routing parsed from a message, stored beside its raw text. */
export interface Routing {
  /** Every `[NEXT]` addressee as written, in order. */
  rawNext: ParsedAddressee[];
  /** Member ids the addressees resolved to; empty means everyone (`all`). */
  resolved: string[];
  /** Names for `resolved`, as context lines print them. */
  resolvedNames: string[];
  isDone: boolean;
  /** The message this one answers. */
  parent: string | null;
  /** The intent it was delivered with, if it was a routed answer. */
  intent: Intent | null;
}

/** A stored message: raw content plus parsed routing. */
export interface Message {
  /** `msg-1`, `msg-2`, … */
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

/** A pending delivery. */
export interface QueuedDelivery {
  to: string;
  parent: string;
  intent: Intent;
  /** Enqueue order (FIFO is lowest first). */
  seq: number;
}

/** The delivery whose outcome is awaited. */
export interface InFlight {
  to: string;
  message: string;
  parent: string;
  intent: Intent;
  since: number;
}

/** A delivery to run now: run agent `to` with `prompt.prompt` (and `prompt.systemFlag`). */
export interface Delivery {
  to: string;
  /** The message the prompt shows as `[MESSAGE]`. */
  message: string;
  /** The message that addressed `to`. */
  parent: string | null;
  intent: Intent;
  prompt: Preview;
  /**
   * SHA-256 (lowercase hex) of exactly what the agent is given: `prompt.prompt`'s UTF-8 bytes,
   * then, when there is a system flag, a NUL byte and the flag's bytes (DESIGN §6b). The
   * bridge sends the same digest, so a host can show that a preview is what was sent.
   */
  promptSha256: string;
}

/** Informational events; show them, never treat them as fatal. */
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
  | { kind: "unknownAgentType"; member: string; agentType: string }
  | { kind: "promptFailed"; to: string; error: string }
  | { kind: "messageCut"; to: string; message: string; fromBytes: number; toBytes: number };

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

/** A conversation's messages and team task (our snapshot format, version 1). */
export interface Snapshot {
  version: 1;
  messages: Message[];
  teamTask: string | null;
  /** When it was taken (ms since 1970). */
  timestamp: number;
}

/** The routing queue as persisted. */
export interface RoutingQueue {
  items: QueuedDelivery[];
  nextSeq: number;
  localRun: number;
}

/** Everything a conversation holds besides its team and messages. */
export interface RoutingState {
  queue: RoutingQueue;
  status: Status;
  waitingFor: string | null;
  inFlight: InFlight | null;
  inFlightAfterDone: boolean;
  lastCompleted: string | null;
  rounds: number;
}

/** One input of a session (DESIGN §6b); `at` is in milliseconds since the epoch. */
export type Fact =
  | { type: "setTeam"; team: Team; settings?: Team["settings"] }
  | { type: "setSettings"; settings: Team["settings"] }
  | { type: "human"; text: string; sender: string | null; at: number }
  | { type: "replied"; to: string; text: string; at: number }
  | { type: "failed"; to: string; reason: string; at: number }
  /** A recorded history was opened: team, settings and messages from a scenario (no routing). */
  | { type: "loadScenario"; scenario: ScenarioInput };

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
