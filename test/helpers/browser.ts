import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';
import { CHROMIUM, injectedDebianTool } from './debian-tools.js';

/** Why this run has no browser, or undefined when it has one (set by global setup). */
export function browserSkipReason(): string | undefined {
  const chromium = injectedDebianTool(CHROMIUM);
  return 'skip' in chromium ? chromium.skip : undefined;
}

/** Headless chromium in a fresh profile; close() removes the profile. */
export async function launchBrowser(): Promise<{ context: BrowserContext; close(): Promise<void> }> {
  const profile = await mkdtemp(join(tmpdir(), 'orders-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM.path, // Debian's package: Playwright never downloads a browser of its own
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
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
