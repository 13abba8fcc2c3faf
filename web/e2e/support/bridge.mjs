// A real `agent-chatter serve` for a test file (docs/architecture.md §14): a database in a
// directory of its own, the built page (web/dist), and optionally a team file, an agents file
// (fake CLIs from bridge/tests/fixtures/agents/) and more flags.
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { createInterface } from 'node:readline';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { InspectorPage } from './inspector-page.mjs';

export const root = fileURLToPath(new URL('../../../', import.meta.url));
export const bin = process.env.AGENT_CHATTER_BIN ?? path.join(root, 'target/debug/agent-chatter');
/** A fake agent CLI of the bridge's tests. */
export const fixture = (name) => path.join(root, 'bridge/tests/fixtures/agents', name);

/** A port free now, for a bridge that must come back on the same one. */
export const freePort = () => new Promise((resolve, reject) => {
  const server = createServer();
  server.once('error', reject);
  server.listen(0, '127.0.0.1', () => {
    const { port } = server.address();
    server.close(() => resolve(port));
  });
});

/** A new empty directory for one test file's bridge (`agent-chatter-e2e-NAME-…`). */
export const bridgeDir = (name) => mkdtemp(path.join(tmpdir(), `agent-chatter-e2e-${name}-`));

/**
 * Starts `serve --port 0` (or `port`, for a bridge that must come back on the same one) with
 * its database in `dir`; `team` and `agents` (objects) are written to `team.json` and
 * `agents.json` there and passed with `--team` and `--agents`; `args` are added as they are;
 * `dist: false` serves the page built into the binary instead of web/dist. Resolves to the child process with `url`, the page's address with its
 * token, once the bridge printed it; rejects if the bridge exits first.
 */
export async function startBridge(dir, { team, agents, port = 0, args = [], dist = true } = {}) {
  const flags = ['serve', '--port', String(port), '--db', path.join(dir, 's.db')];
  if (dist) flags.push('--dist', path.join(root, 'web/dist'));
  if (team) {
    const file = path.join(dir, 'team.json');
    await writeFile(file, JSON.stringify(team));
    flags.push('--team', file);
  }
  if (agents) {
    const file = path.join(dir, 'agents.json');
    await writeFile(file, JSON.stringify({ agents }));
    flags.push('--agents', file);
  }
  const bridge = spawn(bin, [...flags, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  bridge.url = await new Promise((resolve, reject) => {
    bridge.once('error', reject);
    bridge.once('exit', (code) => reject(new Error(`the bridge exited with ${code} before printing its address`)));
    createInterface({ input: bridge.stdout }).once('line', resolve);
  });
  return bridge;
}

/** The demo team (src/demo-team.json), to change before a bridge starts with it. */
export const demoTeam = async () => JSON.parse(await readFile(path.join(root, 'src/demo-team.json'), 'utf8'));

/**
 * A bridge running fake CLIs for one test file: a new directory (`name`), the demo team as
 * `change` leaves it (models, env, settings), `agents` and `port` as [`startBridge`] takes them
 * (`agents` may be a function of the directory, for a fixture that keeps a file there).
 * Resolves to `{ dir, team, agents, bridge }`.
 */
export async function fakeCliBridge(name, { change = () => {}, agents, port } = {}) {
  const dir = await bridgeDir(name);
  const team = await demoTeam();
  change(team);
  const cli = typeof agents === 'function' ? agents(dir) : agents;
  const bridge = await startBridge(dir, { team, agents: cli, port });
  return { dir, team, agents: cli, bridge };
}

/**
 * Opens the page a bridge serves (`url`) in a new context of `browser` at `viewport` (CSP
 * bypassed so that axe can be injected; `clipboard`: reading and writing it allowed), once
 * it is connected and the bridge reported its agents. Resolves to `{ context, page }`.
 */
export async function openBridgePage(browser, url, { viewport = { width: 1440, height: 900 }, clipboard = false, acceptDownloads = false } = {}) {
  const context = await browser.newContext({ viewport, bypassCSP: true, acceptDownloads });
  if (clipboard) await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: new URL(url).origin });
  const page = new InspectorPage(await context.newPage(), url);
  await page.page.goto(url);
  await page.by('connection-status').filter({ hasText: '● bridge' }).waitFor();
  await page.by('agent-status').first().waitFor();
  return { context, page };
}
