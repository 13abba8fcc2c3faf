// Issue #25 points 2 and 6: clear to a newcomer in ten seconds, nothing stranded. A tagline and
// a help that explains the loop, P1–P3 and the fates; the save entries look like downloads; a
// simulated reply reads as a reply; an edit that would rewrite history is refused in plain
// words with a next step; a mistyped [NEXT] name is caught before sending, with a fix; and a
// failed agent can be retried (against a real `agent-chatter serve` whose agent fails once).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { InspectorPage } from './support/inspector-page.mjs';
import { servedPage } from './support/served.mjs';
import { bridgeDir, demoTeam, fixture, startBridge } from './support/bridge.mjs';

const { visit } = servedPage();

test('the header says what the page is, and the help explains the loop, P1 and the fates', async () => {
  const { context, page } = await visit();
  assert.match(await page.by('tagline').textContent(), /exactly what each AI agent/);
  assert.equal(await page.by('help').count(), 0, 'the help starts closed');
  await page.by('help-toggle').click();
  const help = await page.by('help').textContent();
  assert.match(help, /P1.*urgent, runs first/);
  assert.match(help, /\[NEXT: max\]/);
  assert.match(help, /trimmed to fit the budget/);
  assert.match(help, /skeleton/i);
  assert.match(help, /Simulation.*Bridge/s);
  await page.screenshot('newcomer-help.png');
  await page.page.keyboard.press('Escape');
  await page.by('help').waitFor({ state: 'detached' });
  // `?` opens it too, when not typing.
  await page.by('timeline').click();
  await page.page.keyboard.press('?');
  await page.by('help').waitFor();
  assert.match(await page.by('routing-status').getAttribute('title'), /P1 = urgent/);
  page.assertNoErrors();
  await context.close();
});

test('the save entries are labelled as downloads, apart from open', async () => {
  const { context, page } = await visit();
  for (const id of ['export-session', 'export-scenario', 'export-snapshot', 'export-team', 'export-peer-team']) {
    const entry = page.by(id);
    assert.match(await entry.textContent(), /^⬇ /, `${id} says it downloads`);
    assert.equal(await entry.evaluate((e) => e.closest('[role=group]').getAttribute('aria-label')), 'save a file (downloads)');
  }
  assert.match(await page.by('export-scenario').textContent(), /scenario file/);
  JSON.parse(await page.download('export-scenario'));
  page.assertNoErrors();
  await context.close();
});

test('a simulated reply reads as a reply, not as byte counts', async () => {
  const { context, page } = await visit();
  await page.simulateUntilDone();
  await page.send('[NEXT: max] Max, one line on the parser please.');
  await page.simulate();
  const reply = await page.lastMessageText();
  assert.match(reply, /^Max \(simulated\): I read .*and the message "Max, one line on the parser please\."\. Passing to Sarah\./);
  assert.doesNotMatch(reply, /bytes/);
  page.assertNoErrors();
  await context.close();
});

test('removing a member who has spoken asks first, saying it is from now on; declined, nothing changes', async () => {
  const { context, page } = await visit();
  const members = await page.memberCount();
  // In the demo, Max (the second member) has spoken.
  page.dialogAnswer = false;
  await page.by('member-row').nth(1).locator('button.remove').click();
  assert.match(page.dialogs.at(-1), /^Remove Max from now on\? Max's messages stay Max's; Max gets no more messages \(\[NEXT: max\] will reach no one\)\.$/);
  assert.doesNotMatch(page.dialogs.at(-1), /facts\[|does not replay|msg-\d/);
  assert.equal(await page.memberCount(), members);
  assert.equal(await page.by('member-undo').count(), 0);
  page.assertNoErrors();
  await context.close();
});

test('a mistyped [NEXT] name is caught while typing, and a click puts the member in', async () => {
  const { context, page } = await visit();
  const before = await page.timelineCount();
  await page.by('composer-input').fill('Please review the notes. [NEXT: sarha !P1]');
  const hint = page.by('composer-hint');
  await hint.waitFor();
  assert.match(await hint.textContent(), /no member 'sarha' in \[NEXT\] — did you mean Sarah\?/);
  assert.equal(await page.timelineCount(), before, 'nothing was sent');
  await page.screenshot('newcomer-did-you-mean.png');
  // Sent anyway (Ctrl+Enter), it is asked about first; declined, nothing is sent.
  page.dialogAnswer = false;
  await page.by('composer-input').press('Control+Enter');
  assert.match(page.dialogs.at(-1), /^Send anyway\? 'sarha' \(did you mean Sarah\?\) in \[NEXT\] is no member/);
  assert.equal(await page.timelineCount(), before, 'declined: nothing was sent');
  assert.equal(await page.by('composer-input').inputValue(), 'Please review the notes. [NEXT: sarha !P1]');
  page.dialogAnswer = true;
  await page.by('composer-hint-fix').click();
  assert.equal(await page.by('composer-input').inputValue(), 'Please review the notes. [NEXT: sarah !P1]');
  await hint.waitFor({ state: 'detached' });
  // A name nobody is close to is still warned of, with no guess.
  await page.by('composer-input').fill('[NEXT: zed]');
  assert.match(await hint.textContent(), /no member 'zed' in \[NEXT\]: it would reach no one/);
  page.assertNoErrors();
  await context.close();
});

// --- retry, against a bridge whose Max fails his first run ---------------------------------

let bridge;
let url;

before(async () => {
  const dir = await bridgeDir('newcomer');
  bridge = await startBridge(dir, { team: await demoTeam(), agents: {
    max: { command: fixture('fail-once.sh'), args: [path.join(dir, 'first-run')] },
  } });
  url = bridge.url;
});

after(() => bridge?.kill());

test('bridge: a failed agent is retried from the page and its delivery runs again', async () => {
  const { context, page } = await visit(url);
  await page.by('connection-status').filter({ hasText: '● bridge' }).waitFor();
  await page.send('[NEXT: max] Max, draft the notes please.');
  await page.by('failure-reason').last().waitFor();
  const retry = page.by('retry');
  await retry.waitFor();
  assert.equal(await retry.textContent(), 'retry Max');
  await page.screenshot('newcomer-retry.png');
  const t0 = Date.now();
  await retry.click();
  await page.by('timeline-message').locator('.content').filter({ hasText: 'Recovered on the second try.' }).waitFor();
  console.log(`retry → reply in ${Date.now() - t0} ms`);
  await retry.waitFor({ state: 'detached' });
  page.assertNoErrors();
  await context.close();
});
