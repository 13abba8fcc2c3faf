// Issue #44 point 6: a member who has spoken is removed "from now on" (a `memberLeft` fact at
// the end of the log): their old messages still show their name, they are gone from the team
// editor and the inspector's recipients, a later [NEXT] to them reaches no one, a reload and a
// later team edit keep it, and Undo brings them back. Page alone and against a bridge running
// the simulator; axe at 1440x900, 1280x720 and 390x844 on the new state.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { assertNoSevere, axeAtSizes } from './support/axe.mjs';
import { bridgeDir, startBridge } from './support/bridge.mjs';
import { launch } from './support/browser.mjs';
import { InspectorPage } from './support/inspector-page.mjs';
import { servedPage } from './support/served.mjs';

const { visit } = servedPage();

const memberNames = (page) => page.page.locator('[data-testid=member-row] .member-name')
  .evaluateAll((inputs) => inputs.map((i) => i.value));
const recipients = (page) => page.by('recipient-select').locator('option')
  .evaluateAll((options) => options.map((o) => o.value));

async function rowOf(page, name) {
  const i = (await memberNames(page)).indexOf(name);
  assert.ok(i >= 0, `no member named ${name}`);
  return page.by('member-row').nth(i);
}

/** Removes Max (who has spoken) from now on, answering the question with yes. */
async function removeMaxFromNowOn(page) {
  const max = await rowOf(page, 'max');
  assert.equal(await max.getByTestId('remove-member').getAttribute('title'),
    'remove from now on: their messages stay theirs; they get no more messages');
  const before = await page.memberCount();
  page.dialogAnswer = true;
  await max.getByTestId('remove-member').click();
  await page.page.waitForFunction((n) => document.querySelectorAll('[data-testid=member-row]').length === n, before - 1);
  assert.match(page.dialogs.at(-1), /^Remove Max from now on\? Max's messages stay Max's; Max gets no more messages/);
}

