// The built page (web/dist) served on loopback and one Chromium, for a test file: call
// `servedPage()` at the top level; it registers the before/after hooks.
import { after, before } from 'node:test';
import { fileURLToPath } from 'node:url';
import { serve } from './server.mjs';
import { launch } from './browser.mjs';
import { InspectorPage } from './inspector-page.mjs';

export const root = new URL('../../../', import.meta.url);

/** The npm package's Node build (pkg/, from `cargo xtask dist`): the core's own answers. */
export const core = await import(new URL('pkg/node/agent_chatter_wasm.js', root).href);

export function servedPage() {
  const served = { server: null, browser: null };
  before(async () => {
    served.server = await serve(fileURLToPath(new URL('web/dist/', root)));
    served.browser = await launch();
  });
  after(async () => {
    await served.browser?.close();
    await served.server?.close();
  });
  /** A fresh visitor (new browser context, nothing stored yet) on `url` (the page by default). */
  served.visit = async (url = served.server.url, viewport = { width: 1440, height: 1000 }) => {
    const context = await served.browser.newContext({ viewport, acceptDownloads: true });
    const page = new InspectorPage(await context.newPage(), url);
    await page.open();
    return { context, page };
  };
  return served;
}
