// The npm package's JS suite (wasm/js/*.test.mjs), run against its web build in headless
// Chromium: the same tests that run in Node, through wasm/js/browser/ (node:test and
// node:assert/strict shims, the web build initialised with `init()`). Suites that read Node's
// file system or load the Node build (package, preview, shapes) stay Node-only.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { serve } from './support/server.mjs';
import { launch } from './support/browser.mjs';

const root = new URL('../../', import.meta.url);
const SUITES = ['arguments', 'context-manager', 'conversation', 'markers', 'robustness', 'types'];

let server;
let browser;
before(async () => {
  server = await serve(fileURLToPath(root));
  browser = await launch();
});
after(async () => {
  await browser?.close();
  await server?.close();
});

test('the npm JS suite passes against the web build in Chromium', async () => {
  const page = await browser.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(`${server.url}wasm/js/browser/index.html?suites=${SUITES.join(',')}`);
  const results = await page.waitForFunction(() => window.__results, null, { timeout: 60_000 }).then((h) => h.jsonValue());
  const failed = results.filter((r) => !r.ok);
  assert.deepEqual(errors, [], 'no uncaught page errors');
  assert.deepEqual(failed, [], `${failed.length} of ${results.length} browser tests failed`);
  // Every suite ran its web tests (a suite that registers nothing would pass silently).
  for (const suite of SUITES) {
    assert.ok(results.some((r) => r.suite === suite), `${suite}: no test ran in the browser`);
  }
  console.log(`npm suite in Chromium: ${results.length} tests passed`);
  await page.close();
});
