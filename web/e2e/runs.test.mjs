// Agent runs on the page (docs/architecture.md §14c; issue #26): each member's status (running,
// retrying n/m, failed, waiting for a human), usage per delivery, per member and per
// conversation, run settings shown read only with where they come from, honest outcomes
// (incomplete replies marked, failures with the full reason), and the tab's title and the
// opt-in notification. Against a real `agent-chatter serve` with fake Claude scripts
// (bridge/tests/fixtures/agents/), and in simulation.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { inflateRawSync } from 'node:zlib';
import { InspectorPage } from './support/inspector-page.mjs';
import { servedPage } from './support/served.mjs';
import { bridgeDir, demoTeam, fixture, freePort, startBridge } from './support/bridge.mjs';

const served = servedPage();
let bridge;
let url;
let teamFile;

// Records the notifications the page shows, and lets the test hide the tab.
const stubNotifications = () => {
  window.__notes = [];
  window.__hidden = false;
  Object.defineProperty(document, 'hidden', { get: () => window.__hidden });
  window.Notification = class {
    static permission = 'default';
    static requestPermission() {
      window.Notification.permission = 'granted';
      return Promise.resolve('granted');
    }
    constructor(title, options) {
      window.__notes.push([title, options?.body ?? '']);
    }
  };
};

before(async () => {
  const dir = await bridgeDir('runs');
  const team = await demoTeam();
  const max = team.members.find((m) => m.id === 'max');
  Object.assign(max, {
    model: 'opus-e2e', permissionMode: 'readOnly', timeoutMs: 90000, baseDir: dir,
    env: { E2E_TOKEN: 'never-sent-to-the-page' }, additionalArgs: ['--verbose'],
  });
  team.settings = { ...team.settings, maxCostUsd: 1 };
  teamFile = path.join(dir, 'team.json');
  bridge = await startBridge(dir, { team, agents: {
    max: { command: fixture('claude-usage.sh') },
    sarah: { command: fixture('claude-max-turns.sh'), output: 'claude' },
    carol: { command: fixture('crash.sh') },
  } });
  url = bridge.url;
});

after(() => bridge?.kill());

const statusOf = (page, n) => page.by('member-row').nth(n).getByTestId('member-status');
const waitForText = (locator, re) => locator.filter({ hasText: re }).waitFor();

