// The package's weight as npm ships it: the tarball `npm pack` makes of pkg/ and the wasm
// binary gzipped. Ratchets: each limit is today's size rounded up, so a change that grows the
// package fails here until the growth is argued for (history: docs/measurements.md); issue 43's
// targets are the TARGET constants.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { pkgDir } from './helpers.mjs';

/** The most the packed tarball may weigh, in bytes (target 350 000). */
const TARBALL_LIMIT = 492_500;
/** The most the wasm binary may weigh gzipped (level 9), in bytes (target 200 KiB = 204 800). */
const WASM_GZIP_LIMIT = 230_500;

test(`the packed tarball weighs at most ${TARBALL_LIMIT} bytes`, () => {
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const [packed] = JSON.parse(execFileSync(npm, ['pack', '--dry-run', '--json', fileURLToPath(pkgDir)], { encoding: 'utf8' }));
  assert.ok(packed.size <= TARBALL_LIMIT, `tarball ${packed.size} bytes, over ${TARBALL_LIMIT} by ${packed.size - TARBALL_LIMIT}`);
  // One copy of the binary as a file: the embedded build carries its own, compressed.
  const wasmFiles = packed.files.map((f) => f.path).filter((p) => p.endsWith('.wasm'));
  assert.deepEqual(wasmFiles, ['agent_chatter_wasm_bg.wasm']);
});

test(`the wasm binary weighs at most ${WASM_GZIP_LIMIT} bytes gzipped`, () => {
  const gzip = gzipSync(readFileSync(new URL('agent_chatter_wasm_bg.wasm', pkgDir)), { level: 9 }).length;
  assert.ok(gzip <= WASM_GZIP_LIMIT, `wasm ${gzip} bytes gzipped, over ${WASM_GZIP_LIMIT} by ${gzip - WASM_GZIP_LIMIT}`);
});
