// Loads the built package (pkg/, from `cargo xtask dist`) in both of its builds, so every suite
// runs against the Node build (ESM nodejs module) and the web build (initialised with initSync),
// as lightningcss runs one suite against several builds.
import { readFile } from 'node:fs/promises';

export const root = new URL('../../', import.meta.url);
export const pkgDir = new URL('pkg/', root);

const node = await import(new URL('node/index.js', pkgDir).href);
const web = await import(new URL('web/index.js', pkgDir).href);
web.initSync({ module: await readFile(new URL('agent_chatter_wasm_bg.wasm', pkgDir)) });
// The build bundlers get for Node (the wasm embedded, ready on import).
const embedded = await import(new URL('embedded/index.js', pkgDir).href);

/** `[name, module]` for each build of the package. */
export const builds = [
  ['node', node],
  ['web', web],
  ['embedded', embedded],
];

/** Reads a JSON file relative to the repository root. */
export async function readJson(relative) {
  return JSON.parse(await readFile(new URL(relative, root), 'utf8'));
}

/** Reads a text file relative to the repository root. */
export async function readText(relative) {
  return readFile(new URL(relative, root), 'utf8');
}
