import { allHandlersFinished, condition, setHandler } from '@temporalio/workflow';
import { refundFailedSignal, type RefundFailure } from '../domain/messages.js';
import { paymentsRun } from './payments-run.js';

/**
 * Refunds the provider accepted and then failed (Stripe's `refund.failed`: the card issuer turned
 * one down), so the customer has not got the money back. The webhook hands each failure over by
 * signal-with-start to the payment's run, `failed-refund-<paymentId>`, so a failure that arrives
 * while the run ends is still handled. The database decides whether a failure still applies; if it
 * does, the payment is REFUND_FAILED and this run holds it, flagged NeedsAttention, until an
 * operator retries the refund. The run ends once no failure is being handled: REFUNDED, or
 * NOT_APPLICABLE having changed nothing (a redelivery, an older attempt's failure).
 */
export async function SettleFailedRefund({
  orderId,
  paymentId,
}: Pick<RefundFailure, 'orderId' | 'paymentId'>): Promise<{ outcome: 'REFUNDED' | 'NOT_APPLICABLE' }> {
  const payments = paymentsRun(orderId);
  let received = false;
  setHandler(refundFailedSignal, async (failure) => {
    received = true;
    if (failure.paymentId === paymentId) await payments.refundFailedLater(failure);
  });
  // Started only with its signal (signal-with-start), which the first task delivers.
  await condition(() => received && allHandlersFinished());
  return { outcome: payments.statuses.get(paymentId) === 'REFUNDED' ? 'REFUNDED' : 'NOT_APPLICABLE' };
}
