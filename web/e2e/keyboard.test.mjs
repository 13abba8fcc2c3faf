// Issue #25.7, the keyboard (docs/architecture.md §13): the first Tab is a skip link to the
// composer; the conversation's list has one Tab stop (the shown message) and ↑/↓, Home/End
// move both the selection and the focus; "jump to #n" (g in the list) reaches a message far
// away in a 500-message session, scrolled into view and focused.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { bigSession } from './support/sessions.mjs';
import { servedPage } from './support/served.mjs';

const { visit } = servedPage();

/** What has the focus: its testid and, for a row, its message index and aria-selected. */
function focused(page) {
  return page.page.evaluate(() => {
    const el = document.activeElement;
    return {
      testid: el?.dataset?.testid ?? el?.tagName.toLowerCase(),
      index: el?.dataset?.index === undefined ? null : Number(el.dataset.index),
      selected: el?.getAttribute('aria-selected'),
      visible: el?.matches(':focus-visible') ?? false,
    };
  });
}

/** Whether row `index` is rendered wholly inside the timeline's view. */
async function inView(page, index) {
  const row = page.page.locator(`[data-testid="timeline-message"][data-index="${index}"]`);
  if (!(await row.count())) return false;
  const [box, pane] = [await row.boundingBox(), await page.by('timeline').boundingBox()];
  return box.y >= pane.y - 1 && box.y + Math.min(box.height, pane.height) <= pane.y + pane.height + 1;
}

async function openBig(page, n) {
  await page.openFile(`s${n}.json`, JSON.stringify(bigSession(n)));
  await page.page.waitForFunction((n) => document.querySelector('[data-testid="inspector-at"]')?.textContent.includes(`#${n}`), n);
}

test('the first Tab is "skip to the composer": two keys from the top to typing a message', async () => {
  for (const viewport of [{ width: 1440, height: 900 }, { width: 1280, height: 720 }, { width: 390, height: 844 }]) {
    const { context, page } = await visit(undefined, viewport);
    let keys = 0;
    await page.page.keyboard.press('Tab');
    keys++;
    const skip = await focused(page);
    assert.equal(skip.testid, 'skip-link', 'the first Tab stop');
    assert.ok(skip.visible, 'the skip link shows its focus');
    const box = await page.by('skip-link').boundingBox();
    assert.ok(box && box.y >= 0 && box.height > 10, `the focused skip link is on screen: ${JSON.stringify(box)}`);
    assert.match(await page.by('skip-link').textContent(), /skip to the composer/);
    await page.page.keyboard.press('Enter');
    keys++;
    assert.equal((await focused(page)).testid, 'composer-input');
    assert.ok(keys <= 5, `${keys} keys to the composer`);
    // The URL's fragment is left alone (it carries share links and the bridge's token).
    assert.equal(new URL(page.page.url()).hash, '');
    await page.page.keyboard.type('[FROM: kailai] Typed from the keyboard. [NEXT: max]');
    await page.page.keyboard.press('Control+Enter');
    await page.page.waitForFunction(() => document.querySelectorAll('[data-testid="timeline-message"]').length === 4);
    // Max is due: his reply is typed and answered from the keyboard the same way.
    await page.by('agent-reply-input').focus();
    await page.page.keyboard.type('Answered from the keyboard.');
    await page.page.keyboard.press('Control+Enter');
    await page.page.waitForFunction(() => document.querySelectorAll('[data-testid="timeline-message"]').length === 5);
    page.assertNoErrors();
    await context.close();
  }
});

test('the conversation is one Tab stop: the shown message, whose focus is visible', async () => {
  const { context, page } = await visit(undefined, { width: 1440, height: 900 });
  const stops = await page.by('timeline-message').evaluateAll((rows) =>
    rows.filter((r) => r.tabIndex === 0).map((r) => [Number(r.dataset.index), r.getAttribute('aria-selected')]));
  // Nothing selected: the latest message is the one shown.
  assert.deepEqual(stops, [[2, 'false']]);
  await page.by('jump-to').focus();
  let seen = null;
  for (let i = 0; i < 6 && !seen; i++) {
    await page.page.keyboard.press('Tab');
    const f = await focused(page);
    if (f.testid === 'timeline-message') seen = f;
  }
  assert.ok(seen, 'Tab reaches the conversation');
  assert.equal(seen.index, 2);
  assert.ok(seen.visible, 'its focus is visible');
  // One more Tab leaves the list: no other row is a stop.
  await page.page.keyboard.press('Tab');
  assert.notEqual((await focused(page)).testid, 'timeline-message');
  page.assertNoErrors();
  await context.close();
});

