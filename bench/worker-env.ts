import { WORKER_TUNING_VARIABLES } from './settings.js';
import type { BenchOptions } from './options.js';

/**
 * The WORKER_* tuning the bench's service workers run with (`--env`, and `--cache N` as
 * WORKER_MAX_CACHED_WORKFLOWS), for every worker that must run alike: the service's own and the
 * floor's `project` one. The rest of the service's environment stays the service's.
 */
export function workerTuningEnv(
  serviceEnv: BenchOptions['serviceEnv'],
  /** Undefined: the SDK's default cache (the warm pair), unless `--env` sets one. */
  cache: number | undefined,
): Record<string, string> {
  const tuning = Object.entries(serviceEnv).filter(([name]) =>
    (WORKER_TUNING_VARIABLES as readonly string[]).includes(name),
  );
  return {
    ...Object.fromEntries(tuning),
    ...(cache === undefined ? {} : { WORKER_MAX_CACHED_WORKFLOWS: String(cache) }),
  };
}
