// The prompt inspector in a real browser (Debian Chromium, playwright-core), walking a new
// user's path (issue: web page). Run by `cargo xtask test` after the page (trunk) and the npm
// package (dist) are built; screenshots go to target/e2e/.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, writeFile, mkdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { installEditTimer, medians } from './support/edit-timing.mjs';
import { screenshots } from './support/inspector-page.mjs';
import { bigSession, bigTextSession } from './support/sessions.mjs';
import { core, root, servedPage } from './support/served.mjs';

const { visit } = servedPage();

test('a new user sees the demo: three messages, a due agent and its exact prompt', async () => {
  const { context, page } = await visit();
  assert.equal(await page.timelineCount(), 3);
  assert.deepEqual(await page.speakers(), ['Kailai', 'Max', 'Sarah']);
  assert.match(await page.dueText(), /^Carol is due/);
  const prompt = await page.promptText();
  assert.match(prompt, /Write the release notes for parser v1/);
  assert.equal(await page.by('side-column').count(), 3);
  assert.ok((await page.by('section-bar').count()) >= 3);
  assert.equal(await page.by('connection-status').textContent(), '● simulation');
  await page.screenshot('inspector.png');
  page.assertNoErrors();
  await context.close();
});

test('the recipient select always names the agent whose prompt is shown', async () => {
  const { context, page } = await visit();
  // Picked by hand, then the next due agent takes the inspector over.
  await page.selectRecipient('max');
  await page.selectRecipient('carol');
  await page.simulate();
  assert.match(await page.dueText(), /^Max is due/);
  const shown = await page.promptText();
  const named = await page.by('recipient-select').inputValue();
  assert.equal(named, 'max');
  // Choosing what the select names changes nothing: it already is the prompt shown.
  await page.selectRecipient(named);
  assert.equal(await page.promptText(), shown);
  page.assertNoErrors();
  await context.close();
});

test('nothing is cut off at the right edge of a narrow window', async () => {
  for (const width of [1024, 800, 600]) {
    const { context, page } = await visit(undefined, { width, height: 900 });
    const overflow = await page.page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow <= 0, `${width} px: the page is ${overflow} px wider than the window`);
    await page.by('prompt-text').first().waitFor();
    if (width === 800) await page.screenshot('narrow-800.png');
    await context.close();
  }
});

