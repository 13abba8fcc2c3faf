// The deliveries list's actions (issue 44.5): a cost not reported reads "—" (row, details,
// inspector, header); the model that answered, in the details and the inspector; retry of a
// failed run (a new run, the old one stays); its kept output on demand; the command that ran,
// shell-quoted, copied, with no environment value. Against a real `agent-chatter serve` with
// fake CLIs (bridge/tests/fixtures/agents/), and in the page alone. axe at 1440x900, 1280x720
// and 390x844 over the new states.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { tmpdir } from 'node:os';
import { servedPage } from './support/served.mjs';
import { demoTeam, fakeCliBridge, fixture, freePort, openBridgePage, startBridge } from './support/bridge.mjs';
import { assertNoSevere, axeFindings } from './support/axe.mjs';

const served = servedPage();
let bridge;

before(async () => {
  ({ bridge } = await fakeCliBridge('deliveries-actions', {
    change: (team) => {
      Object.assign(team.members.find((m) => m.id === 'max'), { model: 'opus-e2e', env: { E2E_TOKEN: 'never-sent-to-the-page' } });
      team.settings = { ...team.settings, maxCostUsd: 1 };
    },
    agents: (dir) => ({
      // Names its model, says a little, fails reporting $0 (kept output).
      max: { command: fixture('claude-fails-costless.sh') },
      // Fails its first run, answers the next (a retry).
      carol: { command: fixture('fail-once.sh'), args: [path.join(dir, 'carol-ran-once')], output: 'command' },
    }),
  }));
});

after(() => bridge?.kill());

const SIZES = [['1440x900', { width: 1440, height: 900 }], ['1280x720', { width: 1280, height: 720 }], ['390x844', { width: 390, height: 844 }]];
const rows = (page) => page.by('delivery-row');
const failedRow = (page, name) => rows(page).filter({ has: page.page.locator('.d-to', { hasText: name }) })
  .and(page.page.locator('[data-status="failed"]'));

/** Opens the bridge's page at `viewport`, with the clipboard allowed and axe injectable. */
const bridgePage = (viewport) => openBridgePage(served.browser, bridge.url, { viewport, clipboard: true });

