// Type-checked (never run): code typed against the TypeScript peer
// (@testany/agent-chatter-core, whose class ContextManager is a drop-in for) compiles against
// this package. The peer's public shapes are restated below from its published declarations
// (nothing of its code), and each is passed both ways: ours where the peer's is expected, and
// the peer's where ours is.
import { ContextManager } from '../../pkg/node/index.js';
import type {
  AssemblerInput, AssemblerOutput, ContextManagerOptions, ContextSnapshot, ConversationMessage,
} from '../../pkg/node/index.js';

declare namespace Peer {
  type RoutingIntent = 'P1_INTERRUPT' | 'P2_REPLY' | 'P3_EXTEND';
  interface SpeakerInfo { id: string; name: string; displayName: string; type: 'ai' | 'human' | 'system' }
  interface ResolvedAddressee { identifier: string; memberId: string | null; memberName: string | null }
  interface ParsedAddressee { name: string; intent: 'P1' | 'P2' | 'P3' }
  interface MessageRouting {
    rawNextMarkers: string[];
    resolvedAddressees: ResolvedAddressee[];
    parsedAddressees?: ParsedAddressee[];
    parentMessageId?: string;
    intent?: RoutingIntent;
    dropTargets?: string[];
  }
  interface ConversationMessage { id: string; timestamp: Date; speaker: SpeakerInfo; content: string; routing?: MessageRouting }
  interface ILogger {
    debug(message: string, context?: Record<string, unknown>): void;
    info(message: string, context?: Record<string, unknown>): void;
    warn(message: string, context?: Record<string, unknown>): void;
    error(message: string, context?: Record<string, unknown>): void;
  }
  interface ContextManagerOptions {
    contextWindowSize?: number;
    maxBytes?: number;
    onMessageAdded?: (msg: ConversationMessage) => void;
    onTeamTaskChanged?: (task: string | null) => void;
    logger?: ILogger;
    defaultMaxSiblings?: number;
    defaultForceParentReinsertion?: boolean;
    siblingContentMaxLength?: number;
    parentReinsertionMaxBytes?: number;
  }
  interface PromptContextMessage { from: string; to?: string; content: string }
  interface AssemblerInput {
    contextMessages: PromptContextMessage[];
    currentMessage: string;
    teamTask: string | null;
    systemInstruction?: string | string[];
    instructionFileText?: string;
    maxBytes: number;
    parentContext?: PromptContextMessage;
    siblingContext?: PromptContextMessage[];
    routeMeta?: { parentMessageId?: string; intent?: RoutingIntent };
  }
  interface AssemblerOutput { prompt: string; systemFlag?: string }
  interface ContextSnapshot { messages: ConversationMessage[]; teamTask: string | null; timestamp: number; version: 1 }
  interface RoutingItem {
    id: string; targetMemberId: string; parentMessageId: string; triggerMessageId: string;
    intent: RoutingIntent; enqueuedAt: number;
  }
  interface RouteContextOptions {
    windowSizeOverride?: number; systemInstruction?: string | string[]; instructionFileText?: string;
    maxSiblings?: number; forceParentReinsertion?: boolean;
  }
  interface RouteContextResult extends AssemblerInput {
    parentMessage?: PromptContextMessage;
    siblingContext: PromptContextMessage[];
    meta: {
      parentMessageId: string | undefined; intent: RoutingIntent | undefined; targetMemberId: string;
      siblingCount: number; siblingTotalCount: number; truncatedSiblings: boolean;
    };
  }
  interface IContextProvider {
    addMessage(msg: Omit<ConversationMessage, 'id'>): ConversationMessage;
    getMessages(): ConversationMessage[];
    getLatestMessage(): ConversationMessage | null;
    setTeamTask(task: string): void;
    getTeamTask(): string | null;
    getContextForAgent(agentId: string, agentType: string, options?: { windowSizeOverride?: number; systemInstruction?: string | string[]; instructionFileText?: string }): AssemblerInput;
    clear(): void;
    exportSnapshot(): ContextSnapshot;
    importSnapshot(snapshot: ContextSnapshot): void;
  }
}

declare const peerOptions: Peer.ContextManagerOptions;
declare const peerMessage: Peer.ConversationMessage;
declare const peerSnapshot: Peer.ContextSnapshot;
declare const peerInput: Peer.AssemblerInput;
declare const route: Peer.RoutingItem;
declare const routeOptions: Peer.RouteContextOptions;

// The peer's options, messages, snapshots and inputs are ours.
const cm = new ContextManager(peerOptions);
const options: ContextManagerOptions = peerOptions;
// An inline options object with the peer's routing-v3 defaults (accepted, unused) compiles: no
// TS2353 for an excess property.
const inline = new ContextManager({
  contextWindowSize: 5, defaultMaxSiblings: 3, defaultForceParentReinsertion: false,
  siblingContentMaxLength: 200, parentReinsertionMaxBytes: 4096,
});
const { id: _id, ...unsaved } = peerMessage;
const stored: ConversationMessage = cm.addMessage(unsaved);
cm.importSnapshot(peerSnapshot);
const snapshot: ContextSnapshot = peerSnapshot;
const input: AssemblerInput = peerInput;
const output: AssemblerOutput = cm.assemblePrompt('claude-code', peerInput);

// Ours are the peer's: the class is an IContextProvider, its results the peer's shapes.
const provider: Peer.IContextProvider = cm;
const message: Peer.ConversationMessage = stored;
const messages: Peer.ConversationMessage[] = cm.getMessages();
const peerShapedSnapshot: Peer.ContextSnapshot = cm.exportSnapshot();
const assemblerInput: Peer.AssemblerInput = cm.getContextForAgent('max', 'claude-code');
const assembled: Peer.AssemblerOutput = cm.assemblePrompt('codex', assemblerInput);
const routed: Peer.RouteContextResult = cm.getContextForRoute('max', 'claude-code', route, routeOptions);
const hooked = new ContextManager({ onMessageAdded: (m: Peer.ConversationMessage) => void m, logger: console as Peer.ILogger });

void [options, inline, stored, snapshot, input, output, provider, message, messages, peerShapedSnapshot, assembled, routed, hooked];
