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