test('bridge: "—" for a cost not reported, the model, output, command, retry; axe on each state', async () => {
  const { context, page } = await bridgePage({ width: 1440, height: 900 });
  const severe = [];
  const check = async (where) => severe.push(...(await axeFindings(page.page, `1440x900, ${where}`)).severe);

  // Max's CLI fails reporting $0: nothing reads $0.0000.
  await page.send('[FROM: kailai] Count the notes. [NEXT: max]');
  await page.by('member-row').nth(1).getByTestId('member-status').filter({ hasText: /^failed/ }).waitFor();
  await page.by('usage-total').filter({ hasText: /cost not known/ }).waitFor();
  assert.doesNotMatch(await page.by('usage-total').textContent(), /\$0\.0000/);
  await page.by('deliveries-tab').click();
  const maxRow = failedRow(page, 'Max');
  await maxRow.waitFor();
  assert.equal(await maxRow.locator('.d-usage').textContent(), '—');

  // Its details: the cost, the model its CLI named, its output on demand, the command.
  await maxRow.click();
  const details = page.by('delivery-details');
  await details.waitFor();
  assert.match(await details.locator('strong').textContent(), /^#1 to Max · failed$/);
  assert.equal(await page.by('details-cost').textContent(), '—');
  await page.by('details-model').filter({ hasText: 'model: claude-e2e-1 (as its CLI said)' }).waitFor();
  // The inspector says so too, and what the run reported, the cost as "—".
  await page.by('answer-model').filter({ hasText: 'model: claude-e2e-1' }).waitFor();
  assert.match(await page.by('answer-run').textContent(), /^Max's answer to this prompt: failed: .* · cost —$/);
  assert.doesNotMatch(await page.by('answer-run').textContent(), /\$0\.0000/);
  // Its label says the run failed, not only that the prompt was delivered.
  assert.equal(await page.by('inspector-at').textContent(), 'at #1 · delivered · its run failed');
  await check('a failed row chosen');
  // No inline style: the bridge's Content-Security-Policy blocks them (this context bypasses
  // it for axe, so the check is here).
  assert.equal(await details.evaluate((el) => el.querySelectorAll('[style]').length + (el.hasAttribute('style') ? 1 : 0)), 0);

  await page.by('details-show-output').click();
  await page.by('details-output').filter({ hasText: 'Looking at the notes' }).waitFor();
  assert.equal(await page.by('details-output-cut').count(), 0, 'a small output is not cut');
  assert.match(await details.textContent(), /in a terminal: agent-chatter outputs \d+ --member max --at \d+/);
  await check('its output shown');

  const command = await page.by('details-command').textContent();
  assert.ok(command.startsWith(`${fixture('claude-fails-costless.sh')} `), command);
  assert.match(command, / --model opus-e2e /);
  assert.match(command, / --append-system-prompt '/, 'the system part, quoted');
  // "copied" only once the clipboard took it, "could not copy" when it refused: the page's
  // writes are held here until the test lets each go through or fail.
  await page.page.evaluate(() => {
    const write = navigator.clipboard.writeText.bind(navigator.clipboard);
    window.clipboardWrites = [];
    navigator.clipboard.writeText = (text) => new Promise((resolve, reject) => window.clipboardWrites.push({
      pass: () => write(text).then(resolve, reject),
      refuse: () => reject(new DOMException('refused by the test', 'NotAllowedError')),
    }));
  });
  const writes = (n) => page.page.waitForFunction((n) => window.clipboardWrites.length === n, n);
  await page.by('details-copy-command').click();
  await writes(1);
  assert.equal(await page.by('details-copied').textContent(), '', 'nothing said while the clipboard has not answered');
  await page.page.evaluate(() => window.clipboardWrites[0].pass());
  await page.by('details-copied').filter({ hasText: /^ copied$/ }).waitFor();
  assert.equal(await page.page.evaluate(() => navigator.clipboard.readText()), command);
  await page.by('details-copy-command').click();
  await writes(2);
  await page.page.evaluate(() => window.clipboardWrites[1].refuse());
  await page.by('details-copied').filter({ hasText: /^ could not copy: the browser refused clipboard access$/ }).waitFor();
  const copied = await page.page.evaluate(() => navigator.clipboard.readText());
  assert.equal(copied, command);
  assert.ok(!(await page.page.content()).includes('never-sent-to-the-page'), 'an env value reached the page');
  assert.ok(!command.includes('E2E_TOKEN'), 'no env name in the command either');
  await check('its command copied');
  await page.screenshot('deliveries-actions-failed.png');

  // Carol fails once: retry runs the same delivery again; the failed run stays listed.
  await page.by('messages-tab').click();
  await page.send('[FROM: kailai] Carol, tighten it. [NEXT: carol]');
  await page.by('deliveries-tab').click();
  const carolRow = failedRow(page, 'Carol');
  await carolRow.waitFor();
  await carolRow.click();
  await page.by('details-retry').click();
  const carolRows = rows(page).filter({ has: page.page.locator('.d-to', { hasText: 'Carol' }) });
  await page.page.waitForFunction(() => [...document.querySelectorAll('[data-testid="delivery-row"]')]
    .filter((r) => r.querySelector('.d-to')?.textContent === 'Carol').map((r) => r.dataset.status).join() === 'failed,delivered');
  // The details still show the old run (not the new one), which failed.
  assert.equal(await carolRows.count(), 2);
  assert.match(await page.by('delivery-details').locator('strong').textContent(), /^#\d+ to Carol · failed$/);
  // It can no longer run again, and says why.
  await page.by('details-retry-why').filter({ hasText: 'a later run of Carol came after this one' }).waitFor();
  // Carol's plain command names no model; none is configured: said as such.
  assert.match(await page.by('details-model').textContent(), /^model: the CLI's default \(configured; its CLI did not say which answered\)$/);
  // The two tries of one delivery are told apart: the retry says so, and only the row picked
  // is selected (both were: the inspector shows the same message to the same member for both).
  const selectedCarol = () => carolRows.evaluateAll((rs) => rs.map((r) => r.getAttribute('aria-selected')).join());
  assert.deepEqual((await carolRows.locator('.d-number').allTextContents()).map((n) => n.replace(/\d+/, 'n')), ['#n', '#n · try 2']);
  await carolRows.nth(1).click();
  await page.by('delivery-details').locator('strong').filter({ hasText: /^#\d+ to Carol · delivered/ }).waitFor();
  await page.page.waitForFunction(() => document.querySelector('[data-testid="inspector-at"]')?.textContent.includes('delivered'));
  assert.equal(await selectedCarol(), 'false,true');
  await carolRows.nth(0).click();
  await page.by('delivery-details').locator('strong').filter({ hasText: /^#\d+ to Carol · failed/ }).waitFor();
  assert.equal(await selectedCarol(), 'true,false');
  await check('an old failed run after its retry');
  await page.by('messages-tab').click();
  await page.by('timeline-message').filter({ hasText: 'Recovered on the second try.' }).waitFor();

  assertNoSevere(severe);
  page.assertNoErrors();
  await context.close();
});

for (const [name, viewport] of SIZES.slice(1)) {
  test(`bridge: the details of a failed row pass axe at ${name}`, async () => {
    const { context, page } = await bridgePage(viewport);
    await page.by('deliveries-tab').click();
    await failedRow(page, 'Max').first().click();
    await page.by('details-model').filter({ hasText: 'claude-e2e-1' }).waitFor();
    await page.by('details-show-output').click();
    await page.by('details-output').waitFor();
    assertNoSevere((await axeFindings(page.page, `${name}, failed row with output`)).severe);
    await page.screenshot(`deliveries-actions-${name}.png`);
    page.assertNoErrors();
    await context.close();
  });
}

test('bridge: the details asked just before the bridge went away are asked again once it is back', { timeout: 120_000 }, async () => {
  const port = await freePort();
  const agents = { max: { command: fixture('claude-fails-costless.sh') } };
  const { dir, team, bridge: gone } = await fakeCliBridge('deliveries-details-lost', { agents, port });
  let back;
  try {
    const { context, page } = await openBridgePage(served.browser, gone.url);
    await page.send('[FROM: kailai] Count the notes. [NEXT: max]');
    await page.by('member-row').nth(1).getByTestId('member-status').filter({ hasText: /^failed/ }).waitFor();
    await page.by('deliveries-tab').click();
    // The bridge stops answering (its socket stays open): the page asks, no answer comes.
    gone.kill('SIGSTOP');
    await failedRow(page, 'Max').click();
    await page.by('delivery-details').filter({ hasText: 'output: asking the bridge…' }).waitFor();
    gone.kill('SIGKILL');
    await page.by('connection-status').filter({ hasText: 'reconnecting' }).waitFor();
    back = await startBridge(dir, { team, agents, port });
    await page.by('connection-status').filter({ hasText: '● bridge' }).waitFor({ timeout: 15_000 });
    await failedRow(page, 'Max').click();
    await page.by('details-show-output').click();
    await page.by('details-output').filter({ hasText: 'Looking at the notes' }).waitFor();
    // Chromium logs each refused reconnection attempt while the bridge was away; nothing else.
    page.errors = page.errors.filter((e) => !/ERR_CONNECTION_REFUSED/.test(e));
    page.assertNoErrors();
    await context.close();
  } finally {
    gone.kill('SIGKILL');
    back?.kill();
  }
});

/** A session of the demo team whose one delivery, to Max, failed (as a bridge would store it). */
async function failedSession() {
  const team = await demoTeam();
  const at = 1_700_000_000_000;
  return {
    format: 'agent-chatter-session/1',
    facts: [
      { type: 'setTeam', team },
      { type: 'human', text: '[FROM: kailai] Plan it. [NEXT: max]', sender: null, at },
      { type: 'failed', to: 'max', reason: 'the model client lost its connection', at: at + 1000, failure: 'crashed', usage: { costUsd: 0, durationMs: 300 } },
    ],
  };
}

for (const [name, viewport] of SIZES) {
  test(`page alone at ${name}: retry works, output and command are a bridge's (said so), "—" for $0`, async () => {
    const { context, page } = await served.visit(undefined, viewport);
    await page.openFile('failed.json', JSON.stringify(await failedSession()));
    await page.by('deliveries-tab').click();
    const row = failedRow(page, 'Max');
    await row.waitFor();
    assert.equal(await row.locator('.d-usage').textContent(), '—', 'a failed run\'s $0 is not a price');
    // Nor in the header's total, for a log written before the bridge dropped such a $0.
    assert.doesNotMatch(await page.by('usage-total').textContent(), /\$0\.0000/);
    await row.click();
    assert.equal(await page.by('details-cost').textContent(), '—');
    assert.match(await page.by('details-model').textContent(), /^model: none, the simulator/);
    assert.match(await page.by('details-no-output').textContent(), /in the page alone no agent's CLI runs/);
    assert.equal(await page.by('details-copy-command').count(), 0, 'no command ran here');
    assertNoSevere((await axeFindings(page.page, `page alone ${name}, failed row`)).severe);
    // Retry: the delivery is due again, waiting for its answer here; the failed row stays.
    await page.by('details-retry').click();
    await page.page.waitForFunction(() => [...document.querySelectorAll('[data-testid="delivery-row"]')]
      .map((r) => r.dataset.status).join() === 'failed,would-receive');
    await page.by('details-retry-why').waitFor();
    assertNoSevere((await axeFindings(page.page, `page alone ${name}, after retry`)).severe);
    page.assertNoErrors();
    await context.close();
  });
}

test('transcript: a stop by the cost cap is in the downloaded Markdown and HTML', async () => {
  const team = await demoTeam();
  team.settings = { ...team.settings, maxCostUsd: 0.003 };
  const at = 1_700_000_000_000;
  // Max's run costs $0.0031, over the $0.003 cap: his hand-over to Sarah is stopped.
  const session = {
    format: 'agent-chatter-session/1',
    facts: [
      { type: 'setTeam', team },
      { type: 'human', text: '[FROM: kailai] Plan it. [NEXT: max]', sender: null, at },
      { type: 'replied', to: 'max', text: 'Planned. [NEXT: sarah]', at: at + 1000, usage: { costUsd: 0.0031, durationMs: 900 } },
    ],
  };
  const { context, page } = await served.visit();
  await page.openFile('capped.json', JSON.stringify(session));
  await page.by('timeline-message').filter({ hasText: 'Planned.' }).waitFor();
  const md = await page.download('export-transcript-md');
  assert.match(md, /\n\*\*stopped by the cost cap\*\*: .*\$0\.0031.*sarah/);
  assert.ok(md.indexOf('## #2') < md.indexOf('stopped by the cost cap'), 'after the reply that reached the cap');
  const html = await page.download('export-transcript-html');
  assert.match(html, /<p class="failed cost-stop"><strong>stopped by the cost cap<\/strong>: /);
  // (The page offers Markdown and HTML; JSON's costCapStops is the CLI export's, tests/transcript.rs.)
  page.assertNoErrors();
  await context.close();
});
