// The peer's own ContextManager tests, run against this package (run by `cargo xtask bench`
// when PEER_OUT names the peer's compiled modules inside its checkout, as for peer-bench.mjs).
//
// The test file (`tests/unit/context/ContextManager.test.ts` of github.com/TestAny-io/agent_chatter)
// is copied inside the peer's checkout with its one import of the class pointed at our
// package, run with the peer's own vitest, and removed: nothing of the peer is committed.
// Each failure must be one of the deliberate differences the npm README lists; any other
// failure fails this script.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync, existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pkgDir } from './helpers.mjs';

/** The peer's tests that check what we deliberately do differently, and why. */
const DELIBERATE = new Map([
  ['addMessage throws on null message', 'errors name the argument (addMessage(message): expected a message object, found null)'],
  ['addMessage throws on non-string content', 'errors name the field (content: expected a string, found 123)'],
  ['addMessage throws on missing speaker', 'errors name the field (speaker: missing)'],
  ['addMessage throws on missing speaker.id', 'errors name the field (speaker.id: missing)'],
  ['importSnapshot throws on invalid format', 'errors name the argument (expected an object or JSON text, found null)'],
  ['strips block TEAM_TASK markers [TEAM_TASK]\\n...', 'a literal [TEAM_TASK] block is text, not a marker (docs/architecture.md §16)'],
]);

const peerOut = process.env.PEER_OUT;
const peerRoot = peerOut ? dirname(peerOut.replace(/\/+$/, '')) : undefined;
const source = peerRoot && join(peerRoot, 'tests/unit/context/ContextManager.test.ts');
if (!source || !existsSync(source) || !existsSync(join(peerRoot, 'node_modules/.bin/vitest'))) {
  console.log('(PEER_OUT does not name a peer checkout with its tests and vitest installed: the peer\'s tests were not run)');
  process.exit(0);
}

const ours = fileURLToPath(new URL('node/index.js', pkgDir));
const original = "from '../../../src/context/ContextManager.js'";
const text = readFileSync(source, 'utf8');
if (!text.includes(original)) {
  console.error(`${source}: its import of the class changed (no ${original}); update peer-tests.mjs`);
  process.exit(1);
}
// Inside the peer's tests/unit (its vitest config includes only there), under a name of ours.
const dir = join(peerRoot, 'tests/unit/agent-chatter-wasm-compat');
mkdirSync(dir, { recursive: true });
const copy = join(dir, 'ContextManager.test.ts');
writeFileSync(copy, text.replace(original, `from ${JSON.stringify(ours)}`));
const report = join(mkdtempSync(join(tmpdir(), 'peer-tests-')), 'vitest.json');
let run;
try {
  run = spawnSync(join(peerRoot, 'node_modules/.bin/vitest'), ['run', copy, '--reporter=json', `--outputFile=${report}`], {
    cwd: peerRoot,
    encoding: 'utf8',
  });
} finally {
  rmSync(dir, { recursive: true, force: true });
}
if (!existsSync(report)) {
  console.error(`vitest did not report (exit ${run.status}):\n${run.stderr}`);
  process.exit(1);
}
const results = JSON.parse(readFileSync(report, 'utf8'));
const failed = results.testResults.flatMap((file) => file.assertionResults.filter((t) => t.status !== 'passed'));
const unexpected = failed.filter((t) => !DELIBERATE.has(t.title));

console.log(`The peer's ContextManager.test.ts against this package: ${results.numPassedTests} of ${results.numTotalTests} pass.`);
console.log('');
console.log('| peer test that fails here | why |');
console.log('|---|---|');
for (const t of failed) console.log(`| ${t.title} | ${DELIBERATE.get(t.title) ?? `**unexpected**: ${t.failureMessages[0]?.split('\n')[0]}`} |`);
if (unexpected.length > 0) {
  console.error(`${unexpected.length} peer test(s) fail for a reason that is not a deliberate difference`);
  process.exit(1);
}
