import { setCurrentDetails, setHandler } from '@temporalio/workflow';
import { retryRefundUpdate } from '../domain/messages.js';
import { AcceptedPayments } from './accepted-payments.js';
import { Attention } from './attention.js';
import { KeepTrying } from './keep-trying.js';
import { Waits } from './waits.js';

/**
 * The payments of a run that settles money after its order's lifecycle ended (SettleLatePayment,
 * SettleFailedRefund): what it holds shows in the Web UI's current details, NeedsAttention and
 * WaitingFor, and an operator's retry of a held refund reaches it.
 */
export function paymentsRun(orderId: string): AcceptedPayments {
  const showDetails = () => setCurrentDetails([...waits.described, ...attention.items].join('\n\n'));
  const attention = new Attention(showDetails);
  const waits = new Waits(showDetails);
  const payments = new AcceptedPayments({
    orderId,
    keepTrying: new KeepTrying(orderId, attention),
    attention,
    waits,
  });
  setHandler(retryRefundUpdate, ({ paymentId }) => payments.retry(paymentId), {
    validator: ({ paymentId }) => payments.assertRetryable(paymentId),
  });
  return payments;
}
