// The page against a real `agent-chatter serve` (docs/architecture.md §14, §14b): the page mirrors
// the bridge's session, a fake Claude agent (a script replaying a recorded stream) answers, its
// output streams into the page, and the page verifies the delivery's digest.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { launch } from './support/browser.mjs';
import { InspectorPage } from './support/inspector-page.mjs';
import { bridgeDir, fixture, startBridge } from './support/bridge.mjs';

let bridge;
let url;
let browser;

before(async () => {
  bridge = await startBridge(await bridgeDir('bridge'), { agents: {
    max: { command: fixture('claude-slow-stream.sh') },
    'openai-codex': { command: 'agent-chatter-e2e-no-such-codex' },
    'google-gemini': { command: 'agent-chatter-e2e-no-such-gemini' },
  } });
  url = bridge.url;
  assert.match(url, /^http:\/\/127\.0\.0\.1:\d+\/#token=[0-9a-f]{64}$/);
  browser = await launch();
});

after(async () => {
  await browser?.close();
  bridge?.kill();
});

test('the page mirrors the bridge: a fake Claude streams its reply and the delivery is verified', async () => {
  const context = await browser.newContext({ viewport: { width: 1440, height: 1000 } });
  const page = new InspectorPage(await context.newPage(), url);
  await page.page.goto(url);
  await page.by('connection-status').filter({ hasText: '● bridge' }).waitFor();
  await page.by('team-editor').waitFor();
  assert.equal(await page.timelineCount(), 0, 'a new bridge session starts empty');
  // Who runs for real here and who the simulator answers, per member.
  const status = await page.by('agent-status').allTextContents();
  assert.equal(status.length, 3);
  assert.match(status[0], /^runs: .*claude-slow-stream\.sh/);
  assert.match(status[1], /^simulated \(agent-chatter-e2e-no-such-codex is not installed\)/);
  // A long command path is cut with an ellipsis (full text on hover), never widening the card
  // past the team pane, where the member's fields would be cut off.
  const overflowing = await page.by('team-editor').evaluate((pane) =>
    [...pane.querySelectorAll('[data-testid=member-row]')]
      .filter((row) => row.getBoundingClientRect().right > pane.getBoundingClientRect().right)
      .map((row) => row.querySelector('.member-name').value));
  assert.deepEqual(overflowing, [], 'member cards wider than the team pane');

  await page.send('[FROM: kailai] Please draft the notes. [NEXT: max]');
  await page.by('verified-badge').filter({ hasText: 'verified' }).waitFor();
  assert.match(await page.by('verified-badge').textContent(), /^✓ verified/);
  // The composer empties once the bridge has stored this very message (its fact came back).
  await page.page.waitForFunction(() => document.querySelector('[data-testid="composer-input"]').value === '');
  await page.by('agent-output').filter({ hasText: 'Streaming' }).waitFor();
  await page.screenshot('bridge-running.png');
  // The prompt the inspector shows is the one whose digest the bridge sent.
  assert.match(await page.promptText(), /Please draft the notes\./);

  await page.page.waitForFunction(() => document.querySelectorAll('[data-testid="timeline-message"]').length === 2);
  assert.match(await page.lastMessageText(), /^Streaming from the fake Claude\. Over to you\./);
  assert.match(await page.by('routing-status').textContent(), /waiting for: Kailai/);

  // A reload (same URL, same token) shows the same session from the bridge's database.
  await page.page.reload();
  await page.by('connection-status').filter({ hasText: '● bridge' }).waitFor();
  await page.page.waitForFunction(() => document.querySelectorAll('[data-testid="timeline-message"]').length === 2);
  // The past delivery is still verified: Max at #1 is what the bridge sent him.
  await page.selectRecipient('max');
  await page.by('timeline-message').first().click();
  await page.by('delivered-badge').waitFor();
  assert.match(await page.by('delivered-badge').textContent(), /^✓ the bridge sent these exact bytes \(sha256 [0-9a-f]{12}…\)$/);
  // A what-if is not what was sent: no badge then.
  await page.by('whatif-window').fill('0');
  await page.by('whatif-window').dispatchEvent('change');
  await page.by('whatif-panel').filter({ hasText: 'what-if (on' }).waitFor();
  assert.equal(await page.by('delivered-badge').count(), 0);
  await page.by('whatif-reset').click();

  // Editing a member keeps the conversation (the bridge's log only grows: the history goes on
  // under the edited team), and the prompts follow the edit.
  const instruction = page.by('member-row').nth(1).locator('.member-instruction');
  await instruction.fill('You are Max. Edited.');
  await instruction.dispatchEvent('change');
  await page.page.waitForFunction(() =>
    document.querySelectorAll('[data-testid="member-row"]')[1]?.querySelector('.member-instruction')?.value === 'You are Max. Edited.');
  await page.by('system-flag-text').filter({ hasText: 'Edited.' }).waitFor();
  assert.equal(await page.timelineCount(), 2, 'the conversation is kept');

  // A share link opened in this tab opens the case as a new session of the bridge; the
  // address bar keeps the token, so a reload stays connected.
  await page.by('timeline-message').nth(1).click();
  await page.by('share-link').click();
  const link = await page.by('share-url').inputValue();
  const sessionsBefore = await page.by('session-select').locator('option').count();
  await page.page.evaluate((hash) => { window.location.hash = hash; }, new URL(link).hash);
  await page.page.waitForFunction((n) => document.querySelectorAll('[data-testid="session-select"] option').length > n, sessionsBefore);
  await page.page.waitForFunction(() => document.querySelectorAll('[data-testid="timeline-message"]').length === 2);
  assert.match(page.page.url(), /#token=/);
  await page.page.reload();
  await page.by('connection-status').filter({ hasText: '● bridge' }).waitFor();
  await page.page.waitForFunction(() => document.querySelectorAll('[data-testid="timeline-message"]').length === 2);

  // A message the bridge refuses stays in the composer, to be fixed; the banner says why.
  const refused = '[FROM: max] I am max [NEXT: sarah]';
  await page.send(refused);
  await page.by('error-banner').filter({ hasText: 'Cannot use [FROM:max]' }).waitFor();
  assert.equal(await page.by('composer-input').inputValue(), refused);
  assert.equal(await page.timelineCount(), 2);

  // A new session, then back to the first one from the sessions list.
  await page.by('new-session').click();
  await page.page.waitForFunction(() => document.querySelectorAll('[data-testid="timeline-message"]').length === 0);
  await page.by('session-select').locator('option').nth(1).waitFor({ state: 'attached' });
  const first = await page.by('session-select').locator('option').evaluateAll((os) => os.map((o) => o.value).sort()[0]);
  await page.by('session-select').selectOption(first);
  await page.page.waitForFunction(() => document.querySelectorAll('[data-testid="timeline-message"]').length === 2);
  page.assertNoErrors();
  await context.close();
});
