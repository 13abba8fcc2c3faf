// Extra sections (docs/architecture.md §10, issue #24.3): a member's extraSections from the
// team config reach its prompt, the inspector says what became of each one (kept whole,
// compacted, trimmed away), and the team editor adds, edits and removes them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { servedPage } from './support/served.mjs';

const { visit } = servedPage();

function team({ maxBytes = 786432, extra }) {
  return {
    id: 'plans', name: 'Planning crew',
    members: [
      { id: 'kailai', name: 'kailai', displayName: 'Kailai', kind: 'human' },
      {
        id: 'max', name: 'max', displayName: 'Max', kind: 'ai', agentType: 'codex',
        systemInstruction: 'You are Max.', extraSections: extra,
      },
    ],
    settings: { windowSize: 5, maxBytes, pinFirst: false },
  };
}

async function openTeam(page, config) {
  await page.openFile('team.json', JSON.stringify(config));
  await page.page.waitForFunction(() => document.querySelector('[data-testid="timeline-message"]') === null);
  await page.send('[FROM: kailai] Plan the release. [NEXT: max]');
  await page.page.waitForFunction(() => document.querySelector('[data-testid="prompt-text"]')?.textContent.includes('Plan the release.'));
}

const fates = (page) => page.by('extra-section').evaluateAll((rows) =>
  rows.map((r) => [r.dataset.name, r.dataset.fate, r.textContent]));

test('an extra section from the team config is in the prompt and, kept whole, in the inspector', async () => {
  const { context, page } = await visit();
  await openTeam(page, team({ extra: [{ name: 'plan', content: 'Step 1: read the diff.', priority: 1, compactable: true }] }));
  const prompt = await page.promptText();
  assert.match(prompt, /\[PLAN\]\nStep 1: read the diff\./);
  const rows = await fates(page);
  assert.equal(rows.length, 1);
  assert.equal(rows[0][0], 'plan');
  assert.equal(rows[0][1], 'kept');
  assert.match(rows[0][2], /extra section/i);
  assert.match(rows[0][2], /kept whole/);
  assert.match(rows[0][2], /priority 1 · compactable/);
  assert.match(await page.by('section-bar').filter({ hasText: 'extra: plan' }).textContent(), /\d+ B/);
  page.assertNoErrors();
  await context.close();
});

test('over the budget: the higher priority section is trimmed away, the next compacted', async () => {
  const { context, page } = await visit();
  await openTeam(page, team({
    maxBytes: 1200,
    extra: [
      { name: 'memory', content: 'remember '.repeat(220), priority: 1, compactable: true },
      { name: 'tools', content: 'tool output '.repeat(170), priority: 5, compactable: true },
      { name: 'rules', content: 'Never push on Fridays.', priority: 0, compactable: false },
    ],
  }));
  const rows = Object.fromEntries((await fates(page)).map(([name, fate, text]) => [name, { fate, text }]));
  assert.equal(rows.tools.fate, 'trimmed', rows.tools.text);
  assert.match(rows.tools.text, /trimmed away/);
  assert.equal(rows.memory.fate, 'compacted', rows.memory.text);
  assert.match(rows.memory.text, /compacted: cut from \d+ to \d+ B/);
  assert.equal(rows.rules.fate, 'kept', rows.rules.text);
  assert.match(rows.rules.text, /never compacted/);
  const prompt = await page.promptText();
  assert.ok(Buffer.byteLength(prompt) <= 1200);
  assert.doesNotMatch(prompt, /tool output/);
  assert.match(prompt, /Never push on Fridays\./);
  await page.screenshot('extra-sections.png');
  page.assertNoErrors();
  await context.close();
});

test('the team editor adds, edits and removes a member\'s extra sections, and the prompt follows', async () => {
  const { context, page } = await visit();
  await openTeam(page, team({ extra: [{ name: 'plan', content: 'Step 1: read the diff.', priority: 1, compactable: true }] }));
  const max = page.by('member-row').filter({ has: page.page.locator('.member-name[aria-label="name"]') }).nth(1);
  const editors = max.getByTestId('extra-section-editor');
  assert.equal(await editors.count(), 1);
  // Edit the content: the prompt changes.
  await editors.first().locator('.extra-content').fill('Step 1: write the changelog.');
  await editors.first().locator('.extra-content').dispatchEvent('change');
  await page.page.waitForFunction(() => document.querySelector('[data-testid="prompt-text"]').textContent.includes('Step 1: write the changelog.'));
  assert.doesNotMatch(await page.promptText(), /read the diff/);
  // Rename it: the header follows.
  await editors.first().locator('.extra-name').fill('roadmap');
  await editors.first().locator('.extra-name').dispatchEvent('change');
  await page.page.waitForFunction(() => document.querySelector('[data-testid="prompt-text"]').textContent.includes('[ROADMAP]'));
  // Add a second one and give it content.
  await max.getByTestId('add-extra-section').click();
  assert.equal(await editors.count(), 2);
  await editors.nth(1).locator('.extra-content').fill('Known bugs: none.');
  await editors.nth(1).locator('.extra-content').dispatchEvent('change');
  await page.page.waitForFunction(() => document.querySelector('[data-testid="prompt-text"]').textContent.includes('Known bugs: none.'));
  assert.deepEqual((await fates(page)).map(([name, fate]) => [name, fate]), [['roadmap', 'kept'], ['section2', 'kept']]);
  // A duplicate name is refused by the team reader, naming the field; nothing changes.
  await editors.nth(1).locator('.extra-name').fill('roadmap');
  await editors.nth(1).locator('.extra-name').dispatchEvent('change');
  assert.match(await page.errorBanner(), /extraSections.*duplicate "roadmap"/);
  assert.equal(await editors.nth(1).locator('.extra-name').inputValue(), 'section2');
  // Remove the first: its text leaves the prompt.
  await editors.first().getByRole('button', { name: 'remove this extra section' }).click();
  await page.page.waitForFunction(() => !document.querySelector('[data-testid="prompt-text"]').textContent.includes('ROADMAP'));
  assert.equal(await editors.count(), 1);
  assert.match(await page.promptText(), /Known bugs: none\./);
  await context.close();
});
