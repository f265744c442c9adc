import type { Client } from '@temporalio/client';
import type { Db } from '../../lib/db.js';
import type { Logger } from '../../lib/logger.js';
import type { ApiMetrics } from '../metrics.js';
import { orderWorkflowId } from '../../domain/messages.js';
import { handOverPayment } from '../../handover/payment-handover.js';
import type { ApiHandler } from '../endpoint-table.js';
import { businessError } from '../errors.js';
import { recordReceivedPayment, type VerifiedPayment } from '../../store/received-payments.js';

export interface PaymentDeps {
  db: Db;
  temporal: Client;
  taskQueue: string;
  logger: Logger;
  metrics: ApiMetrics;
  /** The arrival clock; unset: the database's now(), the clock every deadline guard uses (tests pass the test server's). */
  clock?: (() => Promise<Date>) | undefined;
}

/**
 * The payment provider's webhook; its signature was checked on the raw body before it was parsed.
 */
export const acceptPayment: ApiHandler<'acceptPayment', PaymentDeps> = async ({ body: callback }, deps) => {
  if (!(await acceptVerifiedPayment(deps, callback))) throw businessError('UNKNOWN_ORDER');
  return { accepted: true, paymentId: callback.paymentId };
};

/**
 * What every webhook does with a payment its signature vouches for, once: it is recorded first
 * (store/received-payments.ts), since what settles it is that record, so the hand-over to Temporal
 * names the payment and carries nothing to trust. Resolves true once the payment is durably with
 * Temporal; false, having changed nothing, when no such order exists. A redelivery does it again
 * with one effect: the first record stays, and Temporal's side drops the second notice.
 */
export async function acceptVerifiedPayment(deps: PaymentDeps, payment: VerifiedPayment): Promise<boolean> {
  const arrivedAt = deps.clock ? await deps.clock() : null;
  if (!(await recordReceivedPayment(deps.db.pool, payment, arrivedAt))) return false;

  // Once durably with Temporal the webhook succeeds; any other failure is a 500, and the provider redelivers.
  await handOverPayment(deps.temporal, deps.taskQueue, payment);
  deps.metrics.paymentsAccepted.inc();
  deps.logger.info(
    { orderId: payment.orderId, paymentId: payment.paymentId, workflowId: orderWorkflowId(payment.orderId) },
    'payment accepted',
  );
  return true;
}
