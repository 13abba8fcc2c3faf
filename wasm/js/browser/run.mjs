// Loads the suites named in `?suites=a,b` and runs their tests one by one; the results land in
// `window.__results` for web/e2e/npm-suite.test.mjs.
import { registered } from './test-shim.mjs';

// The suites measure UTF-8 sizes with Node's Buffer.byteLength.
globalThis.Buffer = { byteLength: (s) => new TextEncoder().encode(String(s)).length };

const results = [];
try {
  const suites = new URLSearchParams(location.search).get('suites').split(',');
  for (const suite of suites) {
    const before = registered.length;
    await import(`/wasm/js/${suite}.test.mjs`);
    for (const { name, fn } of registered.slice(before)) {
      try {
        await fn();
        results.push({ suite, name, ok: true });
      } catch (e) {
        results.push({ suite, name, ok: false, error: `${e?.name}: ${e?.message}` });
      }
    }
  }
} catch (e) {
  results.push({ suite: '(loading)', name: 'load the suites', ok: false, error: String(e?.stack ?? e) });
}
window.__results = results;
