// The package's browser entry: the web build (call `await init()` or `initSync(bytes)` first)
// and ContextManager.
import { PromptEngine } from './agent_chatter_wasm.js';
import { defineContextManager } from '../context-manager.js';

export { default, initSync, version, parseMessage, stripAll, stripRouting, preview, Scenario, Conversation } from './agent_chatter_wasm.js';

export const ContextManager = defineContextManager(PromptEngine);
