import { log, workflowInfo } from '@temporalio/workflow';
import type { SweepResult } from '../activities/reconciliation.js';
import type { ReconciliationInput, SweepPosition } from '../domain/messages.js';
import { sweep } from './activity-proxies.js';

/**
 * One sweep of the safety net; a Temporal Schedule starts it every few minutes (see worker/) and
 * hands it the last completed sweep's result, so it goes on where that one stopped.
 */
export async function ReconcileStrandedOrders(input: ReconciliationInput): Promise<SweepResult> {
  try {
    return await sweep.sweepStrandedOrders({ ...input, resumeAfter: whereLastStopped(workflowInfo().lastResult) });
  } catch (err) {
    log.warn('reconciliation sweep failed: stranded orders may wait until the next one', { error: String(err) });
    throw err;
  }
}

/** The last sweep's stopping point; none (start over) for a first sweep or one from an older build. */
function whereLastStopped(lastResult: unknown): SweepPosition | null {
  const position = (lastResult as Partial<SweepResult> | undefined)?.resumeAfter;
  return typeof position?.since === 'string' && typeof position.orderId === 'string'
    ? { since: position.since, orderId: position.orderId }
    : null;
}
