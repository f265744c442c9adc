import { setCurrentDetails, setHandler } from '@temporalio/workflow';
import { retryRefundUpdate } from '../domain/messages.js';
import { AcceptedPayments } from './accepted-payments.js';
import { Attention } from './attention.js';
import { KeepTrying } from './keep-trying.js';

/**
 * The payments of a run that settles money after its order's lifecycle ended (SettleLatePayment,
 * SettleFailedRefund): what it holds shows in the Web UI's current details and NeedsAttention,
 * and an operator's retry of a held refund reaches it.
 */
export function paymentsRun(orderId: string): AcceptedPayments {
  const attention = new Attention(() => setCurrentDetails(attention.items.join('\n\n')));
  const payments = new AcceptedPayments({ orderId, keepTrying: new KeepTrying(orderId, attention), attention });
  setHandler(retryRefundUpdate, ({ paymentId }) => payments.retry(paymentId), {
    validator: ({ paymentId }) => payments.assertRetryable(paymentId),
  });
  return payments;
}
