import { join } from 'node:path';
import { startProcess, type ManagedProcess } from '../dev/managed-process.js';
import { PROJECT_ROOT } from '../dev/paths.js';
import { compileBenchEntry } from './compile-entry.js';

/**
 * One of the bench's own processes (the floor's worker, a peer): `entry` compiled and run by plain
 * node with its arguments as one JSON argument, logging to `<logDir>/<name>.log`. A process of its
 * own, so its CPU is metered apart and it can be SIGKILLed and started again (the crash column).
 * `env` adds to the bench's own environment, which it inherits.
 */
export interface BenchChild {
  name: string;
  start(): Promise<ManagedProcess>;
}

export function benchChild(
  name: string,
  entry: string,
  args: object,
  logDir: string,
  env: Record<string, string> = {},
): BenchChild {
  let compiled: Promise<string> | undefined;
  return {
    name,
    async start() {
      compiled ??= compileBenchEntry(entry);
      return startProcess({
        name,
        command: process.execPath,
        args: [await compiled, JSON.stringify(args)],
        cwd: PROJECT_ROOT,
        env: { ...process.env, ...env },
        logFile: join(logDir, `${name}.log`),
        graceMs: 15_000,
      });
    },
  };
}
