import type Stripe from 'stripe';

/**
 * A correctly signed body that is not an event this adapter can read: JSON `null`, an event without
 * `data`, an intent without its status or amounts. Only a holder of the webhook secret can send one,
 * yet it is bad input (400), never a crash of the reader (a 5xx, which Stripe redelivers for days).
 */
export class StripeEventShapeError extends Error {
  override readonly name = 'StripeEventShapeError';
}

/** Every status a PaymentIntent can have: a Record, so the compiler says when Stripe adds one. */
const INTENT_STATUSES: Record<Stripe.PaymentIntent.Status, true> = {
  requires_payment_method: true,
  requires_confirmation: true,
  requires_action: true,
  processing: true,
  requires_capture: true,
  canceled: true,
  succeeded: true,
};

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const isOptionalString = (value: unknown) => value === undefined || value === null || typeof value === 'string';

/**
 * The envelope every event has, checked before anything of it is read (events.ts checks the object
 * of the events it reads with checkIntent and checkRefund). Other fields are Stripe's to add.
 */
export function checkEnvelope(event: unknown): void {
  if (!isObject(event)) throw new StripeEventShapeError('the signed body is not a Stripe event object');
  if (typeof event.id !== 'string' || typeof event.type !== 'string' || !Number.isInteger(event.created))
    throw new StripeEventShapeError('the event has no string `id` and `type`, or no whole-second `created`');
  if (!isObject(event.data) || !isObject(event.data.object))
    throw new StripeEventShapeError('the event has no `data.object`');
}

/** The fields of a PaymentIntent that toProviderPayment (intents.ts) reads. */
export function checkIntent(intent: unknown): void {
  if (!isObject(intent)) throw new StripeEventShapeError('the event’s object is not a PaymentIntent');
  if (
    typeof intent.id !== 'string' ||
    typeof intent.status !== 'string' ||
    !Object.hasOwn(INTENT_STATUSES, intent.status) ||
    !Number.isInteger(intent.amount) ||
    !Number.isInteger(intent.amount_received) ||
    typeof intent.currency !== 'string' ||
    !isObject(intent.metadata)
  )
    throw new StripeEventShapeError(
      'the event’s PaymentIntent lacks a string `id` and `currency`, a known `status`, whole `amount` and `amount_received`, or `metadata`',
    );
}

/** The fields of a Refund that the failed-refund event is read from. */
export function checkRefund(refund: unknown): void {
  if (!isObject(refund)) throw new StripeEventShapeError('the event’s object is not a Refund');
  const intent = refund.payment_intent;
  const intentOk = intent === null || typeof intent === 'string' || (isObject(intent) && typeof intent.id === 'string');
  if (
    typeof refund.id !== 'string' ||
    !intentOk ||
    !isOptionalString(refund.status) ||
    !isOptionalString(refund.failure_reason)
  )
    throw new StripeEventShapeError(
      'the event’s Refund lacks a string `id`, or its `payment_intent`, `status` or `failure_reason` is not what Stripe sends',
    );
}
