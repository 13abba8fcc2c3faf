/// <reference lib="dom" />
// The browser build's extra entry points: `init` (default export) and `initSync`.
import init, { initSync, parseMessage } from '../../pkg/web/index.js';

export async function start(wasmUrl: URL): Promise<boolean> {
  await init({ module_or_path: wasmUrl });
  return parseMessage('[DONE]').isDone;
}

export function startSync(bytes: Uint8Array): string[] {
  initSync({ module: bytes });
  return parseMessage('[NEXT: a]').addressees;
}