test('↑/↓ and Home/End move the selection and the focus together; Enter selects', async () => {
  const { context, page } = await visit(undefined, { width: 1280, height: 720 });
  await openBig(page, 60);
  await page.by('timeline-message').last().click();
  assert.deepEqual(await focused(page), { testid: 'timeline-message', index: 59, selected: 'true', visible: false });
  const expect = async (key, index) => {
    await page.page.keyboard.press(key);
    await page.page.waitForFunction((i) => document.activeElement?.dataset?.index === String(i), index);
    const f = await focused(page);
    assert.equal(f.selected, 'true', `${key}: the focused row #${index + 1} is the selected one`);
    assert.equal(await page.page.locator('[data-testid="timeline-message"][aria-selected="true"]').count(), 1);
    assert.match(await page.by('inspector-at').textContent(), new RegExp(`^at #${index + 1} `));
    assert.ok(await inView(page, index), `${key}: #${index + 1} is in view`);
    const stops = await page.by('timeline-message').evaluateAll((rows) => rows.filter((r) => r.tabIndex === 0).map((r) => Number(r.dataset.index)));
    assert.deepEqual(stops, [index], `${key}: only the selected row is a Tab stop`);
  };
  await expect('ArrowUp', 58);
  await expect('ArrowUp', 57);
  await expect('ArrowDown', 58);
  await expect('Home', 0);
  await expect('ArrowUp', 0);
  await expect('ArrowDown', 1);
  await expect('End', 59);
  await expect('ArrowDown', 59);
  // Enter on the focused row selects it (it already is: still one selected row).
  await page.page.keyboard.press('Enter');
  assert.equal((await focused(page)).selected, 'true');
  page.assertNoErrors();
  await context.close();
});

test('jump to #n (g in the list) scrolls far in a 500-message session and focuses the row', async () => {
  const { context, page } = await visit(undefined, { width: 1280, height: 720 });
  await openBig(page, 500);
  await page.by('timeline-message').last().click();
  await page.page.keyboard.press('g');
  assert.equal((await focused(page)).testid, 'jump-to');
  await page.page.keyboard.type('#12');
  await page.page.keyboard.press('Enter');
  await page.page.waitForFunction(() => document.activeElement?.dataset?.index === '11');
  assert.equal((await focused(page)).selected, 'true');
  assert.match(await page.by('inspector-at').textContent(), /^at #12 /);
  assert.ok(await inView(page, 11), '#12 is in view');
  assert.equal(await page.by('jump-to').inputValue(), '', 'the field empties');
  const rendered = await page.timelineCount();
  assert.ok(rendered < 60, `${rendered} rows in the DOM: still virtualised`);
  // The arrows go on from there.
  await page.page.keyboard.press('ArrowDown');
  await page.page.waitForFunction(() => document.activeElement?.dataset?.index === '12');
  // Back near the end through the field (typed without #), then a number that is no message.
  await page.by('jump-to').fill('480');
  await page.by('jump-to').press('Enter');
  await page.page.waitForFunction(() => document.activeElement?.dataset?.index === '479');
  assert.ok(await inView(page, 479), '#480 is in view');
  await page.by('jump-to').fill('#501');
  await page.by('jump-to').press('Enter');
  assert.match(await page.errorBanner(), /jump to #501: there is no such message; type a number from 1 to 500/);
  assert.match(await page.by('inspector-at').textContent(), /^at #480 /);
  await page.screenshot('a11y-jump-1280x720.png');
  page.assertNoErrors();
  await context.close();
});
