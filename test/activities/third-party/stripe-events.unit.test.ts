import { expect, it } from 'vitest';
import { readPaymentEvent, StripeSignatureError } from '../../../activities/third-party/stripe/events.js';
import { FakeStripeAccount } from '../../../dev/fakes/stripe/account.js';
import { signedIntentEvent } from '../../../dev/fakes/stripe/events.js';

/** Events signed by the official client's test helper, read through Stripe's own verification. */
const SECRET = 'whsec_test_endpoint';

function paidIntent(account: FakeStripeAccount, paidAt: Date): string {
  const intent = account.createIntent({ amount: 1500, currency: 'eur', metadata: { order_id: 'order-1' } });
  account.succeed(intent.id, paidAt);
  return intent.id;
}

it('reads a signed payment_intent.succeeded as the payment it reports, paid at the event’s time', () => {
  const account = new FakeStripeAccount();
  const paidAt = new Date('2026-12-01T09:30:00Z');
  const intentId = paidIntent(account, paidAt);
  const { payload, signature } = signedIntentEvent(account, intentId, 'payment_intent.succeeded', SECRET, {
    at: paidAt,
  });
  expect(readPaymentEvent(payload, signature, SECRET)).toEqual({
    eventId: JSON.parse(payload).id,
    type: 'payment_intent.succeeded',
    payment: {
      paymentId: intentId,
      orderId: 'order-1',
      amountCents: 1500,
      currency: 'eur',
      status: 'SUCCEEDED',
      paidAt: paidAt.toISOString(),
    },
  });
});

it('acknowledges an event of another type without reading it as a payment', () => {
  const account = new FakeStripeAccount();
  const intentId = account.createIntent({ amount: 1500, currency: 'eur', metadata: {} }).id;
  const { payload, signature } = signedIntentEvent(account, intentId, 'payment_intent.created', SECRET);
  expect(readPaymentEvent(payload, signature, SECRET)).toBeUndefined();
});

it.each([
  [
    'a changed body',
    (e: { payload: string; signature: string }) => ({ ...e, payload: e.payload.replace('1500', '15') }),
  ],
  ['another endpoint’s secret', (e: { payload: string; signature: string }) => ({ ...e, secret: 'whsec_other' })],
  ['no signature', (e: { payload: string; signature: string }) => ({ ...e, signature: '' })],
])('refuses %s', (_, tamper) => {
  const account = new FakeStripeAccount();
  const event = signedIntentEvent(account, paidIntent(account, new Date()), 'payment_intent.succeeded', SECRET);
  const {
    payload,
    signature,
    secret = SECRET,
  } = tamper(event) as { payload: string; signature: string; secret?: string };
  expect(() => readPaymentEvent(payload, signature, secret)).toThrow(StripeSignatureError);
});

it('refuses a genuine event replayed after Stripe’s five-minute tolerance', () => {
  const account = new FakeStripeAccount();
  const sentAt = new Date(Date.now() - 6 * 60_000);
  const { payload, signature } = signedIntentEvent(
    account,
    paidIntent(account, sentAt),
    'payment_intent.succeeded',
    SECRET,
    {
      at: sentAt,
      sentAt,
    },
  );
  expect(() => readPaymentEvent(payload, signature, SECRET)).toThrow(StripeSignatureError);
  const fresh = signedIntentEvent(account, paidIntent(account, sentAt), 'payment_intent.succeeded', SECRET, {
    at: sentAt,
  });
  expect(readPaymentEvent(fresh.payload, fresh.signature, SECRET)?.payment.paidAt).toBe(
    sentAt.toISOString().replace(/\.\d{3}Z$/, '.000Z'),
  );
});
