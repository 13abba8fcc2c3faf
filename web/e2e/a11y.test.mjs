// Issue #25.7: axe-core finds no serious or critical accessibility violation in any of the
// page's views (first visit with the demo, after a message, side by side, what-if, a member's
// extra section being edited), at a desktop, a short desktop and a phone size, nor on a page
// served by the bridge. Moderate and minor findings are printed as the test's diagnostics.
// Screenshots: target/e2e/a11y-*.png.
import { test } from 'node:test';
import { assertNoSevere, axeFindings } from './support/axe.mjs';
import { launch } from './support/browser.mjs';
import { bridgeDir, startBridge } from './support/bridge.mjs';
import { InspectorPage } from './support/inspector-page.mjs';
import { servedPage } from './support/served.mjs';

const { visit } = servedPage();

const viewports = [
  ['1440x900', { width: 1440, height: 900 }],
  ['1280x720', { width: 1280, height: 720 }],
  ['390x844', { width: 390, height: 844 }],
];

for (const [name, viewport] of viewports) {
  test(`axe: no serious or critical violation in any view at ${name}`, async (t) => {
    const { context, page } = await visit(undefined, viewport);
    const [severe, minor] = [[], []];
    const check = async (where) => {
      const found = await axeFindings(page.page, `${name}, ${where}`);
      severe.push(...found.severe);
      minor.push(...found.minor);
    };

    await check('first visit (the demo)');
    await page.screenshot(`a11y-${name}.png`);

    await page.send('[FROM: kailai] Please check the notes once more. [NEXT: max]');
    await page.page.waitForFunction(() => document.querySelectorAll('[data-testid="timeline-message"]').length === 4);
    await check('after sending a message');

    // A past message selected (time travel): later rows are shown as later.
    await page.by('timeline-message').first().click();
    await page.by('side-by-side').scrollIntoViewIfNeeded();
    await page.by('side-column').first().waitFor();
    await check('a past message, side by side in view');

    await page.by('whatif-window').fill('1');
    await page.by('whatif-window').dispatchEvent('change');
    await page.by('whatif-panel').filter({ hasText: 'what-if (on' }).waitFor();
    await check('what-if on');
    await page.by('whatif-reset').click();
    // At the latest message, a budget so small that history is trimmed (greyed rows).
    await page.by('timeline-message').last().click();
    await page.by('whatif-max-bytes').fill('350');
    await page.by('whatif-max-bytes').dispatchEvent('change');
    await page.page.locator('.timeline-message.fate-trimmed').first().waitFor();
    await check('what-if with messages trimmed for the budget');
    await page.by('whatif-reset').click();

    await page.by('add-extra-section').first().click();
    await page.by('extra-section-editor').first().waitFor();
    await page.by('extra-section-editor').first().scrollIntoViewIfNeeded();
    await check('a member card with an extra section being edited');

    await page.by('share-link').click();
    await page.by('share-url').waitFor();
    await check('the share link shown');

    for (const line of minor) t.diagnostic(line);
    assertNoSevere(severe);
    page.assertNoErrors();
    await context.close();
  });
}

test('axe: no serious or critical violation on a page served by the bridge (simulated agents)', async (t) => {
  const bridge = await startBridge(await bridgeDir('a11y'), { args: ['--simulate'] });
  const browser = await launch();
  try {
    const url = bridge.url;
    // The bridge's Content-Security-Policy forbids inline scripts: axe is injected as one.
    const context = await browser.newContext({ viewport: { width: 1440, height: 900 }, bypassCSP: true });
    const page = new InspectorPage(await context.newPage(), url);
    await page.page.goto(url);
    await page.by('connection-status').filter({ hasText: '● bridge' }).waitFor();
    await page.by('team-editor').waitFor();
    const [severe, minor] = [[], []];
    const check = async (where) => {
      const found = await axeFindings(page.page, `bridge, ${where}`);
      severe.push(...found.severe);
      minor.push(...found.minor);
    };
    await check('a new session');
    await page.send('[FROM: kailai] Please draft the notes. [NEXT: max]');
    await page.page.waitForFunction(() => document.querySelectorAll('[data-testid="timeline-message"]').length >= 2);
    await check('after the simulated replies');
    await page.screenshot('a11y-bridge-1440x900.png');
    for (const line of minor) t.diagnostic(line);
    assertNoSevere(severe);
    page.assertNoErrors();
    await context.close();
  } finally {
    await browser.close();
    bridge.kill();
  }
});
