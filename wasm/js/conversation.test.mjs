// The Conversation state machine through the package (docs/architecture.md §6–§9): a whole
// conversation, driven as a JS host would, with exact prompts and explain fates.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { builds, readJson } from './helpers.mjs';

const members = [
  { id: 'kailai', name: 'kailai', displayName: 'Kailai', kind: 'human' },
  { id: 'max', name: 'max', displayName: 'Max', kind: 'ai', agentType: 'claude', systemInstruction: 'You are Max.' },
  { id: 'sarah', name: 'sarah', displayName: 'Sarah', kind: 'ai', agentType: 'codex' },
];

/** The one delivery among `actions` (and that there is exactly one). */
function delivery(actions) {
  const delivers = actions.filter((a) => a.type === 'deliver');
  assert.equal(delivers.length, 1, JSON.stringify(actions));
  return delivers[0];
}

/** SHA-256 hex of what an agent is given: the prompt, then a NUL and the system flag if any. */
async function sha256Of({ prompt, systemFlag }) {
  const bytes = new TextEncoder().encode(systemFlag == null ? prompt : `${prompt}\0${systemFlag}`);
  const digest = await globalThis.crypto.subtle.digest('SHA-256', bytes);
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, '0')).join('');
}

const fates = (d) => d.prompt.explain.messages.map((m) => (m.reason ? [m.index, m.fate, m.reason] : [m.index, m.fate]));

