// The drop-in against the TypeScript peer, side by side in one Node process on the same
// inputs (issue 11's rows). Run by `cargo xtask bench` after `cargo xtask dist`; prints one
// markdown table. The peer's columns appear when PEER_OUT names a build of its compiled
// modules (github.com/TestAny-io/agent_chatter, `npm ci && npx tsc -p tsconfig.json`, outside
// this repository: nothing of the peer is committed):
//
//   PEER_OUT=/path/to/agent_chatter/out cargo xtask bench
//
// ONLY=<text> runs only the rows whose label contains it (`ONLY=stripAll node wasm/js/peer-bench.mjs`),
// SKIP=<text> all but those.
// Every row runs on three kinds of text: ASCII prose, CJK-mixed (Chinese and Japanese words,
// full-width punctuation and ASCII, as bilingual teams write) and emoji-heavy (emoji with
// skin tones and joiners, dashes, curly quotes). RUNS=<n> (default 3) repeats the whole bench
// in this process and gives each row the median of the runs' medians.
import { pkgDir } from './helpers.mjs';

const ours = await import(new URL('node/index.js', pkgDir).href);
const peerOut = process.env.PEER_OUT;
const peer = peerOut
  ? {
      ContextManager: (await import(`${peerOut}/context/ContextManager.js`)).ContextManager,
      MessageRouter: (await import(`${peerOut}/services/MessageRouter.js`)).MessageRouter,
    }
  : null;

const ROUNDS = 7;

/** µs per call of `fn`: `iterations` calls timed together (no clock call per call). */
function batch(fn, iterations) {
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < iterations; i++) fn();
  return Number(process.hrtime.bigint() - t0) / 1000 / iterations;
}

/**
 * µs per call of each of `fns`, per round: `ROUNDS` rounds that alternate between them, so
 * neither side always runs first (after the other's garbage, or on a colder JIT).
 */
function rounds(fns, iterations) {
  for (const fn of fns) batch(fn, Math.min(20, iterations));
  const samples = fns.map(() => []);
  for (let r = 0; r < ROUNDS; r++) {
    const order = r % 2 ? [...fns.keys()].reverse() : [...fns.keys()];
    for (const k of order) samples[k].push(batch(fns[k], iterations));
  }
  return samples;
}

const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

const speakers = [
  { id: 'kailai', name: 'kailai', displayName: 'Kailai', type: 'human' },
  { id: 'max', name: 'max', displayName: 'Max', type: 'ai' },
  { id: 'sarah', name: 'sarah', displayName: 'Sarah', type: 'ai' },
];
/** One line of prose of each kind of text. */
const LINES = {
  ASCII: (i) => `Message ${i}: here is my part of the work, step ${i % 17}, what changed and why. `,
  CJK: (i) => `第${i}条消息：这是我的部分工作, step ${i % 17}, 修改了什么以及为什么。レビューをお願いします、ありがとう。 `,
  emoji: (i) => `Done ✅ step ${i % 17} 🎉 shipped the fix 🚀👍🏽 — “looks good” 😀👨‍👩‍👧 next ${i}. `,
};
/** The kind of text the rows being made use (set by the loop at the bottom). */
let script = 'ASCII';
/** `size` UTF-16 units of the current kind of text (never cutting a surrogate pair). */
const body = (i, size) => {
  const line = LINES[script](i);
  const text = line.repeat(Math.max(1, Math.ceil(size / line.length)));
  const end = /[\uD800-\uDBFF]/.test(text[size - 1] ?? '') ? size - 1 : size;
  return text.slice(0, end);
};
const message = (i, size = 160) => {
  const next = speakers[(i + 1) % 3].id;
  return {
    speaker: speakers[i % 3],
    content: `${body(i, size)} [NEXT: ${next}]`,
    routing: { rawNextMarkers: [next], resolvedAddressees: [{ identifier: next, memberId: next, memberName: next }] },
    timestamp: new Date(1_700_000_000_000 + i),
  };
};
/** A manager of `ContextManager` class `CM` holding `n` messages of `size` bytes. */
const filled = (CM, n, options = {}, size = 160) => {
  const cm = new CM(options);
  for (let i = 0; i < n; i++) cm.addMessage(message(i, size));
  return cm;
};

const rows = [];
const wanted = (label) => (!process.env.ONLY || label.includes(process.env.ONLY)) && !(process.env.SKIP && label.includes(process.env.SKIP));
/**
 * Times `[ours, peer?]` and records a row: the medians, and the peer ÷ ours ratio of each round
 * (the two sides of a round ran back to back, so their ratio is the fair comparison).
 */
function record(label, fns, iterations, perCall = 1) {
  const [o, p] = rounds(fns, iterations).map((s) => s.map((us) => us / perCall));
  rows.push([label, p && median(p), median(o), p && p.map((us, r) => us / o[r])]);
  // Progress on stderr, so a long run shows where it is (and a cut-off run what it had).
  const [, pm, om, ratios] = rows[rows.length - 1];
  console.error(`${label} — ${script}: ours ${om.toFixed(2)} µs, peer ${pm?.toFixed(2) ?? '—'} µs, ${ratios ? median(ratios).toFixed(2) : '—'}×`);
}

