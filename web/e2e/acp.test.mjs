// Agents over ACP on the page (docs/architecture.md §14d, issue 41): an approval answered from the page
// (the member's card says "needs you", the tab's title too, and the panel's buttons answer
// it), the activity list of a delivery (tool calls with kind, status, files and diff size;
// plan, thoughts, decisions) and the context meter on the member's card. Against a real
// `agent-chatter serve` whose max and sarah are the ACP fixture agent
// (bridge/tests/fixtures/agents/acp-agent.mjs): max plays `ask`, sarah `reply`, carol
// `trickle` (1 000 tool-call updates over ~4 s: the page's edit timing while they stream).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { InspectorPage, screenshots } from './support/inspector-page.mjs';
import { servedPage } from './support/served.mjs';
import { bridgeDir, demoTeam, fixture, startBridge } from './support/bridge.mjs';
import { assertNoSevere, axeFindings } from './support/axe.mjs';
import { installEditTimer, medians } from './support/edit-timing.mjs';

const served = servedPage();
let bridge;
let work;

before(async () => {
  const dir = await bridgeDir('acp');
  work = path.join(dir, 'work');
  await mkdir(work);
  const team = await demoTeam();
  for (const id of ['max', 'sarah', 'carol']) {
    Object.assign(team.members.find((m) => m.id === id), { agentType: 'claude-code', baseDir: work });
  }
  const acp = (scenario) => ({
    protocol: 'acp', command: fixture('acp-agent.mjs'), args: [scenario, path.join(dir, `${scenario}.log`)],
  });
  bridge = await startBridge(dir, { team, agents: { max: acp('ask'), sarah: acp('reply'), carol: acp('trickle:1000:4') } });
});

after(() => bridge?.kill());

// A browser that already allows notifications: they are recorded, and asking is an error.
const stubNotifications = () => {
  window.__notes = [];
  window.__asked = 0;
  window.Notification = class {
    static permission = 'granted';
    static requestPermission() {
      window.__asked += 1;
      return Promise.resolve('granted');
    }
    constructor(title, options) {
      window.__notes.push([title, options?.body ?? '']);
    }
  };
};

const statusOf = (page, n) => page.by('member-row').nth(n).getByTestId('member-status');

