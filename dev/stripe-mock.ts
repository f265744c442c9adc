import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildOnce } from './cached-build.js';
import { logTail } from './log-tail.js';
import { startProcess } from './managed-process.js';
import { findFreePort, waitForPort } from './ports.js';
import { StartupError } from './startup-error.js';
import { findExecutable, toolCacheDir } from './tool-cache.js';

/**
 * stripe-mock, Stripe's own mock of its API (it validates every request against Stripe's OpenAPI
 * description and answers fixed fixtures). Stripe ships it as a Go module, so offline it is built
 * from the module proxy, like the Temporal servers, and cached outside the clone.
 */
export const STRIPE_MOCK_VERSION = '0.203.0';

export const STRIPE_MOCK_MISSING = 'no stripe-mock: install Go (1.21 or later) so it can be built';

/** The cached stripe-mock, else a fresh build with Go (about a minute on 2 cores). */
export async function resolveStripeMock(): Promise<string> {
  const dir = join(toolCacheDir(), `stripe-mock-${STRIPE_MOCK_VERSION}`);
  const binary = join(dir, 'stripe-mock');
  if (existsSync(binary)) return binary;
  const go = findExecutable('go');
  if (!go) throw new StartupError(STRIPE_MOCK_MISSING);
  await buildOnce({
    title: `stripe-mock ${STRIPE_MOCK_VERSION} (go install)`,
    dir,
    build: (workDir, run) =>
      run(go, ['install', `github.com/stripe/stripe-mock@v${STRIPE_MOCK_VERSION}`], {
        ...process.env,
        CGO_ENABLED: '0', // a static binary: no C toolchain needed, runs on any Linux
        GOBIN: workDir,
      }),
  });
  return binary;
}

export interface RunningStripeMock {
  /** For STRIPE_API_BASE. */
  apiBase: string;
  stop(): Promise<void>;
}

/** It listens within a second; the rest is slack for a loaded machine. */
const START_DEADLINE_MS = 15_000;

/** stripe-mock (built first if need be) on a free loopback port, plain HTTP. */
export async function startStripeMock(): Promise<RunningStripeMock> {
  const binary = await resolveStripeMock();
  const port = await findFreePort();
  const logFile = join(tmpdir(), `stripe-mock-${port}.log`);
  const mock = startProcess({
    name: 'stripe-mock',
    command: binary,
    args: ['-http-addr', `127.0.0.1:${port}`],
    logFile,
    stopSignal: 'SIGTERM',
    graceMs: 2_000,
  });
  const listening = await Promise.race([
    waitForPort('127.0.0.1', port, START_DEADLINE_MS),
    mock.exited.then(() => false),
  ]);
  if (!listening) {
    await mock.stop();
    throw new StartupError(
      `stripe-mock did not listen on 127.0.0.1:${port} within ${START_DEADLINE_MS / 1000} s; ${await logTail(logFile)}`,
    );
  }
  return {
    apiBase: `http://127.0.0.1:${port}`,
    async stop() {
      await mock.stop();
      await rm(logFile, { force: true }); // kept only while it may explain a failure to start
    },
  };
}
