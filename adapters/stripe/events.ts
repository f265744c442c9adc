import Stripe from 'stripe';
import {
  PAYMENT_EVENT_TYPES,
  type PaymentEventType,
  type ProviderEvent,
  type RefundFailedEvent,
} from '../ports/payment-provider.js';
import { checkEnvelope, checkIntent, checkRefund } from './event-shape.js';
export { StripeEventShapeError } from './event-shape.js';
import { toProviderPayment } from './intents.js';
import { REFUND_NOT_GIVEN } from './refunds.js';

/** The event types the service reads: the webhook gets them posted, the provider sweep lists them. */
export const READ_EVENT_TYPES = [...PAYMENT_EVENT_TYPES, 'refund.failed', 'refund.updated'] as const;

/** The header Stripe signs its posts with. */
export const SIGNATURE_HEADER = 'Stripe-Signature';
/** How old a signature may be (Stripe's own default): a captured post cannot be replayed later. */
export const SIGNATURE_TOLERANCE_SECONDS = 5 * 60;

/** The body or the `Stripe-Signature` header is not what Stripe signed with the webhook secret. */
export class StripeSignatureError extends Error {
  override readonly name = 'StripeSignatureError';
}

/**
 * A posted event, once its signature (HMAC over the raw body, with a timestamp no older than
 * SIGNATURE_TOLERANCE_SECONDS) checks out. undefined: a genuine event of
 * another type (or a failed refund of no payment), to be acknowledged and ignored. A signed body
 * that is not such an event throws StripeEventShapeError (event-shape.ts).
 */
export function readStripeEvent(
  rawBody: string | Buffer,
  signature: string,
  webhookSecret: string,
): ProviderEvent | undefined {
  let event: Stripe.Event;
  try {
    event = Stripe.webhooks.constructEvent(rawBody, signature, webhookSecret, SIGNATURE_TOLERANCE_SECONDS);
  } catch (err) {
    if (err instanceof Stripe.errors.StripeSignatureVerificationError) throw new StripeSignatureError(err.message);
    throw err;
  }
  return toProviderEvent(event);
}

/**
 * A Stripe event in the port's words, however it came (posted and verified, or listed with the
 * secret key); undefined for one the service does not act on. A failed refund is `refund.failed`,
 * or `refund.updated` to `canceled` (for which Stripe sends no `refund.failed`). An event that is
 * not of the shape its type promises throws StripeEventShapeError.
 */
export function toProviderEvent(event: Stripe.Event): ProviderEvent | undefined {
  checkEnvelope(event);
  if (event.type === 'refund.failed' || event.type === 'refund.updated') checkRefund(event.data.object);
  if (event.type === 'refund.failed') return refundFailed(event);
  if (event.type === 'refund.updated' && REFUND_NOT_GIVEN.has(event.data.object.status)) return refundFailed(event);
  if (!isPaymentEvent(event)) return undefined;
  checkIntent(event.data.object);
  // An event's intent carries its charge's id only: the event's own time stands for the payment's.
  return {
    eventId: event.id,
    type: event.type,
    payment: toProviderPayment(event.data.object, event.account ?? null, event.created),
  };
}

function refundFailed(event: Stripe.RefundFailedEvent | Stripe.RefundUpdatedEvent): RefundFailedEvent | undefined {
  const refund = event.data.object;
  const intent = refund.payment_intent;
  if (intent === null) return undefined; // a refund of a charge made without an intent: never one of ours
  return {
    eventId: event.id,
    type: 'refund.failed',
    refund: {
      refundRef: refund.id,
      paymentId: typeof intent === 'string' ? intent : intent.id,
      reason: refund.failure_reason ?? refund.status ?? 'unknown',
    },
  };
}

function isPaymentEvent(
  event: Stripe.Event,
): event is Stripe.Event & { type: PaymentEventType; data: { object: Stripe.PaymentIntent } } {
  return (PAYMENT_EVENT_TYPES as readonly string[]).includes(event.type);
}
