// The session library, "continue from here" and the reconnect against a real `agent-chatter
// serve` (issue #25, docs/architecture.md §13, §14b): the bridge keeps the sessions (named,
// dated, searched in SQLite), a fork is a new bridge session, and a page whose bridge restarts
// on the same port and database connects again by itself and shows the same session.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { bridgeDir, freePort, startBridge } from './support/bridge.mjs';
import { launch } from './support/browser.mjs';
import { InspectorPage } from './support/inspector-page.mjs';

let dir;
let port;
let bridge;
let browser;
let page;
let context;

/** Starts `serve` (the demo team, simulated) on `port` with the database in `dir`; its URL. */
async function start() {
  bridge = await startBridge(dir, { port, args: ['--simulate'] });
  return bridge.url;
}

const stop = () => new Promise((resolve) => {
  if (!bridge || bridge.exitCode !== null) return resolve();
  bridge.once('exit', resolve);
  bridge.kill('SIGKILL');
});

before(async () => {
  dir = await bridgeDir('library');
  port = await freePort();
  const url = await start();
  browser = await launch();
  context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
  page = new InspectorPage(await context.newPage(), url);
  await page.page.goto(url);
  await page.by('connection-status').filter({ hasText: '● bridge' }).waitFor();
});

after(async () => {
  await browser?.close();
  await stop();
});

const count = (n) => page.page.waitForFunction(
  (n) => document.querySelectorAll('[data-testid="timeline-message"]').length === n, n);
const texts = () => page.by('timeline-message').locator('.content').allTextContents();
const shownId = () => page.by('session-select').inputValue();
const shownName = () => page.by('session-select').locator('option:checked').textContent();

async function openLibrary() {
  if (!(await page.by('session-library').count())) await page.by('library-toggle').click();
  await page.by('session-library').waitFor();
}

