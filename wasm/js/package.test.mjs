// The package as npm users get it: metadata, exports map, and type declarations.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cp, mkdtemp, readdir, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { builds, pkgDir, readJson } from './helpers.mjs';

const manifest = await readJson('pkg/package.json');

test('package version equals the version() export of every build', () => {
  for (const [name, m] of builds) {
    assert.equal(m.version(), manifest.version, `${name} build`);
  }
});

test('package is an ES module named agent-chatter-wasm for Node 20 and later', () => {
  assert.equal(manifest.name, 'agent-chatter-wasm');
  assert.equal(manifest.type, 'module');
  assert.equal(manifest.engines.node, '>=20');
});

test('exports map sends node to the node build and everything else to the web build', () => {
  const dot = manifest.exports['.'];
  assert.deepEqual(Object.keys(dot), ['workerd', 'bun', 'node', 'types', 'browser', 'import', 'default']);
  assert.equal(dot.node.default, './node/index.js');
  assert.equal(dot.node.types, './node/index.d.ts');
  for (const condition of ['browser', 'import', 'default']) {
    assert.equal(dot[condition], './web/index.js');
  }
});

test('every file the exports map names exists in the package', async () => {
  const targets = new Set();
  const walk = (v) => (typeof v === 'string' ? targets.add(v) : Object.values(v).forEach(walk));
  walk(manifest.exports);
  for (const target of targets) {
    await readFile(new URL(target, pkgDir)); // throws ENOENT when missing
  }
});

test('type declarations never use any', async () => {
  const files = ['node', 'web'].flatMap((b) => [`${b}/index.d.ts`, `${b}/agent_chatter_wasm.d.ts`, `${b}/agent_chatter_wasm_bg.wasm.d.ts`]);
  for (const build of files) {
    const dts = await readFile(new URL(build, pkgDir), 'utf8');
    const hits = dts.split('\n').filter((line) => /\bany\b/.test(line.replace(/\/\*\*.*?\*\/|\/\/.*$|^\s*\*.*$/g, '')));
    assert.deepEqual(hits, [], `${build} uses any`);
  }
});

test('the node build exports init (default) and initSync too, as no-ops, for isomorphic code', async () => {
  const node = builds.find(([name]) => name === 'node')[1];
  assert.equal(typeof node.default, 'function');
  assert.equal(await node.default(), undefined);
  assert.equal(node.initSync(), undefined);
  // What the web build's functions take is accepted (and ignored) too.
  assert.equal(await node.default({ module_or_path: '/agent_chatter_wasm_bg.wasm' }), undefined);
  assert.equal(node.initSync({ module: new Uint8Array() }), undefined);
});

test('both builds load one shared copy of the wasm binary', async () => {
  const files = await readdir(pkgDir, { recursive: true });
  assert.deepEqual(files.filter((f) => f.endsWith('.wasm')), ['agent_chatter_wasm_bg.wasm']);
  assert.ok(manifest.files.includes('agent_chatter_wasm_bg.wasm'));
});

test('the engine behind ContextManager is not part of the API', () => {
  for (const [, m] of builds) {
    assert.equal(m.PromptEngine, undefined);
    assert.equal(m.HeldContext, undefined);
  }
});

test('every type of the API is exported by name, and no internal helper is', async () => {
  const internal = ['HeldContext', 'PromptEngine', 'parseMessagePacked', 'stripAllView', 'stripRoutingView', 'textInbox', 'viewStart', 'viewTail', 'wasmMemory', '__wbg_init'];
  for (const build of ['node', 'web']) {
    const generated = await readFile(new URL(`${build}/agent_chatter_wasm.d.ts`, pkgDir), 'utf8');
    const types = [...generated.matchAll(/^export (?:type|interface) (\w+)/gm)].map((m) => m[1]);
    const entry = await readFile(new URL(`${build}/index.d.ts`, pkgDir), 'utf8');
    const listed = entry.match(/export type \{([^}]*)\}/)[1].split(',').map((n) => n.trim()).filter(Boolean);
    const expected = types.filter((t) => !internal.includes(t)).sort();
    assert.deepEqual([...listed].sort(), expected, `${build}/index.d.ts lists every type`);
    assert.doesNotMatch(entry, /export type \*/, build);
  }
});

