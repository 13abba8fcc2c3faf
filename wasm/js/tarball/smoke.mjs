// Run by `cargo xtask test` inside a fresh project that installed the packed tarball: the
// package resolves by name through its `node` export condition and works.
import assert from 'node:assert/strict';
import { ContextManager, parseMessage, preview, version } from 'agent-chatter-wasm';

assert.match(version(), /^\d+\.\d+\.\d+/);
assert.deepEqual(parseMessage('review this [NEXT: max !P1]').parsedAddressees, [{ name: 'max', intent: 'P1' }]);

const scenario = {
  team: { members: [{ name: 'kailai', kind: 'human' }, { name: 'max', kind: 'ai', agentType: 'codex', systemInstruction: 'Be brief.' }] },
  messages: [{ from: 'kailai', content: '[TEAM_TASK: Ship] Hello [NEXT: max]' }],
};
const p = preview(scenario, 'max');
assert.equal(p.prompt, '[SYSTEM]\nBe brief.\n\n[TEAM_TASK]\nShip\n\n[MESSAGE]\nHello');
assert.equal(p.systemFlag, null);

const cm = new ContextManager();
cm.addMessage({ speaker: { id: 'kailai', name: 'kailai', displayName: 'Kailai', type: 'human' }, content: 'Hello [NEXT: max]' });
assert.equal(cm.assemblePrompt('codex', cm.getContextForAgent('max', 'codex')).prompt, '[MESSAGE]\nHello');
console.log(`agent-chatter-wasm ${version()}: tarball smoke ok`);
