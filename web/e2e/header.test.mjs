// Issue #25 ("never surprised by the page"): the header is two lines at most at 1440x900 and
// 1280x720, every entry whole (issue #44);
// the save and open entries sit in "save ▾" and "open ▾" menus (a `<details>` each: Enter or a
// click opens, Escape closes back on the summary, a chosen entry closes it); on a 390x844 phone
// the header wraps but stays above the panes, never over them, and nothing runs off the right
// edge. Screenshots: target/e2e/header-*.png.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { assertNoSevere, axeFindings } from './support/axe.mjs';
import { servedPage } from './support/served.mjs';

const { visit } = servedPage();

/** The header's height and the distinct rows its visible entries sit on. */
function headerLines(page) {
  return page.page.evaluate(() => {
    const header = document.querySelector('header.top');
    const entries = [...header.querySelectorAll(':scope > *, nav.files > *, .sessions > *')]
      .filter((e) => e.getClientRects().length && !e.classList.contains('skip-link') && !['NAV', 'DIV'].includes(e.tagName));
    const rows = new Set(entries.map((e) => {
      const r = e.getBoundingClientRect();
      return Math.round((r.top + r.bottom) / 2 / 16);
    }));
    const right = Math.max(...entries.map((e) => e.getBoundingClientRect().right));
    const tagline = header.querySelector('.tagline').getBoundingClientRect().width;
    return { height: header.getBoundingClientRect().height, rows: rows.size, right, tagline };
  });
}

// Two rows at most: every entry shows whole (below), so the menus go to a second row rather
// than the usage, the tagline or the session switch being cut.
for (const [name, viewport] of [['1440x900', { width: 1440, height: 900 }], ['1280x720', { width: 1280, height: 720 }]]) {
  test(`the header is two lines at most at ${name}`, async () => {
    const { context, page } = await visit(undefined, viewport);
    await page.screenshot(`header-${name}.png`);
    const { height, rows, right, tagline } = await headerLines(page);
    assert.ok(rows <= 2, `the header's entries on ${rows} lines at ${name}`);
    assert.ok(right <= viewport.width, `the last entry ends at ${right}px, within the ${viewport.width}px width`);
    assert.ok(tagline >= 100, `the tagline shows (${tagline}px wide)`);
    assert.ok(height <= 80, `the header is ${height}px high at ${name}`);
    page.assertNoErrors();
    await context.close();
  });
}

/**
 * Why each element of `testids` is not seen whole, if it is not: outside the viewport, cut by
 * its own box (more content than room: scrollWidth > clientWidth), clipped by an ancestor
 * that hides its overflow, a select whose chosen option's text is wider than its room, or
 * overlapping another entry of the header. Empty when every one shows whole.
 */
function cutShort(page, testids) {
  return page.page.evaluate((testids) => {
    const why = [];
    const inside = (a, b) => a.left >= b.left - 1 && a.right <= b.right + 1 && a.top >= b.top - 1 && a.bottom <= b.bottom + 1;
    const view = { left: 0, top: 0, right: innerWidth, bottom: innerHeight };
    for (const id of testids) {
      const el = document.querySelector(`[data-testid="${id}"]`);
      if (!el || !el.getClientRects().length) { why.push(`${id}: not shown`); continue; }
      const r = el.getBoundingClientRect();
      if (!inside(r, view)) why.push(`${id}: outside the viewport (${Math.round(r.left)}–${Math.round(r.right)} of ${innerWidth})`);
      if (el.scrollWidth > el.clientWidth + 1) why.push(`${id}: cut (${el.scrollWidth}px of content in ${el.clientWidth}px)`);
      if (el.scrollHeight > el.clientHeight + 1 && el.tagName !== 'SELECT') why.push(`${id}: cut in height (${el.scrollHeight} in ${el.clientHeight})`);
      for (let a = el.parentElement; a && a !== document.body; a = a.parentElement) {
        const style = getComputedStyle(a);
        if ([style.overflowX, style.overflowY].some((o) => o !== 'visible') && !inside(r, a.getBoundingClientRect())) {
          why.push(`${id}: clipped by its ancestor ${a.tagName.toLowerCase()}.${a.className}`);
        }
      }
      if (el.tagName === 'SELECT') {
        const style = getComputedStyle(el);
        const canvas = document.createElement('canvas').getContext('2d');
        canvas.font = `${style.fontWeight} ${style.fontSize} ${style.fontFamily}`;
        const text = canvas.measureText(el.selectedOptions[0]?.label ?? '').width;
        // The room for the text: the box less its padding and the drop-down arrow (~20 px).
        const room = el.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight) - 20;
        if (text > room + 1) why.push(`${id}: its option's text (${Math.round(text)}px) is cut to ${Math.round(room)}px`);
      }
    }
    const header = document.querySelector('header.top');
    const entries = [...header.querySelectorAll(':scope > *, nav.files > *, .sessions > *')]
      .filter((e) => e.getClientRects().length && !e.classList.contains('skip-link') && !e.classList.contains('happened') && !['NAV', 'DIV'].includes(e.tagName) || e.classList.contains('usage'));
    for (const [i, a] of entries.entries()) {
      for (const b of entries.slice(i + 1)) {
        if (a.contains(b) || b.contains(a)) continue;
        const p = a.getBoundingClientRect(), q = b.getBoundingClientRect();
        if (p.left < q.right - 1 && q.left < p.right - 1 && p.top < q.bottom - 1 && q.top < p.bottom - 1) {
          why.push(`${a.className || a.tagName} overlaps ${b.className || b.tagName}`);
        }
      }
    }
    return why;
  }, testids);
}