test('a fork is a new bridge session with the log up to a message; rename and search go through the bridge', async () => {
  // One human message; the simulated agents answer four times, the last one [DONE].
  await page.send('[FROM: kailai] The zanzibar release is due Friday. [NEXT: max]');
  await count(5);
  const original = await shownId();
  const before = await texts();

  // "continue from here" at #2 (Max's reply): a new session whose log ends there; the bridge
  // then goes on from that point as it did the first time (Sarah is due again).
  const asked = page.dialogs.length;
  await page.by('timeline-message').nth(1).hover();
  await page.by('timeline-message').nth(1).getByTestId('fork').click();
  await page.page.waitForFunction((id) => document.querySelector('[data-testid=session-select]').value !== id, original);
  const fork = await shownId();
  // Sarah is due where the fork ends and the bridge runs her at once, but the simulator
  // answers her: nothing is paid, so nothing is asked (a real agent's run is, cost.test.mjs).
  assert.equal(page.dialogs.length, asked, `no question for a simulated run: ${page.dialogs.slice(asked)}`);
  assert.match(await shownName(), /^Release notes crew \(fork at #2\) · today \d\d:\d\d$/);
  await count(5);
  assert.deepEqual((await texts()).slice(0, 2), before.slice(0, 2), 'the fork starts with the same two messages');
  // Its past deliveries keep the bridge's digests: #1 to Max is still "✓ verified".
  await page.by('deliveries-tab').click();
  await page.page.waitForFunction(() => document.querySelector('[data-testid=delivery-row]')?.dataset.verified === 'yes');
  assert.match(await page.by('delivery-row').first().textContent(), /^#1Max.*delivered ✓/);
  await page.by('messages-tab').click();

  // Renamed in place: every page's list follows the bridge's.
  await openLibrary();
  const name = page.page.locator('[data-testid=session-entry].shown [data-testid=session-name]');
  await name.fill('Friday, second try');
  await name.press('Enter');
  await page.page.waitForFunction(() => document.querySelector('[data-testid=session-select] option:checked')?.textContent.startsWith('Friday, second try'));
  const entries = await page.by('session-entry').evaluateAll((rows) => rows.map((r) => [
    r.dataset.id, r.querySelector('[data-testid=session-name]').value, r.querySelector('.session-dates').textContent,
    r.querySelector('.session-first').textContent, r.querySelector('.session-dates').textContent.match(/^(?:(.+?) · )?today/)?.[1] ?? '']));
  // Never renamed: titled by its first message, its team's name beside it.
  assert.deepEqual(entries.map((e) => [e[1], e[4]]),
    [['Friday, second try', ''], ['The zanzibar release is due Friday.', 'Release notes crew']], 'newest first');
  assert.match(entries[1][2], /^Release notes crew · today \d\d:\d\d.* · \d+ facts$/);
  assert.equal(entries[1][3], 'The zanzibar release is due Friday.');
  await page.screenshot('library-bridge-1440.png');

  // The bridge searches every session's messages (ignoring case); a hit opens its session.
  await page.by('session-search').fill('ZANZIBAR');
  await page.by('search-hit').first().waitFor();
  const hits = await page.by('search-hit').evaluateAll((hs) => hs.map((h) => [h.dataset.id, h.querySelector('mark')?.textContent]));
  assert.deepEqual(hits.map((h) => h[0]).sort(), [fork, original].sort(), 'one line per session');
  assert.ok(hits.every((h) => h[1]?.toLowerCase() === 'zanzibar'), JSON.stringify(hits));
  // The start of a word finds it (FTS5 prefix terms), the word marked whole; each hit says
  // when its session last changed. FTS5's syntax typed in is searched as words, never an error.
  for (const query of ['zanzi', 'ZANZ', 'zanzi* "(', '-(zanzi']) {
    await page.by('session-search').fill(query);
    await page.page.waitForFunction(() => {
      const found = [...document.querySelectorAll('[data-testid=search-hit]')];
      return found.length === 2 && found.every((h) => h.querySelector('mark')?.textContent.toLowerCase() === 'zanzibar');
    });
    const shownHits = await page.by('search-hit').allTextContents();
    assert.ok(shownHits.every((h) => /today \d\d:\d\d/.test(h)), `${query}: ${JSON.stringify(shownHits)}`);
  }
  assert.equal(await page.by('error-banner').count(), 0, 'no error for a query holding FTS5 syntax');
  await page.by('session-search').fill('zanzi near');
  await page.by('search-none').filter({ hasText: 'no session holds “zanzi near”' }).waitFor();
  await page.by('session-search').fill('ZANZIBAR');
  await page.by('search-hit').first().waitFor();
  await page.page.locator(`[data-testid=search-hit][data-id="${original}"]`).click();
  await page.page.waitForFunction((id) => document.querySelector('[data-testid=session-select]').value === id, original);
  await count(5);
  assert.deepEqual(await texts(), before, 'the original is unchanged');
  page.assertNoErrors();
});

test('a bridge restarted on the same port and database is reconnected to, without a reload, on the same session', async () => {
  const shown = await shownId();
  const before = await texts();
  await page.page.evaluate(() => { window.sameDocument = true; });
  await stop();
  await page.by('connection-status').filter({ hasText: 'bridge disconnected — reconnecting…' }).waitFor();
  // Nothing is sent meanwhile, and the composer says why (typing goes on: a message sent now
  // waits for the bridge, team-words.test.mjs); what was shown stays.
  assert.equal(await page.by('composer-input').isDisabled(), false);
  assert.match(await page.by('composer-input').getAttribute('placeholder'), /^the bridge is disconnected: reconnecting…/);
  assert.deepEqual(await texts(), before);
  await page.screenshot('bridge-reconnecting.png');

  const started = Date.now();
  const url = await start();
  assert.equal(new URL(url).hash, new URL(page.page.url()).hash, 'the same token after a restart');
  await page.by('connection-status').filter({ hasText: '● bridge' }).waitFor({ timeout: 15_000 });
  console.log(`# reconnected ${Date.now() - started} ms after the bridge was started again`);
  await page.page.waitForFunction((id) => document.querySelector('[data-testid=session-select]').value === id, shown);
  await count(before.length);
  assert.deepEqual(await texts(), before);
  assert.equal(await page.page.evaluate(() => window.sameDocument), true, 'no reload');
  assert.equal(await page.by('composer-input').isDisabled(), false);
  // And the conversation goes on.
  await page.send('[FROM: kailai] back again [NEXT: max]');
  await page.page.waitForFunction(() => [...document.querySelectorAll('[data-testid=timeline-message] .content')]
    .some((c) => c.textContent.includes('back again')));
  page.assertNoErrors();
});

// A team rename is no chosen name: the session is still titled by its first message, the new
// team's name beside it (the bridge's list says `name` = `title` for a session never renamed).
test('a session never renamed is titled by its first message beside its team, which follows the team; a typed name stays', async () => {
  await page.page.waitForFunction(() => document.querySelector('[data-testid=session-select] option:checked')?.textContent.startsWith('The zanzibar release is due Friday. · '));
  // A team is edited once nothing runs (the simulated agents answer "back again" first).
  await page.page.waitForFunction(() => !document.querySelector('[data-testid=running-mark]'));
  const team = page.by('team-name-input');
  await team.fill('Big team');
  await team.dispatchEvent('change');
  await openLibrary();
  // The first test's search is still typed: cleared, the list shows every session again.
  await page.by('session-search').fill('');
  const shownRow = page.page.locator('[data-testid=session-entry].shown');
  await shownRow.locator('.session-dates').filter({ hasText: /^Big team · today / }).waitFor();
  assert.equal(await shownRow.getByTestId('session-name').inputValue(), 'The zanzibar release is due Friday.');
  const names = (await page.by('session-select').locator('option').allTextContents()).map((t) => t.split(' · ')[0]);
  assert.ok(names.includes('Friday, second try'), `the fork renamed by the user keeps its name: ${JSON.stringify(names)}`);
  assert.ok(!names.includes('Release notes crew'), JSON.stringify(names));
  await page.page.keyboard.press('Escape');
  page.assertNoErrors();
});

test('a draft typed on the bridge page is kept for its bridge session only: the page alone at the same address never shows it', async () => {
  const id = await shownId();
  await page.by('composer-input').fill('[FROM: kailai] for the bridge only');
  // The same address without the launch token is the page alone, with its own library whose
  // first session has the same number.
  const alone = new InspectorPage(await context.newPage(), new URL(page.page.url()).origin + '/');
  await alone.open();
  assert.equal(await alone.by('composer-input').inputValue(), '', 'no bridge draft in the page alone');
  const stored = await alone.page.evaluate(() => Object.keys(localStorage).filter((k) => k.includes('draft')));
  // Kept under this bridge's database (known by a digest of its token) and session.
  assert.equal(stored.length, 1, JSON.stringify(stored));
  assert.match(stored[0], new RegExp(`^agent-chatter/bridge-draft/\\d+/${id}$`));
  await alone.page.close();
  // Back on the bridge page, after a reload, the draft is still its own.
  await page.page.reload();
  await page.by('connection-status').filter({ hasText: '● bridge' }).waitFor();
  await page.page.waitForFunction((t) => document.querySelector('[data-testid=composer-input]').value === t,
    '[FROM: kailai] for the bridge only');
  page.assertNoErrors();
});
