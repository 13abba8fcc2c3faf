// Random JS values into every export (seeded, reproducible): each call returns or throws a
// plain Error, never a WebAssembly trap (a Rust panic aborts as `RuntimeError: unreachable`,
// after which the instance is unusable), and the instances keep working afterwards.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { builds } from './helpers.mjs';

/** mulberry32: a tiny seeded PRNG, so a failure replays. */
function rng(seed) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const PIECES = ['[NEXT: ', ']', '[FROM:', '[DONE]', '[DROP: ALL]', '[TEAM_TASK:', '```', '\n', ' ', 'max', '!P1', ',', 'é', '👋', '\u0085', '\uFEFF', '\uD800', 'kailai'];

function value(r, depth = 0) {
  const pick = (xs) => xs[Math.floor(r() * xs.length)];
  switch (Math.floor(r() * (depth > 2 ? 7 : 10))) {
    case 0: return undefined;
    case 1: return null;
    case 2: return pick([0, -1, 1.5, 2 ** 53, NaN, Infinity, 7]);
    case 3: return r() < 0.5;
    case 4: return new Date(pick([0, -1, NaN, 1e15]));
    case 5:
    case 6: return Array.from({ length: Math.floor(r() * 12) }, () => pick(PIECES)).join('');
    case 7: return Array.from({ length: Math.floor(r() * 4) }, () => value(r, depth + 1));
    default: {
      const keys = ['id', 'name', 'displayName', 'type', 'kind', 'content', 'speaker', 'routing', 'members', 'team',
        'messages', 'version', 'teamTask', 'timestamp', 'from', 'to', 'contextMessages', 'currentMessage', 'maxBytes',
        'rawNextMarkers', 'resolvedAddressees', 'agentType', 'windowSize', 'context', 'settings', 'intent'];
      const o = {};
      for (let i = Math.floor(r() * 6); i > 0; i--) o[pick(keys)] = value(r, depth + 1);
      return o;
    }
  }
}

function mustNotTrap(call, label) {
  try {
    call();
  } catch (e) {
    assert.ok(!(e instanceof WebAssembly.RuntimeError), `${label}: trapped: ${e.message}`);
    assert.ok(e instanceof Error, `${label}: threw a non-Error ${String(e)}`);
  }
}

const team = { members: [{ name: 'kailai', kind: 'human' }, { name: 'max', kind: 'ai', agentType: 'claude' }] };

for (const [build, m] of builds) {
  test(`${build}: random arguments never trap and the instances stay usable`, () => {
    const r = rng(20261123);
    const cm = new m.ContextManager({ contextWindowSize: 2, maxBytes: 200 });
    const conv = new m.Conversation(team);
    for (let i = 0; i < 400; i++) {
      const [a, b, c] = [value(r), value(r), value(r)];
      const label = `#${i} ${JSON.stringify([a, b, c], (_, v) => (v === undefined ? '<undefined>' : v))}`;
      mustNotTrap(() => m.parseMessage(a), `parseMessage ${label}`);
      mustNotTrap(() => m.stripAll(a), `stripAll ${label}`);
      mustNotTrap(() => m.preview(a, b), `preview ${label}`);
      mustNotTrap(() => new m.Scenario(a), `Scenario ${label}`);
      mustNotTrap(() => cm.addMessage(a), `addMessage ${label}`);
      mustNotTrap(() => cm.setTeamTask(a), `setTeamTask ${label}`);
      mustNotTrap(() => cm.getContextForAgent(a, b, c), `getContextForAgent ${label}`);
      mustNotTrap(() => cm.assemblePrompt(a, b), `assemblePrompt ${label}`);
      mustNotTrap(() => cm.importSnapshot(a), `importSnapshot ${label}`);
      mustNotTrap(() => new m.ContextManager(a), `new ContextManager ${label}`);
      mustNotTrap(() => new m.Conversation(a), `new Conversation ${label}`);
      mustNotTrap(() => conv.submit(a, b, c), `submit ${label}`);
      mustNotTrap(() => conv.agentReplied(a, b, c), `agentReplied ${label}`);
      mustNotTrap(() => conv.pollActions(), `pollActions ${label}`);
    }
    // Random text that is a valid string goes through the whole pipeline too.
    for (let i = 0; i < 200; i++) {
      const text = String(value(r) ?? '');
      cm.addMessage({ speaker: { id: 'k', name: 'k', type: i % 2 ? 'ai' : 'human' }, content: text });
      const out = cm.assemblePrompt(i % 3 ? 'claude' : 'gemini', cm.getContextForAgent('max', 'claude', { systemInstruction: text }));
      const bytes = Buffer.byteLength(out.prompt) + Buffer.byteLength(out.systemFlag ?? '');
      assert.ok(bytes <= 200, `budget bound: ${bytes} bytes for ${JSON.stringify(text)}`);
    }
    assert.equal(m.parseMessage('[NEXT: max]').addressees[0], 'max');
    const fresh = new m.Conversation(team);
    assert.equal(fresh.submit('hi [NEXT: max]', 'kailai', 1), 'msg-1');
  });
}
