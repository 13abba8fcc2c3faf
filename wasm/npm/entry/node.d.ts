/// <reference lib="es2015.symbol.wellknown" />
/// <reference lib="esnext.disposable" />
export { version, preview, Scenario, Conversation } from './agent_chatter_wasm.js';
export type * from './agent_chatter_wasm.js';
import type { ParseResult, AgentContextOptions, AssemblerInput, AssemblerOutput, ContextManagerOptions, ContextSnapshot, ConversationMessage, NewConversationMessage } from './agent_chatter_wasm.js';

/** The Node build is ready on import; `init()` resolves at once, so isomorphic code runs unchanged. */
export default function init(): Promise<void>;
/** The Node build is ready on import; `initSync()` does nothing, so isomorphic code runs unchanged. */
export declare function initSync(): void;