/** Runs `make(CM)`'s returned call for ours and the peer; `perCall` divides each time. */
function row(label, make, iterations, perCall = 1) {
  if (!wanted(label)) return;
  record(label, [make(ours.ContextManager), ...(peer ? [make(peer.ContextManager)] : [])], iterations, perCall);
}

/** Records every row once, on the current kind of text. */
function bench() {
  for (const n of [100, 1000, 10_000, 100_000]) {
    const inputs = Array.from({ length: n }, (_, i) => message(i));
    row(`addMessage, per message (N = ${n})`, (CM) => () => {
      const cm = new CM();
      for (const m of inputs) cm.addMessage(m);
    }, Math.max(1, 100_000 / n), n);
  }
  row('getMessages(), 10⁴ messages', (CM) => { const cm = filled(CM, 10_000); return () => cm.getMessages(); }, 500);
  row('getLatestMessage(), 10⁴ messages', (CM) => { const cm = filled(CM, 10_000); return () => cm.getLatestMessage(); }, 1_000_000);
  row('exportSnapshot(), 10⁴ messages', (CM) => { const cm = filled(CM, 10_000); return () => cm.exportSnapshot(); }, 500);
  row('importSnapshot(object), 10⁴ messages', (CM) => {
    const snapshot = filled(CM, 10_000).exportSnapshot();
    const cm = new CM();
    return () => cm.importSnapshot(snapshot);
  }, 20);
  const prompt = (agentType, options) => (cm) => () => cm.assemblePrompt(agentType, cm.getContextForAgent('sarah', agentType, options));
  row('getContextForAgent + assemblePrompt, window 5, N = 10²', (CM) => prompt('claude')(filled(CM, 100)), 2000);
  row('same, window 1000, N = 10², 768 KiB', (CM) => prompt('claude')(filled(CM, 100, { contextWindowSize: 1000 }, 7800)), 100);
  row('same, window 1000, N = 10⁴ (trimming)', (CM) => prompt('claude')(filled(CM, 10_000, { contextWindowSize: 1000 }, 1000)), peer ? 1 : 20);
  {
    const two = `[FROM: kailai] ${body(1, 1000)} [NEXT: max, sarah !P1] ${body(2, 1000)}`;
    const plain = body(3, 1 << 20);
    for (const [label, text, iterations] of [['2 KB with 2 markers', two, 2000], ['1 MiB plain text', plain, 10]]) {
      const router = peer ? new peer.MessageRouter() : null;
      if (wanted(`parseMessage, ${label}`)) {
        record(`parseMessage, ${label}`, [() => ours.parseMessage(text), ...(peer ? [() => router.parseMessage(text)] : [])], iterations);
      }
      if (wanted(`stripAll, ${label}`)) {
        record(`stripAll, ${label}`, [() => ours.stripAll(text), ...(peer ? [() => router.stripAllMarkersForContext(text)] : [])], iterations);
      }
    }
  }
}

const RUNS = Number(process.env.RUNS ?? 3);
/** label → [peer medians, our medians, per-round ratios] of every run. */
const runs = new Map();
for (let run = 0; run < RUNS; run++) {
  for (const kind of Object.keys(LINES)) {
    script = kind;
    rows.length = 0;
    bench();
    for (const [label, p, o, ratios] of rows) {
      const key = `${label} — ${kind}`;
      if (!runs.has(key)) runs.set(key, []);
      runs.get(key).push([p, o, ratios]);
    }
  }
}

const fmt = (us) => (us === undefined ? '—' : us >= 1000 ? `${(us / 1000).toFixed(2)} ms` : us >= 1 ? `${us.toFixed(2)} µs` : `${(us * 1000).toFixed(0)} ns`);
/**
 * The verdict of a row from its per-round ratios: ahead or behind only when every round agrees;
 * when the rounds fall on both sides of 1 the two are level within this machine's noise.
 */
function verdict(ratios) {
  const lo = Math.min(...ratios);
  const hi = Math.max(...ratios);
  const range = `${lo.toFixed(2)}–${hi.toFixed(2)}`;
  if (lo > 1) return `ahead (${range})`;
  if (hi < 1) return `**SLOWER** (${range})`;
  return `level within noise (${range})`;
}

console.log(`| call, text (median of ${RUNS} runs of ${ROUNDS} rounds) | peer 1.1.8 ${peer ? '' : '(PEER_OUT not set)'} | ours | peer ÷ ours | rounds |`);
console.log('|---|---:|---:|---:|---|');
for (const [label, results] of runs) {
  const o = median(results.map((r) => r[1]));
  const p = peer ? median(results.map((r) => r[0])) : undefined;
  const ratios = peer ? results.map((r) => median(r[2])) : undefined;
  const ratio = p === undefined ? '—' : `${median(ratios).toFixed(2)}×`;
  const all = peer ? results.flatMap((r) => r[2]) : undefined;
  console.log(`| ${label} | ${fmt(p)} | ${fmt(o)} | ${ratio} | ${all ? verdict(all) : '—'} |`);
}
