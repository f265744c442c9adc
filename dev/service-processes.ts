import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { startProcess, type ManagedProcess } from './managed-process.js';
import { PROJECT_ROOT } from './paths.js';
import { StartupError } from './startup-error.js';

/**
 * The service's processes as children of a dev command: the local stack's entries (`dev/worker.ts`,
 * `dev/api.ts`, which hand the fakes in), or the product's own (`worker/main.ts`, `api/server.ts`).
 */
export function startTypeScript(
  name: string,
  entry: string,
  env: NodeJS.ProcessEnv,
  options: { logFile?: string } = {},
): ManagedProcess {
  // One process per service (node with tsx's loader), so the stop signal reaches the service itself.
  return startService(name, ['--import', 'tsx', entry], env, options);
}

/**
 * The same process compiled: `node dist-dev/<entry>.js` (`npm run build:dev` made it: the image's
 * code with the local stack's entries). `entry` is the source's path, `dev/worker.ts`; `root` the
 * checkout whose dist-dev/ runs (this one by default).
 */
export function startCompiled(
  name: string,
  entry: string,
  env: NodeJS.ProcessEnv,
  options: { logFile?: string; root?: string } = {},
): ManagedProcess {
  const { root = PROJECT_ROOT, ...rest } = options;
  return startService(name, [join(root, 'dist-dev', entry.replace(/\.ts$/, '.js'))], env, rest);
}

function startService(
  name: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  options: { logFile?: string },
): ManagedProcess {
  return startProcess({ name, command: process.execPath, args, cwd: PROJECT_ROOT, env, graceMs: 15_000, ...options });
}

/**
 * Resolves once the API itself answers `GET /healthz` on `port` (200 or 503: either way it is up);
 * fails if it exits or takes longer than `timeoutMs`. A bare TCP check is not enough: another
 * process holding the port would pass it while the API dies with EADDRINUSE.
 */
export async function waitForApi(apiExited: Promise<string>, port: number, timeoutMs = 60_000): Promise<void> {
  let exited: string | undefined;
  void apiExited.then((how) => (exited = how));
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    if (exited !== undefined) throw new StartupError(`the API stopped during start-up (${exited})`);
    if (await answersHealth(port)) return;
    await sleep(200);
  }
  throw new StartupError(`the API did not answer GET /healthz on port ${port} within ${timeoutMs / 1000} s`);
}

async function answersHealth(port: number): Promise<boolean> {
  try {
    const res = await fetch(`http://127.0.0.1:${port}/healthz`, { signal: AbortSignal.timeout(5_000) });
    const body = (await res.json()) as Record<string, unknown>;
    return 'db' in body && 'temporal' in body;
  } catch {
    return false; // nothing listening yet, or not the API
  }
}
