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
export type DedupReason = "sameId" | "sameSpeakerAndContent" | "parent" | "ownLast";

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

/** One message's fate: its id, its speaker id, and the fate fields. */
export type MessageFate = { id: string; speaker: string } & Fate;

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
}

/** Per-call options of `getContextForAgent`. */
export interface AgentContextOptions {
  windowSizeOverride?: number;
  systemInstruction?: string;
  instructionFileText?: string;
}

/** One history line as the agent sees it (the peer's `PromptContextMessage`). */
export interface PromptContextMessage {
  from: string;
  /** Addressees' names joined by `, `, or `all` (the default). */
  to?: string;
  content: string;
  /** The stored message this line shows (for the explain). */
  messageId?: string;
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
  systemInstruction?: string;
  instructionFileText?: string;
  /** Budget in UTF-8 bytes; 0 or absent uses the manager's. */
  maxBytes: number;
  currentMessageId?: string;
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
