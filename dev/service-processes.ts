import { startProcess, type ManagedProcess } from './managed-process.js';
import { PROJECT_ROOT } from './paths.js';
import { waitForPort } from './ports.js';
import { StartupError } from './startup-error.js';

/** The service's own processes (`worker/main.ts`, `api/server.ts`) as children of a dev command. */
export function startTypeScript(name: string, entry: string, env: NodeJS.ProcessEnv, options: { logFile?: string } = {}): ManagedProcess {
  // One process per service (node with tsx's loader), so the stop signal reaches the service itself.
  return startProcess({ name, command: process.execPath, args: ['--import', 'tsx', entry], cwd: PROJECT_ROOT, env, graceMs: 15_000, ...options });
}

/** Resolves once the API accepts connections on `port`; fails if it exits or takes longer than `timeoutMs`. */
export async function waitForApi(apiExited: Promise<string>, port: number, timeoutMs = 60_000): Promise<void> {
  const ready = waitForPort('127.0.0.1', port, timeoutMs);
  const outcome = await Promise.race([ready, apiExited]);
  if (typeof outcome === 'string') throw new StartupError(`the API stopped during start-up (${outcome})`);
  if (!outcome) throw new StartupError(`the API did not open port ${port} within ${timeoutMs / 1000} s`);
}
