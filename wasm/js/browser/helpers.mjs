// The browser's wasm/js/helpers.mjs: the web build only, initialised with `init()` (which
// fetches the wasm next to the module), and files fetched from the server's root.
import init, * as web from '/pkg/web/index.js';

await init();

export const root = new URL('/', location.href);
export const pkgDir = new URL('pkg/', root);
export const builds = [['web', web]];

export async function readJson(relative) {
  return (await fetch(new URL(relative, root))).json();
}

export async function readText(relative) {
  return (await fetch(new URL(relative, root))).text();
}
