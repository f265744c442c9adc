import { parseEnv } from '../lib/config/env.js';
import { WorkerTuningSchema, workerTuning, type WorkerTuning } from '../lib/config/worker-tuning.js';

/**
 * The bench's reading of the service's settings: what it needs of them beyond loadConfig(), read
 * with the service's own schemas so that its rules stay in lib/config/ alone.
 */

/**
 * The WORKER_* tuning variables alone, validated as loadConfig() does: for a worker that is not the
 * service's (the bench's floor worker) but must run with exactly its tuning.
 */
export function loadWorkerTuning(env: NodeJS.ProcessEnv = process.env): WorkerTuning {
  return workerTuning(parseEnv(WorkerTuningSchema, env));
}

/** The names of the variables loadWorkerTuning() reads. */
export const WORKER_TUNING_VARIABLES = Object.keys(WorkerTuningSchema.shape) as ReadonlyArray<
  keyof typeof WorkerTuningSchema.shape
>;