test('a human message with [FROM] and [NEXT] goes through a 3-agent chain in simulation', async () => {
  const { context, page } = await visit();
  await page.simulateUntilDone();
  const before = await page.timelineCount();
  await page.send('[FROM: kailai] Please cross-check the fixes section. [NEXT: max]');
  assert.equal(await page.timelineCount(), before + 1);
  assert.match(await page.dueText(), /^Max is due/);
  // The inspector shows what Max gets: the human's text without its markers.
  const prompt = await page.promptText();
  assert.match(prompt, /Please cross-check the fixes section\./);
  assert.doesNotMatch(prompt, /\[NEXT: max\]|\[FROM: kailai\]/);
  for (const agent of ['Max', 'Sarah', 'Carol']) {
    assert.match(await page.dueText(), new RegExp(`^${agent} is due`));
    await page.simulate();
  }
  const speakers = await page.speakers();
  assert.deepEqual(speakers.slice(-4), ['Kailai', 'Max', 'Sarah', 'Carol']);
  assert.match(await page.lastMessageText(), /^Carol \(simulated\): I read .* and the message "/);
  // A typed reply goes through the same routing.
  await page.reply('Done here. [DONE]');
  assert.equal(await page.isDue(), false);
  assert.match(await page.by('routing-status').textContent(), /done/);
  assert.match(await page.by('notices').textContent(), /\[DONE\]: the conversation is complete/);
  await page.screenshot('chain.png');
  // A human speaks: the conversation is open again, and no notice says it is complete.
  await page.send('[FROM: kailai] One more thing. [NEXT: max]');
  assert.match(await page.dueText(), /^Max is due/);
  assert.doesNotMatch(await page.by('notices').textContent(), /complete/);
  page.assertNoErrors();
  await context.close();
});

test('the queue line lists who runs next first: P1, then P2, then P3', async () => {
  const { context, page } = await visit();
  await page.simulateUntilDone();
  // Enqueued as max P3, sarah P2, carol P2: sarah runs now, carol comes before max.
  await page.send('[FROM: kailai] Review, please. [NEXT: max !P3, sarah, carol]');
  assert.match(await page.dueText(), /^Sarah is due/);
  assert.match(await page.by('routing-status').textContent(), /queue \(next first\): Carol P2 · Max P3/);
  page.assertNoErrors();
  await context.close();
});

test('in simulation the queue line says the agent is due, as its mark does, never running', async () => {
  const { context, page } = await visit();
  // The demo leaves Carol due: nothing runs until the user answers or lets the simulator.
  assert.match(await page.by('running-mark').textContent(), /Carol is due/);
  const line = await page.by('routing-status').textContent();
  assert.match(line, /due: Carol \(P2\)/);
  assert.doesNotMatch(line, /running/);
  page.assertNoErrors();
  await context.close();
});

test("the inspector's prompt is byte for byte the core's preview of the exported scenario", async () => {
  const { context, page } = await visit();
  await page.simulate();
  const scenario = JSON.parse(await page.download('export-scenario'));
  for (const member of ['max', 'sarah', 'carol']) {
    await page.selectRecipient(member);
    const expected = core.preview(scenario, member);
    assert.equal(await page.promptText(), expected.prompt, `${member}: prompt`);
    assert.equal(await page.systemFlagText(), expected.systemFlag, `${member}: system flag`);
  }
  page.assertNoErrors();
  await context.close();
});

test('a saved scenario and snapshot open again with the same prompts; a broken one changes nothing', async () => {
  const { context, page } = await visit();
  await page.simulate();
  await page.selectRecipient('sarah');
  const prompt = await page.promptText();
  const count = await page.timelineCount();
  const scenario = await page.download('export-scenario');
  const snapshot = await page.download('export-snapshot');
  // "reset demo" asks first: declined, the conversation stays.
  page.dialogAnswer = false;
  await page.by('new-session').click();
  assert.equal(await page.timelineCount(), count, 'declined: nothing discarded');
  for (const [name, file] of [['case.json', scenario], ['snapshot.json', snapshot]]) {
    page.dialogAnswer = true;
    await page.by('new-session').click();
    await page.openFile(name, file);
    await page.page.waitForFunction((n) => document.querySelectorAll('[data-testid="timeline-message"]').length === n, count);
    await page.selectRecipient('sarah');
    assert.equal(await page.promptText(), prompt, name);
    assert.equal(await page.by('error-banner').count(), 0, name);
  }
  const broken = JSON.parse(scenario);
  broken.messages[1].from = 'zed';
  await page.openFile('broken.json', JSON.stringify(broken));
  assert.match(await page.errorBanner(), /^broken\.json \(scenario\): messages\[1\]\.from: "zed" is not a member/);
  assert.equal(await page.promptText(), prompt);
  page.assertNoErrors();
  await context.close();
});

test('changing the window changes the fates drawn on the timeline', async () => {
  const { context, page } = await visit();
  await page.simulateUntilDone();
  await page.selectRecipient('sarah');
  const inWindow = async () => (await page.timelineFates()).filter(([, c]) => c.includes('in-window')).length;
  const wide = await inWindow();
  const wideFates = await page.fateRows();
  await page.setWindow(1);
  await page.page.waitForFunction((n) =>
    document.querySelectorAll('[data-testid="timeline-message"].in-window').length !== n, wide);
  const narrow = await inWindow();
  assert.ok(narrow < wide, `window 1 keeps ${narrow} rows in the window, window 5 kept ${wide}`);
  const outside = (await page.timelineFates()).filter(([, c]) => c.includes('fate-outside')).length;
  assert.ok(outside > 0, 'some messages are now outside the window');
  assert.notDeepEqual(await page.fateRows(), wideFates);
  await page.screenshot('window-1.png');
  page.assertNoErrors();
  await context.close();
});

test('a refused edit shows what is in force, names the problem, and the banner goes with the next success', async () => {
  const { context, page } = await visit();
  const name = page.by('member-row').nth(1).locator('.member-name');
  await name.fill('kailai'); // Max renamed as the human: names must be unique
  await name.dispatchEvent('change');
  await page.by('error-banner').waitFor();
  assert.match(await page.errorBanner(), /team not changed: /);
  assert.equal(await name.inputValue(), 'max', 'the field shows the name in force');
  const window = page.by('member-row').nth(1).locator('.member-window');
  await window.fill('2.5');
  await window.dispatchEvent('change');
  await page.page.waitForFunction(() => /window override: expected a whole number/.test(document.querySelector('[data-testid="error-banner"]')?.textContent ?? ''));
  assert.equal(await window.inputValue(), '', "the field shows the team's window, still in force");
  await page.send('[FROM: kailai] carry on [NEXT: max]');
  assert.equal(await page.by('error-banner').count(), 0, 'a successful send clears the old error');
  await context.close();
});

test('a member edit leaves earlier settings in place: a past delivery keeps its budget and bytes', async () => {
  const { context, page } = await visit();
  await page.simulate();
  await page.simulate();
  await page.by('timeline-message').nth(3).click();
  await page.selectRecipient('max');
  const delivered = await page.promptText();
  // A smaller budget from now on leaves the past delivery as it was…
  const budget = page.by('setting-max-bytes');
  await budget.fill('300');
  await budget.dispatchEvent('change');
  await page.page.waitForFunction(() => document.querySelector('[data-testid="setting-max-bytes"]')?.value === '300');
  assert.equal(await page.promptText(), delivered);
  // …and so does a later edit of another member.
  const display = page.by('member-row').nth(3).locator('.member-display');
  await display.fill('Caroline');
  await display.dispatchEvent('change');
  await page.by('member-row').nth(3).locator('.member-display[value="Caroline"], .member-display').first().waitFor();
  await page.page.waitForFunction(() => [...document.querySelectorAll('[data-testid="timeline-message"]')].some((r) => r.textContent.includes('Caroline')));
  assert.equal(await page.promptText(), delivered);
  // Shared, the past delivery travels with the settings it was built with.
  await page.by('share-link').click();
  const link = await page.by('share-url').inputValue();
  assert.equal(await page.by('share-note').count(), 0, 'the link opens the prompt shown');
  const { context: other, page: visitor } = await visit(link);
  assert.equal(await visitor.promptText(), delivered);
  await other.close();
  page.assertNoErrors();
  await context.close();
});

test('characters the agent reads but the page cannot show are pointed out', async () => {
  const { context, page } = await visit();
  await page.selectRecipient('max');
  assert.equal(await page.by('hidden-chars').count(), 0);
  // "Looks good." followed by Unicode tags spelling " rm -rf": invisible on screen.
  const tags = [...' rm -rf'].map((c) => String.fromCodePoint(0xe0000 + c.codePointAt(0))).join('');
  await page.send(`[FROM: kailai] Looks good.${tags} [NEXT: max]`);
  await page.by('hidden-chars').filter({ hasText: '7 invisible or direction-changing character(s), the first U+E0020' }).waitFor();
  assert.ok((await page.promptText()).includes(tags), 'the bytes are in the prompt');
  await context.close();
});

test('a refused setting is named and the field shows the setting in force', async () => {
  const { context, page } = await visit();
  const budget = page.by('setting-max-bytes');
  const before = await budget.inputValue();
  await budget.fill('0');
  await budget.dispatchEvent('change');
  await page.by('error-banner').filter({ hasText: 'settings not changed: maxBytes: must be greater than 0' }).waitFor();
  assert.equal(await budget.inputValue(), before);
  const window = page.by('setting-window');
  await window.fill('');
  await window.dispatchEvent('change');
  await page.by('error-banner').filter({ hasText: 'settings not changed: window: expected a whole number' }).waitFor();
  assert.equal(await window.inputValue(), '5');
  await context.close();
});

test('an agent type the core does not know can be typed, and its member gets the plain format', async () => {
  const { context, page } = await visit();
  const max = page.by('member-row').nth(1);
  const type = max.locator('.member-agent-type');
  assert.equal(await type.inputValue(), 'claude-code');
  await type.fill('aider');
  await type.dispatchEvent('change');
  await page.page.waitForFunction(() =>
    /plain format/.test(document.querySelectorAll('[data-testid="member-row"]')[1]?.querySelector('[data-testid="agent-format"]')?.textContent ?? ''));
  assert.equal(await type.inputValue(), 'aider', 'the typed type is in force and shown');
  await page.selectRecipient('max');
  assert.doesNotMatch(await page.promptText(), /\[MESSAGE\]|\[CONTEXT\]/, 'plain: bodies without headers');
  // A short name is normalised as in config files.
  await type.fill('Codex');
  await type.dispatchEvent('change');
  await page.page.waitForFunction(() =>
    document.querySelectorAll('[data-testid="member-row"]')[1]?.querySelector('.member-agent-type')?.value === 'openai-codex');
  page.assertNoErrors();
  await context.close();
});

test('a bad team config shows its error naming the field, and the team stays as it was', async () => {
  const { context, page } = await visit();
  const members = await page.memberCount();
  const prompt = await page.promptText();
  const name = 'cli-config-ai-missing-agentType.json';
  const bad = await readFile(new URL(`tests/fixtures/peer/invalid/${name}`, root), 'utf8');
  await page.openFile(name, bad);
  await page.by('error-banner').waitFor();
  const error = await page.errorBanner();
  assert.match(error, new RegExp(`^${name} \\(team config\\): `));
  assert.match(error, /agentType/);
  assert.equal(await page.memberCount(), members);
  assert.equal(await page.promptText(), prompt);
  // A valid peer config then loads and replaces the team.
  const good = await readFile(new URL('tests/fixtures/peer/valid/cli-config-minimal.json', root), 'utf8');
  await page.openFile('cli-config-minimal.json', good);
  await page.page.waitForFunction((n) => document.querySelectorAll('[data-testid="member-row"]').length !== n, members);
  page.assertNoErrors();
  await context.close();
});

test('a reload restores the session, and a corrupt stored session is set aside, not lost', async () => {
  const { context, page } = await visit();
  await page.simulate();
  await page.send('[FROM: kailai] one more thing [NEXT: sarah]');
  const count = await page.timelineCount();
  const last = await page.lastMessageText();
  // Saving is deferred by a few ms; leaving the page right after a change must not lose it.
  await page.send('[FROM: kailai] and the very last one');
  const lastCount = await page.timelineCount();
  await page.reload();
  assert.equal(await page.timelineCount(), lastCount);
  assert.equal(await page.by('timeline-message').nth(count - 1).locator('.content').textContent(), last);
  assert.match(await page.lastMessageText(), /and the very last one/);
  // A message being typed survives a reload; it belongs to its session (another one shows
  // its own draft); once sent, it is no longer kept.
  await page.by('composer-input').fill('half a thought [NEXT: ma');
  await page.reload();
  assert.equal(await page.by('composer-input').inputValue(), 'half a thought [NEXT: ma');
  const first = await page.by('session-select').inputValue();
  await page.by('library-toggle').click();
  await page.by('library-new').click();
  await page.page.waitForFunction((id) => document.querySelector('[data-testid=session-select]').value !== id, first);
  assert.equal(await page.by('composer-input').inputValue(), '', 'a new session has no draft');
  await page.by('session-select').selectOption(first);
  await page.page.waitForFunction(() => document.querySelector('[data-testid=composer-input]').value === 'half a thought [NEXT: ma');
  await page.by('composer-input').fill('[FROM: kailai] a whole thought');
  await page.by('composer-send').click();
  await page.page.waitForFunction(() => document.querySelector('[data-testid="composer-input"]').value === '');
  await page.reload();
  assert.equal(await page.by('composer-input').inputValue(), '');

  // The log of the session shown (in the library this browser keeps) no longer reads.
  await page.page.evaluate(() => {
    const { current } = JSON.parse(localStorage.getItem('agent-chatter/library'));
    localStorage.setItem(`agent-chatter/session/${current}`, '{"format": "agent-chatter-session/1", "facts": [{"type": "human"}]}');
  });
  await page.reload();
  assert.match(await page.errorBanner(), /could not be read .*facts\[0\].*set aside/);
  // The new session made above was left unused, so it left the library: the demo is shown
  // instead.
  assert.equal(await page.timelineCount(), 3, 'the demo is shown instead');
  const kept = await page.page.evaluate(() => localStorage.getItem('agent-chatter/session.unreadable'));
  assert.match(kept, /"type": "human"/);
  await context.close();
});

test('edit → inspector update on a 10⁴-message session with 4 agents (timing printed)', async () => {
  const { context, page } = await visit();
  // The file is chosen from disk, as a user picks it (a file given as bytes would first
  // cross the DevTools protocol, base64-encoded, which no user waits for).
  await mkdir(screenshots, { recursive: true });
  const path = fileURLToPath(new URL('big-session.json', screenshots));
  await writeFile(path, JSON.stringify(bigSession(10_000)));
  // Two load figures: the whole step as the test sees it (file chosen → the session shown)
  // and the page's own part, from the file input's change event to the next frame showing
  // the session.
  await page.page.evaluate(() => {
    document.addEventListener('change', (e) => {
      if (e.target.dataset?.testid === 'import-file') window.fileChosenAt = performance.now();
    }, true);
  });
  const loadStart = Date.now();
  await page.by('import-file').setInputFiles(path);
  await page.page.waitForFunction(() => document.querySelector('[data-testid="inspector-at"]')?.textContent.includes('#10000'));
  const loadMs = Date.now() - loadStart;
  const pageLoadMs = Math.round(await page.page.evaluate(() => new Promise((r) => {
    requestAnimationFrame(() => r(performance.now() - window.fileChosenAt));
  })));
  assert.equal(await page.by('error-banner').count(), 0);

  // Three kinds of edit (a setting, a selected message, a new message); each timed from the
  // change to the inspector's effect (performance mark) and to the next painted frame.
  await installEditTimer(page.page);
  const samples = await page.page.evaluate(async () => {
    const out = { setting: [], select: [], message: [] };
    const setting = document.querySelector('[data-testid="setting-window"]');
    for (let i = 0; i < 21; i++) {
      out.setting.push(await window.timeEdit(() => {
        setting.value = String(4 + (i % 2));
        setting.dispatchEvent(new Event('change', { bubbles: true }));
      }));
    }
    for (let i = 0; i < 21; i++) {
      const rows = document.querySelectorAll('[data-testid="timeline-message"]');
      out.select.push(await window.timeEdit(() => rows[rows.length - 2 - (i % 3)].click()));
    }
    // Back to the latest message, so that a new message is what the inspector shows.
    [...document.querySelectorAll('.inspector-head button')].find((b) => b.textContent === 'latest')?.click();
    await window.settle();
    const input = document.querySelector('[data-testid="composer-input"]');
    const send = document.querySelector('[data-testid="composer-send"]');
    for (let i = 0; i < 11; i++) {
      out.message.push(await window.timeEdit(() => {
        input.value = `[FROM: kailai] timing ${i}`;
        input.dispatchEvent(new Event('input', { bubbles: true }));
        send.click();
      }));
    }
    return out;
  });
  const report = {
    messages: 10_000, agents: 4, loadMs, 'load: file chosen → next frame ms': pageLoadMs, ...medians(samples),
  };
  console.log(`e2e timing: ${JSON.stringify(report)}`);
  for (const [kind, xs] of Object.entries(samples)) {
    assert.ok(xs.every((s) => Number.isFinite(s.update)), `${kind}: the inspector reported every update`);
  }
  await mkdir(screenshots, { recursive: true });
  await writeFile(new URL('timings.json', screenshots), JSON.stringify(report, null, 2));
  await page.screenshot('big-session.png');
  page.assertNoErrors();
  await context.close();
});

test('prompts of half a megabyte: each column shows its head and says what follows; edits stay quick (timing printed)', async () => {
  const { context, page } = await visit();
  await page.openFile('big-text.json', JSON.stringify(bigTextSession(20, 100)));
  await page.page.waitForFunction(() => document.querySelector('[data-testid="inspector-at"]')?.textContent.includes('#20'));
  assert.equal(await page.by('side-column').count(), 4);
  assert.equal(await page.by('column-more').count(), 4, 'every column says its prompt goes on');
  // Bo's column (openai-codex: no system flag) is the head of Bo's whole prompt, which the
  // inspector shows once the column is selected.
  const column = page.by('side-column').nth(1);
  const shown = await column.locator('pre').textContent();
  const more = Number((await column.getByTestId('column-more').textContent()).match(/… (\d+) more bytes/)[1]);
  await column.click();
  await page.page.waitForFunction(() => document.querySelector('[data-testid="recipient-select"]')?.value === 'a2');
  const prompt = await page.by('prompt-text').textContent();
  assert.ok(prompt.startsWith(shown));
  assert.equal(Buffer.byteLength(shown) + more, Buffer.byteLength(prompt));
  assert.ok(Buffer.byteLength(prompt) > 400_000, `a prompt of ${Buffer.byteLength(prompt)} B`);

  await installEditTimer(page.page);
  const samples = await page.page.evaluate(async () => {
    const out = { setting: [] };
    const setting = document.querySelector('[data-testid="setting-window"]');
    for (let i = 0; i < 11; i++) {
      out.setting.push(await window.timeEdit(() => {
        setting.value = String(4 + (i % 2));
        setting.dispatchEvent(new Event('change', { bubbles: true }));
      }));
    }
    return out;
  });
  // The diff against the previous message shows the lines that changed with three unchanged
  // ones around each change; the thousands of others are folded, saying how many.
  await page.by('diff-toggle').click();
  await page.by('diff-fold').first().waitFor();
  const folds = await page.by('diff-fold').allTextContents();
  assert.ok(folds.every((f) => /^⋯ \d+ unchanged lines$/.test(f)), folds.join(' | '));
  const folded = folds.reduce((n, f) => n + Number(f.match(/\d+/)[0]), 0);
  const [added, removed] = (await page.by('diff-view').locator('.diff-summary').textContent()).match(/\d+/g).map(Number);
  const rows = await page.by('diff-view').locator('[data-sign]').count();
  assert.ok(folded > 1000 && rows < 50, `${folded} lines folded, ${rows} shown`);
  assert.equal(await page.by('diff-view').locator('[data-sign="+"]').count(), added);
  assert.equal(await page.by('diff-view').locator('[data-sign="-"]').count(), removed);

  console.log(`e2e timing (prompts of ${Buffer.byteLength(prompt)} B, 4 agents): ${JSON.stringify(medians(samples))}`);
  page.assertNoErrors();
  await context.close();
});
