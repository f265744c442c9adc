import type { ApiHandler } from '../endpoint-table.js';
import { PaymentCallbackBody } from '../schemas.js';
import { acceptVerifiedPayment, type PaymentDeps } from './payments.js';
import { acceptRefundFailure } from './refunds.js';

/**
 * Stripe's webhook; the SDK checked the signature on the raw body and read the event (api/auth.ts).
 * A `payment_intent.succeeded` takes the generic callback's path (acceptVerifiedPayment); a
 * failed refund (`refund.failed`, or `refund.updated` to `canceled` or `failed`) goes to a run that
 * holds the refund owed again (acceptRefundFailure). Every
 * other answer is 200 too: Stripe redelivers anything else for days, and no redelivery could change
 * how an event of another type, or a payment that is not one of this service's orders, is read.
 * Only a failed hand-over is a 5xx, so that Stripe tries again.
 */
export const acceptStripeEvent: ApiHandler<'acceptStripeEvent', PaymentDeps> = async (
  { body, caller: { event } },
  deps,
) => {
  const ignored = (level: 'info' | 'warn', why: string, context: object = {}) => {
    deps.logger[level]({ eventId: body.id, eventType: body.type, ...context }, `Stripe event ignored: ${why}`);
    return { eventId: body.id, outcome: 'IGNORED' as const };
  };
  if (event?.type === 'refund.failed') {
    const { refund } = event;
    const context = { paymentId: refund.paymentId, refundRef: refund.refundRef };
    if (!(await acceptRefundFailure(deps, refund))) return ignored('warn', 'a refund of no payment of ours', context);
    return { eventId: event.eventId, outcome: 'REFUND_FAILURE_ACCEPTED' };
  }
  if (event?.type !== 'payment_intent.succeeded') return ignored('info', 'no payment to hand over');

  const { paymentId, orderId, amountCents, paidAt } = event.payment;
  if (orderId === undefined) return ignored('info', 'the payment intent names no order (not made by this service)');
  // Money was taken for no order of ours: no redelivery changes that, an operator must look.
  const context = { paymentId, orderId, amountCents };
  // The generic callback's limits: an order's id, and at most the largest total an order may have.
  const payment = PaymentCallbackBody.safeParse({ paymentId, orderId, amountCents, paidAt });
  if (!payment.success) return ignored('warn', 'not a payment an order of this service can take', context);
  if (!(await acceptVerifiedPayment(deps, payment.data))) return ignored('warn', 'no such order', context);
  return { eventId: event.eventId, outcome: 'PAYMENT_ACCEPTED' };
};