/** Max is gone from the editor and the recipients; Max's old messages still name Max. */
async function maxIsGoneButKeepsMessages(page) {
  await page.by('members-left').filter({ hasText: /^Left the team: Max at #\d+$/ }).waitFor();
  assert.ok(!(await memberNames(page)).includes('max'), 'not in the team editor');
  await page.page.waitForFunction(() => ![...document.querySelectorAll('[data-testid=recipient-select] option')]
    .some((o) => o.value === 'max'));
  assert.ok(!(await recipients(page)).includes('max'), 'not a recipient');
  const speakers = await page.speakers();
  assert.ok(speakers.some((s) => s.trim() === 'Max'), `Max's messages still name Max: ${speakers}`);
}

/** A message to Max after Max left: stored, an unresolved name, nothing due for Max. */
async function nextToMaxReachesNoOne(page) {
  const before = await page.timelineCount();
  await page.send('[FROM: kailai] one more thing [NEXT: max]');
  await page.page.waitForFunction((n) => document.querySelectorAll('[data-testid=timeline-message]').length === n + 1, before);
  await page.by('notices').filter({ hasText: `[NEXT] in #${before + 1} from Kailai: no member matches max; not routed` }).waitFor();
  assert.equal(await page.by('due-agent').count(), 0, 'nothing is due');
  assert.equal(await page.timelineCount(), before + 1, 'no reply came');
}

test('page alone: a member who has spoken is removed from now on, their messages stay theirs, a reload keeps it', { timeout: 180_000 }, async () => {
  const { context, page } = await visit();
  // The demo: Max and Sarah have spoken, Carol is due.
  await page.simulateUntilDone();
  const messages = await page.timelineCount();
  await removeMaxFromNowOn(page);
  await page.by('notices').filter({ hasText: `Max left the team at #${messages}: their messages stay theirs; they get no more messages` }).waitFor();
  await page.by('member-undo').filter({ hasText: 'Max left the team from now on.' }).waitFor();
  await maxIsGoneButKeepsMessages(page);
  assertNoSevere((await axeAtSizes(page.page, 'a member removed from now on')).severe);
  // Max's runs are still Max's in the deliveries list.
  await page.by('deliveries-tab').click();
  await page.page.waitForFunction(() => [...document.querySelectorAll('[data-testid=delivery-row] .d-to')]
    .some((d) => d.textContent === 'Max'));
  const to = await page.page.locator('[data-testid=delivery-row] .d-to').allTextContents();
  assert.ok(!to.includes('max'), `named, not by id: ${to}`);
  await page.by('messages-tab').click();
  // And in the cost view, by member and by model.
  await page.by('usage-total').click();
  await page.by('cost-by-member').locator('tbody th').first().waitFor();
  const heads = await page.by('cost-by-member').locator('tbody th').allTextContents();
  assert.ok(heads.includes('Max') && !heads.includes('max'), `the cost view names Max: ${heads}`);
  assert.match(await page.by('cost-by-model').innerText(), /\bMax\b/);
  await page.page.getByRole('button', { name: 'close the cost view' }).click();
  await page.by('cost-view').waitFor({ state: 'detached' });
  await nextToMaxReachesNoOne(page);

  await page.reload();
  await maxIsGoneButKeepsMessages(page);
  const session = JSON.parse(await page.download('export-session'));
  assert.ok(session.facts.some((f) => f.type === 'memberLeft' && f.member === 'max'), 'the log holds the fact');
  // The transcripts say it in the notice's words, where it happened: after #n, before #n+1.
  const said = `Max left the team at #${messages}: their messages stay theirs; they get no more messages`;
  const md = await page.download('export-transcript-md');
  const inMd = md.indexOf(`\n*${said.replace('#', '\\#')}`);
  assert.ok(inMd > md.indexOf(`\n## #${messages} `) && inMd < md.indexOf(`\n## #${messages + 1} `), `between #${messages} and #${messages + 1}:\n${md}`);
  const html = await page.download('export-transcript-html');
  const inHtml = html.indexOf(`<p class="member-left">${said}`);
  assert.ok(inHtml > html.indexOf(`id="m${messages}"`) && inHtml < html.indexOf(`id="m${messages + 1}"`), `between #${messages} and #${messages + 1}:\n${html}`);
  page.assertNoErrors();
  await context.close();
});

test('page alone: Undo right after brings the member back, as if they never left', { timeout: 180_000 }, async () => {
  const { context, page } = await visit();
  const names = await memberNames(page);
  await removeMaxFromNowOn(page);
  await page.by('member-undo-button').click();
  await page.page.waitForFunction((n) => document.querySelectorAll('[data-testid=member-row]').length === n, names.length);
  assert.deepEqual(await memberNames(page), names, 'back where Max stood');
  assert.equal(await page.by('members-left').count(), 0);
  assert.ok((await recipients(page)).includes('max'));
  page.assertNoErrors();
  await context.close();
});

// One bridge (the demo team, the simulator answering) and one Chromium, ended after the file.
const bridges = [];
const browsers = [];
after(async () => {
  bridges.forEach((b) => b.exitCode === null && b.signalCode === null && b.kill('SIGKILL'));
  await Promise.all(browsers.map((b) => b.close()));
});

/**
 * A bridge running the simulator (its own directory `dir`) and a page on it, after the demo's
 * rounds: Max answers, then Sarah and Carol; the simulator says [DONE] at the fourth round.
 */
async function bridgeAfterTheDemo(dir) {
  const bridge = await startBridge(await bridgeDir(dir), { args: ['--simulate'] });
  bridges.push(bridge);
  const browser = await launch();
  browsers.push(browser);
  const context = await browser.newContext({ viewport: { width: 1440, height: 900 }, bypassCSP: true });
  const page = new InspectorPage(await context.newPage(), bridge.url);
  await page.page.goto(bridge.url);
  await page.by('connection-status').filter({ hasText: '● bridge' }).waitFor();
  await page.send('[FROM: kailai] Plan the release notes. [NEXT: max]');
  await page.page.waitForFunction(() => [...document.querySelectorAll('[data-testid=timeline-message] .content')]
    .some((c) => c.textContent.includes('That is enough rounds for a demo.')), null, { timeout: 60_000 });
  return { context, page };
}

test('bridge: a member who has spoken is removed from now on for every page, and the bridge keeps it', { timeout: 180_000 }, async () => {
  const { context, page } = await bridgeAfterTheDemo('team-leave');
  const messages = await page.timelineCount();
  await removeMaxFromNowOn(page);
  await page.by('notices').filter({ hasText: `Max left the team at #${messages}` }).waitFor();
  await maxIsGoneButKeepsMessages(page);
  assertNoSevere((await axeAtSizes(page.page, 'bridge: a member removed from now on')).severe);
  await nextToMaxReachesNoOne(page);

  // A reload reads the bridge's log again.
  await page.page.reload();
  await page.by('connection-status').filter({ hasText: '● bridge' }).waitFor();
  await maxIsGoneButKeepsMessages(page);
  page.assertNoErrors();
  await context.close();
});

test('bridge: a team edit after a member left keeps them gone (the edit goes, the leave stays)', { timeout: 180_000 }, async () => {
  const { context, page } = await bridgeAfterTheDemo('team-leave-edit');
  await removeMaxFromNowOn(page);
  await maxIsGoneButKeepsMessages(page);
  // Another member renamed in the editor: the team goes to the bridge again.
  const carol = await rowOf(page, 'carol');
  const display = carol.locator('.member-display');
  await display.fill('Caroline');
  await display.dispatchEvent('change');
  await page.page.waitForFunction(() => [...document.querySelectorAll('[data-testid=recipient-select] option')]
    .some((o) => o.value === 'carol' && o.textContent.includes('Caroline')));
  await maxIsGoneButKeepsMessages(page);
  // As the bridge keeps it: a reload reads its log again.
  await page.page.reload();
  await page.by('connection-status').filter({ hasText: '● bridge' }).waitFor();
  await page.page.waitForFunction(() => [...document.querySelectorAll('[data-testid=recipient-select] option')]
    .some((o) => o.value === 'carol' && o.textContent.includes('Caroline')));
  await maxIsGoneButKeepsMessages(page);
  page.assertNoErrors();
  await context.close();
});

test('bridge: Undo right after brings the member back with the history kept (a team fact at the end)', { timeout: 180_000 }, async () => {
  const { context, page } = await bridgeAfterTheDemo('team-leave-undo');
  const names = await memberNames(page);
  const messages = await page.timelineCount();
  await removeMaxFromNowOn(page);
  await page.by('members-left').waitFor();
  await page.by('member-undo-button').click();
  await page.page.waitForFunction((n) => document.querySelectorAll('[data-testid=member-row]').length === n, names.length);
  assert.deepEqual(await memberNames(page), names, 'back where Max stood');
  await page.page.waitForFunction(() => document.querySelectorAll('[data-testid=members-left]').length === 0);
  assert.equal(await page.timelineCount(), messages, 'the history is kept');
  // Max answers again.
  await page.send('[FROM: kailai] Max, one line please. [NEXT: max]');
  await page.page.waitForFunction((n) => document.querySelectorAll('[data-testid=timeline-message]').length >= n + 2, messages);
  const speakers = await page.speakers();
  assert.equal(speakers[messages + 1].trim(), 'Max', `${speakers}`);
  page.assertNoErrors();
  await context.close();
});
