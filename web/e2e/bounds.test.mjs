// The page bounds what it reads (issue #45; docs/architecture.md §13 "share", §14b): a shared
// link's team and history are sized before anything is built from them, a deflate bomb is
// inflated no further than the limit, an agent's streamed output is kept to its last MiB, and
// the library's search sends one query per pause, never one longer than a search may be.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { chmod, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { createDeflateRaw, deflateRawSync } from 'node:zlib';
import { launch } from './support/browser.mjs';
import { serve } from './support/server.mjs';
import { InspectorPage } from './support/inspector-page.mjs';
import { bridgeDir, root, startBridge } from './support/bridge.mjs';

let server;
let browser;
let bridge;
let bridgeUrl;

/** The agent of the output test: 3 MiB of output after a first line, a last line, then it
 * waits to be cancelled. */
const STREAMER = `#!/bin/sh
cat > /dev/null
echo HEAD-OF-THE-OUTPUT
head -c 3145728 /dev/zero | tr '\\0' 'x'
echo
echo TAIL-OF-THE-OUTPUT
sleep 600
`;

before(async () => {
  const dir = await bridgeDir('bounds');
  const streamer = path.join(dir, 'streamer.sh');
  await writeFile(streamer, STREAMER);
  await chmod(streamer, 0o755);
  bridge = await startBridge(dir, { agents: {
    max: { command: streamer, output: 'command' },
    'openai-codex': { command: 'agent-chatter-e2e-no-such-codex' },
    'google-gemini': { command: 'agent-chatter-e2e-no-such-gemini' },
  } });
  bridgeUrl = bridge.url;
  server = await serve(path.join(root, 'web/dist/'));
  browser = await launch();
});

after(async () => {
  await browser?.close();
  await server?.close();
  bridge?.kill();
});

async function visit(url) {
  const context = await browser.newContext({ viewport: { width: 1440, height: 1000 } });
  const page = new InspectorPage(await context.newPage(), url);
  return { context, page };
}

const link = (json) => '#share=' + deflateRawSync(Buffer.from(JSON.stringify(json))).toString('base64url');

/** `mib` MiB of zeros, raw-deflated (~1 KB per MiB), without holding them. */
async function bomb(mib) {
  const deflate = createDeflateRaw({ level: 9 });
  const parts = [];
  deflate.on('data', (part) => parts.push(part));
  const zeros = Buffer.alloc(1 << 20);
  for (let i = 0; i < mib; i++) {
    if (!deflate.write(zeros)) await once(deflate, 'drain');
  }
  deflate.end();
  await once(deflate, 'end');
  return '#share=' + Buffer.concat(parts).toString('base64url');
}

/** The peak resident memory (VmHWM, bytes) of each of the browser's renderer processes. */
async function rendererPeaks() {
  const cdp = await browser.newBrowserCDPSession();
  const { processInfo } = await cdp.send('SystemInfo.getProcessInfo');
  await cdp.detach();
  const peaks = new Map();
  for (const { id, type } of processInfo.filter((p) => p.type === 'renderer')) {
    const status = await readFile(`/proc/${id}/status`, 'utf8').catch(() => '');
    const kb = status.match(/^VmHWM:\s+(\d+) kB/m);
    if (kb) peaks.set(id, Number(kb[1]) * 1024);
  }
  return peaks;
}

/** The peak memory of the renderer a new visitor gets while `visit` runs: the largest of the
 * renderers that did not exist before it (Chromium may start a spare one beside it). */
async function newRendererPeak(visit) {
  const before = await rendererPeaks();
  await visit();
  const after = [...(await rendererPeaks())].filter(([id]) => !before.has(id)).map(([, peak]) => peak);
  assert.ok(after.length > 0, 'a new renderer');
  return Math.max(...after);
}

test('a link whose team has 20 000 members is refused at once, naming it, and the page goes on', async () => {
  const members = Array.from({ length: 20_000 }, (_, i) => ({ name: `member ${i}`, kind: 'human' }));
  const crowd = link({ v: 1, scenario: { team: { name: 'Crowd', members }, messages: [] } });
  console.log(`# a link of ${crowd.length} B holding 20 000 members`);
  const want = "the shared link's team has 20000 members; a shared case opens with at most 100: it was not opened";

  // Opened by its address (a first visit) and from "open a shared link".
  const { context, page } = await visit(server.url + crowd);
  const started = Date.now();
  await page.page.goto(server.url + crowd);
  await page.by('error-banner').filter({ hasText: want }).waitFor({ timeout: 10_000 });
  console.log(`# the address to the error: ${Date.now() - started} ms (load included)`);
  await page.ready();
  assert.equal(await page.by('shared-banner').count(), 0, 'no case opened');
  const demo = await page.timelineCount();
  assert.ok(demo > 0, 'the demo, not a blank page');

  await page.by('error-banner').locator('button.dismiss').click();
  await page.by('error-banner').waitFor({ state: 'detached' });
  const asked = Date.now();
  await page.openLink(crowd);
  await page.by('error-banner').filter({ hasText: want }).waitFor({ timeout: 10_000 });
  console.log(`# "open a shared link" to the error: ${Date.now() - asked} ms`);
  // Still usable: a message goes in.
  await page.send('[FROM: kailai] Still here after the crowd.');
  await page.page.waitForFunction((n) => document.querySelectorAll('[data-testid="timeline-message"]').length > n, demo);
  assert.equal(await page.by('shared-banner').count(), 0);

  // A history too long is named likewise.
  const many = Array.from({ length: 10_001 }, () => ({ from: 'kailai', content: 'hi' }));
  await page.openLink(link({ v: 1, scenario: { team: { name: 'Chatty', members: [{ name: 'kailai', kind: 'human' }] }, messages: many } }));
  await page.by('error-banner').filter({ hasText: 'the shared link holds 10001 messages; a shared case opens with at most 10000' }).waitFor();
  page.assertNoErrors();
  await context.close();
});

