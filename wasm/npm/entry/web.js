// The package's browser entry: the web build (call `await init()` or `initSync({ module: bytes })` first)
// and ContextManager.
import * as wasm from './agent_chatter_wasm.js';
import { defineContextManager } from '../context-manager.js';
import { defineMarkers } from '../markers.js';
import { guardClass, initialised, requireInit } from '../guard.js';

export { default, initSync } from './agent_chatter_wasm.js';
export const Conversation = requireInit(guardClass(wasm.Conversation, 'Conversation'));
export const Scenario = requireInit(guardClass(wasm.Scenario, 'Scenario'));
export const version = () => initialised(() => wasm.version());
export const preview = (scenario, memberId) => initialised(() => wasm.preview(scenario, memberId));

export const ContextManager = defineContextManager(wasm.PromptEngine);
export const { parseMessage, stripAll, stripRouting } = defineMarkers(wasm);
