// The deliveries list and the inspector's what-if (issue #25: deliveries list; point 8, the
// what-if answer hidden, slivers of bars, what-if input, team rename, running spinner), in
// Chromium: in simulation, and against a real `agent-chatter serve` with fake agents
// (bridge/tests/fixtures/agents/).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { bridgeDir, demoTeam, fixture, startBridge } from './support/bridge.mjs';
import { InspectorPage } from './support/inspector-page.mjs';
import { servedPage } from './support/served.mjs';
import { bigSession } from './support/sessions.mjs';

const served = servedPage();

const rows = (page) => page.by('delivery-row');
const statuses = (page) => rows(page).evaluateAll((rs) => rs.map((r) => r.dataset.status));
const openDeliveries = async (page) => {
  await page.by('deliveries-tab').click();
  await page.by('deliveries').waitFor();
};

test('simulation: one row per delivery with its status; filters; a row sets the inspector', async () => {
  const { context, page } = await served.visit();
  // The demo: Max and Sarah answered (simulated), Carol is due; the timeline says so where her
  // reply will come, with a spinner and the time it has been due.
  await page.by('running-mark').filter({ hasText: /^Carol is due/ }).waitFor();
  assert.ok(await page.by('running-mark').locator('.spinner').isVisible());
  // It turns with the clock, a quarter a second: no endless animation has the page redrawn 60
  // times a second while an agent runs.
  const turn = await page.by('running-mark').locator('.spinner').getAttribute('data-turn');
  await page.page.waitForFunction((t) => document.querySelector('[data-testid="running-mark"] .spinner').dataset.turn !== t, turn);
  assert.equal(await page.page.evaluate(() => document.getAnimations().length), 0, 'no animation runs');
  assert.match(await page.by('running-elapsed').textContent(), /^\d+:\d\d$/);

  await openDeliveries(page);
  assert.deepEqual(await statuses(page), ['delivered', 'delivered', 'would-receive']);
  const texts = await rows(page).evaluateAll((rs) => rs.map((r) => [...r.children].map((c) => c.textContent)));
  assert.deepEqual(texts.map((t) => t.slice(0, 2)), [['#1', 'Max'], ['#2', 'Sarah'], ['#3', 'Carol']]);
  // The prompt's bytes, their share of the budget on hover; simulated runs report no usage.
  for (const t of texts) assert.match(t[2], /^\d+ B$/);
  assert.match(await rows(page).nth(0).locator('.d-bytes').getAttribute('title'), /^\d+ B of a 786432 B budget \((<0\.01|\d+\.\d\d)%\)$/);
  assert.equal(texts[0][3], 'delivered', 'no bridge, no digest to check');
  assert.equal(texts[0][5], '—');
  // No CLI timed a simulated run: its time is from when it was due to its reply (the facts').
  assert.deepEqual(texts.slice(0, 2).map((t) => t[4]), ['1 min', '1 min']);
  assert.equal(texts[2][3], 'would receive');
  assert.match(texts[2][4], /^\d+:\d\d$/, 'the due one counts its time');
  assert.equal(await rows(page).nth(2).locator('.spinner').count(), 1);

  // Filters: by member, by status, and both.
  await page.by('deliveries-filter-member').selectOption('sarah');
  assert.deepEqual(await statuses(page), ['delivered']);
  await page.by('deliveries-filter-member').selectOption('');
  await page.by('deliveries-filter-status').selectOption('would-receive');
  assert.deepEqual(await statuses(page), ['would-receive']);
  await page.by('deliveries-filter-status').selectOption('failed');
  assert.equal(await rows(page).count(), 0);
  assert.match(await page.by('deliveries').textContent(), /no delivery matches the filters/);
  await page.by('deliveries-filter-status').selectOption('');

  // A click (or Enter) on a row shows that recipient's prompt at that message.
  const before = await page.promptText();
  await rows(page).nth(0).click();
  assert.equal(await page.by('recipient-select').inputValue(), 'max');
  await page.by('inspector-at').filter({ hasText: /^at #1 · delivered$/ }).waitFor({ timeout: 2000 });
  assert.notEqual(await page.promptText(), before);
  assert.equal(await rows(page).nth(0).getAttribute('aria-selected'), 'true');
  await rows(page).nth(1).focus();
  await page.page.keyboard.press('Enter');
  assert.equal(await page.by('recipient-select').inputValue(), 'sarah');
  await page.by('inspector-at').filter({ hasText: /^at #2 · delivered$/ }).waitFor({ timeout: 2000 });
  // The one still due says so: nobody has received it yet.
  await rows(page).nth(2).click();
  await page.by('inspector-at').filter({ hasText: /^at #3 · due: what it gets once answered$/ }).waitFor({ timeout: 2000 });
  await page.screenshot('deliveries-simulation.png');

  // A simulated reply: Carol's row is delivered, and the next one due is listed.
  await page.by('messages-tab').click();
  await page.simulate();
  await openDeliveries(page);
  const later = await statuses(page);
  assert.deepEqual(later.slice(0, 3), ['delivered', 'delivered', 'delivered']);
  // The demo happened just now: Carol, due since the visit began, took seconds, not the time
  // since some fixed date.
  assert.match(await rows(page).nth(2).locator('.d-duration').textContent(), /^\d+(\.\d)? s$/);
  page.assertNoErrors();
  await context.close();
});

for (const [name, viewport] of [['390x844', { width: 390, height: 844 }], ['1280x720', { width: 1280, height: 720 }], ['1440x900', { width: 1440, height: 900 }]]) {
  test(`the column heads fit at ${name}: none is cut`, async () => {
    const { context, page } = await served.visit(undefined, viewport);
    await openDeliveries(page);
    const cut = await page.page.evaluate(() => [...document.querySelectorAll('.delivery-head > span')]
      .filter((h) => h.scrollWidth > h.clientWidth + 1).map((h) => h.textContent));
    assert.deepEqual(cut, [], 'every head shows whole');
    const duration = page.page.locator('.delivery-head > span').nth(4);
    assert.match(await duration.getAttribute('title'), /^duration: from when it was due/);
    // Nor is a row's bytes cell (it was at 390x844: "166 B · …"): the bytes alone, and on
    // hover the bytes against the budget with their share.
    const bytes = await rows(page).locator('.d-bytes').evaluateAll((cs) => cs.map((c) =>
      ({ text: c.innerText, cut: c.scrollWidth > c.clientWidth, title: c.title })));
    assert.equal(bytes.length, 3);
    for (const b of bytes) {
      assert.equal(b.cut, false, `${b.text} is cut at ${name}`);
      assert.match(b.title, /^\d+ B of a 786432 B budget \((<0\.01|\d+\.\d\d)%\)$/);
    }
    for (const b of bytes) assert.match(b.text, /^\d+ B$/, name);
    // Nor a status ("would receive · 0:00" of the due row was cut to "would recei…"; its time
    // counts in the time column only). A failure's reason may be cut: it is whole on hover.
    const cutStatus = await rows(page).locator('.d-status').evaluateAll((cs) =>
      cs.filter((c) => c.scrollWidth > c.clientWidth).map((c) => c.innerText));
    assert.deepEqual(cutStatus, [], `every status shows whole at ${name}`);
    await page.screenshot(`deliveries-${name}.png`);
    page.assertNoErrors();
    await context.close();
  });
}

test('10⁴ messages: the list is virtualised, opens and filters fast (timings printed)', async () => {
  const { context, page } = await served.visit(undefined, { width: 1280, height: 720 });
  await page.openFile('big-session.json', JSON.stringify(bigSession(10_000)));
  await page.page.waitForFunction(() => document.querySelector('[data-testid="inspector-at"]')?.textContent.includes('#10000'));
  const open = Date.now();
  await openDeliveries(page);
  await rows(page).first().waitFor();
  const openMs = Date.now() - open;
  // Each of the 10⁴ messages but the humans' 2000 was a delivery (a1 → a2 → a3 → a4 → kailai).
  assert.equal(await page.by('deliveries-count').textContent(), '8000 deliveries');
  const rendered = await rows(page).count();
  assert.ok(rendered < 60, `only the rows in view are in the page (${rendered} of 8000)`);
  const box = await page.page.locator('.deliveries-list').boundingBox();
  assert.ok(box.height >= 150, `the list has room at 1280x720 (${box.height} px)`);
  const filter = Date.now();
  await page.by('deliveries-filter-member').selectOption('a3');
  await page.by('deliveries-count').filter({ hasText: /^2000 of 8000 deliveries$/ }).waitFor();
  const filterMs = Date.now() - filter;
  // Scrolled to the end, the last of them is rendered where the list places it, and selects.
  await page.page.locator('.deliveries-list').evaluate((el) => { el.scrollTop = el.scrollHeight; });
  const last = rows(page).filter({ has: page.page.locator('.d-number', { hasText: /^#9998$/ }) });
  await last.waitFor();
  // A five-character number shows whole (it was cut to "#9…" at 1280x720).
  assert.equal(await last.locator('.d-number').evaluate((c) => c.scrollWidth > c.clientWidth), false);
  assert.equal(await last.evaluate((r) => r.style.top), `${1999 * 26}px`);
  await last.click();
  assert.equal(await page.by('recipient-select').inputValue(), 'a3');
  assert.match(await page.by('inspector-at').textContent(), /^at #9998 · delivered$/);
  console.log(`e2e timing: ${JSON.stringify({ messages: 10_000, deliveries: 8000, openMs, filterMs })}`);
  await page.screenshot('deliveries-1280x720.png');
  page.assertNoErrors();
  await context.close();
});

test('what-if: the diff compares with the actual prompt, bars are readable, bad values are named', async () => {
  const { context, page } = await served.visit();
  await page.selectRecipient('sarah');
  // A 1 KB prompt under a 768 KiB budget: the sections are drawn against the prompt, so each
  // one is wide enough to see, and the share of the budget is said in words.
  assert.match(await page.by('budget').textContent(), /\/ 786432 B \((<0\.01|\d+\.\d\d)% of the budget\)/);
  const widths = await page.by('section-bar').locator('.fill').evaluateAll((fs) => fs.map((f) => f.getBoundingClientRect().width));
  assert.ok(Math.max(...widths) >= 40, `the widest section bar is ${Math.max(...widths)} px`);
  assert.ok(widths.every((w) => w === 0 || w >= 1), widths.join(', '));

  // With a what-if on, the panel says actual against what-if, and the diff opens on them.
  await page.by('whatif-window').fill('0');
  await page.by('whatif-window').dispatchEvent('change');
  await page.by('whatif-summary').filter({ hasText: /^actual \d+ B → what-if \d+ B \(-\d+ B\)/ }).waitFor();
  await page.by('whatif-show-diff').click();
  assert.equal(await page.by('diff-against').inputValue(), 'actual');
  assert.ok((await page.by('diff-view').locator('[data-sign="-"]').count()) > 0, 'the history lines removed');
  await page.by('whatif-reset').click();
  assert.equal(await page.by('diff-against').inputValue(), 'previous', 'no what-if: the previous message');
  await page.by('diff-toggle').locator('xpath=..').locator('button').first().click();

  // 40 B is less than the system instruction alone: one clear sentence, not the cuts.
  const prompt = await page.promptText();
  await page.by('whatif-max-bytes').fill('40');
  await page.by('whatif-max-bytes').dispatchEvent('change');
  assert.match(await page.by('whatif-too-small').textContent(),
    /^a what-if budget of 40 B is smaller than this prompt's fixed part: sarah needs (\d+) B .*try \1 B or more$/);
  assert.equal(await page.by('truncations').count(), 0);
  assert.equal(await page.by('message-cut').count(), 0);
  await page.by('whatif-reset').click();

  // -5 is refused by the field, never applied and never read as "as set".
  await page.by('whatif-window').fill('-5');
  await page.by('whatif-window').dispatchEvent('change');
  assert.match(await page.by('whatif-error').textContent(), /^what-if window: −5 is below zero/);
  assert.equal(await page.by('whatif-window').inputValue(), '');
  assert.equal(await page.promptText(), prompt);
  assert.match(await page.by('whatif-panel').locator('legend').textContent(), /^what-if$/, 'no what-if is on');
  // Text the browser cannot read as a number is named too (it would come as "").
  await page.by('whatif-max-bytes').focus();
  await page.page.keyboard.type('--5');
  await page.by('whatif-max-bytes').dispatchEvent('change');
  assert.match(await page.by('whatif-error').textContent(), /^what-if max bytes: that is not a number/);
  assert.equal(await page.promptText(), prompt);
  assert.match(await page.by('error-banner').textContent(), /what-if max bytes: that is not a number/);
  // A good value clears the message, and its copy in the banner.
  await page.by('whatif-window').fill('1');
  await page.by('whatif-window').dispatchEvent('change');
  assert.equal(await page.by('whatif-error').count(), 0);
  assert.equal(await page.by('error-banner').count(), 0, 'the banner goes with it');
  await page.screenshot('whatif-summary.png');
  await context.close();
});

test('the team is renamed in the team editor, and the header follows', async () => {
  const { context, page } = await served.visit();
  assert.equal(await page.by('team-name').textContent(), 'Release notes crew');
  assert.equal(await page.by('team-name-input').inputValue(), 'Release notes crew');
  const messages = await page.timelineCount();
  await page.by('team-name-input').fill('Changelog crew');
  await page.by('team-name-input').dispatchEvent('change');
  await page.by('team-name').filter({ hasText: /^Changelog crew$/ }).waitFor();
  assert.equal(await page.timelineCount(), messages, 'the conversation goes on');
  await page.reload();
  assert.equal(await page.by('team-name').textContent(), 'Changelog crew', 'kept as any team edit');
  page.assertNoErrors();
  await context.close();
});

// Against a bridge: Max reports usage (2.5 s), Sarah hangs until cancelled, Carol crashes.
let bridge;
let url;
before(async () => {
  bridge = await startBridge(await bridgeDir('deliveries'), {
    team: await demoTeam(),
    agents: {
      max: { command: fixture('claude-usage.sh') },
      sarah: { command: fixture('hang.sh'), output: 'claude' },
      carol: { command: fixture('crash.sh') },
    },
  });
  url = bridge.url;
});

after(() => bridge?.kill());

test('bridge: running with a spinner and its time, delivered ✓ verified, cancelled, failed with why', async () => {
  const context = await served.browser.newContext({ viewport: { width: 1440, height: 900 } });
  const page = new InspectorPage(await context.newPage(), url);
  await page.page.goto(url);
  await page.by('connection-status').filter({ hasText: '● bridge' }).waitFor();

  // Max runs (his fake CLI takes 2.5 s): the timeline shows where his reply will come.
  await page.send('[FROM: kailai] Count the notes. [NEXT: max]');
  await page.by('running-mark').filter({ hasText: /^Max is running/ }).waitFor();
  assert.ok(await page.by('running-mark').locator('.spinner').isVisible());
  // It turns with the clock, a quarter a second: no endless animation has the page redrawn 60
  // times a second while an agent runs.
  const turn = await page.by('running-mark').locator('.spinner').getAttribute('data-turn');
  await page.page.waitForFunction((t) => document.querySelector('[data-testid="running-mark"] .spinner').dataset.turn !== t, turn);
  assert.equal(await page.page.evaluate(() => document.getAnimations().length), 0, 'no animation runs');
  assert.match(await page.by('running-elapsed').textContent(), /^0:0\d$/);
  await openDeliveries(page);
  await rows(page).filter({ has: page.page.locator('[data-testid="delivery-spinner"]') }).waitFor();
  // Its row's ring turns with the same clock as the running mark's.
  const turns = await page.page.evaluate(() => [
    document.querySelector('[data-testid="running-mark"] .spinner').dataset.turn,
    document.querySelector('[data-testid="delivery-spinner"]').dataset.turn,
  ]);
  assert.match(turns[1] ?? '', /^[0-3]$/);
  assert.equal(turns[1], turns[0], 'the row\'s ring and the running mark\'s show the same turn');
  assert.deepEqual(await statuses(page), ['running']);
  assert.equal(await rows(page).nth(0).locator('.d-status').textContent(), 'running');
  assert.match(await rows(page).nth(0).locator('.d-duration').textContent(), /^0:0\d$/, 'its time counts');
  await page.screenshot('deliveries-running.png');

  // Max answers and hands over to Sarah, whose agent hangs: his row is delivered, and the
  // bridge's digest is the page's preview (✓); his usage and duration as his CLI reported.
  await page.page.waitForFunction(() => document.querySelector('[data-testid="delivery-row"][data-status="delivered"]'));
  const max = rows(page).nth(0);
  await page.page.waitForFunction(() => document.querySelector('[data-testid="delivery-row"]')?.dataset.verified === 'yes');
  assert.equal(await max.locator('.d-status').textContent(), 'delivered ✓');
  assert.equal(await max.locator('.d-duration').textContent(), '5.4 s');
  assert.match(await max.locator('.d-usage').textContent(), /^\$0\.0031 · \d+ in · 80 out$/);
  await page.page.waitForFunction(() => document.querySelectorAll('[data-testid="delivery-row"]')[1]?.dataset.status === 'running');

  // Cancelled by the user.
  await page.by('agent-cancel').click();
  await page.page.waitForFunction(() => document.querySelectorAll('[data-testid="delivery-row"]')[1]?.dataset.status === 'cancelled');
  assert.equal(await page.by('running-mark').count(), 0, 'nothing runs');
  // The line above the composer says it in the list's word: cancelled, not failed.
  const retryLine = (name) => page.by('retry-line').filter({ hasText: new RegExp(`^${name}'s last run`) });
  assert.match(await retryLine('Sarah').textContent(), /^Sarah's last run was cancelled\. retry Sarah/);
  assert.match(await retryLine('Sarah').getAttribute('title'), /^why it was cancelled: cancelled by the user/);

  // Carol's CLI crashes: failed, with the whole reason on hover.
  await page.send('[FROM: kailai] Carol, tighten it. [NEXT: carol]');
  await page.page.waitForFunction(() => document.querySelector('[data-testid="delivery-row"][data-status="failed"]'));
  const failed = rows(page).filter({ has: page.page.locator('.d-failed') });
  assert.match(await failed.locator('.d-status').getAttribute('title'), /segfault in the model client/);
  assert.deepEqual((await statuses(page)).slice(0, 3), ['delivered', 'cancelled', 'failed']);
  assert.match(await retryLine('Carol').textContent(), /^Carol's last run failed\. retry Carol/);
  assert.match(await retryLine('Carol').getAttribute('title'), /^why it failed: .*segfault in the model client/);

  // The filter by status, and a row to the inspector.
  await page.by('deliveries-filter-status').selectOption('cancelled');
  assert.equal(await rows(page).count(), 1);
  await rows(page).nth(0).click();
  assert.equal(await page.by('recipient-select').inputValue(), 'sarah');
  await page.screenshot('deliveries-bridge.png');
  page.assertNoErrors();
  await context.close();
});
