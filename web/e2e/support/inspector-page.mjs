// Page object of the prompt inspector: what a user does, by the testids of
// docs/architecture.md §13.
import { mkdir } from 'node:fs/promises';
import assert from 'node:assert/strict';

export const screenshots = new URL('../../../target/e2e/', import.meta.url);

export class InspectorPage {
  /** @param {import('playwright-core').Page} page */
  constructor(page, url) {
    this.page = page;
    this.url = url;
    this.errors = [];
    // Every dialog (confirm) is answered with `this.dialogAnswer` and its text kept in
    // `this.dialogs`, so a test says what the user answers rather than racing a handler.
    this.dialogs = [];
    this.dialogAnswer = true;
    page.on('dialog', (d) => {
      this.dialogs.push(d.message());
      return this.dialogAnswer ? d.accept() : d.dismiss();
    });
    page.on('pageerror', (e) => this.errors.push(`pageerror: ${e.message}`));
    page.on('console', (m) => {
      if (m.type() === 'error') this.errors.push(`console: ${m.text()}`);
    });
  }

  by(testid) {
    return this.page.getByTestId(testid);
  }

  async open() {
    await this.page.goto(this.url);
    await this.ready();
  }

  async ready() {
    await this.by('timeline').waitFor();
    await this.by('prompt-text').first().waitFor();
  }

  async reload() {
    await this.page.reload();
    await this.ready();
  }

  /** The exact bytes the inspector shows. */
  promptText() {
    return this.by('prompt-text').textContent();
  }

  async systemFlagText() {
    return (await this.by('system-flag-text').count()) ? this.by('system-flag-text').textContent() : null;
  }

  timelineCount() {
    return this.by('timeline-message').count();
  }

  async lastMessageText() {
    return this.by('timeline-message').last().locator('.content').textContent();
  }

  async speakers() {
    return this.by('timeline-message').locator('.from').allTextContents();
  }

  async send(text) {
    await this.by('composer-input').fill(text);
    await this.by('composer-send').click();
  }

  isDue() {
    return this.by('due-agent').isVisible();
  }

  async dueText() {
    return this.by('due-agent').locator('.due-title').textContent();
  }

  async simulate() {
    const before = await this.timelineCount();
    await this.by('agent-simulate').click();
    await this.page.waitForFunction(
      (n) => document.querySelectorAll('[data-testid="timeline-message"]').length > n, before);
  }

  async reply(text) {
    await this.by('agent-reply-input').fill(text);
    await this.by('agent-reply-send').click();
  }

  /** Simulates replies until no agent is due (the demo agent says [DONE] within a few rounds). */
  async simulateUntilDone(limit = 10) {
    for (let i = 0; i < limit && (await this.isDue()); i++) await this.simulate();
    assert.equal(await this.isDue(), false, 'an agent is still due');
  }

  async selectRecipient(id) {
    await this.by('recipient-select').selectOption(id);
  }

  async setWindow(n) {
    await this.by('setting-window').fill(String(n));
    await this.by('setting-window').dispatchEvent('change');
  }

  /** Classes of the rendered timeline rows, by message number. */
  async timelineFates() {
    return this.by('timeline-message').evaluateAll((rows) =>
      rows.map((r) => [Number(r.dataset.index), r.className]));
  }

  fateRows() {
    return this.by('fate-row').allTextContents();
  }

  async openFile(name, text) {
    await this.by('import-file').setInputFiles({ name, mimeType: 'application/json', buffer: Buffer.from(text) });
  }

  errorBanner() {
    return this.by('error-banner').textContent();
  }

  memberCount() {
    return this.by('member-row').count();
  }

  /** Opens the header menu ("open ▾", "save ▾": a `<details>`) holding `testid`, if closed. */
  async reveal(testid) {
    const entry = this.by(testid);
    if (await entry.evaluate((e) => !!e.closest('details:not([open])'))) {
      await entry.locator('xpath=ancestor::details[1]/summary').click();
    }
    return entry;
  }

  /** Opens a shared link with "open ▾" → "open a shared link". */
  async openLink(link) {
    await (await this.reveal('open-link')).click();
    await this.by('open-link-input').fill(link);
    await this.by('open-link-go').click();
  }

  /** Clicks an export entry of "save ▾" and returns the downloaded file's text. */
  async download(testid) {
    await this.reveal(testid);
    const [download] = await Promise.all([this.page.waitForEvent('download'), this.by(testid).click()]);
    const stream = await download.createReadStream();
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    return Buffer.concat(chunks).toString('utf8');
  }

  async screenshot(name) {
    await mkdir(screenshots, { recursive: true });
    await this.page.screenshot({ path: new URL(name, screenshots).pathname, fullPage: false });
  }

  assertNoErrors() {
    assert.deepEqual(this.errors, [], 'the page logged errors');
  }
}
