import { randomBytes } from 'node:crypto';
import Stripe from 'stripe';
import type { FakeRefund, FakeStripeAccount } from './account.js';
import { intentJson, refundJson } from './wire.js';

export interface SignedEvent {
  /** The raw body, exactly as Stripe posts it. */
  payload: string;
  /** The `Stripe-Signature` header. */
  signature: string;
}

/**
 * When an event happened (its `created`) and when it is posted, which the signature dates; and, for
 * a test, the mode it was taken in (`livemode`, default test mode) and the Connect `account` it
 * was taken on (default none).
 */
export interface EventTimes {
  at?: Date;
  sentAt?: Date;
  livemode?: boolean;
  account?: string;
}

/**
 * The event Stripe would post about the intent as it is now, signed with the endpoint's secret by
 * the official client's test helper, so the verification under test is Stripe's own scheme.
 */
export function signedIntentEvent(
  account: FakeStripeAccount,
  intentId: string,
  type: string,
  webhookSecret: string,
  times: EventTimes = {},
): SignedEvent {
  const intent = { ...intentJson(account, account.intent(intentId)), livemode: times.livemode ?? false };
  return signedEvent(intent, type, webhookSecret, times);
}

/** The event Stripe would post about a refund (`refund.failed` once it failed), signed the same way. */
export function signedRefundEvent(
  refund: FakeRefund,
  type: string,
  webhookSecret: string,
  times: EventTimes = {},
): SignedEvent {
  return signedEvent(refundJson(refund), type, webhookSecret, times);
}

/**
 * Stripe's `refund.failed` for a refund the fake account did not make (the local provider's, whose
 * reference the database recorded), as the card issuer's refusal makes it.
 */
export function signedRefundFailure(
  refund: { refundRef: string; paymentId: string; amountCents: number },
  webhookSecret: string,
): SignedEvent {
  const failed: FakeRefund = {
    id: refund.refundRef,
    paymentIntent: refund.paymentId,
    charge: `ch_of_${refund.paymentId}`,
    amount: refund.amountCents,
    currency: 'eur',
    status: 'failed',
    failureReason: 'expired_or_canceled_card',
    metadata: {},
    created: Math.floor(Date.now() / 1000),
  };
  return signedRefundEvent(failed, 'refund.failed', webhookSecret);
}

function signedEvent(
  object: object,
  type: string,
  webhookSecret: string,
  { at = new Date(), sentAt = new Date(), livemode = false, account }: EventTimes,
): SignedEvent {
  const payload = JSON.stringify({
    id: `evt_fake${randomBytes(8).toString('hex')}`,
    object: 'event',
    api_version: Stripe.API_VERSION,
    created: Math.floor(at.getTime() / 1000),
    type,
    livemode,
    ...(account === undefined ? {} : { account }),
    pending_webhooks: 1,
    request: { id: null, idempotency_key: null },
    data: { object },
  });
  const timestamp = Math.floor(sentAt.getTime() / 1000);
  const signature = Stripe.webhooks.generateTestHeaderString({ payload, secret: webhookSecret, timestamp });
  return { payload, signature };
}
