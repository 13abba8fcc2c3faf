// The package's browser entry: the web build (call `await init()` or `initSync(bytes)` first)
// and ContextManager.
import * as wasm from './agent_chatter_wasm.js';
import { defineContextManager } from '../context-manager.js';
import { defineMarkers } from '../markers.js';

export { default, initSync, version, preview, Scenario, Conversation } from './agent_chatter_wasm.js';

export const ContextManager = defineContextManager(wasm.PromptEngine);
export const { parseMessage, stripAll, stripRouting } = defineMarkers(wasm);
