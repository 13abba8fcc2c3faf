// ContextManager as a drop-in for @testany/agent-chatter-core's class
// (docs/architecture.md §19 (seed 001) API, docs/architecture.md §12), used the way the peer
// documents it (docs/architecture.md §19 (seed 001 §5)), with docs/architecture.md's deliberate
// differences.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { builds } from './helpers.mjs';

const kailai = { id: 'kailai', name: 'kailai', displayName: 'Kailai', type: 'human' };
const max = { id: 'max', name: 'max', displayName: 'Max', type: 'ai' };
const sarah = { id: 'sarah', name: 'sarah', displayName: 'Sarah', type: 'ai' };
const to = (...ids) => ({
  rawNextMarkers: ids,
  resolvedAddressees: ids.map((id) => ({ identifier: id, memberId: id, memberName: id })),
});

for (const [build, { ContextManager }] of builds) {
  test(`${build}: addMessage stores and returns the message with msg-N ids and a Date timestamp`, () => {
    const cm = new ContextManager();
    const first = cm.addMessage({ speaker: kailai, content: 'Hi [NEXT: max]', routing: to('max'), timestamp: 1000 });
    const second = cm.addMessage({ speaker: max, content: 'Hello' });
    assert.equal(first.id, 'msg-1');
    assert.equal(second.id, 'msg-2');
    assert.ok(first.timestamp instanceof Date);
    assert.equal(first.timestamp.getTime(), 1000);
    assert.deepEqual(first.speaker, kailai);
    assert.equal(first.content, 'Hi [NEXT: max]', 'stored raw');
    assert.deepEqual(first.routing.resolvedAddressees, [{ identifier: 'max', memberId: 'max', memberName: 'max' }]);
    assert.equal(second.routing, undefined);
    assert.deepEqual(cm.getMessages().map((m) => m.id), ['msg-1', 'msg-2']);
    assert.equal(cm.getLatestMessage().id, 'msg-2');
  });

  test(`${build}: a stored message is {id, ...message} with its keys in the given order, whatever the shape`, () => {
    const ts = new Date(5);
    const tag = Symbol('tag');
    const shapes = [
      { speaker: kailai, content: 'a' },
      { speaker: kailai, content: 'a', routing: to('max') },
      { speaker: kailai, content: 'a', routing: undefined },
      { speaker: kailai, content: 'a', timestamp: ts },
      { speaker: kailai, content: 'a', routing: to('max'), timestamp: ts },
      { timestamp: ts, speaker: kailai, content: 'a', routing: to('max') },
      { content: 'a', speaker: kailai },
      { speaker: kailai, content: 'a', routing: to('max'), timestamp: ts, extra: 1 },
      { id: 'mine', speaker: kailai, content: 'a' },
      { speaker: kailai, content: 'a', [tag]: 1 },
      Object.assign(Object.create({ inherited: 1 }), { speaker: kailai, content: 'a' }),
    ];
    for (const shape of shapes) {
      const stored = new ContextManager().addMessage(shape);
      const expected = { id: 'msg-1', ...shape };
      delete expected[tag];
      assert.deepEqual(Object.keys(stored), Object.keys(expected), JSON.stringify(shape));
      assert.deepEqual(stored, expected, JSON.stringify(shape));
      assert.equal(Object.getOwnPropertySymbols(stored).length, 0, 'symbol-keyed properties are not stored');
      // As in the peer: a message given without a timestamp is stored without one.
      assert.equal('timestamp' in stored, 'timestamp' in shape, JSON.stringify(shape));
    }
  });

  test(`${build}: getContextForRoute, not offered, throws naming what to use instead`, () => {
    const cm = new ContextManager();
    assert.throws(
      () => cm.getContextForRoute('max', 'claude', { parentMessageId: 'msg-1', intent: 'P2_REPLY', targetMemberId: 'max' }),
      { message: /^getContextForRoute \(the peer's routing v3\) is not offered by this package: Conversation builds routed deliveries/ },
    );
  });

  test(`${build}: an option that throws while it is read leaves the manager usable`, () => {
    const cm = new ContextManager();
    cm.addMessage({ speaker: kailai, content: 'Plan it [NEXT: max]' });
    const lines = new Proxy(['Be brief.'], { get: (t, k) => { if (k === '0') throw new Error('boom'); return t[k]; } });
    assert.throws(() => cm.getContextForAgent('max', 'codex', { systemInstruction: lines }), /boom/);
    cm.addMessage({ speaker: max, content: 'Planned.' });
    const { prompt } = cm.assemblePrompt('codex', cm.getContextForAgent('sarah', 'codex', { systemInstruction: ['Be brief.'] }));
    assert.equal(prompt, '[SYSTEM]\nBe brief.\n\n[CONTEXT]\n- kailai -> all: Plan it\n\n[MESSAGE]\nPlanned.');
  });

  test(`${build}: getMessages returns a new array each call and getLatestMessage is null when empty`, () => {
    const cm = new ContextManager();
    assert.deepEqual(cm.getMessages(), []);
    assert.equal(cm.getLatestMessage(), null);
    cm.addMessage({ speaker: kailai, content: 'x' });
    const a = cm.getMessages();
    a.pop();
    assert.equal(cm.getMessages().length, 1);
  });

  test(`${build}: getLatestMessage is the last of getMessages after every kind of change`, () => {
    const cm = new ContextManager();
    const last = () => cm.getMessages().at(-1) ?? null;
    cm.addMessage({ speaker: kailai, content: 'one' });
    cm.addMessage({ speaker: kailai, content: 'two' });
    assert.equal(cm.getLatestMessage(), last());
    const snapshot = cm.exportSnapshot();
    const other = new ContextManager();
    for (const input of [snapshot, JSON.stringify(snapshot), { version: 1, messages: [], teamTask: null }]) {
      other.importSnapshot(input);
      assert.equal(other.getLatestMessage(), other.getMessages().at(-1) ?? null);
    }
    other.importSnapshot(snapshot);
    assert.throws(() => other.importSnapshot({ version: 2, messages: [] }));
    assert.equal(other.getLatestMessage().content, 'two', 'a refused import changes nothing');
    cm.clear();
    assert.equal(cm.getLatestMessage(), null);
    assert.equal(cm.addMessage({ speaker: kailai, content: 'three' }), cm.getLatestMessage());
  });

  test(`${build}: hooks are called after the change and may call back into the instance`, () => {
    const seen = [];
    const cm = new ContextManager({
      onMessageAdded: (msg) => seen.push(['added', msg.id, cm.getMessages().length]),
      onTeamTaskChanged: (task) => seen.push(['task', task, cm.getTeamTask()]),
    });
    cm.addMessage({ speaker: kailai, content: 'x' });
    cm.setTeamTask('ship it');
    cm.clear();
    assert.deepEqual(seen, [
      ['added', 'msg-1', 1],
      ['task', 'ship it', 'ship it'],
      ['task', null, null],
    ]);
  });

  test(`${build}: a hook may even add a message itself (no "recursive use" error)`, () => {
    const cm = new ContextManager({
      onMessageAdded: (msg) => {
        if (msg.speaker.type === 'human') cm.addMessage({ speaker: { id: 'system', name: 'system', type: 'system' }, content: `seen ${msg.id}` });
      },
    });
    cm.addMessage({ speaker: kailai, content: 'hello' });
    assert.deepEqual(cm.getMessages().map((m) => [m.id, m.content]), [['msg-1', 'hello'], ['msg-2', 'seen msg-1']]);
  });

  test(`${build}: an exception thrown by a hook reaches the caller unchanged`, () => {
    const boom = new RangeError('hook failed');
    const cm = new ContextManager({ onMessageAdded: () => { throw boom; } });
    assert.throws(() => cm.addMessage({ speaker: kailai, content: 'x' }), (e) => e === boom);
    assert.equal(cm.getMessages().length, 1, 'the message was stored before the hook ran');
  });

  test(`${build}: setTeamTask caps the task at 5 KiB on a character boundary`, () => {
    const cm = new ContextManager();
    cm.setTeamTask('é'.repeat(3000)); // 6000 bytes
    const task = cm.getTeamTask();
    assert.equal(Buffer.byteLength(task), 5120);
    assert.ok(!task.includes('\uFFFD'));
    assert.equal(new ContextManager().getTeamTask(), null);
  });

  test(`${build}: getContextForAgent + assemblePrompt give the exact Claude prompt, system in the flag only`, () => {
    const cm = new ContextManager();
    cm.addMessage({ speaker: kailai, content: '[FROM: kailai] Plan the release [NEXT: max]', routing: to('max') });
    cm.addMessage({ speaker: max, content: 'Plan: tag, build, ship [NEXT: sarah]', routing: to('sarah') });
    cm.setTeamTask('Ship v1');
    const input = cm.getContextForAgent('sarah', 'claude', { systemInstruction: 'You review plans.' });
    assert.deepEqual(
      input.contextMessages.map(({ from, to, content }) => ({ from, to, content })),
      [{ from: 'kailai', to: 'max', content: 'Plan the release' }],
    );
    assert.equal(input.currentMessage, 'Plan: tag, build, ship');
    assert.equal(input.teamTask, 'Ship v1');
    assert.equal(input.systemInstruction, 'You review plans.');
    assert.equal(input.maxBytes, 786432);
    const out = cm.assemblePrompt('claude', input);
    assert.equal(
      out.prompt,
      '[TEAM_TASK]\nShip v1\n\n[CONTEXT]\n- kailai -> max: Plan the release\n\n[MESSAGE]\nPlan: tag, build, ship',
    );
    assert.equal(out.systemFlag, 'You review plans.');
    assert.deepEqual(
      out.explain.messages.map((m) => [m.index, m.fate]),
      [[0, 'included'], [1, 'current']],
    );
    assert.equal(out.explain.totalBytes, Buffer.byteLength(out.prompt) + Buffer.byteLength(out.systemFlag));
  });

  test(`${build}: the explain gives the window in force and counts the messages outside it`, () => {
    for (const [n, listed, outside] of [[8, 6, 2], [3, 3, 0]]) {
      const cm = new ContextManager();
      for (let i = 0; i < n; i++) cm.addMessage({ speaker: i % 2 ? max : kailai, content: `m${i}` });
      const { explain } = cm.assemblePrompt('codex', cm.getContextForAgent('sarah', 'codex', { windowSizeOverride: 5 }));
      assert.equal(explain.window, 5, `${n} messages`);
      assert.equal(explain.messages.length, listed, `${n} messages`);
      assert.equal(explain.outsideWindow, outside, `${n} messages`);
    }
  });

  test(`${build}: Codex and Gemini formats put the system part in the prompt; systemFlag is undefined, as in the peer`, () => {
    const cm = new ContextManager();
    cm.addMessage({ speaker: kailai, content: 'Hello team' });
    const opts = { systemInstruction: 'Be brief.' };
    const codex = cm.assemblePrompt('codex', cm.getContextForAgent('max', 'codex', opts));
    assert.equal(codex.prompt, '[SYSTEM]\nBe brief.\n\n[MESSAGE]\nHello team');
    assert.ok('systemFlag' in codex && codex.systemFlag === undefined);
    assert.deepEqual(Object.keys(codex), ['prompt', 'systemFlag', 'explain']);
    const gemini = cm.assemblePrompt('gemini', cm.getContextForAgent('max', 'gemini', opts));
    assert.equal(gemini.prompt, 'Instructions:\nBe brief.\n\nLast message:\nHello team');
  });

  test(`${build}: a system instruction given as lines, as the peer takes it, is joined by the core's rule`, () => {
    const cm = new ContextManager();
    cm.addMessage({ speaker: kailai, content: 'Hello team' });
    const lines = ['You are Max.', '', '   ', 'Be brief. '];
    const joined = '[SYSTEM]\nYou are Max.\nBe brief.\n\n[MESSAGE]\nHello team';
    assert.equal(cm.assemblePrompt('codex', cm.getContextForAgent('max', 'codex', { systemInstruction: lines })).prompt, joined);
    const input = { contextMessages: [], currentMessage: 'Hello team', teamTask: null, maxBytes: 1000, systemInstruction: lines };
    assert.equal(cm.assemblePrompt('codex', input).prompt, joined, 'in an assembler input too');
    assert.equal(cm.assemblePrompt('claude', input).systemFlag, 'You are Max.\nBe brief.');
    assert.throws(() => cm.getContextForAgent('max', 'codex', { systemInstruction: ['a', 5] }),
      (e) => e.message === 'getContextForAgent(agentId, agentType, options): systemInstruction[1]: expected a string, found 5');
    assert.throws(() => cm.assemblePrompt('codex', { ...input, systemInstruction: ['a', 5] }),
      (e) => e.message === 'assemblePrompt(agentType, input): systemInstruction[1]: expected a string, found 5');
  });

  test(`${build}: a logger gets the peer's warnings in its words, and nothing else`, () => {
    const warnings = [];
    const logger = { debug() {}, info() {}, warn: (m) => warnings.push(m), error() {} };
    const cm = new ContextManager({ logger });
    cm.setTeamTask('é'.repeat(3000));
    assert.deepEqual(warnings, ['[ContextManager] TeamTask exceeded 5KB limit (6000 bytes), truncated to 5120 bytes']);
    cm.setTeamTask('short');
    cm.setTeamTask('lone \ud800 surrogate'); // changed on the way to UTF-8, but not cut
    assert.equal(warnings.length, 1, 'no warning without a cut');
    const input = { contextMessages: [], currentMessage: 'Hello', teamTask: null, maxBytes: 1000 };
    assert.equal(cm.assemblePrompt('custom-agent', input).prompt, 'Hello');
    assert.equal(cm.assemblePrompt('claude', input).prompt, '[MESSAGE]\nHello');
    assert.equal(cm.assemblePrompt('custom-agent', input).prompt, 'Hello');
    assert.deepEqual(warnings.slice(1), [
      '[ContextManager] Unknown agentType "custom-agent" (normalized: "custom-agent"), using PlainTextAssembler',
      '[ContextManager] Unknown agentType "custom-agent" (normalized: "custom-agent"), using PlainTextAssembler',
    ]);
    assert.throws(() => new ContextManager({ logger: console.warn }), /logger: expected an object with a warn\(message\) method, found a function/);
  });

  test(`${build}: a logger with debug sees "Message added" with the id for each addMessage`, () => {
    const lines = [];
    const logger = { warn() {}, debug: (...args) => lines.push(args) };
    const cm = new ContextManager({ logger });
    cm.addMessage({ speaker: kailai, content: 'Hi [NEXT: max]', routing: to('max') });
    cm.addMessage({ speaker: max, content: 'Hello' });
    assert.deepEqual(lines, [['[ContextManager] Message added: msg-1'], ['[ContextManager] Message added: msg-2']]);
  });

  test(`${build}: a logger with debug sees "Deduplicated context" when an AI→AI duplicate is dropped`, () => {
    const lines = [];
    const cm = new ContextManager({ logger: { warn() {}, debug: (m) => lines.push(m) } });
    cm.addMessage({ speaker: kailai, content: 'Hi' });
    cm.addMessage({ speaker: max, content: 'Hello! [NEXT: sarah]' });
    cm.addMessage({ speaker: max, content: 'Hello!' });
    lines.length = 0;
    const input = cm.getContextForAgent('sarah', 'claude');
    assert.deepEqual(lines, ['[ContextManager] Deduplicated context for AI→AI']);
    assert.deepEqual(input.contextMessages.map((m) => m.content), ['Hi'], 'the duplicate is gone from the context');
  });

  test(`${build}: a logger with debug sees no "Deduplicated context" when nothing repeats`, () => {
    const lines = [];
    const cm = new ContextManager({ logger: { warn() {}, debug: (m) => lines.push(m) } });
    cm.addMessage({ speaker: kailai, content: 'Hi' });
    cm.addMessage({ speaker: max, content: 'Hello!' });
    cm.addMessage({ speaker: sarah, content: 'Hello!' }); // same words, another speaker
    cm.addMessage({ speaker: kailai, content: 'Hello!' }); // a human's message
    lines.length = 0;
    cm.getContextForAgent('max', 'claude');
    cm.addMessage({ speaker: max, content: 'Something new' });
    lines.length = 0;
    cm.getContextForAgent('sarah', 'claude');
    assert.deepEqual(lines, []);
  });

  test(`${build}: a logger with only warn still gets the warnings, and a debug that is not a function is named`, () => {
    const warnings = [];
    const cm = new ContextManager({ logger: { warn: (m) => warnings.push(m) } });
    cm.addMessage({ speaker: max, content: 'Hello!' });
    cm.addMessage({ speaker: max, content: 'Hello!' });
    assert.deepEqual(cm.getContextForAgent('sarah', 'claude').contextMessages, []);
    cm.setTeamTask('é'.repeat(3000));
    assert.deepEqual(warnings, ['[ContextManager] TeamTask exceeded 5KB limit (6000 bytes), truncated to 5120 bytes']);
    assert.throws(() => new ContextManager({ logger: { warn() {}, debug: 'verbose' } }),
      (e) => e instanceof TypeError && e.message === 'new ContextManager(options): logger.debug: expected a function (debug(message)), found the string "verbose"');
  });

  test(`${build}: setTeamTask("") leaves no team task and reads back as "", as the peer's does`, () => {
    const seen = [];
    const cm = new ContextManager({ onTeamTaskChanged: (t) => seen.push(t) });
    cm.setTeamTask('Ship v1');
    cm.setTeamTask('');
    assert.equal(cm.getTeamTask(), '');
    assert.deepEqual(seen, ['Ship v1', '']);
    assert.equal(cm.exportSnapshot().teamTask, '');
    cm.addMessage({ speaker: kailai, content: 'hi' });
    assert.equal(cm.assemblePrompt('codex', cm.getContextForAgent('max', 'codex')).prompt, '[MESSAGE]\nhi');
  });

  test(`${build}: getContextForAgent shows system instruction lines as given, as the peer does`, () => {
    const cm = new ContextManager();
    cm.addMessage({ speaker: kailai, content: 'Hello' });
    const lines = ['Line 1', 'Line 2'];
    const input = cm.getContextForAgent('max', 'codex', { systemInstruction: lines });
    assert.equal(input.systemInstruction, lines);
    assert.equal(cm.assemblePrompt('codex', input).prompt, '[SYSTEM]\nLine 1\nLine 2\n\n[MESSAGE]\nHello');
    assert.equal(cm.assemblePrompt('codex', { ...input }).prompt, '[SYSTEM]\nLine 1\nLine 2\n\n[MESSAGE]\nHello', 'a copy is read with its lines');
  });

  test(`${build}: the window is applied and window 0 gives no history (the peer gives all)`, () => {
    const cm = new ContextManager({ contextWindowSize: 2 });
    for (let i = 1; i <= 5; i++) cm.addMessage({ speaker: kailai, content: `m${i}` });
    const lines = (o) => cm.getContextForAgent('max', 'codex', o).contextMessages.map((l) => l.content);
    assert.deepEqual(lines(), ['m3', 'm4']);
    assert.deepEqual(lines({ windowSizeOverride: 3 }), ['m2', 'm3', 'm4']);
    assert.deepEqual(lines({ windowSizeOverride: 0 }), []);
  });

  test(`${build}: AI to AI dedup drops the last context line repeating the current message`, () => {
    const cm = new ContextManager();
    cm.addMessage({ speaker: kailai, content: 'start' });
    cm.addMessage({ speaker: max, content: 'same words [NEXT: sarah]' });
    cm.addMessage({ speaker: max, content: 'same words' });
    const input = cm.getContextForAgent('sarah', 'claude');
    assert.deepEqual(input.contextMessages.map((l) => l.content), ['start']);
    const out = cm.assemblePrompt('claude', input);
    assert.equal(out.prompt, '[CONTEXT]\n- kailai -> all: start\n\n[MESSAGE]\nsame words');
  });

  test(`${build}: the budget is a hard bound and the current message survives the trim`, () => {
    const cm = new ContextManager({ maxBytes: 200 });
    for (let i = 0; i < 10; i++) cm.addMessage({ speaker: kailai, content: `history line ${i} `.repeat(3) });
    cm.addMessage({ speaker: kailai, content: 'the question' });
    const out = cm.assemblePrompt('codex', cm.getContextForAgent('max', 'codex', { windowSizeOverride: 10 }));
    assert.ok(Buffer.byteLength(out.prompt) <= 200, `${Buffer.byteLength(out.prompt)} bytes`);
    assert.ok(out.prompt.endsWith('[MESSAGE]\nthe question'));
    assert.ok(out.explain.messages.some((m) => m.fate === 'trimmedForBudget'));
    assert.equal(out.explain.maxBytes, 200);
  });

  test(`${build}: exportSnapshot / importSnapshot roundtrip, also through JSON, and ids continue`, () => {
    const cm = new ContextManager();
    cm.addMessage({ speaker: kailai, content: 'one [NEXT: max]', routing: to('max'), timestamp: 5 });
    cm.addMessage({ speaker: max, content: 'two' });
    cm.setTeamTask('task');
    const snap = cm.exportSnapshot();
    assert.equal(snap.version, 1);
    assert.equal(snap.teamTask, 'task');
    assert.equal(typeof snap.timestamp, 'number');
    assert.ok(snap.messages[0].timestamp instanceof Date);

    // From JSON text, timestamps become Dates again.
    const copy = new ContextManager();
    copy.importSnapshot(JSON.stringify(snap));
    assert.deepEqual(copy.getMessages(), cm.getMessages());
    assert.equal(copy.getTeamTask(), 'task');
    assert.equal(copy.addMessage({ speaker: kailai, content: 'three' }).id, 'msg-3');

    // An object is stored as the peer stores it: its timestamps as given.
    const parsed = JSON.parse(JSON.stringify(snap));
    const asGiven = new ContextManager();
    asGiven.importSnapshot(parsed);
    assert.equal(asGiven.getMessages()[0], parsed.messages[0]);
    assert.equal(asGiven.getMessages()[0].timestamp, '1970-01-01T00:00:00.005Z');

    const again = new ContextManager();
    again.importSnapshot(snap); // the object itself, with Date objects
    assert.deepEqual(again.getMessages(), cm.getMessages());
  });

  test(`${build}: a large snapshot (non-ASCII, escapes, lone surrogates) roundtrips as object and as text`, () => {
    const cm = new ContextManager();
    for (let i = 0; i < 300; i++) {
      const routing = i % 2 ? to('max') : { ...to('sarah', 'max'), parentMessageId: 'msg-1', intent: 'P3_EXTEND', isDone: true };
      cm.addMessage({ speaker: i % 3 ? max : kailai, content: `línea ${i} "q" \\ \t\n 👋 \u0001 [NEXT: max]`, routing, timestamp: i });
    }
    cm.addMessage({ speaker: kailai, content: 'lone \ud800 surrogate' });
    cm.setTeamTask('tâche');
    const snap = cm.exportSnapshot();
    const text = JSON.stringify(snap);
    assert.ok(text.length > 64 * 1024, `${text.length} chars`);
    for (const input of [snap, text]) {
      const copy = new ContextManager();
      copy.importSnapshot(input);
      assert.deepEqual(copy.getMessages(), cm.getMessages());
      assert.equal(copy.getTeamTask(), 'tâche');
    }
    assert.equal(cm.getLatestMessage().content, 'lone \ud800 surrogate', 'stored as given');
    assert.deepEqual(cm.getMessages()[0].routing, { ...to('sarah', 'max'), parentMessageId: 'msg-1', intent: 'P3_EXTEND', isDone: true });
  });

  test(`${build}: clear empties everything and restarts ids`, () => {
    const cm = new ContextManager();
    cm.addMessage({ speaker: kailai, content: 'x' });
    cm.setTeamTask('t');
    cm.clear();
    assert.deepEqual(cm.getMessages(), []);
    assert.equal(cm.getTeamTask(), null);
    assert.equal(cm.addMessage({ speaker: kailai, content: 'y' }).id, 'msg-1');
  });

  test(`${build}: bad input throws an Error naming the field, and the instance stays usable`, () => {
    const cm = new ContextManager();
    cm.addMessage({ speaker: kailai, content: 'kept' });
    const cases = [
      [() => cm.addMessage(null), /addMessage\(message\): expected a message object/],
      [() => cm.addMessage({ speaker: kailai, content: 42 }), /^addMessage\(message\): content: expected a string, found 42$/],
      [() => cm.addMessage({ content: 'x' }), /^addMessage\(message\): speaker: missing$/],
      [() => cm.addMessage({ speaker: { ...kailai, type: 'robot' }, content: 'x' }), /speaker\.type: expected "human", "ai" or "system", found "robot"/],
      [() => cm.addMessage({ speaker: { ...kailai, id: '' }, content: 'x' }), /speaker\.id: missing/],
      [() => cm.addMessage({ speaker: kailai, content: 'x', timestamp: 'not a date' }), /timestamp: expected a Date/],
      [() => cm.addMessage({ speaker: kailai, content: 'x', timestamp: 1e20 }), /timestamp: expected a Date, milliseconds since 1970 \(at most 8\.64e15\) or a date string, found 100000000000000000000/],
      [() => cm.importSnapshot({ version: 2, messages: [] }), /importSnapshot\(snapshot\): version: expected 1/],
      [() => cm.importSnapshot({ version: 1, messages: [{ id: 'msg-1', speaker: { name: 'x', type: 'human' }, content: 'x' }] }), /messages\[0\]\.speaker\.id/],
      [() => cm.importSnapshot('{not json'), /importSnapshot\(snapshot\)/],
      [() => cm.importSnapshot(undefined), /importSnapshot\(snapshot\): expected an object or JSON text/],
      [() => cm.assemblePrompt('claude', { contextMessages: 'nope' }), /^assemblePrompt\(agentType, input\): contextMessages: expected an array, found the string "nope"$/],
      [() => new ContextManager({ contextWindowSize: -1 }), /new ContextManager\(options\): contextWindowSize/],
      [() => new ContextManager({ onMessageAdded: 'not a function' }), /onMessageAdded: expected a function/],
      [() => new ContextManager({ maxBytes: 0 }), /new ContextManager\(options\): maxBytes: must be greater than 0/],
    ];
    for (const [call, message] of cases) {
      assert.throws(call, (e) => e instanceof Error && message.test(e.message), String(message));
    }
    assert.deepEqual(cm.getMessages().map((m) => m.content), ['kept']);
    assert.equal(cm.addMessage({ speaker: kailai, content: 'after' }).id, 'msg-2');
  });

  test(`${build}: an imported snapshot object keeps its message objects as given, unusual ones too`, () => {
    const first = { id: 'msg-1', speaker: { id: 'kailai', name: 'kailai', type: 'human', avatar: 'k.png' }, content: 'hi', timestamp: new Date(5), meta: { tokens: 12 } };
    // An ISO time without milliseconds takes the core's reader; the objects stay the caller's.
    const second = { id: 'msg-2', speaker: kailai, content: 'yo', timestamp: '2024-01-01T00:00:00Z' };
    const cm = new ContextManager();
    cm.importSnapshot({ version: 1, teamTask: null, timestamp: 1, messages: [first, second] });
    const [a, b] = cm.getMessages();
    assert.equal(a, first);
    assert.equal(b, second);
    assert.deepEqual(a.meta, { tokens: 12 });
    assert.equal(cm.assemblePrompt('codex', cm.getContextForAgent('max', 'codex')).prompt, '[CONTEXT]\n- kailai -> all: hi\n\n[MESSAGE]\nyo');
    assert.equal(cm.addMessage({ speaker: kailai, content: 'next' }).id, 'msg-3');
  });

  test(`${build}: an empty team task reads back as "" everywhere, as in the peer`, () => {
    const seen = [];
    const cm = new ContextManager({ onTeamTaskChanged: (t) => seen.push(t) });
    cm.addMessage({ speaker: kailai, content: 'hi' });
    cm.setTeamTask('');
    assert.equal(cm.getTeamTask(), '');
    assert.equal(cm.getContextForAgent('max', 'codex').teamTask, '');
    const copy = new ContextManager({ onTeamTaskChanged: (t) => seen.push(t) });
    copy.importSnapshot(cm.exportSnapshot());
    assert.equal(copy.getTeamTask(), '');
    assert.deepEqual(seen, ['', '']);
  });

  test(`${build}: getContextForAgent does not need the agent type, as the peer does not read it`, () => {
    const cm = new ContextManager();
    cm.addMessage({ speaker: kailai, content: 'hi' });
    assert.equal(cm.getContextForAgent('max').currentMessage, 'hi');
  });

  test(`${build}: an imported team task over 5 KiB is cut and warned about, as setTeamTask does`, () => {
    const warnings = [];
    const logger = { warn: (m) => warnings.push(m), info() {}, error() {}, debug() {} };
    const cm = new ContextManager({ logger });
    cm.importSnapshot({ version: 1, teamTask: 'x'.repeat(6000), timestamp: 1, messages: [] });
    assert.equal(cm.getTeamTask().length, 5120);
    assert.deepEqual(warnings, ['[ContextManager] TeamTask exceeded 5KB limit (6000 bytes), truncated to 5120 bytes']);
  });

  test(`${build}: assemblePrompt reads the peer's parentContext and siblingContext, a null to and a null message`, () => {
    const cm = new ContextManager();
    const routed = cm.assemblePrompt('codex', {
      contextMessages: [{ from: 'kailai', to: null, content: 'hi' }],
      currentMessage: 'now',
      teamTask: null,
      maxBytes: 10000,
      parentContext: { from: 'kailai', content: 'original question' },
      siblingContext: [{ from: 'sarah', content: 'my answer' }],
    });
    assert.equal(
      routed.prompt,
      '[CONTEXT]\n- kailai -> all: hi\n\n[PARENT_CONTEXT]\n(This is the message you are replying to, reinserted for context)\n- kailai: original question\n\n' +
        '[RELATED_CONTEXT]\n(Other responses to the same message - avoid repeating)\n- sarah: my answer\n\n[MESSAGE]\nnow',
    );
    const none = cm.assemblePrompt('codex', { contextMessages: [{ from: 'kailai', to: 'max', content: 'hi' }], currentMessage: null, maxBytes: 100 });
    assert.equal(none.prompt, '[CONTEXT]\n- kailai -> max: hi');
  });

  test(`${build}: console.log in Node shows a context's and a result's values, not getters`, async () => {
    if (typeof process === 'undefined') return; // util.inspect is Node's (the suite also runs in Chromium)
    const { inspect } = await import('node:util');
    const cm = new ContextManager();
    cm.addMessage({ speaker: kailai, content: 'hi' });
    const input = cm.getContextForAgent('max', 'codex');
    const shown = inspect(input, { depth: 4 });
    assert.match(shown, /currentMessage: 'hi'/);
    assert.doesNotMatch(shown, /Getter|held/i);
    const out = inspect(cm.assemblePrompt('codex', input), { depth: 0 });
    assert.match(out, /prompt: '\[MESSAGE\]\\nhi'/);
    assert.doesNotMatch(out, /Getter/);
  });
}

test('drop-in defaults: the peer\'s window of 10, no timestamp added, a bad argument is a TypeError', () => {
  const { ContextManager } = builds[0][1];
  const cm = new ContextManager();
  for (let i = 0; i < 12; i++) cm.addMessage({ speaker: kailai, content: `m${i}` });
  const input = cm.getContextForAgent('max', 'codex');
  assert.equal(input.contextMessages.length, 10, 'the 10 messages before the current one');
  assert.equal(input.contextMessages[0].content, 'm1');
  assert.ok(!('timestamp' in cm.getLatestMessage()));
  assert.ok(cm.addMessage({ speaker: kailai, content: 'x', timestamp: 5 }).timestamp instanceof Date);
  const refusals = [
    () => cm.addMessage(null),
    () => cm.addMessage({ speaker: kailai, content: 123 }),
    () => cm.addMessage({ content: 'x' }),
    () => cm.addMessage({ speaker: { name: 'k', type: 'human' }, content: 'x' }),
    () => cm.addMessage({ speaker: { id: 'k', name: 'k', type: 'robot' }, content: 'x' }),
    () => new ContextManager({ contextWindowSize: -1 }),
    () => cm.getContextForAgent('max', 'codex', { systemInstruction: 5 }),
    () => cm.importSnapshot({ version: 1, messages: [{ id: 'msg-1', content: 'x' }], teamTask: null }),
    () => cm.setTeamTask(5),
  ];
  for (const call of refusals) assert.throws(call, (e) => e instanceof TypeError && /^(new )?[\w.]+(\([\w, ]*\))?: /.test(e.message), String(call));
});
