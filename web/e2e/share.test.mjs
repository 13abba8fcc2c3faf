// Export and share anywhere (issue #25; docs/architecture.md §13 "files", "share"): the
// transcript downloads, and a link made on a bridge page opens in a copy of the page served
// on its own (another origin), as a shared case the user keeps or discards.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import { launch } from './support/browser.mjs';
import { serve } from './support/server.mjs';
import { InspectorPage } from './support/inspector-page.mjs';
import { bridgeDir, root, startBridge } from './support/bridge.mjs';

let bridge;
let bridgeUrl;
let server;
let browser;

before(async () => {
  bridge = await startBridge(await bridgeDir('share'), { args: ['--simulate'] });
  bridgeUrl = bridge.url;
  server = await serve(path.join(root, 'web/dist/'));
  browser = await launch();
});

after(async () => {
  await browser?.close();
  await server?.close();
  bridge?.kill();
});

const texts = (page) => page.by('timeline-message').allTextContents();
// What each message says (the text as stored), without the row's marks of routing state.
const contents = (page) => page.by('timeline-message').locator('.content').allTextContents();

async function visit(url, permissions = ['clipboard-read', 'clipboard-write']) {
  const context = await browser.newContext({ viewport: { width: 1440, height: 1000 }, acceptDownloads: true });
  await context.grantPermissions(permissions, { origin: new URL(url).origin });
  const page = new InspectorPage(await context.newPage(), url);
  await page.page.goto(url);
  await page.by('timeline').waitFor();
  return { context, page };
}