test('bridge over ACP: an approval answered from the page, the activity list, the context meter', async () => {
  // The bridge's Content-Security-Policy forbids the inline script axe is injected as.
  const context = await served.browser.newContext({ viewport: { width: 1280, height: 720 }, bypassCSP: true });
  await context.addInitScript(stubNotifications);
  const page = new InspectorPage(await context.newPage(), bridge.url);
  await page.page.goto(bridge.url);
  await page.by('connection-status').filter({ hasText: '● bridge' }).waitFor();
  await page.by('agent-status').first().waitFor();
  const severe = [];

  // Max asks whether he may write hello.txt: his card says he needs you, so does the title,
  // and the panel shows the tool call with one button per option, in view at 1280×720.
  await page.send('[FROM: kailai] Write hello.txt. [NEXT: max]');
  const approval = page.by('approval');
  await approval.waitFor();
  await statusOf(page, 1).filter({ hasText: /^needs you/ }).waitFor();
  assert.equal(await statusOf(page, 1).getAttribute('data-status'), 'needs-you');
  assert.match(await page.page.title(), /^\(needs you\) /);
  assert.match(await approval.textContent(), /Max needs you/);
  assert.equal(await approval.getByTestId('tool-title').textContent(), 'Write hello.txt');
  assert.equal(await approval.getByTestId('tool-kind').textContent(), 'edit');
  assert.deepEqual(await approval.getByTestId('approval-option').allTextContents(), ['Allow', 'Always allow', 'Reject']);
  assert.ok(await approval.isVisible());
  const box = await approval.boundingBox();
  assert.ok(box && box.y >= 0 && box.y + box.height <= 720, `the approval is in view: ${JSON.stringify(box)}`);
  // One notification for it (the browser allows them), the permission never asked.
  await page.page.waitForFunction(() => window.__notes.length > 0);
  assert.deepEqual(await page.page.evaluate(() => window.__notes),
    [['Max needs you — agent-chatter', 'may it: Write hello.txt?']]);
  assert.equal(await page.page.evaluate(() => window.__asked), 0);
  const found = await axeFindings(page.page, 'approval open');
  severe.push(...found.severe);

  // Allowed from the page: the panel goes, the reply arrives, and the inspector's activity
  // for Max's delivery shows the write done with its file and diff size, and the decision.
  await approval.getByTestId('approval-option').filter({ hasText: /^Allow$/ }).click();
  await page.page.waitForFunction(() => document.querySelectorAll('[data-testid="timeline-message"]').length === 2);
  await page.by('approval').waitFor({ state: 'detached' });
  assert.match(await page.by('timeline-message').nth(1).textContent(), /wrote hello\.txt/);
  assert.doesNotMatch(await page.page.title(), /needs you/);
  await page.by('timeline-message').nth(0).click();
  await page.by('recipient-select').selectOption('max');
  const write = page.by('activity').getByTestId('activity-row').filter({ hasText: 'Write hello.txt' });
  await page.by('activity').locator('[data-testid="activity-row"][data-status="done"]').waitFor();
  assert.equal(await write.getAttribute('data-status'), 'done');
  assert.equal(await write.getByTestId('tool-kind').textContent(), 'edit');
  assert.equal(await write.getByTestId('tool-status').textContent(), 'done');
  assert.match(await write.getByTestId('tool-files').textContent(), /hello\.txt/);
  assert.equal(await write.getByTestId('tool-diff').textContent(), '+1 −0');
  assert.match(await page.by('activity-decision').textContent(), /Write hello\.txt: “Allow”, by you, in the page/);

  // Sarah plays `reply`: a read row, her plan and a collapsed thought; her card's context meter.
  await page.send('[FROM: kailai] Read the README. [NEXT: sarah]');
  await page.page.waitForFunction(() => document.querySelectorAll('[data-testid="timeline-message"]').length === 4);
  await page.by('timeline-message').nth(2).click();
  await page.by('recipient-select').selectOption('sarah');
  const read = page.by('activity').getByTestId('activity-row');
  await read.first().waitFor();
  assert.equal(await read.count(), 1);
  assert.equal(await read.getByTestId('tool-title').textContent(), 'Read README.md');
  assert.equal(await read.getByTestId('tool-kind').textContent(), 'read');
  assert.equal(await read.getByTestId('tool-status').textContent(), 'done');
  assert.match(await read.getByTestId('tool-files').textContent(), /README\.md/);
  assert.match(await page.by('activity-plan').textContent(), /read the file/);
  const thought = page.by('activity-thought').locator('details');
  assert.equal(await thought.getAttribute('open'), null, 'a thought is collapsed');
  const meter = page.by('member-row').nth(2).getByTestId('context-meter');
  await meter.waitFor();
  assert.equal(await meter.locator('meter').getAttribute('aria-label'), 'context 1 200 of 200 000 tokens (1 %)');
  assert.equal(await meter.locator('meter').getAttribute('value'), '1200');
  assert.equal(await page.by('member-row').nth(3).getByTestId('context-meter').count(), 0);
  const later = await axeFindings(page.page, 'activity shown');
  severe.push(...later.severe);
  assertNoSevere(severe);
  assert.equal(await page.page.evaluate(() => window.__notes.length), 1, 'one notification per approval');
  assert.deepEqual(page.errors, []);
  await context.close();
});

