// Issue #44.4 and the notices of #44.6: the header's usage opens the cost view (per member and
// per model, runs counted, "≥" said in words, the cap's field "max cost $" there); the cap's
// notice uses the field's words and says by how much the crossing run passed it; Claude Code
// is given what is left under the cap (`--max-budget-usd`, read back from the fake CLI's own
// arguments in its reply); opening a file and forking say what they did. Against a real
// `agent-chatter serve` with fake Claude scripts that report a cost (bridge/tests/fixtures/
// agents/claude-settings.sh: $0.01 a run, its arguments in its reply; crash.sh: no cost), and
// page alone. axe-core over the cost view at three sizes.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { writeFile } from 'node:fs/promises';
import { assertNoSevere, axeAtSizes, axeFindings, SIZES } from './support/axe.mjs';
import { servedPage } from './support/served.mjs';
import { bridgeDir, demoTeam, fakeCliBridge, fixture, openBridgePage } from './support/bridge.mjs';

const served = servedPage();
let bridge;
let dir;

before(async () => {
  ({ dir, bridge } = await fakeCliBridge('cost', {
    change: (team) => {
      // Max names his model, Sarah none: the view groups her runs as "model not reported".
      // Max hands the turn to Sarah, Sarah to Kailai (the fake CLI's AGENT_CHATTER_TEST_NEXT).
      Object.assign(team.members.find((m) => m.id === 'max'), { model: 'opus-e2e', env: { AGENT_CHATTER_TEST_NEXT: 'sarah' } });
      team.settings = { ...team.settings, maxCostUsd: 0.025 };
    },
    agents: {
      max: { command: fixture('claude-settings.sh'), output: 'claude' },
      sarah: { command: fixture('claude-settings.sh'), output: 'claude' },
      carol: { command: fixture('crash.sh') },
    },
  }));
});

after(() => bridge?.kill());

const viewports = [
  ['1440x900', { width: 1440, height: 900 }],
  ['1280x720', { width: 1280, height: 720 }],
  ['390x844', { width: 390, height: 844 }],
];

const count = (page, n) => page.page.waitForFunction(
  (n) => document.querySelectorAll('[data-testid="timeline-message"]').length === n, n);

