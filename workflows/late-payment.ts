import { allHandlersFinished, condition, setCurrentDetails, setHandler } from '@temporalio/workflow';
import { Attention } from './attention.js';
import { retryRefundUpdate, type PaymentNotice } from '../domain/messages.js';
import { MustSucceed } from './must-succeed.js';
import { Settlement } from './settlement.js';
import { stepsFor } from './steps.js';

/**
 * A payment whose order's lifecycle has already ended (cancelled and compensated, or paid by
 * another payment). The same settlement decides; for a finished order it always means a refund.
 * Started by the webhook with id `late-payment-<paymentId>`, so a redelivery starts nothing new.
 * Like OrderLifecycle, it ends only once the payment is settled: a refund the provider rejects
 * keeps it open, flagged NeedsAttention, until an operator retries it.
 */
export async function SettleLatePayment(notice: PaymentNotice): Promise<{ outcome: 'PAID' | 'REFUNDED' }> {
  const attention = new Attention(() => setCurrentDetails(attention.items.join('\n\n')));
  // Regular activities: its histories have no shape to tell local ones apart by.
  const settlement = new Settlement(
    notice.orderId,
    stepsFor({ local: false }),
    new MustSucceed(notice.orderId, attention),
    attention,
  );
  setHandler(retryRefundUpdate, ({ paymentId }) => settlement.retry(paymentId), {
    validator: ({ paymentId }) => settlement.assertRetryable(paymentId),
  });

  settlement.accept(notice);
  while (settlement.hasWork) {
    await settlement.settleQueued();
    await condition(() => allHandlersFinished() && (settlement.hasWork || settlement.settled));
  }
  return { outcome: settlement.payments.get(notice.paymentId) === 'CAPTURED' ? 'PAID' : 'REFUNDED' };
}
