/// <reference lib="es2015.symbol.wellknown" />
/// <reference lib="esnext.disposable" />
export { version, preview, Scenario, Conversation } from './agent_chatter_wasm.js';
// The package's types, by name: the build's internal helpers stay out of autocomplete.
export type {
  Action, AgentContextOptions, AssemblerInput, AssemblerOutput, BudgetStatus,
  CompactionStrategy, ContextManagerOptions, ContextSnapshot, ConversationMessage,
  ConversationSession, DedupReason, Delivery, DeliveryPolicy, Explain, ExtraSection, Fact,
  Failure, Fate, InFlight, Intent, Member, MemberConfig, MemberKind, Message, MessageFate,
  MessageRouting, NewConversationMessage, Notice, ParseResult, ParsedAddressee, PeerCliConfig,
  PeerMemberConfig, PermissionMode, Preview, PreviewOverrides, PromptContextMessage,
  PromptFormat, QueuedDelivery, ResolvedAddressee, Routing, RoutingIntent, RoutingQueue,
  RoutingState, ScenarioInput, SectionExplain, Snapshot, Speaker, SpeakerInfo, SpeakerType,
  Status, Team, TeamConfig, TeamSettings, TeamSettingsConfig, TokenEstimator, Truncation, Usage,
  Usd
} from './agent_chatter_wasm.js';
import type { ParseResult, AgentContextOptions, AssemblerInput, AssemblerOutput, ContextManagerOptions, ContextSnapshot, ConversationMessage, NewConversationMessage } from './agent_chatter_wasm.js';

/**
 * The Node build is ready on import; `init()` resolves at once, so isomorphic code runs
 * unchanged. It takes (and ignores) what the web build's `init` takes.
 */
export default function init(options?: unknown): Promise<void>;
/**
 * The Node build is ready on import; `initSync()` does nothing, so isomorphic code runs
 * unchanged. It takes (and ignores) what the web build's `initSync` takes.
 */
export declare function initSync(options?: unknown): void;
