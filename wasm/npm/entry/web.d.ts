/// <reference lib="es2015.symbol.wellknown" />
/// <reference lib="esnext.disposable" />
export { default, initSync, version, preview, Scenario, Conversation } from './agent_chatter_wasm.js';
export type * from './agent_chatter_wasm.js';
import type { ParseResult, AgentContextOptions, AssemblerInput, AssemblerOutput, ContextManagerOptions, ContextSnapshot, ConversationMessage, NewConversationMessage } from './agent_chatter_wasm.js';