test('a deflate bomb link is refused without the tab holding what it inflates to', async () => {
  // 512 MiB of zeros in ~0.5 MB: the browser inflates each piece it is given whole, so this
  // link once cost the tab hundreds of MB before the 16 MiB limit answered. Opened by its
  // address (a first visit), against the same visit without it.
  const big = await bomb(512);
  console.log(`# a bomb link of ${big.length} B (512 MiB inflated)`);
  const contexts = [];
  const open = (fragment, until) => newRendererPeak(async () => {
    const { context, page } = await visit(server.url + fragment);
    contexts.push([context, page]);
    await page.page.goto(server.url + fragment);
    await page.ready();
    await until(page);
  });
  const plain = await open('', () => {});
  const asked = Date.now();
  const bombed = await open(big, (page) =>
    page.by('error-banner').filter({ hasText: 'holds more than 16 MiB once decompressed' }).waitFor({ timeout: 30_000 }));
  const grew = bombed - plain;
  const mib = (n) => (n / 2 ** 20).toFixed(1);
  console.log(`# refused in ${Date.now() - asked} ms (load included); renderer peak ${mib(bombed)} MiB, ${mib(plain)} MiB without the link`);
  assert.ok(grew < 96 * 2 ** 20, `the renderer's peak memory was ${mib(grew)} MiB higher with the link`);
  for (const [context, page] of contexts) {
    assert.ok((await page.timelineCount()) > 0, 'a page, not a blank one');
    // Nothing rejected unhandled when reading stopped.
    page.assertNoErrors();
    await context.close();
  }
});

test("a long streamed output keeps its last MiB, says earlier output was cut, and goes when the run ends", async () => {
  const { context, page } = await visit(bridgeUrl);
  await page.page.goto(bridgeUrl);
  await page.by('connection-status').filter({ hasText: '● bridge' }).waitFor();
  await page.send('[FROM: kailai] Print a lot. [NEXT: max]');
  const output = page.by('agent-output');
  await output.filter({ hasText: 'TAIL-OF-THE-OUTPUT' }).waitFor({ timeout: 30_000 });
  const shown = await output.textContent();
  assert.ok(Buffer.byteLength(shown) <= 2 ** 20, `${Buffer.byteLength(shown)} bytes shown`);
  assert.ok(Buffer.byteLength(shown) > 2 ** 20 - 100, 'the whole last MiB');
  assert.ok(!shown.includes('HEAD-OF-THE-OUTPUT'), 'the start was cut');
  assert.match(shown, /x\nTAIL-OF-THE-OUTPUT\n$/);
  assert.match(await page.by('agent-output-cut').textContent(),
    /^earlier output cut: the page keeps a run's last 1 MiB; 2\.0 MiB before it not shown$/);
  await page.screenshot('bounds-output-cut.png');

  // Cancelled: the run ends, and its output goes with it.
  await page.by('agent-cancel').click();
  await page.page.waitForFunction(() => !document.querySelector('[data-testid="agent-output"]')?.textContent);
  assert.equal(await page.by('agent-output-cut').count(), 0);
  page.assertNoErrors();
  await context.close();
});

test('the library search sends one query per pause, and none longer than a search may be', async () => {
  const { context, page } = await visit(bridgeUrl);
  const sent = [];
  page.page.on('websocket', (socket) => socket.on('framesent', ({ payload }) => {
    const frame = JSON.parse(payload);
    if (frame.type === 'searchSessions') sent.push(frame.query);
  }));
  await page.page.goto(bridgeUrl);
  await page.by('connection-status').filter({ hasText: '● bridge' }).waitFor();
  await page.by('library-toggle').click();
  const search = page.by('session-search');

  const words = Array.from({ length: 17 }, (_, i) => `word${i}`).join(' ');
  await search.fill(words);
  // The bridge's own rule (protocol::check_search_query), in its words, before it is asked.
  await page.by('search-too-long').filter({ hasText: /^the search has 17 words; search for at most 16$/ }).waitFor();
  await search.fill('x'.repeat(201));
  await page.by('search-too-long').filter({ hasText: /^the search is 201 characters long; search for at most 200 \(a few words\)$/ }).waitFor();
  assert.equal(await page.by('search-hit').count(), 0);

  // Typed key by key: one search, for what was typed once the typing paused.
  await search.fill('');
  await search.pressSequentially('PRINT');
  await page.page.waitForFunction(() =>
    document.querySelector('[data-testid="search-hit"], [data-testid="search-none"]') !== null);
  assert.deepEqual(sent, ['PRINT']);
  page.assertNoErrors();
  await context.close();
});
