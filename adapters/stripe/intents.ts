import type Stripe from 'stripe';
import type { ProviderPayment, ProviderPaymentStatus, SucceededPayment } from '../ports/payment-provider.js';

/** The PaymentIntent's metadata that ties it to its order (set at creation, searched by). */
export const ORDER_ID_KEY = 'order_id';
export const CUSTOMER_ID_KEY = 'customer_id';

/** Expanded on every read: the latest charge's time is when the customer paid. */
export const PAID_AT_EXPANSION = 'latest_charge';

/**
 * requires_action is a 3-D Secure or bank step the customer is in the middle of: reported as
 * PROCESSING, so that a deadline does not pull the payment from under them. requires_capture
 * (an authorisation awaiting our capture, which automatic capture never leaves) is OPEN:
 * cancelling releases it and nothing is charged.
 */
function statusOf(status: Stripe.PaymentIntent.Status): ProviderPaymentStatus {
  switch (status) {
    case 'requires_payment_method':
    case 'requires_confirmation':
    case 'requires_capture':
      return 'OPEN';
    case 'requires_action':
    case 'processing':
      return 'PROCESSING';
    case 'succeeded':
      return 'SUCCEEDED';
    case 'canceled':
      return 'CANCELLED';
    default:
      // A status newer than this code: failing loudly beats guessing whether money moved.
      throw new Error(`PaymentIntent status "${status}" is not one this adapter knows`);
  }
}

/**
 * The intent as the port describes a payment. `paidAt` comes from the expanded latest charge;
 * `paidAtFallback` (seconds, e.g. a `payment_intent.succeeded` event's time) when it is not expanded.
 * `connectAccount`: the account it was read on (an event's `account`, or the one the client acts
 * on); the intent itself does not say.
 */
export function toProviderPayment(
  intent: Stripe.PaymentIntent,
  connectAccount: string | null,
  paidAtFallback?: number,
): ProviderPayment {
  const status = statusOf(intent.status);
  const charge = typeof intent.latest_charge === 'object' ? intent.latest_charge : null;
  const paidAtSeconds = status === 'SUCCEEDED' ? (charge?.created ?? paidAtFallback) : undefined;
  return {
    paymentId: intent.id,
    orderId: intent.metadata[ORDER_ID_KEY],
    amountCents: status === 'SUCCEEDED' ? intent.amount_received : intent.amount,
    currency: intent.currency.toLowerCase(),
    livemode: intent.livemode,
    connectAccount,
    customerId: intent.metadata[CUSTOMER_ID_KEY],
    status,
    paidAt: paidAtSeconds === undefined ? undefined : new Date(paidAtSeconds * 1000).toISOString(),
  };
}

export function succeededPayment(payment: ProviderPayment): SucceededPayment {
  if (payment.status !== 'SUCCEEDED' || payment.paidAt === undefined)
    throw new Error(`payment ${payment.paymentId} is ${payment.status}, or its time of payment is unknown`);
  const { paymentId, amountCents, paidAt, currency, livemode, connectAccount, customerId } = payment;
  return { paymentId, amountCents, paidAt, currency, livemode, connectAccount, customerId };
}

/** Stripe's search query for the intents created for an order. */
export function orderQuery(orderId: string): string {
  return `metadata['${ORDER_ID_KEY}']:'${orderId.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'`;
}
