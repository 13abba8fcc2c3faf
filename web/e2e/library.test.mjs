// The session library and "continue from here" (issue #25, docs/architecture.md §13) without a
// bridge: this browser keeps several sessions, each named, dated and searchable; a fork copies
// the log up to a message into a new session and the original stays as it was.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { servedPage } from './support/served.mjs';
import { bigSession } from './support/sessions.mjs';

const served = servedPage();

/**
 * The library's entries as [title, dates, first message, the team shown beside a title that
 * is the first message ('' for none)] (the panel must be open).
 */
async function entries(page) {
  return page.by('session-entry').evaluateAll((rows) => rows.map((r) => {
    const line = r.querySelector('.session-dates').textContent;
    const [, team = '', dates] = line.match(/^(?:(.+?) · )?(today.*)$/) ?? [null, '', line];
    return [r.querySelector('[data-testid=session-name]').value, dates, r.querySelector('.session-first').textContent, team];
  }));
}

/** The demo's first message, markers left out: the demo session's title until it is named. */
const DEMO_TITLE = 'Max, please draft them from the changelog.';

async function openLibrary(page) {
  if (!(await page.by('session-library').count())) await page.by('library-toggle').click();
  await page.by('session-library').waitFor();
}

const count = (page, n) => page.page.waitForFunction(
  (n) => document.querySelectorAll('[data-testid="timeline-message"]').length === n, n);

