// Type-checked (never run) with `moduleResolution: bundler` and `lib: ["es2022"]`: no DOM, no
// @types/node (wasm/js/tsconfig.nodom.json), by the pinned TypeScript and the oldest the README
// supports. The declarations must not need the DOM lib (the web build's init inputs included).
import init, { initSync, ContextManager, parseMessage } from '../../pkg/web/index.js';
import * as embedded from '../../pkg/embedded/index.js';

export async function start(bytes: Uint8Array): Promise<string> {
  await init({ module_or_path: bytes });
  initSync({ module: bytes });
  const cm = new ContextManager();
  cm.addMessage({ speaker: { id: 'k', name: 'k', type: 'human' }, content: 'hi [NEXT: max]' });
  return cm.assemblePrompt('codex', cm.getContextForAgent('max', 'codex')).prompt;
}

export const addressees: string[] = parseMessage('[NEXT: a]').addressees;
export const fromEmbedded: boolean = embedded.parseMessage('[DONE]').isDone;
