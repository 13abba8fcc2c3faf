// The declarations (wasm/src/types.d.ts, generated from the Rust types) against real outputs: every object the
// package returns has exactly the keys its interface declares (required ones present, no
// undeclared ones), so a renamed or added field in the core fails here, not in a user's build.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { builds, readJson, readText } from './helpers.mjs';

const source = await readText('wasm/src/types.d.ts');

/** `name -> {required: Set, optional: Set}` for every `export interface` (top-level members). */
const interfaces = new Map();
for (const [, name, body] of source.matchAll(/^export interface (\w+) \{\n([\s\S]*?)^\}/gm)) {
  const required = new Set();
  const optional = new Set();
  for (const [, key, q] of body.matchAll(/^ {2}(\w+)(\??):/gm)) (q ? optional : required).add(key);
  interfaces.set(name, { required, optional });
}

function conforms(name, value, where = name) {
  const shape = interfaces.get(name);
  assert.ok(shape, `no interface ${name} in types.d.ts`);
  assert.equal(typeof value, 'object', where);
  for (const key of shape.required) assert.ok(key in value, `${where}: declared ${name}.${key} is missing`);
  for (const key of Object.keys(value)) {
    assert.ok(shape.required.has(key) || shape.optional.has(key), `${where}: ${key} is not declared in ${name}`);
  }
}

const FATES = ['included', 'outsideWindow', 'deduplicated', 'trimmedForBudget', 'current', 'pinned', 'parentContext', 'related', 'withheld'];

function explainConforms(explain, where) {
  conforms('Explain', explain, where);
  explain.sections.forEach((s, i) => conforms('SectionExplain', s, `${where}.sections[${i}]`));
  explain.truncations.forEach((t, i) => conforms('Truncation', t, `${where}.truncations[${i}]`));
  for (const m of explain.messages) {
    assert.ok(FATES.includes(m.fate), `${where}: unknown fate ${m.fate}`);
    const keys = Object.keys(m).sort().join(',');
    assert.equal(keys, m.fate === 'deduplicated' ? 'fate,index,reason' : 'fate,index', `${where}: MessageFate keys`);
  }
}

const [, m] = builds[0];

test('parseMessage output is a ParseResult', () => {
  const r = m.parseMessage('[NEXT: a !P1] [FROM: b]');
  conforms('ParseResult', r);
  conforms('ParsedAddressee', r.parsedAddressees[0]);
});

test('preview output is a Preview with an Explain', async () => {
  const demo = await readJson('tests/fixtures/scenarios/demo.json');
  for (const member of ['max', 'sarah', 'kailai']) {
    const p = m.preview(demo, member);
    conforms('Preview', p, member);
    explainConforms(p.explain, `${member}.explain`);
  }
  const tight = m.preview({ ...demo, context: { windowSize: 5, maxBytes: 120 } }, 'sarah');
  assert.ok(tight.explain.truncations.length > 0 || tight.explain.messages.some((x) => x.fate === 'trimmedForBudget'));
  explainConforms(tight.explain, 'tight.explain');
});

test('ContextManager outputs are the declared peer shapes', () => {
  const cm = new m.ContextManager();
  const speaker = { id: 'k', name: 'k', displayName: 'K', type: 'human' };
  const routing = { rawNextMarkers: ['max'], resolvedAddressees: [{ identifier: 'max', memberId: 'max', memberName: 'max' }], parentMessageId: 'msg-0', intent: 'P1' };
  // With a timestamp: the peer's type (and ours) declares one; a message added without one has none.
  const msg = cm.addMessage({ speaker, content: 'hi [NEXT: max] [DONE]', routing, timestamp: 5 });
  conforms('ConversationMessage', msg);
  conforms('SpeakerInfo', msg.speaker);
  conforms('MessageRouting', msg.routing);
  conforms('ResolvedAddressee', msg.routing.resolvedAddressees[0]);
  cm.addMessage({ speaker, content: 'second' });
  const input = cm.getContextForAgent('max', 'claude', { systemInstruction: 's', instructionFileText: 'f' });
  conforms('AssemblerInput', input);
  conforms('PromptContextMessage', input.contextMessages[0]);
  const out = cm.assemblePrompt('claude', input);
  conforms('AssemblerOutput', out);
  explainConforms(out.explain, 'assemblePrompt.explain');
  const snap = cm.exportSnapshot();
  conforms('ContextSnapshot', snap);
  conforms('ConversationMessage', snap.messages[0], 'snapshot.messages[0]');
});

test('Conversation outputs are the declared shapes', () => {
  const c = new m.Conversation({
    members: [
      { name: 'kailai', kind: 'human' },
      { name: 'max', kind: 'ai', agentType: 'claude', systemInstruction: 'x', windowSize: 3 },
    ],
    settings: { maxAgentResponseMs: 60000 },
  });
  const team = c.getTeam();
  conforms('Team', team);
  team.members.forEach((x, i) => conforms('Member', x, `team.members[${i}]`));
  c.submit('go [NEXT: max, max !P3, ghost]', 'kailai', 1);
  const actions = c.pollActions();
  const d = actions.find((a) => a.type === 'deliver');
  const { type, ...delivery } = d;
  assert.equal(type, 'deliver');
  conforms('Delivery', delivery);
  conforms('Preview', d.prompt, 'delivery.prompt');
  explainConforms(d.prompt.explain, 'delivery.prompt.explain');
  conforms('InFlight', c.inFlight());
  conforms('QueuedDelivery', c.pending()[0]);
  const [stored] = c.getMessages();
  conforms('Message', stored);
  conforms('Speaker', stored.speaker);
  conforms('Routing', stored.routing);
  assert.ok(['idle', 'running', 'awaitingHuman', 'completed'].includes(c.status));
});
