/// <reference lib="es2015.symbol.wellknown" />
/// <reference lib="esnext.disposable" />
export { default, initSync, version, preview, Scenario, Conversation } from './agent_chatter_wasm.js';
// The package's types, by name: the build's internal helpers stay out of autocomplete.
export type {
  Action, AgentContextOptions, AssemblerInput, AssemblerOutput, BudgetStatus,
  CompactionStrategy, ContextManagerOptions, ContextSnapshot, ConversationMessage,
  ConversationSession, DedupReason, Delivery, DeliveryPolicy, Explain, ExtraSection, Fact,
  Failure, Fate, InFlight, InitInput, InitOutput, Intent, Member, MemberConfig, MemberKind,
  Message, MessageFate, MessageRouting, NewConversationMessage, Notice, ParseResult,
  ParsedAddressee, PeerCliConfig, PeerMemberConfig, PermissionMode, Preview, PreviewOverrides,
  PromptContextMessage, PromptFormat, QueuedDelivery, ResolvedAddressee, Routing, RoutingIntent,
  RoutingQueue, RoutingState, ScenarioInput, SectionExplain, Snapshot, Speaker, SpeakerInfo,
  SpeakerType, Status, SyncInitInput, Team, TeamConfig, TeamSettings, TeamSettingsConfig,
  TokenEstimator, Truncation, Usage, Usd
} from './agent_chatter_wasm.js';
import type { ParseResult, AgentContextOptions, AssemblerInput, AssemblerOutput, ContextManagerOptions, ContextSnapshot, ConversationMessage, NewConversationMessage } from './agent_chatter_wasm.js';