test('bridge: the cost view, the budget given to Claude, the crossing run in the notice', async () => {
  const { context, page } = await openBridgePage(served.browser, bridge.url, { acceptDownloads: true });
  const last = () => page.by('timeline-message').last().locator('.content').textContent();

  // Max's first run is given the whole cap, Sarah's after his what he left; Carol's crashes
  // (no cost).
  await page.send('[FROM: kailai] Count them. [NEXT: max]');
  await count(page, 3);
  const texts = () => page.by('timeline-message').locator('.content').allTextContents();
  assert.match((await texts())[1], /--max-budget-usd,0\.025,/);
  assert.match((await texts())[2], /--max-budget-usd,0\.015,/);
  await page.send('[FROM: kailai] Carol, you too. [NEXT: carol]');
  await count(page, 5);
  // Max is given the $0.005 left and spends $0.01: his run passes the cap by $0.005, and
  // Sarah's delivery after his is stopped, the notice saying so in the field's words.
  await page.send('[FROM: kailai] Once more. [NEXT: max]');
  await count(page, 7);
  assert.match(await last(), /--max-budget-usd,0\.005,/);
  const notice = page.by('notices').filter({ hasText: 'cost cap reached' });
  await notice.waitFor();
  const said = await notice.textContent();
  assert.match(said, /the runs cost \$0\.0300 of the team's max cost \$0\.025 \(the last run passed the cap by \$0\.0050/);
  assert.match(said, /raise "max cost \$"/);
  assert.doesNotMatch(said.replace('(maxCostUsd)', ''), /maxCostUsd/, 'the key only beside the field\'s words');
  // The composer says it before the next message: it would go in, and no agent be given it.
  assert.equal(await page.by('composer-capped').textContent(),
    'cost cap reached (max cost $0.025): what you send goes in, but no agent is given it until the cap is raised (the header\'s usage opens it)');
  await page.screenshot('cost-capped-composer.png');
  // Carol's crashed run is offered no retry the cap would drop: her line says what to do.
  const carol = page.by('retry-line').filter({ hasText: 'Carol' });
  await carol.getByTestId('retry-capped').waitFor();
  assert.equal(await carol.getByTestId('retry-capped').textContent(),
    'To run it again, raise the cost cap (max cost $0.025, reached) in the header\'s usage.');
  assert.equal(await carol.getByTestId('retry').count(), 0);
  // Her row in the deliveries list says the same in place of its retry.
  await page.by('deliveries-tab').click();
  await page.by('delivery-row').filter({ has: page.page.locator('.d-to', { hasText: 'Carol' }) }).click();
  await page.by('details-retry-why').filter({
    hasText: 'retry: the cost cap is reached (max cost $0.025): raise it in the header\'s usage to run Carol again',
  }).waitFor();
  assert.equal(await page.by('details-retry').count(), 0);
  await page.by('messages-tab').click();

  // The header's usage opens the cost view.
  await page.by('usage-total').filter({ hasText: /^usage: 4 runs · ≥ \$0\.0300 · cap \$0\.025 reached$/ }).waitFor();
  await page.by('usage-total').click();
  const view = page.by('cost-view');
  await view.waitFor();
  assert.equal(await page.by('cost-total').textContent(), '4 runs cost ≥ $0.0300');
  assert.match(await page.by('cost-floor').textContent(),
    /^≥ means at least: 1 run of the 4 reported no cost .* so what the runs cost is at least the total shown\.$/);
  const rows = (table) => page.by(table).locator('tbody tr').evaluateAll((trs) =>
    trs.map((tr) => [...tr.children].map((c) => c.textContent)));
  assert.deepEqual(await rows('cost-by-member'), [
    ['Max', '2', '$0.0200'],
    ['Sarah', '1', '$0.0100'],
    ['Carol', '1', 'not reported'],
  ], 'in the order they first ran');
  assert.deepEqual(await rows('cost-by-model'), [
    ['model not reported', 'Sarah, Carol', '2', '≥ $0.0100'],
    ['opus-e2e', 'Max', '2', '$0.0200'],
  ]);
  assert.equal(await page.by('cost-cap-state').textContent(),
    'cap reached: the runs cost $0.0300, $0.0050 past the cap of $0.025; raise it to go on');
  assert.match(await view.locator('#cost-cap-hint').textContent(), /Claude Code is given what is left \(--max-budget-usd\)/);

  // axe over the view at the three sizes.
  const severe = [];
  for (const [name, viewport] of viewports) {
    await page.page.setViewportSize(viewport);
    await view.waitFor();
    severe.push(...(await axeFindings(page.page, `${name}, cost view`)).severe);
    await page.screenshot(`cost-view-${name}.png`);
  }
  assertNoSevere(severe);
  await page.page.setViewportSize({ width: 1440, height: 900 });

  // The cap's field is there: raised, the header and the view say what is left.
  await page.by('cost-cap-input').fill('0.05');
  await page.by('cost-cap-input').dispatchEvent('change');
  await page.by('cost-cap-state').filter({ hasText: '$0.0300 of $0.05 spent: $0.0200 left' }).waitFor();
  await page.by('usage-total').filter({ hasText: /· cap \$0\.05$/ }).waitFor();
  await page.by('composer-capped').waitFor({ state: 'detached' });
  await carol.getByTestId('retry').waitFor();
  assert.equal(await page.by('setting-max-cost').inputValue(), '0.05', 'the same setting as the team pane\'s');
  // Escape closes it, the focus back on the usage.
  await page.page.keyboard.press('Escape');
  await view.waitFor({ state: 'detached' });
  assert.equal(await page.page.evaluate(() => document.activeElement?.dataset.testid), 'usage-total');

  // A fork says what it did; the original is left as it was.
  const original = await page.by('session-select').inputValue();
  await page.by('timeline-message').nth(1).hover();
  await page.by('timeline-message').nth(1).getByTestId('fork').click();
  await page.page.waitForFunction((id) => document.querySelector('[data-testid=session-select]').value !== id, original);
  const fork = await page.by('session-select').inputValue();
  await page.by('happened').filter({ hasText: `Forked at #2 into session ${fork} — the original (session ${original}) is unchanged` }).waitFor();
  // Sarah is due where the fork ends, and her agent is a real CLI: the page asked first.
  assert.match(page.dialogs.at(-1) ?? '', /^Fork from #2 into a new session\? There Sarah is due, and the bridge runs Sarah's agent at once \(a real run, which may cost money\)/);
  severe.length = 0;
  severe.push(...(await axeFindings(page.page, '1440x900, fork notice')).severe);
  assertNoSevere(severe);

  // Opening a team file says what opened.
  const team = await demoTeam();
  const file = path.join(dir, 'crew.json');
  await writeFile(file, JSON.stringify(team));
  await page.by('open-menu').click();
  await page.by('import-file').setInputFiles(file);
  await page.by('happened').filter({ hasText: 'Opened crew.json: 4 members, 0 messages' }).waitFor();
  page.assertNoErrors();
  await context.close();
});

test('page alone: opening a session file and forking say what they did', async () => {
  const { context, page } = await served.visit();
  const original = await page.by('session-select').inputValue();
  await page.by('timeline-message').nth(1).hover();
  await page.by('timeline-message').nth(1).getByTestId('fork').click();
  await page.page.waitForFunction((id) => document.querySelector('[data-testid=session-select]').value !== id, original);
  const fork = await page.by('session-select').inputValue();
  await page.by('happened').filter({ hasText: `Forked at #2 into session ${fork} — the original (session ${original}) is unchanged` }).waitFor();
  await page.by('happened').getByRole('button', { name: 'dismiss' }).click();
  await page.page.waitForFunction(() => document.querySelector('[data-testid=happened]').textContent === '');
  // Switching between sessions is neither a fork nor an open: nothing is said, even for a
  // session named as a fork and made a moment ago.
  for (const id of [original, fork]) {
    await page.by('session-select').selectOption(id);
    await page.page.waitForFunction((id) => document.querySelector('[data-testid=session-select]').value === id, id);
    await page.by('timeline-message').nth(1).waitFor();
    assert.equal(await page.by('happened').textContent(), '', `switching to session ${id} is told as nothing`);
  }
  // A saved session opened over a conversation opens beside it.
  const saved = await page.download('export-session');
  const file = path.join(await bridgeDir('cost-alone'), 'notes.json');
  await writeFile(file, saved);
  await page.by('open-menu').click();
  await page.by('import-file').setInputFiles(file);
  await page.by('happened').filter({ hasText: /^Opened notes\.json: 4 members, 2 messages — as a new session; the one shown before is unchanged/ }).waitFor();
  // While it is said, the line covers nothing one works with: the composer and its send button
  // stay in sight at every size (it is a row of the header, not a box over the page).
  const size = page.page.viewportSize();
  for (const [name, viewport] of SIZES) {
    await page.page.setViewportSize(viewport);
    await page.by('composer-input').scrollIntoViewIfNeeded();
    const covered = await page.page.evaluate(() => {
      const line = document.querySelector('[data-testid=happened]').getBoundingClientRect();
      return ['composer-input', 'composer-send'].filter((id) => {
        const r = document.querySelector(`[data-testid=${id}]`).getBoundingClientRect();
        return r.left < line.right && line.left < r.right && r.top < line.bottom && line.top < r.bottom;
      });
    });
    assert.deepEqual(covered, [], `at ${name} the line saying what opened covers ${covered.join(' and ')}`);
    await page.screenshot(`happened-opened-${name}.png`);
  }
  await page.page.setViewportSize(size);
  const { severe } = await axeAtSizes(page.page, 'page alone, a file opened beside');
  assertNoSevere(severe);
  await page.by('happened').getByRole('button', { name: 'dismiss' }).click();
  await page.page.waitForFunction(() => document.querySelector('[data-testid=happened]').textContent === '');
  // The cost view page alone: simulated runs report nothing, and the header and the view say
  // why (the host's reason, not "no usage reported").
  assert.match(await page.by('usage-total').textContent(), /^usage: \d+ runs? · the simulator reports no usage$/);
  await page.by('usage-total').click();
  await page.by('cost-view').waitFor();
  assert.match(await page.by('cost-total').textContent(), /^\d+ runs?: the simulator reports no usage$/);
  const cells = await page.by('cost-by-member').locator('tbody tr td:last-child').allTextContents();
  assert.ok(cells.length > 0, 'the members who ran are listed');
  assert.deepEqual(new Set(cells), new Set(['the simulator reports no usage']));
  assert.match(await page.by('cost-cap-state').textContent(), /^no cap/);
  page.assertNoErrors();
  await context.close();
});