test('bridge: statuses, usage, honest outcomes, read-only run settings, title and notification', async () => {
  const context = await served.browser.newContext({ viewport: { width: 1440, height: 1000 } });
  await context.addInitScript(stubNotifications);
  const page = new InspectorPage(await context.newPage(), url);
  await page.page.goto(url);
  await page.by('connection-status').filter({ hasText: '● bridge' }).waitFor();
  await page.by('agent-status').first().waitFor();

  // One status per member, humans too; all idle in a new session; nothing spent yet.
  assert.equal(await page.by('member-status').count(), 4);
  assert.deepEqual(await page.by('member-status').allTextContents(), ['idle', 'idle', 'idle', 'idle']);
  assert.match(await page.by('usage-total').textContent(), /^usage: no runs yet · cap \$1\.00$/);

  // Max's run settings, as the bridge applies them from its team file: read only, env names
  // without their values.
  const settings = page.by('member-row').nth(1).getByTestId('run-settings');
  await settings.locator('summary').click();
  const shown = Object.fromEntries(await settings.locator('.run-setting').evaluateAll((rows) =>
    rows.map((r) => [r.dataset.setting, r.querySelector('dd').textContent])));
  assert.equal(shown.model, 'opus-e2e');
  // Our mode, what it allows and the CLI's own mode it becomes (issue 44.2).
  assert.equal(shown['permission mode'], 'readOnly: reads and plans; changes nothing (Claude Code: --permission-mode plan)');
  assert.equal(shown.timeout, '1 min 30 s');
  assert.equal(shown['env (names only)'], 'E2E_TOKEN');
  assert.equal(shown['additional args'], '--verbose');
  assert.equal(shown['working directory'], path.dirname(teamFile));
  // The file by its name, not the directories above it (a home directory names the user).
  assert.equal(shown.from, `team file ${path.basename(teamFile)}`);
  assert.match(await settings.locator('.run-settings-note').textContent(), /files on the bridge's machine.*cannot change them/);
  assert.equal(await settings.locator('input, select, textarea').count(), 0, 'run settings are not inputs');
  assert.ok(!(await page.page.content()).includes('never-sent-to-the-page'), 'an env value reached the page');

  // Max runs: his CLI reports a retry, shown with why while the run's time ticks.
  await page.by('notify-toggle').check();
  assert.equal(await page.by('notify-toggle').isChecked(), true);
  await page.send('[FROM: kailai] Count the notes. [NEXT: max]');
  await waitForText(statusOf(page, 1), /^retrying 2\/10 · 0:0\d: HTTP 529: overloaded$/);
  const first = await statusOf(page, 1).textContent();
  await page.page.waitForFunction((before) =>
    document.querySelectorAll('[data-testid="member-status"]')[1].textContent !== before, first);

  // Max's reply brings his usage; Sarah's reply was cut by her turn limit: marked incomplete
  // with the reason; then it is Kailai's turn, which the title says.
  await page.page.waitForFunction(() => document.querySelectorAll('[data-testid="timeline-message"]').length === 3);
  const cut = page.by('timeline-message').nth(2);
  await cut.getByTestId('incomplete-mark').waitFor();
  assert.equal(await cut.getByTestId('incomplete-reason').textContent(),
    'incomplete: it reached its maximum number of turns (error_max_turns)');
  assert.equal(await page.by('incomplete-mark').count(), 1);
  assert.equal(await statusOf(page, 0).textContent(), 'waiting for this human');
  assert.equal(await statusOf(page, 1).textContent(), 'idle');
  assert.equal(await page.page.title(), '● Your turn — agent-chatter');
  const maxUsage = await page.by('member-row').nth(1).getByTestId('member-usage').textContent();
  assert.match(maxUsage, /^1 run · \d+ in \(1000 cached\) · 80 out · \$0\.0031 · 5\.4 s$/);
  assert.equal(await page.by('member-row').nth(0).getByTestId('member-usage').count(), 0);
  assert.match(await page.by('usage-total').textContent(), /^usage: 2 runs · .*\$0\.0041.* · cap \$1\.00$/);
  // The inspector names what the run that ended in a message cost.
  await page.by('timeline-message').nth(1).click();
  assert.match(await page.by('delivery-usage').textContent(), /\$0\.0031 · 5\.4 s$/);
  await page.by('timeline-message').nth(2).click();
  assert.match(await page.by('delivery-outcome').textContent(), /^incomplete: it reached its maximum number of turns/);
  await page.by('timeline-message').nth(0).click();
  assert.equal(await page.by('delivery-usage').count(), 0, 'a human message ended no run');
  assert.equal(await page.page.title(), 'agent-chatter · prompt inspector', 'the user acted');

  // Run settings are the bridge's machine state (docs/architecture.md §14c, issue #45.1): no
  // download and no share link holds an env value, a working directory, arguments or a model.
  const machineOnly = ['never-sent-to-the-page', path.dirname(teamFile), '--verbose', 'opus-e2e'];
  const saved = {};
  for (const what of ['export-session', 'export-scenario', 'export-snapshot', 'export-team',
    'export-peer-team', 'export-transcript-md', 'export-transcript-html']) {
    saved[what] = await page.download(what);
  }
  await page.by('share-link').click();
  const link = new URL(await page.by('share-url').inputValue());
  saved['share link'] = inflateRawSync(Buffer.from(link.hash.slice('#share='.length), 'base64url')).toString('utf8');
  assert.match(saved['share link'], /Count the notes/, 'the link was read');
  for (const [what, text] of Object.entries(saved)) {
    for (const value of machineOnly) {
      assert.ok(!text.includes(value), `${what} holds ${value}`);
    }
  }

  // Carol's CLI crashes while the tab is hidden: her status, the failure row and the
  // notification give the whole reason; the conversation keeps its short line.
  await page.page.evaluate(() => { window.__hidden = true; });
  await page.send('[FROM: kailai] Carol, tighten it. [NEXT: carol]');
  await waitForText(statusOf(page, 3), /^failed: .*segfault in the model client/);
  assert.equal(await page.page.title(), '✗ Carol failed — agent-chatter');
  const failure = page.by('timeline-message').last();
  assert.match(await failure.getByTestId('failure-reason').textContent(), /segfault in the model client/);
  assert.doesNotMatch(await failure.locator('.content').textContent(), /segfault/);
  assert.deepEqual(await page.page.evaluate(() => window.__notes.map(([t]) => t)), ['✗ Carol failed — agent-chatter']);
  // Her crashed run reported no cost: her usage says so, and the total is a floor (≥).
  assert.match(await page.by('member-row').nth(3).getByTestId('member-usage').textContent(), /^1 run · .* \(cost not known\)$/);
  assert.match(await page.by('usage-total').textContent(), /^usage: 3 runs · ≥ \$0\.0041 · cap \$1\.00$/);
  // The inspector at her failure notice (the latest) says later prompts hold it as history,
  // though no agent is sent it as its message.
  assert.match(await page.by('inspector-at').textContent(), /^at #\d+ \(latest\) · a failure notice: later prompts show it in their history, but no agent gets it as its message; this preview shows what one would get if it did$/);
  await page.screenshot('runs-failed.png');
  // Her delivery, chosen in the deliveries list: the inspector says how her run answered it
  // (not only the run that wrote the message she was given).
  await page.page.evaluate(() => { window.__hidden = false; });
  await page.by('deliveries-tab').click();
  await page.page.locator('[data-testid="delivery-row"][data-status="failed"]').click();
  assert.match(await page.by('answer-run').textContent(), /^Carol's answer to this prompt: failed: .*segfault in the model client/);
  await page.by('messages-tab').click();

  // A team edit keeps what was spent: the usage still counts the three runs and their cost
  // (the deliveries list says they ran under the earlier team), and the cap still counts it.
  const instruction = page.by('member-row').nth(1).locator('.member-instruction');
  await instruction.fill('You are Max. Edited.');
  await instruction.dispatchEvent('change');
  await page.by('recipient-select').selectOption('max');
  await page.by('system-flag-text').filter({ hasText: 'Edited.' }).waitFor();
  assert.match(await page.by('usage-total').textContent(), /^usage: 3 runs · ≥ \$0\.0041 · cap \$1\.00$/);
  await page.by('deliveries-tab').click();
  assert.match(await page.by('deliveries-count').textContent(), /3 earlier run\(s\), before the team changed, are counted in the usage/);
  await page.by('messages-tab').click();
  // The cap is a setting of the page: lowered below what was spent, it is reached.
  await page.by('setting-max-cost').fill('0.004');
  await page.by('setting-max-cost').dispatchEvent('change');
  await page.by('usage-total').filter({ hasText: 'cap $0.004 reached' }).waitFor();
  page.assertNoErrors();
  await context.close();
});

test('simulation: statuses and run settings come from the session and the team', async () => {
  const { context, page } = await served.visit();
  // The demo leaves Carol due: her status counts, the others are idle.
  assert.equal(await page.by('member-status').count(), 4);
  await waitForText(statusOf(page, 3), /^due · 0:\d\d$/);
  assert.equal(await statusOf(page, 0).textContent(), 'idle');
  // Run settings are shown read only from the team, and no bridge applies them here.
  const settings = page.by('member-row').nth(1).getByTestId('run-settings');
  await settings.locator('summary').click();
  assert.match(await settings.textContent(), /model.*the CLI's default/);
  assert.match(await settings.locator('.run-settings-note').textContent(), /in simulation nothing runs/);
  assert.equal(await page.by('member-row').nth(0).getByTestId('run-settings').count(), 0, 'a human has none');
  // Simulated replies report no usage, and say so as the simulator's: runs are counted all
  // the same.
  assert.match(await page.by('usage-total').textContent(), /^usage: 2 runs · the simulator reports no usage$/);
  await page.by('timeline-message').nth(1).click();
  assert.equal(await page.by('delivery-usage').textContent(), 'the simulator reports no usage');
  await page.simulate();
  assert.match(await page.by('usage-total').textContent(), /^usage: 3 runs/);
  page.assertNoErrors();
  await context.close();
});

test('bridge gone while an agent runs: nothing is shown as running, cancel waits, and once back the run is recorded as interrupted, not run again', async () => {
  const dir = await bridgeDir('runs-gone');
  const port = await freePort();
  const agents = { max: { command: fixture('hang.sh') } };
  const gone = await startBridge(dir, { team: await demoTeam(), agents, port });
  let back;
  try {
    const context = await served.browser.newContext({ viewport: { width: 1440, height: 900 } });
    const page = new InspectorPage(await context.newPage(), gone.url);
    await page.page.goto(gone.url);
    await page.by('connection-status').filter({ hasText: '● bridge' }).waitFor();
    await page.send('[FROM: kailai] Draft it. [NEXT: max]');
    await waitForText(statusOf(page, 1), /^running · 0:0\d$/);
    assert.equal(await page.by('agent-cancel').isDisabled(), false);
    gone.kill();
    await page.by('connection-status').filter({ hasText: 'bridge disconnected — reconnecting…' }).waitFor();
    await waitForText(statusOf(page, 1), /^not known: the bridge is disconnected$/);
    assert.match(await page.by('running-mark').textContent(), /^Max was running when the bridge disconnected: what became of the run is known once it is back$/);
    assert.equal(await page.by('running-elapsed').count(), 0, 'no clock ticks for a run no one watches');
    assert.equal(await page.by('agent-cancel').isDisabled(), true, 'cancel waits for the bridge');
    assert.match(await page.by('agent-cancel').getAttribute('title'), /^the bridge is disconnected/);
    await page.screenshot('runs-bridge-gone.png');

    // Back on the same port and database: the page reconnects by itself; Max's run, cut off
    // by the bridge's death, is a failure saying so (not made again: it may have cost money),
    // and the user can retry it.
    back = await startBridge(dir, { agents, port });
    await page.by('connection-status').filter({ hasText: '● bridge' }).waitFor({ timeout: 15_000 });
    await waitForText(statusOf(page, 1), /^failed: interrupted: the bridge stopped while it ran \(it started \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC\)/);
    assert.match(await page.by('timeline-message').last().getByTestId('failure-reason').textContent(),
      /interrupted: .*so what the agent did and what the run cost are not known; retry to run it again/);
    assert.equal(await page.by('running-mark').count(), 0, 'nothing runs');
    assert.equal(await page.by('usage-total').textContent(), 'usage: 1 run · cost not known');
    await page.by('retry').filter({ hasText: /Max/ }).waitFor();
    await page.screenshot('runs-interrupted.png');
    await context.close();
  } finally {
    gone.kill();
    back?.kill();
  }
});
