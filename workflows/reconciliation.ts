import { log, workflowInfo } from '@temporalio/workflow';
import type { SweepResult } from '../activities/reconciliation.js';
import type { PaymentSweepPosition, ReconciliationInput, SweepPosition } from '../domain/messages.js';
import { sweep } from './activity-proxies.js';

/**
 * One sweep of the safety net; a Temporal Schedule starts it every few minutes (see worker/) and
 * hands it the last completed sweep's result, so it goes on where that one stopped.
 */
export async function ReconcileStrandedOrders(input: ReconciliationInput): Promise<SweepResult> {
  const last = workflowInfo().lastResult as Partial<SweepResult> | undefined;
  try {
    return await sweep.sweepStrandedOrders({
      ...input,
      resumeAfter: whereOrdersStopped(last),
      paymentsResumeAfter: wherePaymentsStopped(last),
    });
  } catch (err) {
    log.warn('reconciliation sweep failed: stranded orders may wait until the next one', { error: String(err) });
    throw err;
  }
}

// The last sweep's stopping points; none (start over) for a first sweep or one from an older build.

function whereOrdersStopped(last: Partial<SweepResult> | undefined): SweepPosition | null {
  const position = last?.resumeAfter;
  return typeof position?.since === 'string' && typeof position.orderId === 'string'
    ? { since: position.since, orderId: position.orderId }
    : null;
}

function wherePaymentsStopped(last: Partial<SweepResult> | undefined): PaymentSweepPosition | null {
  const position = last?.paymentsResumeAfter;
  return typeof position?.receivedAt === 'string' && typeof position.paymentId === 'string'
    ? { receivedAt: position.receivedAt, paymentId: position.paymentId }
    : null;
}
