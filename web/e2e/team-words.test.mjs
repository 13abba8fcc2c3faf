// Issue #44 points 2, 6 and 7 in the team editor and the composer: the composer's example is
// addressed to the team's own members; a member's id follows its name until it has spoken
// (export and [NEXT] agree), then stays, and a hint says which; a run setting's permission
// mode says what it allows and the CLI's own mode it becomes, and its file by name only;
// a removed member comes back with "Undo"; a message sent while the bridge is away is kept
// and goes once it is back. Each state is checked by axe-core at three sizes.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { assertNoSevere, axeAtSizes } from './support/axe.mjs';
import { bridgeDir, demoTeam, freePort, startBridge } from './support/bridge.mjs';
import { launch } from './support/browser.mjs';
import { InspectorPage } from './support/inspector-page.mjs';
import { servedPage } from './support/served.mjs';

const { visit } = servedPage();

const placeholder = (page) => page.by('composer-input').getAttribute('placeholder');
const nameInputs = (page) => page.page.locator('[data-testid=member-row] .member-name');

async function indexOf(page, name) {
  const names = await nameInputs(page).evaluateAll((inputs) => inputs.map((i) => i.value));
  const i = names.indexOf(name);
  assert.ok(i >= 0, `no member named ${name}: ${JSON.stringify(names)}`);
  return i;
}

const rowOf = async (page, name) => page.by('member-row').nth(await indexOf(page, name));

test('the composer\'s example is addressed to the team\'s own AI members, and says what to do with none', { timeout: 180_000 }, async () => {
  const { context, page } = await visit();
  assert.equal(await placeholder(page), 'a message… e.g. Please review. [NEXT: max, sarah]');
  await page.openFile('team.json', JSON.stringify({
    name: 'Pair', members: [
      { name: 'dana', kind: 'human' },
      { name: 'ana', kind: 'ai', agentType: 'claude' },
      { name: 'ben', kind: 'ai', agentType: 'codex' },
      { name: 'cy', kind: 'ai', agentType: 'gemini' },
    ],
  }));
  await page.page.waitForFunction(() => document.querySelector('[data-testid=composer-input]')
    .getAttribute('placeholder') === 'a message… e.g. Please review. [NEXT: ana, ben]');
  assertNoSevere((await axeAtSizes(page.page, 'composer example with the team\'s names')).severe);
  await page.openFile('alone.json', JSON.stringify({ name: 'Alone', members: [{ name: 'dana', kind: 'human' }] }));
  await page.page.waitForFunction(() => document.querySelector('[data-testid=composer-input]')
    .getAttribute('placeholder').includes('add an AI member in the team pane'));
  page.assertNoErrors();
  await context.close();
});

test('a member\'s id follows its name until it has spoken (export and [NEXT] agree); then only the name changes, as its hint says', { timeout: 180_000 }, async () => {
  const { context, page } = await visit();
  const before = await page.memberCount();
  await page.page.locator('.add-member').click();
  await page.page.waitForFunction((n) => document.querySelectorAll('[data-testid=member-row]').length === n, before + 1);
  const added = await nameInputs(page).last().inputValue();
  assert.match(added, /^agent\d+$/);
  const field = nameInputs(page).last();
  await field.fill('bob');
  await field.dispatchEvent('change');
  const bob = page.by('member-row').last();
  await bob.getByTestId('member-id-hint').filter({ hasText: 'id bob · follows the name' }).waitFor();
  // The hint is the name field's description.
  const described = await bob.locator('.member-name').getAttribute('aria-describedby');
  assert.equal(await page.page.locator(`#${described}`).textContent(), 'id bob · follows the name');
  assertNoSevere((await axeAtSizes(page.page, 'a new member renamed before it has spoken')).severe);

  let team = JSON.parse(await page.download('export-team'));
  const exported = team.members.find((m) => m.name === 'bob');
  assert.equal(exported?.id ?? exported?.name, 'bob', JSON.stringify(team.members));
  assert.ok(!team.members.some((m) => m.id === added), `no ${added} id left behind: ${JSON.stringify(team.members)}`);

  // [NEXT: bob] reaches bob: bob is due (once the demo's own agents are done), and answers
  // (simulated).
  await page.simulateUntilDone();
  await page.send('[FROM: kailai] over to you [NEXT: bob]');
  await page.by('due-agent').filter({ hasText: 'bob' }).waitFor();
  await page.simulate();
  assert.equal(await page.by('timeline-message').last().locator('.from').textContent().then((t) => t.trim().toLowerCase().includes('bob')), true);

  // Spoken: a new name changes what is shown, not the id the log knows it by.
  await bob.getByTestId('member-id-hint').filter({ hasText: 'id bob · fixed: it has spoken' }).waitFor();
  const renamed = nameInputs(page).last();
  await renamed.fill('robert');
  await renamed.dispatchEvent('change');
  await page.page.waitForFunction(() => [...document.querySelectorAll('[data-testid=member-row] .member-name')].some((i) => i.value === 'robert'));
  team = JSON.parse(await page.download('export-team'));
  const robert = team.members.find((m) => m.name === 'robert');
  assert.equal(robert?.id, 'bob', JSON.stringify(team.members));
  assertNoSevere((await axeAtSizes(page.page, 'a member renamed after it has spoken')).severe);
  page.assertNoErrors();
  await context.close();
});

