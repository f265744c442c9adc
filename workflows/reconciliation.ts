import { log } from '@temporalio/workflow';
import type { SweepResult } from '../activities/reconciliation.js';
import type { ReconciliationInput } from '../domain/messages.js';
import { sweep } from './activity-proxies.js';

/** One sweep of the safety net; a Temporal Schedule starts it every few minutes (see worker/). */
export async function ReconcileStrandedOrders(input: ReconciliationInput): Promise<SweepResult> {
  try {
    return await sweep.sweepStrandedOrders(input);
  } catch (err) {
    log.warn('reconciliation sweep failed: stranded orders may wait until the next one', { error: String(err) });
    throw err;
  }
}