test('the transcript downloads as Markdown and as HTML with a details block per delivery', async () => {
  const { context, page } = await visit(server.url);
  await page.by('prompt-text').first().waitFor();
  const messages = await page.timelineCount();
  assert.ok(messages >= 2, 'the demo has messages');
  const md = await page.download('export-transcript-md');
  assert.match(md, /^# Transcript: /);
  assert.equal(md.match(/^## #\d+ /gm).length, messages, 'one heading per message');
  assert.match(md, /^## #1 Kailai → /m);
  assert.match(md, /\nPrompt delivered to Max \(\d+ B · sha256 [0-9a-f]{64}\):\n\n```/);
  const html = await page.download('export-transcript-html');
  assert.match(html, /^<!DOCTYPE html>/);
  assert.equal(html.match(/<article class="message"/g).length, messages);
  // Every delivery so far: each reply was delivered one prompt, and the agent now due one more.
  assert.equal(html.match(/<details class="delivery"/g).length, messages);
  assert.doesNotMatch(html, /<script/);
  page.assertNoErrors();
  await context.close();
});

test('a link made on a bridge page opens in the page served alone: banner, discard restores, keep keeps', async () => {
  // The sender: a bridge page (simulated agents), two messages, then "share".
  const { context: senderContext, page: sender } = await visit(bridgeUrl);
  await sender.by('connection-status').filter({ hasText: '● bridge' }).waitFor();
  await sender.send('[FROM: kailai] Shared from the bridge. [NEXT: max]');
  await sender.page.waitForFunction(() => document.querySelectorAll('[data-testid="timeline-message"]').length === 2);
  await sender.by('share-link').click();
  const link = await sender.by('share-url').inputValue();
  const fragment = await sender.by('share-fragment').inputValue();
  assert.ok(link.startsWith(new URL(bridgeUrl).origin + '/#share='), link);
  assert.doesNotMatch(link, /token/, 'the link never carries the bridge token');
  assert.equal(fragment, new URL(link).hash, 'the case alone is the link\'s fragment');
  await sender.by('share-copied').filter({ hasText: 'copied ✓' }).waitFor();
  assert.equal(await sender.page.evaluate(() => navigator.clipboard.readText()), link);
  // The case at #2: its first two messages (the simulated agents may have answered since).
  const sharedTexts = (await contents(sender)).slice(0, 2);
  // The box closes as the header's menus do: Escape (the focus back on "share"), or a click
  // outside it.
  await sender.page.keyboard.press('Escape');
  assert.equal(await sender.by('share-url').count(), 0);
  assert.equal(await sender.page.evaluate(() => document.activeElement?.dataset.testid), 'share-link');
  await sender.by('share-link').click();
  await sender.by('share-url').waitFor();
  await sender.by('timeline').click({ position: { x: 5, y: 5 } });
  assert.equal(await sender.by('share-url').count(), 0);

  // The receiver: the built page alone, on another origin, with a conversation of its own.
  const { context, page } = await visit(server.url);
  await page.by('prompt-text').first().waitFor();
  await page.send('[FROM: kailai] My own work, not to be lost.');
  await page.page.waitForFunction(() =>
    [...document.querySelectorAll('[data-testid="timeline-message"]')].some((m) => m.textContent.includes('My own work')));
  const mine = await texts(page);
  assert.equal(await page.by('shared-banner').count(), 0);

  // "open a shared link" takes a link from any address.
  await page.openLink(link);
  const banner = page.by('shared-banner');
  await banner.waitFor();
  assert.match(await banner.textContent(), /^shared case: Release notes crew at #2 for (Max|Sarah|Carol) — /);
  await page.page.waitForFunction((n) => document.querySelectorAll('[data-testid="timeline-message"]').length === n, sharedTexts.length);
  assert.deepEqual(await contents(page), sharedTexts, 'the shared case shows the sender\'s messages');
  await page.screenshot('shared-banner.png');

  // Undecided across a reload: the banner is still there, and discard still restores.
  await page.page.reload();
  await banner.waitFor();
  await page.by('shared-discard').click();
  await banner.waitFor({ state: 'detached' });
  await page.page.waitForFunction((n) => document.querySelectorAll('[data-testid="timeline-message"]').length === n, mine.length);
  assert.deepEqual(await texts(page), mine, 'discard restores the previous session, byte for byte');
  await page.page.reload();
  await page.by('timeline-message').first().waitFor();
  assert.deepEqual(await texts(page), mine, 'and it stays restored after a reload');
  assert.equal(await page.by('shared-banner').count(), 0);

  // The fragment alone, in the address: keep makes the case the session shown.
  await page.page.goto(server.url + fragment);
  await banner.waitFor();
  await page.by('shared-keep').click();
  await banner.waitFor({ state: 'detached' });
  assert.deepEqual(await contents(page), sharedTexts);
  await page.page.reload();
  await page.by('timeline-message').first().waitFor();
  assert.deepEqual(await contents(page), sharedTexts, 'a kept case stays after a reload');
  assert.equal(await page.by('shared-banner').count(), 0);
  page.assertNoErrors();

  // A first visit by the link itself: nothing was shown before, so discarding shows the demo
  // (never an empty session of the discarded case's team).
  const { context: fresh, page: first } = await visit(server.url + fragment);
  await first.by('shared-banner').waitFor();
  await first.by('shared-discard').click();
  await first.by('shared-banner').waitFor({ state: 'detached' });
  await first.page.waitForFunction(() => document.querySelectorAll('[data-testid="timeline-message"]').length === 3);
  assert.match((await contents(first))[0], /Max, please draft them from the changelog\./);
  first.assertNoErrors();
  sender.assertNoErrors();
  await fresh.close();
  await context.close();
  await senderContext.close();
});

test('links are raw deflate, made and read by the browser: zlib reads the page\'s, the page opens zlib\'s; damaged or oversized data says why', async () => {
  const { context, page } = await visit(server.url);
  await page.by('prompt-text').first().waitFor();
  await page.by('share-link').click();
  const fragment = await page.by('share-fragment').inputValue();
  const data = (json) => '#share=' + deflateRawSync(Buffer.from(JSON.stringify(json))).toString('base64url');
  const made = JSON.parse(inflateRawSync(Buffer.from(fragment.slice('#share='.length), 'base64url')).toString());
  assert.equal(made.v, 1);
  assert.ok(made.scenario.team.members.length > 0, 'the case travels in the link');

  // Deflated elsewhere (as links made before, by miniz_oxide): opens, for the member it names.
  await page.openLink(data({ ...made, member: 'carol' }));
  await page.by('shared-banner').filter({ hasText: 'for Carol' }).waitFor();
  assert.equal(await page.by('recipient-select').inputValue(), 'carol');
  await page.by('shared-keep').click();

  const cases = [
    ['#share=' + Buffer.from('plain bytes').toString('base64url'), 'the shared link is damaged (its data does not decompress)'],
    // A deflate bomb: 17 MiB of spaces in ~17 KB.
    ['#share=' + deflateRawSync(Buffer.alloc(17 << 20, 32)).toString('base64url'), 'holds more than 16 MiB once decompressed'],
    [data({ v: 2, scenario: made.scenario }), 'made by another version of agent-chatter'],
  ];
  for (const [link, message] of cases) {
    await page.openLink(link);
    await page.by('error-banner').filter({ hasText: message }).waitFor();
    assert.ok((await page.timelineCount()) > 0, 'a page, not a blank one');
  }
  await context.close();
});

test('a refused clipboard says to select and copy the link', async () => {
  const { context, page } = await visit(server.url, []);
  await page.by('prompt-text').first().waitFor();
  await page.by('share-link').click();
  await page.by('share-copied').filter({ hasText: 'select and copy the link' }).waitFor();
  await context.close();
});

test('a pasted text with no shared case is refused, naming what to paste', async () => {
  const { context, page } = await visit(server.url);
  await page.by('prompt-text').first().waitFor();
  const before = await texts(page);
  await page.openLink('http://127.0.0.1:8080/#token=abc');
  await page.by('error-banner').filter({ hasText: 'this is not a shared link' }).waitFor();
  assert.deepEqual(await texts(page), before);
  await context.close();
});

test('with a bridge, a shared case opens as a new bridge session; discard shows the previous one again', async () => {
  const { context, page } = await visit(bridgeUrl);
  await page.by('connection-status').filter({ hasText: '● bridge' }).waitFor();
  await page.by('new-session').click();
  await page.page.waitForFunction(() => document.querySelectorAll('[data-testid="timeline-message"]').length === 0);
  await page.send('[FROM: kailai] The bridge session to come back to.');
  await page.page.waitForFunction(() => document.querySelectorAll('[data-testid="timeline-message"]').length === 1);
  const mine = await contents(page);
  await page.by('share-link').click();
  const link = await page.by('share-url').inputValue();
  await page.openLink(link);
  await page.by('shared-banner').waitFor();
  await page.by('shared-discard').click();
  await page.by('shared-banner').waitFor({ state: 'detached' });
  await page.page.waitForFunction((text) =>
    [...document.querySelectorAll('[data-testid="timeline-message"] .content')].map((m) => m.textContent).join('\n') === text, mine.join('\n'));
  assert.deepEqual(await contents(page), mine);
  assert.match(page.page.url(), /#token=/, 'the page stays connected');
  page.assertNoErrors();
  await context.close();
});