for (const [build, { Conversation }] of builds) {
  test(`${build}: a delivery carries the SHA-256 of exactly what the agent is given`, async () => {
    const c = new Conversation({ id: 't', name: 'T', members });
    c.submit('Review this, please: é 🦀 [NEXT: max]', 'kailai', 1);
    const withFlag = delivery(c.pollActions());
    assert.equal(withFlag.prompt.systemFlag, 'You are Max.');
    assert.equal(withFlag.promptSha256, await sha256Of(withFlag.prompt));
    c.agentReplied('max', 'Done. [NEXT: sarah]', 2);
    const without = delivery(c.pollActions());
    assert.equal(without.prompt.systemFlag, null);
    assert.equal(without.promptSha256, await sha256Of(without.prompt));
    assert.match(without.promptSha256, /^[0-9a-f]{64}$/);
  });

  test(`${build}: human -> AI -> AI with a team task and a window of 2, exact prompts`, () => {
    const c = new Conversation({ id: 't', name: 'T', members, settings: { windowSize: 2 } });
    assert.equal(c.status, 'idle');
    assert.deepEqual(c.pollActions(), []);

    assert.equal(c.submit('[TEAM_TASK: Ship login] Plan the login page [NEXT: max]', 'kailai', 1), 'msg-1');
    let d = delivery(c.pollActions());
    assert.deepEqual(Object.keys(d), ['type', 'to', 'message', 'parent', 'intent', 'prompt', 'promptSha256']);
    assert.deepEqual(d.prompt, c.preview('max', 0), 'the delivered prompt is what preview shows, explain included');
    assert.equal(d.to, 'max');
    assert.equal(d.prompt.prompt, '[TEAM_TASK]\nShip login\n\n[MESSAGE]\nPlan the login page');
    assert.equal(d.prompt.systemFlag, 'You are Max.', 'Claude gets its system part as the flag only');
    assert.deepEqual(fates(d), [[0, 'current']]);
    assert.equal(c.status, 'running');
    assert.equal(c.teamTask, 'Ship login');
    assert.deepEqual(c.inFlight(), { to: 'max', message: 'msg-1', parent: 'msg-1', intent: 'P2', since: 1 });

    c.agentReplied('max', 'Plan: form, session. [NEXT: sarah]', 2);
    d = delivery(c.pollActions());
    assert.equal(d.to, 'sarah');
    assert.equal(
      d.prompt.prompt,
      '[TEAM_TASK]\nShip login\n\n[CONTEXT]\n- kailai -> max: Plan the login page\n\n[MESSAGE]\nPlan: form, session.',
    );
    assert.equal(d.prompt.systemFlag, null);

    c.agentReplied('sarah', 'Built it. [NEXT: max]', 3);
    d = delivery(c.pollActions());
    assert.equal(
      d.prompt.prompt,
      '[TEAM_TASK]\nShip login\n\n[CONTEXT]\n- kailai -> max: Plan the login page\n- max -> sarah: Plan: form, session.\n\n[MESSAGE]\nBuilt it.',
    );

    c.agentReplied('max', 'Reviewed.', 4);
    assert.deepEqual(c.pollActions(), [{ type: 'awaitHuman', member: 'kailai' }]);
    assert.equal(c.status, 'awaitingHuman');
    assert.equal(c.waitingFor, 'kailai');

    c.submit('Looks good [NEXT: sarah]', undefined, 5); // the awaited human
    d = delivery(c.pollActions());
    assert.equal(
      d.prompt.prompt,
      '[TEAM_TASK]\nShip login\n\n[CONTEXT]\n- sarah -> max: Built it.\n- max -> all: Reviewed.\n\n[MESSAGE]\nLooks good',
    );
    assert.deepEqual(fates(d), [[2, 'included'], [3, 'included'], [4, 'current']]);
    assert.equal(d.prompt.explain.outsideWindow, 2, 'msg-1 and msg-2 are outside the window');

    c.agentFailed('sarah', 'timeout', 6);
    const after = c.pollActions();
    assert.deepEqual(after, [{ type: 'awaitHuman', member: 'kailai' }]);
    const stored = c.getMessages();
    assert.deepEqual(stored.map((m) => [m.id, m.speaker.id, m.at]), [
      ['msg-1', 'kailai', 1], ['msg-2', 'max', 2], ['msg-3', 'sarah', 3],
      ['msg-4', 'max', 4], ['msg-5', 'kailai', 5], ['msg-6', 'system', 6],
    ]);
    assert.equal(stored[5].content, 'sarah failed: timeout');
    assert.equal(stored[0].content, '[TEAM_TASK: Ship login] Plan the login page [NEXT: max]', 'stored raw');
    assert.deepEqual(stored[1].routing.resolved, ['sarah']);
  });

  test(`${build}: AI to AI dedup and a budget trim, with their explain fates`, () => {
    const team = {
      id: 't', name: 'T',
      members: [members[0], members[1], { id: 'sarah', name: 'sarah', displayName: 'Sarah', kind: 'ai', agentType: 'gemini' }],
      settings: { windowSize: 3, maxBytes: 150 },
    };
    const c = new Conversation(team);
    c.submit('Review the plan [NEXT: max !P1, max]', 'kailai', 1); // two deliveries to max
    delivery(c.pollActions());
    c.agentReplied('max', 'Looks fine.', 2);
    delivery(c.pollActions());
    c.agentReplied('max', 'Looks fine. [NEXT: sarah]', 3);
    let d = delivery(c.pollActions());
    assert.equal(d.to, 'sarah');
    assert.equal(d.prompt.prompt, 'Conversation so far:\n- kailai: Review the plan\n\nLast message:\nLooks fine.');
    assert.deepEqual(fates(d), [[0, 'included'], [1, 'deduplicated', 'sameSpeakerAndContent'], [2, 'current']]);

    const long = 'A long answer that will not fit into the budget of this small team at all, so it is cut.';
    c.agentReplied('sarah', `${long} [NEXT: max]`, 4);
    d = delivery(c.pollActions());
    assert.equal(d.prompt.prompt, `[CONTEXT]\n- max -> sarah: Looks fine.\n\n[MESSAGE]\n${long}`);
    assert.deepEqual(fates(d), [[0, 'trimmedForBudget'], [1, 'trimmedForBudget'], [2, 'included'], [3, 'current']]);
    const bytes = Buffer.byteLength(d.prompt.prompt) + Buffer.byteLength(d.prompt.systemFlag ?? '');
    assert.equal(d.prompt.explain.totalBytes, bytes);
    assert.ok(bytes <= 150);
    assert.equal(d.prompt.explain.status, 'critical');
  });

  test(`${build}: DONE finishes the conversation and a human reopens it`, () => {
    const c = new Conversation({ id: 't', name: 'T', members });
    c.submit('Go [NEXT: max]', 'kailai', 1);
    c.pollActions();
    c.agentReplied('max', 'All done [DONE]', 2);
    assert.deepEqual(c.pollActions(), [{ type: 'finished' }]);
    assert.equal(c.status, 'completed');
    c.submit('One more thing [NEXT: sarah]', 'kailai', 3);
    assert.equal(delivery(c.pollActions()).to, 'sarah');
  });

  test(`${build}: retryAgent runs a failed delivery again, and is refused when nothing failed`, () => {
    const c = new Conversation({ id: 't', name: 'T', members });
    c.submit('Plan it [NEXT: max]', 'kailai', 1);
    const first = delivery(c.pollActions());
    assert.throws(() => c.retryAgent('max', 2), { message: /Max is already running or queued/ });
    c.agentFailed('max', 'timeout', 2);
    c.pollActions();
    c.retryAgent('max', 3);
    const again = delivery(c.pollActions());
    assert.equal(again.to, 'max');
    assert.equal(again.prompt.prompt, first.prompt.prompt);
    c.agentReplied('max', 'Planned. [DONE]', 4);
    assert.throws(() => c.retryAgent('max', 5), {
      message: "Max's last run did not fail, so there is nothing to retry; to ask Max again, write a message with [NEXT: max]",
    });
    assert.ok(c.exportSession().facts.some((f) => f.type === 'retry' && f.to === 'max' && f.at === 3));
  });

  test(`${build}: unknown addressees are a notice, not an error`, () => {
    const c = new Conversation({ id: 't', name: 'T', members });
    c.submit('Hi [NEXT: ghost, max]', 'kailai', 1);
    const actions = c.pollActions();
    assert.deepEqual(actions[0], { type: 'notice', kind: 'unresolvedAddressees', message: 'msg-1', names: ['ghost'] });
    assert.equal(delivery(actions).to, 'max');
  });

  test(`${build}: a message cut to fit the budget is a notice before the delivery`, () => {
    const c = new Conversation({ id: 't', name: 'T', members, settings: { maxBytes: 40 } });
    c.submit(`[NEXT: sarah] ${'x'.repeat(500)}`, 'kailai', 1);
    const actions = c.pollActions();
    // The prompt fills the budget, so the crossing into `critical` is a notice too (first).
    assert.deepEqual(actions.map((a) => a.kind ?? a.type), ['budgetCrossed', 'messageCut', 'deliver']);
    const cut = actions[1];
    assert.deepEqual(cut, { type: 'notice', kind: 'messageCut', to: 'sarah', message: 'msg-1', fromBytes: 500, toBytes: cut.toBytes });
    assert.ok(cut.toBytes > 0 && cut.toBytes < 40, String(cut.toBytes));
    assert.ok(actions[2].prompt.explain.totalBytes <= 40);
  });

  test(`${build}: the peer's cli-config is accepted as a team`, async () => {
    const config = await readJson('tests/fixtures/scenarios/peer-team.json');
    const c = new Conversation(config.team);
    const team = c.getTeam();
    assert.ok(team.members.some((m) => m.kind === 'human'));
    assert.ok(team.members.every((m) => m.kind === 'human' || m.agentType));
  });

  test(`${build}: bad input throws an Error with the core's message and changes nothing`, () => {
    const c = new Conversation();
    assert.throws(() => c.submit('hi'), { message: 'No team loaded. Set a team before sending messages' });
    assert.throws(() => c.setTeam({ members: [members[1]] }), (e) => e instanceof Error && /^Conversation\.setTeam\(team\): .*human/.test(e.message));
    assert.throws(() => c.setTeam('{oops'), (e) => e instanceof Error && /^Conversation\.setTeam\(team\): .*line 1/.test(e.message));
    assert.throws(() => c.setTeam(null), /^Error: Conversation\.setTeam\(team\): expected an object or JSON text, found null/);
    // The constructor names its own call, not the setTeam it uses.
    assert.throws(() => new Conversation('{oops'), (e) => /^new Conversation\(team\): .*line 1/.test(e.message));
    assert.throws(() => new Conversation({ members: [members[1]] }), (e) => /^new Conversation\(team\): .*human/.test(e.message));
    assert.equal(c.getTeam(), null, 'a bad team leaves the conversation without one');

    c.setTeam({ id: 't', name: 'T', members: [...members, { id: 'bob', name: 'bob', displayName: 'Bob', kind: 'human' }] });
    assert.throws(() => c.submit('hello'), /^Error: Multiple human members detected[^]*Example: \[FROM:kailai\] Your message here\n\nFrom code, pass the sender's member id instead: submit\(text, senderId\)$/);
    assert.throws(() => c.submit('hello', 'nobody'), { message: "Sender id 'nobody' is not a member of the team; the member ids are: kailai, max, sarah, bob" });
    assert.throws(() => c.submit('hello', 'max'), /First message must be from a human member/);
    assert.throws(() => c.submit(' \n', 'kailai'), { message: 'the message is empty: write some text, or a marker such as [NEXT: name] or [DONE]' });
    assert.throws(() => c.agentReplied('max', 'unasked'), Error);
    const badTime = (found) =>
      `Conversation.submit(text, sender, at): at: expected a Date, whole milliseconds since 1970 (at most 8.64e15) or a date string, found ${found}`;
    for (const [at, found] of [['not a date', 'the string "not a date"'], [1e20, '100000000000000000000'], [-1, '-1'], [1.5, '1.5'], [new Date(NaN), 'an invalid Date'], [{}, 'an object']]) {
      assert.throws(() => c.submit('hello', 'kailai', at), { message: badTime(found) }, String(at));
    }
    assert.deepEqual(c.getMessages(), [], 'nothing was stored');

    assert.equal(c.submit('[FROM: bob] now it works [NEXT: max]', undefined, 1), 'msg-1');
    assert.equal(delivery(c.pollActions()).to, 'max');
  });

  test(`${build}: an argument that throws while it is read leaves the conversation usable`, () => {
    const c = new Conversation({ id: 't', name: 'T', members });
    c.submit('Plan it [NEXT: max]', 'kailai', 1);
    delivery(c.pollActions());
    const boom = () => { throw new Error('boom'); };
    const throwing = [
      () => c.preview('max', null, { get windowSize() { return boom(); } }),
      () => c.preview('max', null, new Proxy({}, { ownKeys: boom })),
      () => c.agentReplied('max', 'done', new (class extends Date { getTime() { return boom(); } })()),
      () => c.setTeam({ toJSON: boom }),
    ];
    for (const call of throwing) assert.throws(call, /boom/);
    // Nothing changed, and every call works again.
    assert.equal(c.status, 'running');
    assert.equal(c.agentReplied('max', 'Planned. [NEXT: sarah]', 2), 'msg-2');
    assert.equal(delivery(c.pollActions()).to, 'sarah');
  });

  test(`${build}: a getter that calls back into the conversation simply makes its call first`, () => {
    const c = new Conversation({ id: 't', name: 'T', members });
    c.submit('Plan it [NEXT: max]', 'kailai', 1);
    let seen;
    const overrides = { get windowSize() { seen = c.status; return 0; } };
    assert.match(c.preview('max', null, overrides).prompt, /Plan it/);
    assert.equal(seen, 'running');
  });

  test(`${build}: getMessages gives a new array of frozen messages, each converted once, and a new team starts afresh`, () => {
    const c = new Conversation({ id: 't', name: 'T', members });
    c.submit('Plan it [NEXT: max]', 'kailai', 1);
    const first = c.getMessages();
    c.agentReplied('max', 'Planned.', 2);
    const second = c.getMessages();
    assert.notEqual(first, second, 'a new array each call');
    assert.equal(first.length, 1, 'an earlier result is not changed by later messages');
    assert.equal(second[0], first[0], 'a stored message crosses from wasm once');
    assert.deepEqual(second.map((m) => [m.id, m.content]), [['msg-1', 'Plan it [NEXT: max]'], ['msg-2', 'Planned.']]);
    assert.throws(() => { second[0].content = 'changed'; }, TypeError);
    assert.throws(() => { second[0].routing.resolved.push('sarah'); }, TypeError);
    assert.throws(() => { second[1].speaker.id = 'sarah'; }, TypeError);
    second.pop();
    assert.equal(c.getMessages().length, 2, 'the returned array is the caller\'s own');
    assert.deepEqual(c.getMessages()[0].routing.resolved, ['max'], 'nothing stored changed');

    c.setTeam({ id: 't', name: 'T', members });
    assert.deepEqual(c.getMessages(), []);
    c.submit('Other topic [NEXT: max]', 'kailai', 3);
    const fresh = c.getMessages();
    assert.deepEqual(fresh.map((m) => [m.id, m.content]), [['msg-1', 'Other topic [NEXT: max]']], 'the old msg-1 is gone');
    assert.ok(Object.isFrozen(fresh[0]));
  });

  test(`${build}: a session exported mid-delivery resumes with the delivery emitted again`, () => {
    const c = new Conversation({ id: 't', name: 'T', members });
    c.submit('[TEAM_TASK: Ship] Plan it [NEXT: max, sarah]', 'kailai', 1);
    const first = delivery(c.pollActions());
    const session = JSON.parse(JSON.stringify(c.exportSession(2)));
    assert.equal(session.format, 'agent-chatter-session/1');
    assert.deepEqual(session.facts.map((f) => f.type), ['setTeam', 'human']);
    assert.deepEqual(session.facts[1], { type: 'human', text: '[TEAM_TASK: Ship] Plan it [NEXT: max, sarah]', sender: 'kailai', at: 1 });

    const resumed = Conversation.resume(session, 3);
    const again = delivery(resumed.pollActions());
    assert.equal(again.to, first.to);
    assert.equal(again.prompt.prompt, first.prompt.prompt);
    assert.deepEqual(resumed.getMessages(), c.getMessages());
    assert.equal(resumed.teamTask, 'Ship');
    resumed.agentReplied('max', 'Planned.', 4);
    assert.equal(delivery(resumed.pollActions()).to, 'sarah', 'the queue survived');

    const text = Conversation.resume(JSON.stringify(session));
    assert.equal(delivery(text.pollActions()).to, 'max');
  });

  test(`${build}: a bad session names the field and nothing is created`, () => {
    const c = new Conversation({ id: 't', name: 'T', members });
    c.submit('Go [NEXT: max]', 'kailai', 1);
    const session = c.exportSession(2);
    const bad = (edit) => { const s = JSON.parse(JSON.stringify(session)); edit(s); return s; };
    const cases = [
      [bad((s) => { s.facts[1].sender = 'zed'; }), /^Conversation\.resume\(session\): facts\[1\] \(human\): does not replay: Sender id 'zed' is not a member/],
      [bad((s) => { delete s.facts[1].text; }), /^Conversation\.resume\(session\): facts\[1\]\.text: missing/],
      [bad((s) => { s.facts[0].team.members = []; }), /^Conversation\.resume\(session\): facts\[0\]\.team/],
      [bad((s) => { s.facts[1].type = 'sleep'; }), /^Conversation\.resume\(session\): facts\[1\]\.type: unknown fact type "sleep"/],
      [bad((s) => { s.format = 'agent-chatter-session/9'; }), /^Conversation\.resume\(session\): format: "agent-chatter-session\/9" is not a session file this version reads/],
      [{ facts: session.facts }, /^Conversation\.resume\(session\): format: missing/],
    ];
    for (const [input, message] of cases) {
      assert.throws(() => Conversation.resume(input), (e) => e instanceof Error && message.test(e.message), String(message));
    }
    assert.throws(() => new Conversation().exportSession(), /^Error: Conversation\.exportSession\(at\): no team loaded/);
  });

  test(`${build}: preview travels in time and asks what-if without changing anything`, () => {
    const c = new Conversation({ id: 't', name: 'T', members });
    assert.equal(c.preview('max').explain.current, null, 'the skeleton before any message');
    c.submit('[TEAM_TASK: Ship] Plan it [NEXT: max]', 'kailai', 1);
    const first = delivery(c.pollActions());
    c.agentReplied('max', 'Planned. [NEXT: sarah]', 2);
    const before = JSON.stringify(c.exportSession());
    assert.equal(c.preview('max', 0).prompt, first.prompt.prompt, 'what max got');
    const narrow = c.preview('sarah', 1, { windowSize: 0 });
    assert.ok(narrow.explain.messages.every((m) => m.fate === 'current'));
    const tokens = c.preview('sarah', 1, { maxTokens: 5 });
    assert.ok(tokens.explain.totalTokens <= 5);
    assert.equal(JSON.stringify(c.exportSession()), before, 'nothing changed');
    assert.throws(() => c.preview('max', 9), /Conversation\.preview\(memberId, at, overrides\): at: message #9 does not exist/);
  });
}
