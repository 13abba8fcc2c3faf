// Type-checked (never run) by TypeScript 5.9 with its defaults (ES5 target, no `lib`, no
// skipLibCheck; wasm/js/tsconfig.defaults.json): the declarations bring the libs they need
// (`esnext.disposable` for `[Symbol.dispose]`, and what that lib itself needs), so a user's
// plain `tsc --strict file.ts` compiles. This file is ES5-compatible on purpose (no async).
import { ContextManager, Conversation, parseMessage, preview } from '../../pkg/node/index.js';

const cm = new ContextManager({ maxBytes: 1000 });
cm.addMessage({ speaker: { id: 'k', name: 'k', type: 'human' }, content: 'hi [NEXT: max]' });
const prompt: string = cm.assemblePrompt('codex', cm.getContextForAgent('max', 'codex')).prompt;
const addressees: string[] = parseMessage('[NEXT: max] hi').addressees;
const conversation = new Conversation();
conversation.free();
void [prompt, addressees, preview];
