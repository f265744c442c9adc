import { log, proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import type { SweepResult } from '../activities/reconciliation.js';
import { sweepOptions } from './activity-options.js';
import type { ReconciliationInput } from '../domain/messages.js';

const { sweepStrandedOrders } = proxyActivities<Activities>(sweepOptions);

/** One sweep of the safety net; a Temporal Schedule starts it every few minutes (see worker/). */
export async function ReconcileStrandedOrders(input: ReconciliationInput): Promise<SweepResult> {
  try {
    return await sweepStrandedOrders(input);
  } catch (err) {
    log.warn('reconciliation sweep failed: stranded orders may wait until the next one', { error: String(err) });
    throw err;
  }
}