test('the web build used before init() says so, naming init and initSync', async () => {
  // A copy of the package gives a module graph of its own, never initialised.
  const dir = await mkdtemp(join(tmpdir(), 'agent-chatter-web-'));
  await cp(new URL('web/', pkgDir), join(dir, 'web'), { recursive: true });
  for (const file of ['context-manager.js', 'markers.js', 'guard.js']) await cp(new URL(file, pkgDir), join(dir, file));
  const fresh = await import(pathToFileURL(join(dir, 'web', 'index.js')).href);
  const cm = new fresh.ContextManager();
  const speaker = { id: 'k', name: 'k', type: 'human' };
  const advice = /not initialised: call `await init\(\)` \(or `initSync\(\{ module: bytes \}\)`\)/;
  assert.throws(() => cm.addMessage({ speaker, content: 'x' }), advice);
  assert.throws(() => fresh.stripAll('x'), advice);
  assert.throws(() => fresh.parseMessage('x'), advice);
  // Every other export too: the classes, their static methods and the functions.
  assert.throws(() => new fresh.Conversation(), advice);
  assert.throws(() => fresh.Conversation.resume('{}'), advice);
  assert.throws(() => new fresh.Scenario('{}'), advice);
  assert.throws(() => fresh.preview('{}', 'max'), advice);
  assert.throws(() => fresh.version(), advice);
});

test('an object used after free() says so, in every build; a second free() is harmless', () => {
  for (const [name, m] of builds) {
    const conversation = new m.Conversation();
    conversation.free();
    assert.throws(() => conversation.pollActions(), { message: 'Conversation.pollActions: this Conversation was freed (free() was called); make a new one' }, name);
    assert.throws(() => conversation.status, /^Error: Conversation\.status: this Conversation was freed/, name);
    assert.doesNotThrow(() => conversation.free(), name);
    const team = { name: 't', members: [{ name: 'kailai', kind: 'human' }, { name: 'max', kind: 'ai', agentType: 'codex' }] };
    const resumed = m.Conversation.resume(new m.Conversation(team).exportSession());
    assert.ok(resumed instanceof m.Conversation, `${name}: a static method's instance is one`);
    resumed.free();
    assert.throws(() => resumed.getMessages(), /this Conversation was freed/, name);
  }
});

test('an argument that calls back into the object being changed makes its call first, then the change applies', () => {
  for (const [name, m] of builds) {
    const team = { name: 't', members: [{ name: 'kailai', kind: 'human' }, { name: 'max', kind: 'ai', agentType: 'codex' }] };
    const c = new m.Conversation(team);
    let seen;
    const sneaky = { ...team, name: 'u', get members() { seen = c.status; return team.members; } };
    c.setTeam(sneaky);
    assert.equal(seen, 'idle', name);
    assert.equal(c.getTeam().name, 'u', `${name}: the new team is in use`);
  }
});

test('the web build exports init (default) and initSync for browsers', () => {
  const web = builds.find(([name]) => name === 'web')[1];
  assert.equal(typeof web.default, 'function');
  assert.equal(typeof web.initSync, 'function');
});

test('bundlers targeting Node get the embedded build; Node itself the one reading the file', () => {
  const node = manifest.exports['.'].node;
  // `module` is set by esbuild, Vite, webpack and Rollup, never by Node; it must come before `default`.
  assert.deepEqual(Object.keys(node), ['types', 'module', 'default']);
  assert.equal(node.module, './embedded/index.js');
  assert.equal(node.default, './node/index.js');
  assert.deepEqual(manifest.exports['./embedded'], { types: './embedded/index.d.ts', default: './embedded/index.js' });
  assert.ok(manifest.files.includes('embedded/'));
});

test('workerd gets the build importing the .wasm as a module; Bun the embedded build; the .wasm is exported', async () => {
  const dot = manifest.exports['.'];
  assert.deepEqual(dot.workerd, { types: './node/index.d.ts', default: './workerd/index.js' });
  assert.deepEqual(dot.bun, { types: './node/index.d.ts', default: './embedded/index.js' });
  assert.deepEqual(manifest.exports['./agent_chatter_wasm_bg.wasm'], { types: './wasm-module.d.ts', default: './agent_chatter_wasm_bg.wasm' });
  const entry = await readFile(new URL('workerd/index.js', pkgDir), 'utf8');
  assert.match(entry, /^import module from '\.\.\/agent_chatter_wasm_bg\.wasm';$/m);
});

test('the embedded build reads no file and uses no import.meta', async () => {
  for (const file of ['index.js', 'agent_chatter_wasm.js', 'wasm.js']) {
    const text = await readFile(new URL(`embedded/${file}`, pkgDir), 'utf8');
    assert.doesNotMatch(text, /import\.meta|readFileSync|node:fs/, file);
  }
});
