import { randomBytes } from 'node:crypto';
import Stripe from 'stripe';
import type { FakeStripeAccount } from './account.js';
import { intentJson } from './wire.js';

export interface SignedEvent {
  /** The raw body, exactly as Stripe posts it. */
  payload: string;
  /** The `Stripe-Signature` header. */
  signature: string;
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
  /** `at`: when it happened (the event's `created`); `sentAt`: when it is posted, which the signature dates. */
  { at = new Date(), sentAt = new Date() }: { at?: Date; sentAt?: Date } = {},
): SignedEvent {
  const created = Math.floor(at.getTime() / 1000);
  const payload = JSON.stringify({
    id: `evt_fake${randomBytes(8).toString('hex')}`,
    object: 'event',
    api_version: Stripe.API_VERSION,
    created,
    type,
    livemode: false,
    pending_webhooks: 1,
    request: { id: null, idempotency_key: null },
    data: { object: intentJson(account, account.intent(intentId)) },
  });
  const timestamp = Math.floor(sentAt.getTime() / 1000);
  const signature = Stripe.webhooks.generateTestHeaderString({ payload, secret: webhookSecret, timestamp });
  return { payload, signature };
}
