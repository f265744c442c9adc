import type Stripe from 'stripe';
import type { ProviderPayment, ProviderPaymentStatus, SucceededPayment } from '../ports/payment-provider.js';

/** The PaymentIntent's metadata that ties it to its order (set at creation, searched by). */
export const ORDER_ID_KEY = 'order_id';
export const CUSTOMER_ID_KEY = 'customer_id';

/** Expanded on every read: the latest charge's time is when the customer paid. */
export const PAID_AT_EXPANSION = 'latest_charge';

/**
 * The `next_action` types of a `requires_action` intent whose customer has done their part: a
 * voucher to pay at a store or a bank transfer to make, whose money comes (or not) within days.
 * Every other next action (use_stripe_sdk, redirect_to_url: 3-D Secure, a bank's page) is the
 * customer acting now.
 */
const FUNDS_NEXT_ACTIONS: ReadonlySet<string> = new Set([
  'display_bank_transfer_instructions',
  'konbini_display_details',
  'boleto_display_details',
  'oxxo_display_details',
  'multibanco_display_details',
  'pix_display_qr_code',
  'promptpay_display_qr_code',
  'swish_handle_redirect_or_display_qr_code',
  'paynow_display_qr_code',
  'verify_with_microdeposits',
]);

/**
 * processing is money on its way (a bank debit); requires_action is either a customer acting now
 * (CUSTOMER_ACTION: a deadline waits a grace for it) or a voucher or transfer waiting for its
 * money (FUNDS_IN_TRANSIT), told apart by next_action.type. requires_capture (an authorisation
 * awaiting our capture, which automatic capture never leaves) is OPEN: cancelling releases it and
 * nothing is charged.
 */
function statusOf(intent: Pick<Stripe.PaymentIntent, 'status' | 'next_action'>): ProviderPaymentStatus {
  const { status } = intent;
  switch (status) {
    case 'requires_payment_method':
    case 'requires_confirmation':
    case 'requires_capture':
      return 'OPEN';
    case 'requires_action':
      return intent.next_action && FUNDS_NEXT_ACTIONS.has(intent.next_action.type)
        ? 'FUNDS_IN_TRANSIT'
        : 'CUSTOMER_ACTION';
    case 'processing':
      return 'FUNDS_IN_TRANSIT';
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
  const status = statusOf(intent);
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