test('a removed member comes back with Undo; one who has spoken says before the click that it is removed from now on', { timeout: 180_000 }, async () => {
  const { context, page } = await visit();
  const before = await page.memberCount();
  await page.page.locator('.add-member').click();
  await page.page.waitForFunction((n) => document.querySelectorAll('[data-testid=member-row]').length === n, before + 1);
  const added = await nameInputs(page).last().inputValue();
  await page.by('member-row').last().getByTestId('remove-member').click();
  await page.page.waitForFunction((n) => document.querySelectorAll('[data-testid=member-row]').length === n, before);
  await page.by('member-undo').filter({ hasText: `${added} removed from the team.` }).waitFor();
  assertNoSevere((await axeAtSizes(page.page, 'a member removed, Undo offered')).severe);
  await page.by('member-undo-button').click();
  await page.page.waitForFunction((n) => document.querySelectorAll('[data-testid=member-row]').length === n, before + 1);
  assert.equal(await nameInputs(page).last().inputValue(), added, 'back where it stood');
  assert.equal(await page.by('member-undo').count(), 0, 'undone: no Undo left');

  // Max has spoken in the demo: the remove button says so before it is pressed.
  const max = await rowOf(page, 'max');
  assert.match(await max.getByTestId('remove-member').getAttribute('title'), /^remove from now on: their messages stay theirs/);
  assert.equal(await max.getByTestId('member-id-hint').textContent(), 'id max · fixed: it has spoken');
  // A human's row has no id hint (only AI members').
  assert.equal(await (await rowOf(page, 'kailai')).getByTestId('member-id-hint').count(), 0);
  page.assertNoErrors();
  await context.close();
});

// Bridge states: one bridge and one Chromium per test, both ended after the file (a failed
// step leaves none running).
const bridges = [];
const browsers = [];
after(async () => {
  bridges.forEach((b) => b.exitCode === null && b.signalCode === null && b.kill('SIGKILL'));
  await Promise.all(browsers.map((b) => b.close()));
});
const browserOfTest = async () => {
  const browser = await launch();
  browsers.push(browser);
  return browser;
};

const stopped = (bridge) => new Promise((resolve) => {
  if (bridge.exitCode !== null || bridge.signalCode !== null) return resolve();
  bridge.once('exit', resolve);
  bridge.kill('SIGKILL');
});

test('run settings: each permission mode says what it allows and the CLI\'s own mode it becomes; the file is named without its directories', { timeout: 180_000 }, async () => {
  const team = await demoTeam();
  const mode = (id, permissionMode) => { team.members.find((m) => m.id === id).permissionMode = permissionMode; };
  mode('max', 'edit');
  mode('sarah', 'full');
  mode('carol', 'readOnly');
  const dir = await bridgeDir('team-words');
  const bridge = await startBridge(dir, { team, args: ['--simulate'] });
  bridges.push(bridge);
  const browser = await browserOfTest();
  const page = new InspectorPage(await (await browser.newContext({ viewport: { width: 1440, height: 900 }, bypassCSP: true })).newPage(), bridge.url);
  await page.page.goto(bridge.url);
  await page.by('connection-status').filter({ hasText: '● bridge' }).waitFor();
  const setting = async (member, name) => {
    const row = await rowOf(page, member);
    await row.getByTestId('run-settings').waitFor();
    if (!(await row.getByTestId('run-settings').evaluate((d) => d.open))) await row.getByTestId('run-settings').locator('summary').click();
    return row.locator(`[data-setting="${name}"] dd`);
  };
  const maxMode = await setting('max', 'permission mode');
  assert.equal(await maxMode.textContent(), 'edit: edits files in its working directory without asking (Claude Code: --permission-mode acceptEdits)');
  // Every mode, for this member's CLI, in the hint.
  assert.match(await maxMode.getAttribute('title'), /readOnly: reads and plans; changes nothing \(Claude Code: --permission-mode plan\); edit: .*; full: does anything without asking \(no sandbox\) \(Claude Code: --permission-mode bypassPermissions\)/);
  assert.equal(await (await setting('sarah', 'permission mode')).textContent(), 'full: does anything without asking (no sandbox) (Codex: -s danger-full-access)');
  assert.equal(await (await setting('carol', 'permission mode')).textContent(), 'readOnly: reads and plans; changes nothing (Gemini: --approval-mode plan)');
  const from = await (await setting('max', 'from')).textContent();
  assert.equal(from, 'team file team.json', 'the file by its name, not the directory it is in');
  assertNoSevere((await axeAtSizes(page.page, 'run settings open with permission modes')).severe);
  page.assertNoErrors();
  await stopped(bridge);
});

