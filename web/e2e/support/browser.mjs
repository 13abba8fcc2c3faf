// Debian's Chromium driven by playwright-core, with the flags of docs/architecture.md §18.
import { chromium } from 'playwright-core';

const executablePath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export const launchArgs = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
  '--disable-dev-shm-usage',
];

export function launch() {
  return chromium.launch({ executablePath, headless: true, args: launchArgs });
}
