// Time travel, what-if and diff (issue: the page's time travel / what-if / diff), in Chromium.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { core, servedPage } from './support/served.mjs';

const { visit } = servedPage();

test('time travel: an early message shows the prompt the core previews for it', async () => {
  const { context, page } = await visit();
  await page.simulate();
  const session = JSON.parse(await page.download('export-session'));
  const conversation = core.Conversation.resume(session);
  await page.selectRecipient('max');
  await page.by('timeline-message').first().click();
  assert.match(await page.by('inspector-at').textContent(), /^at #1 · delivered$/);
  const expected = conversation.preview('max', 0);
  assert.equal(await page.promptText(), expected.prompt);
  // Sarah was never given message #1: what she would have received.
  await page.selectRecipient('sarah');
  assert.match(await page.by('inspector-at').textContent(), /^at #1 · would receive$/);
  assert.equal(await page.promptText(), conversation.preview('sarah', 0).prompt);
  page.assertNoErrors();
  await context.close();
});

/**
 * Starts watching what the page writes: resolves, when called, to `{ rebuilt, kept }` — the
 * `data-testid`s of elements taken out and put back anew (a rebuild), and which of `controls`
 * are still the very nodes they were.
 */
async function watchWrites(page, controls) {
  await page.page.evaluate((controls) => {
    const q = (id) => document.querySelector(`[data-testid="${id}"]`);
    window.__writes = {
      before: [...document.querySelectorAll('[data-testid]')],
      controls: controls.map((id) => [id, q(id)]),
      added: [],
      observer: new MutationObserver((records) => window.__writes.take(records)),
      take(records) {
        for (const r of records) for (const n of r.addedNodes) if (n.nodeType === 1) this.added.push(n);
      },
    };
    window.__writes.observer.observe(document.body, { childList: true, subtree: true });
  }, controls);
  return () => page.page.evaluate(() => new Promise((done) => {
    // Two frames: whatever the change scheduled for the next frame has been written too.
    requestAnimationFrame(() => requestAnimationFrame(() => {
      const w = window.__writes;
      w.take(w.observer.takeRecords());
      w.observer.disconnect();
      const gone = new Set(w.before.filter((e) => !e.isConnected).map((e) => e.dataset.testid));
      const added = w.added.filter((e) => e.isConnected).flatMap((e) => [e, ...e.querySelectorAll('[data-testid]')]);
      const rebuilt = [...new Set(added.map((e) => e.dataset.testid).filter((id) => gone.has(id)))];
      const q = (id) => document.querySelector(`[data-testid="${id}"]`);
      const kept = w.controls.filter(([id, node]) => node && node === q(id)).map(([id]) => id);
      done({ rebuilt, kept });
    }));
  }));
}

// What a selection does not change, it does not write (docs/architecture.md §13, "Update
// cost"): counted by node, not timed, so it holds on any machine.
test('a selection or a recipient switch rebuilds nothing it shows before and after', async () => {
  const { context, page } = await visit();
  const controls = ['inspector-at', 'recipient-select', 'prompt-text', 'copy-prompt', 'fork-shown', 'diff-toggle'];
  const at = (n) => page.page.waitForFunction((n) => new RegExp(`^at #${n} `)
    .test(document.querySelector('[data-testid="inspector-at"]')?.textContent ?? ''), n);
  await page.by('timeline-message').first().click();
  await at(1);
  for (const [step, change] of [
    ['#1 → #2', async () => { await page.by('timeline-message').nth(1).click(); await at(2); }],
    ['#2 → #3', async () => { await page.by('timeline-message').nth(2).click(); await at(3); }],
    ['#3 → #1', async () => { await page.by('timeline-message').nth(0).click(); await at(1); }],
    ['to sarah', () => page.selectRecipient('sarah')],
    ['to max', () => page.selectRecipient('max')],
  ]) {
    const present = await page.page.evaluate((ids) => ids.filter((id) => document.querySelector(`[data-testid="${id}"]`)), controls);
    const writes = await watchWrites(page, controls);
    await change();
    const { rebuilt, kept } = await writes();
    assert.deepEqual(rebuilt, [], `${step}: taken out and built again`);
    assert.deepEqual(kept, present, `${step}: the controls shown are the same nodes`);
  }
  page.assertNoErrors();
  await context.close();
});

test('keyboard: ↑/↓ move through messages and ←/→ through recipients', async () => {
  const { context, page } = await visit();
  await page.page.locator('body').click({ position: { x: 5, y: 5 } });
  await page.page.keyboard.press('ArrowUp');
  assert.match(await page.by('inspector-at').textContent(), /^at #2 /);
  await page.page.keyboard.press('ArrowUp');
  await page.page.keyboard.press('ArrowDown');
  assert.match(await page.by('inspector-at').textContent(), /^at #2 /);
  const before = await page.by('recipient-select').inputValue();
  await page.page.keyboard.press('ArrowRight');
  assert.notEqual(await page.by('recipient-select').inputValue(), before);
  await page.page.keyboard.press('ArrowLeft');
  assert.equal(await page.by('recipient-select').inputValue(), before);
  // A timeline row is reached with Tab (it is focusable) and chosen with Enter.
  await page.by('timeline-message').nth(0).focus();
  await page.page.keyboard.press('Enter');
  await page.page.waitForFunction(() => /^at #1 /.test(document.querySelector('[data-testid="inspector-at"]')?.textContent ?? ''));
  await context.close();
});

test('what-if: a window change shows another prompt and leaves the session file unchanged', async () => {
  const { context, page } = await visit();
  await page.selectRecipient('sarah');
  const sessionBefore = await page.download('export-session');
  const actual = await page.promptText();
  await page.by('whatif-window').fill('0');
  await page.by('whatif-window').dispatchEvent('change');
  await page.by('whatif-panel').filter({ hasText: 'what-if (on' }).waitFor();
  const whatIf = await page.promptText();
  assert.notEqual(whatIf, actual);
  assert.doesNotMatch(whatIf, /\[CONTEXT\]/, 'window 0: no history');
  assert.match(await page.by('inspector-at').textContent(), /what-if$/);
  assert.equal(await page.download('export-session'), sessionBefore);

  // The diff between the actual prompt and the what-if one shows the history lines removed.
  await page.by('diff-toggle').click();
  await page.by('diff-against').selectOption('actual');
  const removed = await page.by('diff-view').locator('[data-sign="-"]').allTextContents();
  assert.ok(removed.includes('- [CONTEXT]'), removed.join('\n'));
  assert.ok(removed.some((l) => l.startsWith('- - kailai -> max: Max, please draft them from the changelog.')), removed.join('\n'));
  assert.equal(await page.by('diff-view').locator('[data-sign="+"]').count(), 0);
  await page.screenshot('whatif-diff.png');

  await page.by('whatif-reset').click();
  await page.by('diff-toggle').locator('xpath=..').locator('button').first().click();
  assert.equal(await page.promptText(), actual);
  assert.equal(await page.by('message-cut').count(), 0, 'the message fits');

  // A budget too small for the prompt's fixed part (system instruction, team task) says so in
  // one sentence, with the budget that would do, in place of the cuts it would cause.
  await page.by('whatif-max-bytes').fill('20');
  await page.by('whatif-max-bytes').dispatchEvent('change');
  const tooSmall = await page.by('whatif-too-small').textContent();
  assert.match(tooSmall, /^a what-if budget of 20 B is smaller than this prompt's fixed part: sarah needs \d+ B/);
  assert.equal(await page.by('truncations').count(), 0, 'no list of cuts beside it');
  // From the fixed part on, the cuts are listed again.
  const need = Number(tooSmall.match(/needs (\d+) B/)[1]);
  await page.by('whatif-max-bytes').fill(String(need + 4));
  await page.by('whatif-max-bytes').dispatchEvent('change');
  await page.by('truncations').waitFor();
  assert.equal(await page.by('whatif-too-small').count(), 0);
  await page.by('whatif-reset').click();

  // A value that is not a whole number is refused by name; the field shows what is on.
  await page.by('whatif-max-bytes').fill('1e3');
  await page.by('whatif-max-bytes').dispatchEvent('change');
  await page.by('error-banner').waitFor();
  assert.match(await page.errorBanner(), /what-if max bytes: expected a whole number \(digits only\), found "1e3"/);
  assert.equal(await page.by('whatif-max-bytes').inputValue(), '');
  assert.equal(await page.promptText(), actual);
  await context.close();
});

test('share: the link opens the same prompts elsewhere; a damaged link shows an error, not a blank page', async () => {
  const { context, page } = await visit();
  await page.selectRecipient('sarah');
  await page.by('timeline-message').nth(1).click();
  const prompt = await page.promptText();
  await page.by('share-link').click();
  const link = await page.by('share-url').inputValue();
  assert.match(link, /#share=[A-Za-z0-9_-]+$/);
  assert.equal(await page.by('share-note').count(), 0, 'the link opens the prompt shown');
  // A what-if is not carried by the link, and the box says so.
  await page.by('whatif-window').fill('0');
  await page.by('whatif-window').dispatchEvent('change');
  await page.by('whatif-panel').filter({ hasText: 'what-if (on' }).waitFor();
  await page.by('share-link').click();
  await page.by('share-note').filter({ hasText: "this link opens sarah's prompt as the case builds it" }).waitFor();
  await page.by('whatif-reset').click();

  const { context: other, page: visitor } = await visit(link);
  assert.equal(await visitor.timelineCount(), 2, 'the case ends at the shown message');
  assert.equal(await visitor.by('recipient-select').inputValue(), 'sarah');
  assert.equal(await visitor.promptText(), prompt);
  assert.doesNotMatch(visitor.page.url(), /#share=/, 'the fragment is cleared after opening');

  // Editing a member of the opened case keeps its history, and the prompt follows the edit.
  const instruction = visitor.by('member-row').nth(2).locator('.member-instruction');
  await instruction.fill('You are Sarah. Edited.');
  await instruction.dispatchEvent('change');
  await visitor.by('prompt-text').filter({ hasText: 'You are Sarah. Edited.' }).waitFor();
  assert.equal(await visitor.timelineCount(), 2, 'the opened history is kept');

  // Opened in a tab that already shows the page: only the fragment changes, no reload.
  const { context: fourth, page: open } = await visit();
  await open.by('composer-input').waitFor();
  await open.page.evaluate((hash) => { window.location.hash = hash; }, new URL(link).hash);
  await open.page.waitForFunction(() => document.querySelectorAll('[data-testid="timeline-message"]').length === 2);
  assert.equal(await open.promptText(), prompt);
  await fourth.close();

  const { context: third, page: damaged } = await visit(link.slice(0, link.length - 40));
  assert.match(await damaged.errorBanner(), /shared link is damaged/);
  assert.ok((await damaged.timelineCount()) > 0, 'a page, not a blank one');
  visitor.assertNoErrors();
  await third.close();
  await other.close();
  await context.close();
});

test('diff: two points in time of one recipient, computed by the core', async () => {
  const { context, page } = await visit();
  await page.simulate();
  const session = JSON.parse(await page.download('export-session'));
  const conversation = core.Conversation.resume(session);
  const count = await page.timelineCount();
  await page.selectRecipient('sarah');
  await page.by('timeline-message').nth(count - 1).click();
  await page.by('diff-toggle').click();
  await page.by('diff-against').selectOption('at');
  await page.by('diff-at').fill('1');
  await page.by('diff-at').dispatchEvent('change');
  // The lines of the shown prompt (at the last message) not in the one at #1 are added.
  const early = conversation.preview('sarah', 0).prompt.split('\n');
  const late = conversation.preview('sarah', count - 1).prompt.split('\n');
  await page.by('diff-view').locator('[data-sign="+"]').first().waitFor();
  const added = (await page.by('diff-view').locator('[data-sign="+"]').allTextContents()).map((l) => l.slice(2));
  assert.ok(added.length > 0 && added.every((l) => late.includes(l)), added.join('\n'));
  assert.ok(added.some((l) => !early.includes(l)), added.join('\n'));
  // A number past the last message is named, not a blank diff.
  await page.by('diff-at').fill(String(count + 5));
  await page.by('diff-at').dispatchEvent('change');
  await page.by('diff-view').filter({ hasText: `there is no message #${count + 5}: the messages are #1 to #${count}` }).waitFor();

  // Side by side: one column per AI member, each the core's prompt for the same message
  // (Claude's system flag above its stdin bytes).
  const columns = page.by('side-by-side').locator('[data-testid="side-column"]');
  assert.equal(await columns.count(), 3);
  for (const [i, member] of ['max', 'sarah', 'carol'].entries()) {
    assert.equal(await columns.nth(i).getAttribute('data-member'), member);
    const { prompt, systemFlag } = conversation.preview(member, count - 1);
    const expected = systemFlag == null ? prompt : `${systemFlag}\n\n── stdin ──\n${prompt}`;
    assert.equal(await columns.nth(i).locator('pre').textContent(), expected, member);
  }
  page.assertNoErrors();
  await context.close();
});
