// The package bundled for Node, as serverless and CLI authors ship it (docs/architecture.md §12):
// a program importing it by name (entry.mjs, entry.cjs) is bundled by esbuild (ESM and
// CommonJS output), Vite SSR with `ssr.noExternal: true` and webpack with `target: 'node'`,
// and each bundle runs alone in an empty directory (no node_modules, no .wasm file) and prints
// what the program prints unbundled.
//
// Run by `cargo xtask test` from a copy inside target/npm-consumers/ (where the pinned bundlers
// are installed): `node check.mjs <installed package dir>`, the package as the tarball
// installed it. Nothing is timed. Then runtimes.mjs: Bun, Rollup, workerd, esbuild for the
// browser and Jest's jsdom, each set up as the README says.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const installed = process.argv[2];
if (!installed) throw new Error('usage: node check.mjs <installed agent-chatter-wasm dir>');
const own = join(here, 'node_modules', 'agent-chatter-wasm');
rmSync(own, { recursive: true, force: true });
cpSync(installed, own, { recursive: true });
const out = join(here, 'out');
rmSync(out, { recursive: true, force: true });
const entry = (name) => join(here, name);

const node = (file, cwd) =>
  execFileSync(process.execPath, [file], { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
const expected = node(entry('entry.mjs'), here);
assert.equal(node(entry('entry.cjs'), here), expected, 'entry.cjs and entry.mjs print the same');

const esbuild = await import('esbuild');
const { build: vite } = await import('vite');
const { default: webpack } = await import('webpack');

const bundles = {
  'esbuild --format=esm': async (dir) => {
    await esbuild.build({ entryPoints: [entry('entry.mjs')], bundle: true, platform: 'node', format: 'esm', outfile: join(dir, 'main.mjs'), logLevel: 'warning' });
  },
  'esbuild --format=cjs': async (dir) => {
    await esbuild.build({ entryPoints: [entry('entry.mjs')], bundle: true, platform: 'node', format: 'cjs', outfile: join(dir, 'main.cjs'), logLevel: 'warning' });
  },
  'esbuild --format=cjs (require)': async (dir) => {
    await esbuild.build({ entryPoints: [entry('entry.cjs')], bundle: true, platform: 'node', format: 'cjs', outfile: join(dir, 'main.cjs'), logLevel: 'warning' });
  },
  'vite build --ssr (noExternal: true)': async (dir) => {
    await vite({
      configFile: false,
      root: here,
      logLevel: 'warn',
      ssr: { noExternal: true },
      build: { ssr: entry('entry.mjs'), outDir: dir, emptyOutDir: true, minify: false },
    });
  },
  "webpack (target: 'node')": (dir) =>
    new Promise((resolve, reject) => {
      webpack(
        { mode: 'production', target: 'node', context: here, entry: entry('entry.mjs'), output: { path: dir, filename: 'main.cjs' }, optimization: { minimize: false } },
        (err, stats) => (err ? reject(err) : stats.hasErrors() ? reject(new Error(stats.toString('errors-only'))) : resolve()),
      );
    }),
};

let failed = 0;
for (const [name, bundle] of Object.entries(bundles)) {
  const dir = join(out, name.replace(/[^a-z]+/gi, '-'));
  try {
    await bundle(dir);
    const files = readdirSync(dir).filter((f) => /\.[cm]?js$/.test(f));
    assert.equal(files.length, 1, `one script, found ${readdirSync(dir).join(', ')}`);
    assert.deepEqual(readdirSync(dir).filter((f) => f.endsWith('.wasm')), [], 'no .wasm file emitted');
    // Alone: an empty directory outside any node_modules.
    const alone = mkdtempSync(join(tmpdir(), 'agent-chatter-bundle-'));
    try {
      cpSync(join(dir, files[0]), join(alone, files[0]));
      assert.equal(node(join(alone, files[0]), alone), expected);
    } finally {
      rmSync(alone, { recursive: true, force: true });
    }
    const kb = Math.round(statSync(join(dir, files[0])).size / 1024);
    console.log(`ok: ${name}: ${files[0]} (${kb} KiB) runs alone`);
  } catch (e) {
    failed += 1;
    console.error(`FAILED: ${name}: ${String(e.message ?? e).split('\n').slice(0, 8).join('\n')}`);
  }
}
const { checkRuntimes } = await import('./runtimes.mjs');
const failedRuntimes = await checkRuntimes(here, expected);
if (failed + failedRuntimes > 0) {
  console.error(`${failed} of ${Object.keys(bundles).length} bundles and ${failedRuntimes} runtimes failed`);
  process.exit(1);
}