test('what is typed before the bridge has brought the page its session stays in the composer, and sends', async () => {
  const dir = await bridgeDir('team-words-first');
  const bridge = await startBridge(dir, { args: ['--simulate'] });
  bridges.push(bridge);
  const browser = await browserOfTest();
  const context = await browser.newContext({ viewport: { width: 1280, height: 720 }, bypassCSP: true });
  // The bridge's frames to the page are held until released: the socket is open (the hello
  // went), the session has not come yet.
  const held = [];
  let deliver = null;
  await context.routeWebSocket(/\/api\/ws$/, (ws) => {
    const server = ws.connectToServer();
    server.onMessage((frame) => (deliver ? deliver(frame) : held.push(frame)));
    ws.onMessage((frame) => server.send(frame));
    context.release = () => {
      deliver = (frame) => ws.send(frame);
      for (const frame of held.splice(0)) ws.send(frame);
    };
  });
  const page = new InspectorPage(await context.newPage(), bridge.url);
  await page.page.goto(bridge.url);
  await page.by('connection-status').filter({ hasText: '● bridge' }).waitFor();
  const text = '[FROM: kailai] typed before the session came';
  await page.by('composer-input').fill(text);
  context.release();
  // The session came (the composer can send: its placeholder is the example again); what
  // was typed is still there.
  await page.page.waitForFunction(() => document.querySelector('[data-testid=composer-input]').placeholder.startsWith('a message'));
  assert.equal(await page.by('composer-input').inputValue(), text, 'kept in the composer');
  await page.by('composer-send').click();
  await page.page.waitForFunction((t) => [...document.querySelectorAll('[data-testid=timeline-message] .content')]
    .some((c) => c.textContent.includes(t)), 'typed before the session came');
  await page.page.waitForFunction(() => document.querySelector('[data-testid=composer-input]').value === '');
  page.assertNoErrors();
  await context.close();
});

test('a message sent while the bridge is away is kept, says "will send when reconnected", and goes once it is back', { timeout: 180_000 }, async () => {
  const dir = await bridgeDir('team-words-draft');
  const port = await freePort();
  let bridge = await startBridge(dir, { port, args: ['--simulate'] });
  bridges.push(bridge);
  const browser = await browserOfTest();
  const page = new InspectorPage(await (await browser.newContext({ viewport: { width: 1440, height: 900 }, bypassCSP: true })).newPage(), bridge.url);
  await page.page.goto(bridge.url);
  await page.by('connection-status').filter({ hasText: '● bridge' }).waitFor();
  await stopped(bridge);
  await page.by('connection-status').filter({ hasText: 'bridge disconnected — reconnecting…' }).waitFor();
  // Typing goes on; sending waits, and says so.
  assert.equal(await page.by('composer-input').isDisabled(), false);
  assert.match(await page.by('composer-input').getAttribute('placeholder'), /^the bridge is disconnected: reconnecting… What you type is kept/);
  const text = '[FROM: kailai] written while the bridge was away';
  await page.send(text);
  await page.by('composer-queued').filter({ hasText: 'will send when reconnected' }).waitFor();
  assert.equal(await page.by('composer-input').inputValue(), text, 'kept in the composer');
  assertNoSevere((await axeAtSizes(page.page, 'a message waiting for the bridge')).severe);

  bridge = await startBridge(dir, { port, args: ['--simulate'] });
  bridges.push(bridge);
  await page.by('connection-status').filter({ hasText: '● bridge' }).waitFor({ timeout: 15_000 });
  await page.page.waitForFunction((t) => [...document.querySelectorAll('[data-testid=timeline-message] .content')]
    .some((c) => c.textContent.includes(t)), 'written while the bridge was away');
  await page.page.waitForFunction(() => document.querySelector('[data-testid=composer-input]').value === '');
  assert.equal(await page.by('composer-queued').count(), 0);
  // Settled before counting: a message sent after it comes back after it (one socket, the
  // bridge takes commands in order), so a second copy of the kept message would be in by then.
  await page.send('[FROM: kailai] sent after the reconnection');
  await page.page.waitForFunction(() => [...document.querySelectorAll('[data-testid=timeline-message] .content')]
    .some((c) => c.textContent.includes('sent after the reconnection')));
  const sent = await page.page.locator('[data-testid=timeline-message] .content').allTextContents();
  assert.equal(sent.filter((c) => c.includes('written while the bridge was away')).length, 1, 'sent once');
  // Chromium logs each refused reconnection attempt while the bridge was away; nothing else.
  page.errors = page.errors.filter((e) => !/ERR_CONNECTION_REFUSED/.test(e));
  page.assertNoErrors();
  await stopped(bridge);
});
