// Run by Jest in its `jsdom` environment (runtimes.mjs), set up as the README says: the Node
// build (`customExportConditions: ['node']`) and Node's TextEncoder/TextDecoder (jsdom-setup.mjs).
import { ContextManager, parseMessage } from 'agent-chatter-wasm';

test('the package runs in Jest with testEnvironment jsdom', () => {
  expect(typeof document).toBe('object');
  expect(parseMessage('Hello [NEXT: max !P1]').parsedAddressees[0].intent).toBe('P1');
  const cm = new ContextManager();
  cm.addMessage({ speaker: { id: 'kailai', name: 'kailai', displayName: 'Kailai', type: 'human' }, content: 'Hello [NEXT: max !P1]' });
  expect(cm.assemblePrompt('codex', cm.getContextForAgent('max', 'codex')).prompt).toBe('[MESSAGE]\nHello');
});
