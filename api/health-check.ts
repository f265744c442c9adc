import type { Client } from '@temporalio/client';
import type { Db } from '../lib/db.js';
import type { Health } from './responses.js';

/** How long one probe's result answers /healthz: a crowd of callers costs one probe per this. */
export const HEALTH_MAX_AGE_MS = 1_000;
/** A dependency that has not answered within this is reported down. */
export const PROBE_TIMEOUT_MS = 2_000;

/** Whether the database and Temporal answer, from a probe at most about HEALTH_MAX_AGE_MS old. */
export type HealthCheck = () => Promise<Health>;

/**
 * /healthz is anonymous, so its cost must not grow with its callers: one probe (`SELECT 1` on the
 * main pool, where its answer says what the webhook and checkout would get, and Temporal's
 * getSystemInfo) serves every caller until HEALTH_MAX_AGE_MS after it finished.
 */
export function healthCheck({ db, temporal }: { db: Db; temporal: Client }): HealthCheck {
  return sharedFor(HEALTH_MAX_AGE_MS, async () => {
    const [database, workflowService] = await Promise.all([
      probe(() => db.pool.query('SELECT 1')),
      probe(() => temporal.workflowService.getSystemInfo({})),
    ]);
    return { db: database, temporal: workflowService };
  });
}

/**
 * `run` shared: callers while it runs get its promise, and so do callers until `maxAgeMs` after it
 * settled; the first caller after that starts it again. At most one run at a time, so at most one
 * per `maxAgeMs` plus its own duration. `run` must not reject (a probe reports "down" instead).
 */
function sharedFor<T>(maxAgeMs: number, run: () => Promise<T>): () => Promise<T> {
  let current: Promise<T> | undefined;
  let settledAt: number | undefined;
  return () => {
    // performance.now(), not Date.now(): a wall clock set back would keep an old result for good.
    if (current === undefined || (settledAt !== undefined && performance.now() - settledAt >= maxAgeMs)) {
      settledAt = undefined;
      current = run().finally(() => (settledAt = performance.now()));
    }
    return current;
  };
}

async function probe(check: () => Promise<unknown>): Promise<'ok' | 'down'> {
  const timeout = new Promise<'down'>((resolve) => setTimeout(resolve, PROBE_TIMEOUT_MS, 'down').unref());
  return Promise.race([
    check().then(
      () => 'ok' as const,
      () => 'down' as const,
    ),
    timeout,
  ]);
}
