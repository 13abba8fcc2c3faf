// The package's entry for Cloudflare Workers (wrangler and workerd set the `workerd` condition):
// the web build's glue, instantiated on import from the `.wasm` imported as a module. workerd
// compiles wasm only from modules it loaded ("Wasm code generation disallowed by embedder" for
// bytes) and a worker has no URL to fetch the file from, so `init()` of the web build cannot work.
import module from '../agent_chatter_wasm_bg.wasm';
import * as wasm from '../web/agent_chatter_wasm.js';
import { defineContextManager } from '../context-manager.js';
import { defineMarkers } from '../markers.js';
import { guardClass } from '../guard.js';

wasm.initSync({ module });

export { version, preview } from '../web/agent_chatter_wasm.js';
export const Conversation = guardClass(wasm.Conversation, 'Conversation');
export const Scenario = guardClass(wasm.Scenario, 'Scenario');

export const ContextManager = defineContextManager(wasm.PromptEngine);
export const { parseMessage, stripAll, stripRouting } = defineMarkers(wasm);

/** This build is ready on import; `init()` resolves at once, so isomorphic code runs unchanged. */
export default async function init() {}

/** This build is ready on import; `initSync()` does nothing, so isomorphic code runs unchanged. */
export function initSync() {}
