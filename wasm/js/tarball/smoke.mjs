// Run by `cargo xtask test` inside a fresh project that installed the packed tarball: the
// package resolves by name through its `node` export condition and works.
import assert from 'node:assert/strict';
import { ContextManager, parseMessage, version } from 'agent-chatter-wasm';

assert.match(version(), /^\d+\.\d+\.\d+/);
assert.deepEqual(parseMessage('review this [NEXT: max !P1]').parsedAddressees, [{ name: 'max', intent: 'P1' }]);

const cm = new ContextManager();
cm.addMessage({ speaker: { id: 'kailai', name: 'kailai', displayName: 'Kailai', type: 'human' }, content: 'Hello [NEXT: max]' });
const { prompt } = cm.assemblePrompt('codex', cm.getContextForAgent('max', 'codex'));
assert.equal(prompt, '[MESSAGE]\nHello');
console.log(`agent-chatter-wasm ${version()}: tarball smoke ok`);