test('while an ACP agent streams 1 000 tool-call updates, edits still reach the inspector within a frame (timing printed)', async () => {
  const context = await served.browser.newContext({ viewport: { width: 1280, height: 720 } });
  const page = new InspectorPage(await context.newPage(), bridge.url);
  await page.page.goto(bridge.url);
  await page.by('connection-status').filter({ hasText: '● bridge' }).waitFor();
  await page.by('agent-status').first().waitFor();
  const shown = await page.timelineCount();
  await page.send('[FROM: kailai] Run the tests. [NEXT: carol]');
  await page.page.waitForFunction((n) => document.querySelectorAll('[data-testid="timeline-message"]').length === n + 1, shown);
  await page.by('timeline-message').nth(shown).click();
  await page.by('recipient-select').selectOption('carol');
  // Carol's tool call is in the inspector's activity list, its title counting the updates.
  const progress = () => page.page.evaluate(() => {
    const title = document.querySelector('[data-testid="activity"] [data-testid="activity-row"] [data-testid="tool-title"]');
    const m = title?.textContent.match(/^Run tests (\d+)\/1000$/);
    return m ? Number(m[1]) : null;
  });
  await page.page.waitForFunction(() => /^Run tests \d+\/1000$/.test(
    document.querySelector('[data-testid="activity"] [data-testid="activity-row"] [data-testid="tool-title"]')?.textContent ?? ''));
  // The page says once that Carol runs (the running mark, with its clock); her box says what
  // she was given.
  assert.match(await page.by('due-agent').locator('.due-title').textContent(), /^Given to Carol \(P\d\): a \d+-byte prompt/);
  assert.equal(await page.page.evaluate(() => document.body.innerText.split('Carol is running').length - 1), 1);

  // Two edits a user makes while it runs, each timed from the change to the inspector's
  // effect (performance mark) and to the next painted frame: another message selected, and
  // the recipient switched (Carol's live activity list leaves and comes back). Both end on
  // the message sent to Carol, shown to her.
  await installEditTimer(page.page);
  const measure = () => page.page.evaluate(async (at) => {
    const time = window.timeEdit;
    const out = { select: [], recipient: [] };
    const recipient = document.querySelector('[data-testid="recipient-select"]');
    for (let i = 0; i < 10; i++) {
      out.recipient.push(await time(() => {
        recipient.value = i % 2 === 0 ? 'max' : 'carol';
        recipient.dispatchEvent(new Event('change', { bubbles: true }));
      }));
    }
    for (let i = 0; i < 10; i++) {
      const rows = document.querySelectorAll('[data-testid="timeline-message"]');
      out.select.push(await time(() => rows[i % 2 === 0 ? at - 1 : at].click()));
    }
    return out;
  }, shown);
  const first = await progress();
  const streaming = await measure();
  const last = await progress();
  // The measurement fell inside the stream: updates kept arriving and the run was not over.
  assert.ok(first !== null && first < 1000, `the stream had begun and not ended (${first}/1000)`);
  assert.equal(await page.by('timeline-message').count(), shown + 1, 'carol had not replied yet');
  // Once she has replied, the same edits on a quiet page, for comparison.
  await page.page.waitForFunction((n) => document.querySelectorAll('[data-testid="timeline-message"]').length === n + 2, shown);
  await page.by('timeline-message').nth(shown).click();
  await page.by('recipient-select').selectOption('carol');
  const quiet = await measure();
  const report = {
    'acp updates streamed during the edits': last === null ? null : last - first,
    ...medians(streaming, 'streaming '),
    ...medians(quiet, 'quiet '),
  };
  for (const [when, samples] of [['streaming', streaming], ['quiet', quiet]]) {
    for (const [kind, xs] of Object.entries(samples)) {
      assert.ok(xs.every((s) => Number.isFinite(s.update)), `${when} ${kind}: the inspector reported every update`);
    }
  }
  console.log(`e2e timing (ACP stream): ${JSON.stringify(report)}`);
  await mkdir(screenshots, { recursive: true });
  await writeFile(new URL('timings-acp.json', screenshots), JSON.stringify(report, null, 2));
  assert.deepEqual(page.errors, []);
  await context.close();
});
