import { allHandlersFinished, condition } from '@temporalio/workflow';
import type { PaymentNotice } from '../domain/messages.js';
import { paymentsRun } from './payments-run.js';

/**
 * A payment whose order's lifecycle has already ended (cancelled and compensated, or paid by
 * another payment). The same settlement decides; for a finished order it always means a refund.
 * A run lost by hand while the order was unpaid is the exception: the payment can pay the order,
 * and reconciliation adopts it for the fulfillment no run performs.
 * Started by the webhook with id `late-payment-<paymentId>`, so a redelivery starts nothing new.
 * A notice for a payment the webhook never recorded (started by hand, forged) ends at once,
 * NOT_RECEIVED, having changed nothing.
 * Like OrderLifecycle, it ends only once the payment is settled: a refund the provider rejects
 * keeps it open, flagged NeedsAttention, until an operator retries it.
 */
export async function SettleLatePayment(
  notice: PaymentNotice,
): Promise<{ outcome: 'PAID' | 'REFUNDED' | 'NOT_RECEIVED' }> {
  const payments = paymentsRun(notice.orderId);
  await payments.settle(notice);
  await condition(allHandlersFinished);
  const status = payments.statuses.get(notice.paymentId);
  return { outcome: status === undefined ? 'NOT_RECEIVED' : status === 'CAPTURED' ? 'PAID' : 'REFUNDED' };
}