test('a fork copies the log up to a message into a new session; the original stays in the library', async () => {
  const { context, page } = await served.visit();
  assert.equal(await page.timelineCount(), 3, 'the demo');
  await openLibrary(page);
  const [demo] = await entries(page);
  assert.equal((await entries(page)).length, 1);
  assert.equal(demo[0], DEMO_TITLE, 'titled by its first message');
  assert.equal(demo[3], 'Release notes crew', "the team's name beside it");
  assert.match(demo[1], /^today \d\d:\d\d · \d+ facts$/);
  assert.equal(demo[2], 'Max, please draft them from the changelog.', 'the first message, markers left out');
  await page.screenshot('library-1440.png');
  await page.page.keyboard.press('Escape');

  // "continue from here" on message #2: a new session of the first two messages, shown.
  await page.by('timeline-message').nth(1).hover();
  await page.by('timeline-message').nth(1).getByTestId('fork').click();
  await count(page, 2);
  assert.match(await page.by('session-select').locator('option:checked').textContent(), /^Release notes crew \(fork at #2\) · today/);
  // The fork goes on as the original did at that point: its next agent is due.
  assert.equal(await page.isDue(), true);
  await openLibrary(page);
  const names = (await entries(page)).map((e) => e[0]);
  assert.deepEqual(names, ['Release notes crew (fork at #2)', DEMO_TITLE], 'newest first');

  // Renamed in place; the name survives a reload, and so does the fork.
  const name = page.by('session-entry').first().getByTestId('session-name');
  await name.fill('Try a shorter reply');
  await name.press('Enter');
  await page.page.waitForFunction(() => document.querySelector('[data-testid=session-select] option:checked')?.textContent.startsWith('Try a shorter reply'));
  await page.reload();
  await count(page, 2);
  await openLibrary(page);
  assert.deepEqual((await entries(page)).map((e) => e[0]), ['Try a shorter reply', DEMO_TITLE]);

  // The original is unchanged: its three messages.
  await page.by('session-entry').nth(1).getByTestId('session-open').click();
  await count(page, 3);
  assert.equal(await page.by('session-library').count(), 0, 'the library closes on open');
  page.assertNoErrors();
  await context.close();
});

test("a file opened over a conversation is a new session titled by its first message beside its team, which follows the team's name until the user names it", async () => {
  const { context, page } = await served.visit();
  const shown = () => page.by('session-select').locator('option:checked').textContent();
  assert.ok((await shown()).startsWith(`${DEMO_TITLE} · `), await shown());
  await page.openFile('big.json', JSON.stringify(bigSession(5)));
  await count(page, 5);
  // Its first message, "[FROM: kailai] message 1: lorem ipsum …", without the marker.
  const bigTitle = 'message 1: lorem ipsum';
  await page.page.waitForFunction((t) => document.querySelector('[data-testid=session-select] option:checked')?.textContent.startsWith(t), bigTitle);
  await openLibrary(page);
  assert.deepEqual((await entries(page)).map((e, i) => [i === 0 ? e[0].slice(0, bigTitle.length) : e[0], e[3]]),
    [[bigTitle, 'Big team'], [DEMO_TITLE, 'Release notes crew']], 'the demo stays');
  const team = async () => (await entries(page))[0][3];
  await page.page.keyboard.press('Escape');
  // Named after its team: a new team name renames it.
  const rename = async (name) => {
    await page.by('team-name-input').fill(name);
    await page.by('team-name-input').dispatchEvent('change');
    await page.by('team-name').filter({ hasText: new RegExp(`^${name}$`) }).waitFor();
  };
  await rename('Other crew');
  await openLibrary(page);
  // The team beside the title follows (once the library has saved the rename).
  await page.by('session-entry').first().locator('.session-dates').filter({ hasText: /^Other crew · / }).waitFor();
  assert.equal(await team(), 'Other crew');
  // Named by the user: the name stays as typed, with no team beside it.
  const name = page.by('session-entry').first().getByTestId('session-name');
  await name.fill('Mine');
  await name.press('Enter');
  await page.page.keyboard.press('Escape');
  await rename('Third crew');
  await page.page.waitForTimeout(400);
  assert.match(await shown(), /^Mine · /);
  await openLibrary(page);
  assert.deepEqual((await entries(page))[0].filter((_, i) => i === 0 || i === 3), ['Mine', '']);
  page.assertNoErrors();
  await context.close();
});

test('a click outside the library closes it, and so does Escape with the focus anywhere', async () => {
  const { context, page } = await served.visit();
  await openLibrary(page);
  await page.by('composer-input').click();
  assert.equal(await page.by('session-library').count(), 0, 'a click outside closes it');
  await openLibrary(page);
  assert.equal(await page.page.evaluate(() => document.activeElement?.dataset.testid), 'library-toggle');
  await page.page.keyboard.press('Escape');
  assert.equal(await page.by('session-library').count(), 0, 'Escape closes it');
  assert.equal(await page.page.evaluate(() => document.activeElement?.dataset.testid), 'library-toggle', 'the focus is back on its button');
  page.assertNoErrors();
  await context.close();
});

test('a name that is empty is refused and the session keeps its name', async () => {
  const { context, page } = await served.visit();
  await openLibrary(page);
  const name = page.by('session-name').first();
  await name.fill('   ');
  await name.press('Enter');
  assert.match(await page.errorBanner(), /^session not renamed: a session's name cannot be empty/);
  await page.reload();
  await openLibrary(page);
  assert.equal((await entries(page))[0][0], DEMO_TITLE);
  await context.close();
});

test('the search finds a session by the start of a word of its messages, ignoring case, with its date and snippet, and opens it', async () => {
  const { context, page } = await served.visit();
  await page.send('[FROM: kailai] The zanzibar budget is due Friday. [NEXT: max]');
  await openLibrary(page);
  await page.by('library-new').click();
  await count(page, 0);
  await openLibrary(page);
  assert.equal((await entries(page)).length, 2);
  await page.by('session-search').fill('ZANZIBAR');
  await page.by('search-hit').first().waitFor();
  const hits = await page.by('search-hit').allTextContents();
  assert.equal(hits.length, 1);
  assert.match(hits[0], new RegExp(`^${DEMO_TITLE} · today \\d\\d:\\d\\d.*The zanzibar budget is due Friday`), 'title, date, snippet');
  assert.equal(await page.by('search-hit').locator('mark').textContent(), 'zanzibar');
  // The start of a word finds it (as the bridge's prefix search does).
  await page.by('session-search').fill('zanzi');
  await page.by('search-hit').locator('mark').filter({ hasText: /^zanzi$/ }).waitFor();
  assert.match(await page.by('search-hit').first().textContent(), /today \d\d:\d\d.*The zanzibar budget is due Friday/);
  await page.by('session-search').fill('no such word anywhere');
  await page.by('search-none').filter({ hasText: 'no session holds “no such word anywhere”' }).waitFor();
  await page.by('session-search').fill('zanzibar');
  await page.by('search-hit').first().click();
  await page.page.waitForFunction(() => [...document.querySelectorAll('[data-testid=timeline-message] .content')]
    .some((c) => c.textContent.includes('zanzibar')));
  page.assertNoErrors();
  await context.close();
});

test('a new session keeps the team shown (not the demo\'s), with no message yet', async () => {
  const { context, page } = await served.visit();
  await page.by('team-name-input').fill('My crew');
  await page.by('team-name-input').dispatchEvent('change');
  await page.by('team-name').filter({ hasText: /^My crew$/ }).waitFor();
  await openLibrary(page);
  await page.by('session-entry').locator('.session-dates').filter({ hasText: /^My crew · / }).waitFor();
  await page.by('library-new').click();
  await count(page, 0);
  assert.equal(await page.by('team-name-input').inputValue(), 'My crew');
  await openLibrary(page);
  assert.deepEqual((await entries(page)).map((e) => [e[0], e[3]]), [['My crew', ''], [DEMO_TITLE, 'My crew']], 'no message yet: the team is the title');
  // Left with nothing done in it, it leaves the library, as a bridge's unused session does.
  await page.page.keyboard.press('Escape');
  const ids = await page.by('session-select').locator('option').evaluateAll((os) => os.map((o) => o.value));
  await page.by('session-select').selectOption(ids[ids.length - 1]);
  await count(page, 3);
  await openLibrary(page);
  assert.deepEqual((await entries(page)).map((e) => e[0]), [DEMO_TITLE]);
  page.assertNoErrors();
  await context.close();
});

test('the one session stored before the library becomes its first session', async () => {
  const { context, page } = await served.visit();
  await page.send('[FROM: kailai] kept from before the library');
  // What an older page kept: the whole session file under one key.
  const log = await page.download('export-session');
  // As an older page left it: one log, no library.
  await page.page.evaluate((log) => {
    localStorage.clear();
    localStorage.setItem('agent-chatter/session', log);
  }, log);
  await page.reload();
  assert.match(await page.lastMessageText(), /kept from before the library/);
  // The page moves the old key after it has shown the session: wait for the move, never
  // read right after the reload.
  await page.page.waitForFunction(() => localStorage.getItem('agent-chatter/session') === null
    && localStorage.getItem('agent-chatter/library') !== null);
  const stored = await page.page.evaluate(() => ({
    old: localStorage.getItem('agent-chatter/session'),
    library: JSON.parse(localStorage.getItem('agent-chatter/library')),
  }));
  assert.equal(stored.old, null, 'moved into the library');
  assert.equal(stored.library.sessions.length, 1);
  assert.equal(stored.library.sessions[0].name, 'Release notes crew');
  page.assertNoErrors();
  await context.close();
});

test('a long log is kept in parts: an edit saves its last part, a reload reads them all', async () => {
  const { context, page } = await served.visit();
  await page.openFile('long-session.json', JSON.stringify(bigSession(600)));
  await page.page.waitForFunction(() => document.querySelector('[data-testid="inspector-at"]')?.textContent.includes('#600'));
  // What a save writes, key by key, from here on.
  const stored = () => page.page.evaluate(async () => {
    await new Promise((r) => setTimeout(r, 400));
    const { current } = JSON.parse(localStorage.getItem('agent-chatter/library'));
    const keys = Object.keys(localStorage).filter((k) => k.startsWith(`agent-chatter/session/${current}`)).sort();
    return { head: JSON.parse(localStorage.getItem(`agent-chatter/session/${current}`)), keys, writes: window.writes ?? [] };
  });
  const before = await stored();
  // The opened log replaced the demo under its id, so its parts start after the demo's one.
  const { first } = before.head;
  assert.deepEqual(before.head, { format: 'agent-chatter-session/1', parts: 3, first }, '601 facts: 256 + 256 + 89');
  assert.equal(before.keys.length, 4, 'the head and the three parts it names, nothing else');
  await page.page.evaluate(() => {
    window.writes = [];
    const set = Storage.prototype.setItem;
    Storage.prototype.setItem = function (key, value) { window.writes.push(key); return set.call(this, key, value); };
  });
  await page.send('[FROM: kailai] one more after six hundred');
  const after = await stored();
  const logWrites = after.writes.filter((k) => k.startsWith('agent-chatter/session/'));
  assert.deepEqual(logWrites.map((k) => k.replace(/\/session\/\d+/, '/session/N')),
    [`agent-chatter/session/N/${first + 2}`, 'agent-chatter/session/N'], 'the last part and the head, not the whole log');
  await page.reload();
  await page.page.waitForFunction(() => document.querySelector('[data-testid="inspector-at"]')?.textContent.includes('#601'));
  assert.match(await page.lastMessageText(), /one more after six hundred/);
  page.assertNoErrors();
  await context.close();
});

test('the library on a phone (390x844)', async () => {
  const { context, page } = await served.visit(undefined, { width: 390, height: 844 });
  // On a phone the chosen row offers its fork.
  await page.by('timeline-message').nth(0).click();
  await page.by('timeline-message').nth(0).getByTestId('fork').click();
  await count(page, 1);
  await openLibrary(page);
  assert.equal((await entries(page)).length, 2);
  // The panel fits the screen: nothing cut off at the right edge.
  const box = await page.by('session-library').boundingBox();
  assert.ok(box.x >= 0 && box.x + box.width <= 390, `library at ${box.x}..${box.x + box.width}`);
  await page.screenshot('library-390.png');
  await context.close();
});
