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
      [() => m.parseMessage(42), 'parseMessage(text): expected a string, found 42'],
      [() => m.stripAll(undefined), 'stripAll(text): expected a string, found undefined'],
      [() => m.stripRouting(null), 'stripRouting(text): expected a string, found null'],
      [() => m.preview(scenario, { id: 'max' }), 'preview(scenario, memberId): memberId: expected a string, found an object'],
      [() => s.preview(7), 'Scenario.preview(memberId): expected a string, found 7'],
      [() => cm.setTeamTask(42), 'setTeamTask(task): expected a string, found 42'],
      [() => cm.getContextForAgent(1, 'codex'), 'getContextForAgent(agentId): expected a string, found 1'],
      [() => cm.getContextForAgent('max', true), 'getContextForAgent(agentId, agentType): expected a string, found true'],
      [() => cm.assemblePrompt(null, {}), 'assemblePrompt(agentType): expected a string, found null'],
      [() => conv.submit(123), 'Conversation.submit(text): expected a string, found 123'],
      [() => conv.submit('hi', 5), 'Conversation.submit(text, sender): expected a string, found 5'],
      [() => conv.agentReplied('max', {}), 'Conversation.agentReplied(memberId, text): expected a string, found an object'],
      [() => conv.agentFailed(undefined, 'x'), 'Conversation.agentFailed(memberId): expected a string, found undefined'],
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

  test(`${build}: NaN, infinite, negative and fractional numbers are refused by name the same way in every method`, () => {
    const cm = new m.ContextManager();
    cm.addMessage({ speaker: kailai, content: 'hi [NEXT: max]' });
    const input = () => ({ contextMessages: [], currentMessage: 'x', teamTask: null });
    const conv = new m.Conversation(team);
    conv.submit('hello [NEXT: max]', 'kailai', 1);
    const calls = [
      ['new ContextManager(options): contextWindowSize', (n) => new m.ContextManager({ contextWindowSize: n })],
      ['new ContextManager(options): maxBytes', (n) => new m.ContextManager({ maxBytes: n })],
      ['getContextForAgent(agentId, agentType, options): windowSizeOverride', (n) => cm.getContextForAgent('max', 'codex', { windowSizeOverride: n })],
      ['assemblePrompt(agentType, input): maxBytes', (n) => cm.assemblePrompt('codex', { ...input(), maxBytes: n })],
      ['Conversation.preview(memberId, at)', (n) => conv.preview('max', n)],
      ['Conversation.preview(memberId, at, overrides): windowSize', (n) => conv.preview('max', undefined, { windowSize: n })],
      ['Conversation.preview(memberId, at, overrides): maxBytes', (n) => conv.preview('max', undefined, { maxBytes: n })],
      ['Conversation.preview(memberId, at, overrides): maxTokens', (n) => conv.preview('max', undefined, { maxTokens: n })],
    ];
    for (const [argument, call] of calls) {
      for (const [n, found] of [[NaN, 'NaN'], [Infinity, 'Infinity'], [-1, '-1'], [1.5, '1.5'], ['5', 'the string "5"']]) {
        const message = `${argument}: expected a non-negative integer, found ${found}`;
        assert.throws(() => call(n), (e) => e.message === message, message);
      }
      // Above wasm32's usize the number would wrap (2**32 + 5 would become 5): refused.
      const tooLarge = `${argument}: 4294967301 is too large (at most 4294967295)`;
      assert.throws(() => call(2 ** 32 + 5), (e) => e.message === tooLarge, tooLarge);
      assert.doesNotThrow(() => call(undefined), `${argument}: absent is the default`);
    }
    // A zero budget is refused wherever a budget is given, never taken as "the default".
    for (const call of [() => new m.ContextManager({ maxBytes: 0 }), () => cm.assemblePrompt('codex', { ...input(), maxBytes: 0 })]) {
      assert.throws(call, /maxBytes: must be greater than 0/);
    }
    assert.throws(() => conv.preview('max', undefined, { maxBytes: 0 }), /^Error: Conversation\.preview\(memberId, at, overrides\): overrides\.maxBytes: must be greater than 0/);
    assert.equal(cm.assemblePrompt('codex', { ...input(), maxBytes: 100 }).prompt, '[MESSAGE]\nx');
  });

  test(`${build}: the what-if overrides refuse a mistyped key or a wrong kind, naming it`, () => {
    const conv = new m.Conversation(team);
    conv.submit('hello [NEXT: max]', 'kailai', 1);
    const cases = [
      [{ window: 3 }, 'Conversation.preview(memberId, at, overrides): window: not a key here (expected "windowSize", "maxBytes", "pinFirst" or "maxTokens")'],
      [{ pinFirst: 'yes' }, 'Conversation.preview(memberId, at, overrides): pinFirst: expected true or false, found the string "yes"'],
      [5, 'Conversation.preview(memberId, at, overrides): expected an object, found 5'],
      [[], 'Conversation.preview(memberId, at, overrides): expected an object, found an array'],
    ];
    for (const [overrides, message] of cases) {
      assert.throws(() => conv.preview('max', undefined, overrides), (e) => e.message === message, message);
    }
    assert.equal(conv.preview('max', 0, { windowSize: 0, pinFirst: null }).prompt, '[MESSAGE]\nhello');
    assert.throws(() => conv.preview('max', 1), (e) => e.message === 'Conversation.preview(memberId, at, overrides): at: message #1 does not exist; the conversation has 1 message (0-based)');
  });

  test(`${build}: serde's words never reach the user: fields read as the core's readers say them`, () => {
    const cm = new m.ContextManager();
    const cases = [
      [() => cm.addMessage({ speaker: { ...kailai, type: 'robot' }, content: 'x' }), 'addMessage(message): speaker.type: expected "human", "ai" or "system", found "robot"'],
      [() => cm.addMessage({ speaker: kailai, content: 5 }), 'addMessage(message): content: expected a string, found 5'],
      [() => cm.addMessage({ speaker: { name: 'k', type: 'human' }, content: 'x' }), 'addMessage(message): speaker.id: missing'],
      [() => cm.addMessage({ content: 'x' }), 'addMessage(message): speaker: missing'],
      [() => cm.assemblePrompt('codex', { contextMessages: {}, currentMessage: 'x', maxBytes: 10 }), 'assemblePrompt(agentType, input): contextMessages: expected an array, found an object'],
      [() => cm.assemblePrompt('codex', { contextMessages: [['a', 'b', 'c']], currentMessage: 'x', maxBytes: 10 }), 'assemblePrompt(agentType, input): contextMessages[0]: expected an object, found an array'],
      [() => cm.addMessage([kailai, 'hello']), 'addMessage(message): expected a message object, found an array'],
      [() => cm.assemblePrompt('codex', { contextMessages: [{ from: 1, to: 'b', content: 'c' }], currentMessage: 'x', maxBytes: 10 }), 'assemblePrompt(agentType, input): contextMessages[0].from: expected a string, found 1'],
      [() => cm.assemblePrompt('codex', null), 'assemblePrompt(agentType, input): expected an object, found null'],
    ];
    for (const [call, message] of cases) {
      assert.throws(call, (e) => e.message === message, message);
    }
  });

  test(`${build}: assemblePrompt refuses an input without its fields, or with a misspelt key, with a TypeError naming it`, () => {
    const cm = new m.ContextManager();
    const cases = [
      [() => cm.assemblePrompt('codex', {}), 'assemblePrompt(agentType, input): contextMessages: missing (an AssemblerInput has contextMessages and currentMessage, as getContextForAgent gives it)'],
      [() => cm.assemblePrompt('codex', { contextMessages: [] }), 'assemblePrompt(agentType, input): currentMessage: missing (an AssemblerInput has contextMessages and currentMessage, as getContextForAgent gives it)'],
      [() => cm.assemblePrompt('codex', { contextMessages: [], currentMesage: 'x', maxBytes: 10 }), 'assemblePrompt(agentType, input): unknown key, found "currentMesage" (an AssemblerInput has contextMessages, currentMessage, teamTask, systemInstruction, instructionFileText, maxBytes)'],
    ];
    for (const [call, message] of cases) {
      assert.throws(call, (e) => e instanceof TypeError && e.message === message, message);
    }
    // The peer's routing fields are accepted (and read: its parent and siblings).
    const routed = { contextMessages: [], currentMessage: 'x', teamTask: null, maxBytes: 100, parentContext: undefined, siblingContext: [], routeMeta: { intent: 'P2' } };
    assert.equal(cm.assemblePrompt('codex', routed).prompt, '[MESSAGE]\nx');
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

  test(`${build}: JSON text with a surrogate pair written as escapes gives the bytes of the character itself`, () => {
    // Python's json.dumps writes 😀 as "\ud83d\ude00"; the same file must give the same prompt.
    const team = { name: 't', members: [{ name: 'kailai', kind: 'human' }, { name: 'max', kind: 'ai', agentType: 'codex' }] };
    const escaped = JSON.stringify({ team, messages: [{ from: 'kailai', content: 'X' }] }).replace('X', '\\ud83d\\ude00 [NEXT: max]');
    const literal = JSON.stringify({ team, messages: [{ from: 'kailai', content: '😀 [NEXT: max]' }] });
    assert.equal(m.preview(escaped, 'max').prompt, '[MESSAGE]\n😀');
    assert.equal(m.preview(escaped, 'max').prompt, m.preview(literal, 'max').prompt);
  });
}
