// The package's Node entry: the wasm build for Node (ready on import) and ContextManager.
import * as wasm from './agent_chatter_wasm.js';
import { defineContextManager } from '../context-manager.js';
import { defineMarkers } from '../markers.js';
import { guardClass } from '../guard.js';

export { version, preview } from './agent_chatter_wasm.js';
export const Conversation = guardClass(wasm.Conversation, 'Conversation');
export const Scenario = guardClass(wasm.Scenario, 'Scenario');

export const ContextManager = defineContextManager(wasm.PromptEngine);
export const { parseMessage, stripAll, stripRouting } = defineMarkers(wasm);

/** The Node build is ready on import; `init()` resolves at once, so isomorphic code runs unchanged. */
export default async function init() {}

/** The Node build is ready on import; `initSync()` does nothing, so isomorphic code runs unchanged. */
export function initSync() {}
