// The JS half of ContextManager accepts clean inputs by itself and asks the core's reader
// about the rest (wasm/npm/context-manager.js). This test holds the two together over one
// corpus of odd and bad inputs (tests/fixtures/npm/shapes.json): whatever the JS check
// accepts, the core's reader accepts too, and every error reaches the caller from the core's
// reader, naming the field.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { builds, pkgDir, readJson } from './helpers.mjs';

const { cleanShapes } = await import(new URL('context-manager.js', pkgDir).href);
const { PromptEngine } = await import(new URL('node/agent_chatter_wasm.js', pkgDir).href);
const corpus = await readJson('tests/fixtures/npm/shapes.json');

const readerVerdict = (call) => {
  try {
    call();
    return 'accepted';
  } catch (e) {
    return e.message;
  }
};

test('every message the JS check accepts, the core reader accepts too', () => {
  for (const { name, message } of corpus.messages) {
    const js = cleanShapes.isCleanNewMessage(message, PromptEngine.messageLimit());
    const core = readerVerdict(() => PromptEngine.checkMessage(message));
    if (js) assert.equal(core, 'accepted', `${name}: JS accepts what the core refuses`);
  }
});

test('every snapshot the JS check accepts, the core reader accepts too', () => {
  for (const { name, snapshot } of corpus.snapshots) {
    const js = cleanShapes.isCleanSnapshot(snapshot, PromptEngine.messageLimit());
    const core = readerVerdict(() => PromptEngine.readSnapshot(snapshot));
    if (js) assert.equal(core, 'accepted', `${name}: JS accepts what the core refuses`);
  }
});

for (const [build, { ContextManager }] of builds) {
  test(`${build}: a refused input gets the core reader's error, with its field path`, () => {
    for (const { name, message, error, checkedAt } of corpus.messages.filter((c) => c.error)) {
      const cm = new ContextManager();
      const core = readerVerdict(() => PromptEngine.checkMessage(message));
      assert.ok(core.includes(error), `${name}: ${core}`);
      if (checkedAt === 'prompt') {
        // Routing is read when a prompt first reads the message (context-manager.js says why).
        cm.addMessage(message);
        assert.throws(() => cm.getContextForAgent('max', 'codex'), (e) => e.message.endsWith(core) && e.message.includes('msg-1'), name);
      } else {
        assert.throws(() => cm.addMessage(message), (e) => e.message === core, name);
        assert.equal(cm.getMessages().length, 0, `${name}: nothing stored`);
      }
    }
    for (const { name, snapshot, error } of corpus.snapshots.filter((c) => c.error)) {
      const cm = new ContextManager();
      cm.addMessage({ speaker: { id: 'k', name: 'k', type: 'human' }, content: 'kept' });
      const core = readerVerdict(() => PromptEngine.readSnapshot(snapshot));
      assert.throws(() => cm.importSnapshot(snapshot), (e) => e.message === core && e.message.includes(error), name);
      assert.deepEqual(cm.getMessages().map((m) => m.content), ['kept'], `${name}: nothing changed`);
    }
  });

  test(`${build}: accepted odd inputs are stored (clean ones as given)`, () => {
    for (const { name, message } of corpus.messages.filter((c) => !c.error)) {
      const cm = new ContextManager();
      assert.doesNotThrow(() => cm.addMessage(message), name);
    }
    for (const { name, snapshot } of corpus.snapshots.filter((c) => !c.error)) {
      const cm = new ContextManager();
      assert.doesNotThrow(() => cm.importSnapshot(snapshot), name);
      assert.equal(cm.getMessages().length, snapshot.messages.length, name);
    }
  });
}
