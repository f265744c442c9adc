import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';
import { inject } from 'vitest';

/** Debian's chromium package: Playwright drives it; it never downloads a browser of its own. */
export const CHROMIUM_PATH = '/usr/bin/chromium';

/**
 * For global setup: Debian's chromium, installed with apt-get when it is missing and this runs as
 * root (a fresh CI machine). Returns the executable, or why browser tests must be skipped.
 */
export function ensureChromium(): { path: string } | { skip: string } {
  if (existsSync(CHROMIUM_PATH)) return { path: CHROMIUM_PATH };
  if (process.getuid?.() !== 0 || spawnSync('apt-get', ['--version']).status !== 0) {
    return { skip: `${CHROMIUM_PATH} is missing and cannot be installed here (needs root and apt-get): apt-get install -y chromium` };
  }
  console.log('Installing Debian\'s chromium for the browser tests (apt-get install -y chromium) …');
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  for (const args of [['update'], ['install', '-y', '--no-install-recommends', 'chromium']]) {
    const run = spawnSync('apt-get', args, { env, stdio: ['ignore', 'ignore', 'pipe'], timeout: 15 * 60_000 });
    if (run.status !== 0) return { skip: `apt-get ${args.join(' ')} failed: ${run.stderr?.toString().trim().split('\n').at(-1) ?? run.signal}` };
  }
  return existsSync(CHROMIUM_PATH) ? { path: CHROMIUM_PATH } : { skip: `apt-get installed chromium but ${CHROMIUM_PATH} is missing` };
}

/** Why this run has no browser, or undefined when it has one (set by global setup). */
export function browserSkipReason(): string | undefined {
  return inject('chromiumPath') === null ? inject('chromiumSkipReason') : undefined;
}

/** Headless chromium in a fresh profile; close() removes the profile. */
export async function launchBrowser(): Promise<{ context: BrowserContext; close(): Promise<void> }> {
  const profile = await mkdtemp(join(tmpdir(), 'orders-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: inject('chromiumPath')!,
    headless: true,
    args: [
      '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync',
    ],
  });
  return {
    context,
    async close() {
      await context.close();
      await rm(profile, { recursive: true, force: true });
    },
  };
}
