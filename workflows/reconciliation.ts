import { log, proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import type { SweepResult } from '../activities/reconciliation.js';
import { databaseOptions } from './activity-options.js';
import type { ReconciliationInput } from './messages.js';

const { sweepStrandedOrders } = proxyActivities<Activities>({
  ...databaseOptions,
  // A sweep that cannot run now is simply the next schedule tick's job; don't pile retries up.
  retry: { ...databaseOptions.retry, maximumAttempts: 3 },
});

/** One sweep of the safety net; a Temporal Schedule starts it every few minutes (see worker/). */
export async function ReconcileStrandedOrders(input: ReconciliationInput): Promise<SweepResult> {
  try {
    return await sweepStrandedOrders(input);
  } catch (err) {
    log.warn('reconciliation sweep failed: stranded orders may wait until the next one', { error: String(err) });
    throw err;
  }
}
