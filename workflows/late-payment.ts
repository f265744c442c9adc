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
 * NOT_RECEIVED, having changed nothing; one whose rejected refund another run holds ends
 * HELD_ELSEWHERE, leaving it to that run.
 * Like OrderLifecycle, it ends only once the payment is settled: a refund the provider rejects
 * keeps it open, flagged NeedsAttention, until an operator retries it.
 */
export async function SettleLatePayment(
  notice: PaymentNotice,
): Promise<{ outcome: 'PAID' | 'REFUNDED' | 'NOT_RECEIVED' | 'HELD_ELSEWHERE' }> {
  const payments = paymentsRun(notice.orderId);
  await payments.settle(notice);
  await condition(allHandlersFinished);
  const status = payments.statuses.get(notice.paymentId);
  if (status === undefined) return { outcome: 'NOT_RECEIVED' };
  if (status === 'CAPTURED') return { outcome: 'PAID' };
  // Owed still, and not by this run: another run holds its rejected refund.
  return { outcome: status === 'REFUNDED' ? 'REFUNDED' : 'HELD_ELSEWHERE' };
}