const WHOLE = ['usage-total', 'tagline', 'session-select', 'team-task', 'team-name', 'connection-status'];

for (const [name, viewport] of [['1280x720', { width: 1280, height: 720 }], ['1440x900', { width: 1440, height: 900 }], ['390x844', { width: 390, height: 844 }]]) {
  test(`at ${name} the usage, the tagline, the session switch and the team task show whole, nothing overlapping`, async () => {
    const { context, page } = await visit(undefined, viewport);
    // The simulator's usage words are the longest the header shows page alone.
    await page.by('usage-total').filter({ hasText: 'the simulator reports no usage' }).waitFor();
    const why = await cutShort(page, WHOLE);
    await page.screenshot(`header-whole-${name}.png`);
    assert.deepEqual(why, [], `at ${name}`);
    page.assertNoErrors();
    await context.close();
  });
}

test('"save ▾" opens with a click or Enter, lists the downloads, and Escape or a choice closes it', async (t) => {
  const { context, page } = await visit(undefined, { width: 1280, height: 720 });
  const menu = page.by('save-menu');
  assert.equal(await page.by('export-session').isVisible(), false, 'the save entries start folded');
  await menu.click();
  for (const id of ['export-session', 'export-scenario', 'export-snapshot', 'export-team', 'export-peer-team',
    'export-transcript-md', 'export-transcript-html']) {
    assert.ok(await page.by(id).isVisible(), `${id} shows in the open menu`);
  }
  assert.equal(await menu.getAttribute('title'), 'download the session, its scenario, a snapshot, the team or the transcript');
  await page.screenshot('header-save-open-1280x720.png');
  const found = await axeFindings(page.page, '1280x720, save menu open');
  for (const line of found.minor) t.diagnostic(line);
  assertNoSevere(found.severe);
  await page.page.keyboard.press('Tab');
  assert.equal(await page.page.evaluate(() => document.activeElement.dataset.testid), 'export-session');
  await page.page.keyboard.press('Escape');
  await page.by('export-session').waitFor({ state: 'hidden' });
  assert.equal(await page.page.evaluate(() => document.activeElement.dataset.testid), 'save-menu');
  await page.page.keyboard.press('Enter');
  await page.by('export-session').waitFor();
  // Opening "open ▾" closes "save ▾": one menu at a time.
  await page.by('open-menu').click();
  await page.by('export-session').waitFor({ state: 'hidden' });
  assert.ok(await page.by('open-link').isVisible());
  // A download closes its menu.
  JSON.parse(await page.download('export-team'));
  assert.equal(await page.by('export-team').isVisible(), false, 'the menu closes after a choice');
  page.assertNoErrors();
  await context.close();
});

test('a click outside an open menu closes it; Escape closes it from anywhere, back on its button', async () => {
  const { context, page } = await visit(undefined, { width: 1280, height: 720 });
  await page.by('save-menu').click();
  await page.by('export-session').waitFor();
  await page.by('timeline').click({ position: { x: 20, y: 10 } });
  await page.by('export-session').waitFor({ state: 'hidden' });
  // Opened, then the focus goes elsewhere without a click (a script, a screen reader).
  await page.by('open-menu').click();
  await page.by('open-link').waitFor();
  await page.page.evaluate(() => document.querySelector('[data-testid="composer-input"]').focus());
  await page.page.keyboard.press('Escape');
  await page.by('open-link').waitFor({ state: 'hidden' });
  assert.equal(await page.page.evaluate(() => document.activeElement.dataset.testid), 'open-menu');
  page.assertNoErrors();
  await context.close();
});

test('on a 390x844 phone the header wraps above the panes, never over them', async () => {
  const { context, page } = await visit(undefined, { width: 390, height: 844 });
  await page.screenshot('header-390x844.png');
  const layout = await page.page.evaluate(() => ({
    header: document.querySelector('header.top').getBoundingClientRect().bottom,
    panes: document.querySelector('main.panes').getBoundingClientRect().top,
    position: getComputedStyle(document.querySelector('header.top')).position,
    width: document.scrollingElement.scrollWidth,
  }));
  assert.ok(layout.panes >= layout.header, `the panes start (${layout.panes}px) below the header (${layout.header}px)`);
  assert.ok(!['sticky', 'fixed'].includes(layout.position), `the header scrolls away with the page (position: ${layout.position})`);
  assert.ok(layout.width <= 390, `nothing runs off the right edge (${layout.width}px wide)`);
  // The conversation and its composer come first on a phone, the team last.
  const tops = await page.page.evaluate(() => Object.fromEntries(['team', 'conversation', 'inspector']
    .map((p) => [p, document.querySelector(`.${p}-pane`).getBoundingClientRect().top])));
  assert.ok(tops.conversation < tops.inspector && tops.inspector < tops.team, JSON.stringify(tops));
  // Side by side, the agents one under another: no column runs off the phone's edge.
  const columns = await page.page.evaluate(() => [...document.querySelectorAll('[data-testid=side-column]')]
    .map((c) => Math.round(c.getBoundingClientRect().right)));
  assert.ok(columns.length >= 2 && columns.every((right) => right <= 390), JSON.stringify(columns));
  await page.by('save-menu').click();
  const box = await page.by('export-transcript-html').boundingBox();
  assert.ok(box.x >= 0 && box.x + box.width <= 390, 'the open menu fits the phone');
  await page.screenshot('header-390x844-save-open.png');
  page.assertNoErrors();
  await context.close();
});
