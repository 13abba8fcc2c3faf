// Wrong kinds of arguments from plain JS (no TypeScript to catch them): every export throws a
// clear Error and the instance stays usable (wasm-bindgen's unchecked string conversion would
// otherwise read outside the wasm memory).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { builds } from './helpers.mjs';

const team = {
  id: 't', name: 'T',
  members: [
    { id: 'kailai', name: 'kailai', displayName: 'Kailai', kind: 'human' },
    { id: 'max', name: 'max', displayName: 'Max', kind: 'ai', agentType: 'codex' },
  ],
};
const scenario = { team, messages: [{ from: 'kailai', content: 'hi [NEXT: max]' }] };
const kailai = { id: 'kailai', name: 'kailai', displayName: 'Kailai', type: 'human' };

for (const [build, m] of builds) {
  test(`${build}: non-string arguments throw "expected a string" naming the argument`, () => {
    const cm = new m.ContextManager();
    cm.addMessage({ speaker: kailai, content: 'kept' });
    const conv = new m.Conversation(team);
    const s = new m.Scenario(scenario);
    const cases = [
      [() => m.parseMessage(42), 'parseMessage(text): expected a string, found number'],
      [() => m.stripAll(undefined), 'stripAll(text): expected a string, found undefined'],
      [() => m.stripRouting(null), 'stripRouting(text): expected a string, found null'],
      [() => m.preview(scenario, { id: 'max' }), 'preview(scenario, memberId): memberId: expected a string, found object'],
      [() => s.preview(7), 'Scenario.preview(memberId): expected a string, found number'],
      [() => cm.setTeamTask(42), 'setTeamTask(task): expected a string, found number'],
      [() => cm.getContextForAgent(1, 'codex'), 'getContextForAgent(agentId): expected a string, found number'],
      [() => cm.getContextForAgent('max', true), 'getContextForAgent(agentId, agentType): expected a string, found boolean'],
      [() => cm.assemblePrompt(null, {}), 'assemblePrompt(agentType): expected a string, found null'],
      [() => conv.submit(123), 'submit(text): expected a string, found number'],
      [() => conv.submit('hi', 5), 'submit(text, sender): expected a string, found number'],
      [() => conv.agentReplied('max', {}), 'agentReplied(memberId, text): expected a string, found object'],
      [() => conv.agentFailed(undefined, 'x'), 'agentFailed(memberId): expected a string, found undefined'],
    ];
    for (const [call, message] of cases) {
      assert.throws(call, (e) => e instanceof Error && e.message === message, message);
    }
    // Everything still works afterwards.
    assert.equal(m.parseMessage('[DONE]').isDone, true);
    assert.equal(cm.getMessages()[0].content, 'kept');
    assert.equal(conv.submit('hello [NEXT: max]', 'kailai', 1), 'msg-1');
    assert.equal(s.preview('max').prompt, '[MESSAGE]\nhi');
  });

  test(`${build}: lone UTF-16 surrogates become U+FFFD in everything the core gives back`, () => {
    assert.equal(m.stripAll('a\uD800b'), 'a\uFFFDb');
    const cm = new m.ContextManager();
    // Stored as given, as the peer stores it; the prompt is built from the core's reading.
    assert.equal(cm.addMessage({ speaker: kailai, content: 'a\uD800b\uDC00' }).content, 'a\uD800b\uDC00');
    assert.equal(cm.assemblePrompt('codex', cm.getContextForAgent('max', 'codex')).prompt, '[MESSAGE]\na\uFFFDb\uFFFD');
    assert.equal(cm.addMessage({ speaker: kailai, content: 'paired 👋 stays' }).content, 'paired 👋 stays');
    assert.equal(cm.assemblePrompt('codex', cm.getContextForAgent('max', 'codex')).prompt, '[CONTEXT]\n- kailai -> all: a\uFFFDb\uFFFD\n\n[MESSAGE]\npaired 👋 stays');
  });
}
