// The runtimes and bundlers beyond Node's usual bundlers (docs/architecture.md §12), each as the
// README says to use it: Bun (runtime, `bun build --target=bun`, `--compile`, and
// `--target=node --conditions=module`), Rollup with node-resolve's `exportConditions: ['node']`
// (and its default, which picks the browser build, as the README warns), Cloudflare's workerd
// (miniflare, the worker bundled as wrangler does), esbuild for the browser (the `.wasm` copied
// by hand), a Next.js edge route built by Turbopack and Jest's jsdom environment. Called by check.mjs, from target/npm-consumers/ where
// the pinned tools are; each check prints ok or FAILED with the reason.
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { copyFileSync, cpSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';

/** Runs every check; returns how many failed. `expected` is what entry.mjs prints unbundled. */
export async function checkRuntimes(here, expected) {
  const out = join(here, 'out-runtimes');
  rmSync(out, { recursive: true, force: true });
  const run = (cmd, args, options = {}) =>
    execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 120_000, ...options }).trim();
  const bun = join(here, 'node_modules', '.bin', 'bun');
  const pkg = join(here, 'node_modules', 'agent-chatter-wasm');
  /** `file` run by `runner` in an empty directory outside any node_modules. */
  const alone = (file, runner) => {
    const dir = mkdtempSync(join(tmpdir(), 'agent-chatter-runtime-'));
    try {
      cpSync(file, join(dir, basename(file)));
      return run(runner ?? join(dir, basename(file)), runner ? [join(dir, basename(file))] : [], { cwd: dir });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };

  const checks = {
    'bun (runtime)': () => assert.equal(run(bun, [join(here, 'entry.mjs')], { cwd: here }), expected),
    'bun build --target=bun': () => {
      run(bun, ['build', '--target=bun', join(here, 'entry.mjs'), '--outfile', join(out, 'bun', 'main.mjs')], { cwd: here });
      assert.equal(alone(join(out, 'bun', 'main.mjs'), bun), expected);
    },
    'bun build --compile': () => {
      run(bun, ['build', '--compile', join(here, 'entry.mjs'), '--outfile', join(out, 'bun-compile', 'app')], { cwd: here });
      assert.equal(alone(join(out, 'bun-compile', 'app')), expected);
    },
    'bun build --target=node --conditions=module': () => {
      run(bun, ['build', '--target=node', '--conditions=module', join(here, 'entry.mjs'), '--outfile', join(out, 'bun-node', 'main.mjs')], { cwd: here });
      assert.equal(alone(join(out, 'bun-node', 'main.mjs'), process.execPath), expected);
    },
    "rollup + node-resolve (exportConditions: ['node'])": async () => {
      const file = await rollupBundle(here, out, 'rollup-node', { exportConditions: ['node'] });
      assert.equal(alone(file, process.execPath), expected);
    },
    'rollup + node-resolve defaults: the browser build, as the README warns': async () => {
      const file = await rollupBundle(here, out, 'rollup-default', {});
      assert.match(readFileSync(file, 'utf8'), /module_or_path = new URL\(/, 'the web build, which fetches its .wasm');
      assert.throws(() => alone(file, process.execPath));
    },
    'workerd (miniflare), bundled as wrangler does': async () => {
      assert.equal(await inWorkerd(here, out), expected);
    },
    'esbuild --platform=browser, the .wasm copied beside': async () => {
      const esbuild = await import('esbuild');
      const dir = join(out, 'esbuild-browser');
      await esbuild.build({ entryPoints: [join(here, 'browser-entry.mjs')], bundle: true, platform: 'browser', format: 'esm', outfile: join(dir, 'main.mjs'), logLevel: 'warning' });
      assert.deepEqual(readdirSync(dir), ['main.mjs'], 'esbuild copies no .wasm (the README says to)');
      copyFileSync(join(pkg, 'agent_chatter_wasm_bg.wasm'), join(dir, 'agent_chatter_wasm_bg.wasm'));
      // A browser's fetch of the file URL: Node's fetch has no file: scheme.
      writeFileSync(join(dir, 'page.mjs'), [
        "import { readFile } from 'node:fs/promises';",
        "globalThis.fetch = async (url) => new Response(await readFile(new URL(url)), { headers: { 'content-type': 'application/wasm' } });",
        "await import('./main.mjs');",
      ].join('\n'));
      assert.equal(run(process.execPath, [join(dir, 'page.mjs')], { cwd: dir }), 'P1');
    },
    "next build (Turbopack), an edge route: the .wasm imported with ?module, init({ module_or_path })": async () => {
      assert.equal(await inNextEdge(here), 'P1');
    },
    "jest --testEnvironment=jsdom (customExportConditions: ['node'], TextEncoder set up)": () => {
      const dir = join(here, 'jsdom');
      rmSync(dir, { recursive: true, force: true });
      mkdirSync(dir);
      for (const file of ['jsdom-check.mjs', 'jsdom-setup.mjs']) copyFileSync(join(here, file), join(dir, file));
      const config = {
        rootDir: dir,
        testEnvironment: 'jsdom',
        testEnvironmentOptions: { customExportConditions: ['node'] },
        setupFiles: ['<rootDir>/jsdom-setup.mjs'],
        transform: {},
        testMatch: ['<rootDir>/jsdom-check.mjs'],
      };
      run(process.execPath, ['--experimental-vm-modules', join(here, 'node_modules', 'jest', 'bin', 'jest.js'), '--config', JSON.stringify(config), '--ci'], { cwd: here });
    },
  };

  let failed = 0;
  for (const [name, check] of Object.entries(checks)) {
    try {
      await check();
      console.log(`ok: ${name}`);
    } catch (e) {
      failed += 1;
      const detail = [e.message, e.stderr].filter(Boolean).join('\n');
      console.error(`FAILED: ${name}: ${detail.split('\n').slice(0, 12).join('\n')}`);
    }
  }
  return failed;
}

/** entry.mjs bundled by Rollup with node-resolve given `options`, as ESM: its one file. */
async function rollupBundle(here, out, name, options) {
  const { rollup } = await import('rollup');
  const { nodeResolve } = await import('@rollup/plugin-node-resolve');
  const bundle = await rollup({ input: join(here, 'entry.mjs'), plugins: [nodeResolve(options)], onwarn: () => {} });
  const file = join(out, name, 'main.mjs');
  await bundle.write({ file, format: 'es' });
  await bundle.close();
  return file;
}

/**
 * worker.mjs bundled as wrangler bundles a worker (its conditions `workerd`, `worker`,
 * `browser`; each imported `.wasm` kept as a module of its own) and run by workerd through
 * miniflare: the text of its response.
 */
async function inWorkerd(here, out) {
  const esbuild = await import('esbuild');
  const { Miniflare } = await import('miniflare');
  const dir = join(out, 'workerd');
  const wasm = [];
  await esbuild.build({
    entryPoints: [join(here, 'worker.mjs')], bundle: true, format: 'esm', platform: 'neutral',
    outfile: join(dir, 'worker.mjs'), conditions: ['workerd', 'worker', 'browser'],
    mainFields: ['browser', 'module', 'main'], logLevel: 'warning',
    plugins: [{
      name: 'wasm-modules',
      setup(build) {
        build.onResolve({ filter: /\.wasm$/ }, (args) => {
          wasm.push(join(args.resolveDir, args.path));
          return { path: `./${basename(args.path)}`, external: true };
        });
      },
    }],
  });
  assert.equal(wasm.length, 1, 'the worker imports the package\'s .wasm as a module');
  const mf = new Miniflare({
    modules: [
      { type: 'ESModule', path: join(dir, 'worker.mjs'), contents: readFileSync(join(dir, 'worker.mjs'), 'utf8') },
      ...wasm.map((p) => ({ type: 'CompiledWasm', path: join(dir, basename(p)), contents: readFileSync(p) })),
    ],
    compatibilityDate: '2026-07-01',
  });
  try {
    const response = await mf.dispatchFetch('http://localhost/');
    const text = await response.text();
    assert.equal(response.status, 200, text);
    return text;
  } finally {
    await mf.dispose();
  }
}

/**
 * A Next.js app with one edge route, written as the README says (the `.wasm` imported by path
 * with `?module`, given to `init`), built by `next build` (Turbopack) and served by
 * `next start`: the route's answer.
 */
async function inNextEdge(here) {
  const app = join(here, 'next-app');
  rmSync(app, { recursive: true, force: true });
  mkdirSync(join(app, 'app', 'api', 'edge'), { recursive: true });
  const files = {
    'package.json': '{ "private": true }\n',
    'next.config.mjs': `export default { turbopack: { root: ${JSON.stringify(here)} } };\n`,
    'app/layout.js': 'export default function Root({ children }) { return <html><body>{children}</body></html>; }\n',
    'app/api/edge/route.js': [
      "import init, { parseMessage } from 'agent-chatter-wasm';",
      "import wasm from '../../../../node_modules/agent-chatter-wasm/agent_chatter_wasm_bg.wasm?module';",
      "export const runtime = 'edge';",
      'export async function GET() {',
      '  await init({ module_or_path: wasm });',
      "  return new Response(parseMessage('Hello [NEXT: max !P1]').parsedAddressees[0].intent);",
      '}',
    ].join('\n'),
  };
  for (const [name, text] of Object.entries(files)) writeFileSync(join(app, name), text);
  const next = join(here, 'node_modules', 'next', 'dist', 'bin', 'next');
  const env = { ...process.env, NEXT_TELEMETRY_DISABLED: '1' };
  execFileSync(process.execPath, [next, 'build'], { cwd: app, env, stdio: ['ignore', 'pipe', 'pipe'], timeout: 180_000 });
  const port = await freePort();
  const server = spawn(process.execPath, [next, 'start', '-p', String(port), '-H', '127.0.0.1'], { cwd: app, env, stdio: 'ignore' });
  try {
    const deadline = Date.now() + 30_000;
    for (;;) {
      try {
        const response = await fetch(`http://127.0.0.1:${port}/api/edge`);
        const text = await response.text();
        assert.equal(response.status, 200, text.slice(0, 300));
        return text;
      } catch (e) {
        if (e.code === 'ERR_ASSERTION' || Date.now() > deadline) throw e;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    }
  } finally {
    server.kill();
  }
}

/** A TCP port free on 127.0.0.1 now. */
function freePort() {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
}
