// The package's Node entry for bundles (and Bun): the web build's glue with the wasm bytes
// embedded (`./wasm.js`, brotli-compressed in base64, decompressed by `node:zlib`), instantiated
// synchronously on import. A bundle made of it needs no
// file beside it and never asks for its own URL, so esbuild (ESM or CommonJS output), Vite SSR and
// webpack's `target: 'node'` give a file that runs anywhere Node's built-ins are. Bundlers reach it through the
// `module` condition inside `node` (Node itself never sets `module`), or as
// `agent-chatter-wasm/embedded`; Bun (runtime, `bun build --target=bun`, `--compile`) through
// the `bun` condition.
import * as wasm from './agent_chatter_wasm.js';
import { bytes } from './wasm.js';
import { defineContextManager } from '../context-manager.js';
import { defineMarkers } from '../markers.js';
import { guardClass } from '../guard.js';

wasm.initSync({ module: bytes() });

export { version, preview } from './agent_chatter_wasm.js';
export const Conversation = guardClass(wasm.Conversation, 'Conversation');
export const Scenario = guardClass(wasm.Scenario, 'Scenario');

export const ContextManager = defineContextManager(wasm.PromptEngine);
export const { parseMessage, stripAll, stripRouting } = defineMarkers(wasm);

/** This build is ready on import; `init()` resolves at once, so isomorphic code runs unchanged. */
export default async function init() {}

/** This build is ready on import; `initSync()` does nothing, so isomorphic code runs unchanged. */
export function initSync() {}
