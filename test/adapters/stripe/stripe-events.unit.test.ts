import { expect, it } from 'vitest';
import { readStripeEvent, StripeSignatureError } from '../../../adapters/stripe/events.js';
import { FakeStripeAccount } from '../../../dev/fakes/stripe/account.js';
import { signedIntentEvent, signedRefundEvent } from '../../../dev/fakes/stripe/events.js';

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
  expect(readStripeEvent(payload, signature, SECRET)).toEqual({
    eventId: JSON.parse(payload).id,
    type: 'payment_intent.succeeded',
    payment: {
      paymentId: intentId,
      orderId: 'order-1',
      amountCents: 1500,
      currency: 'eur',
      livemode: false,
      connectAccount: null,
      customerId: undefined,
      status: 'SUCCEEDED',
      paidAt: paidAt.toISOString(),
    },
  });
});

it("reads where a payment's money came from: the event's mode, its Connect account, the customer its metadata names", () => {
  const account = new FakeStripeAccount();
  const intent = account.createIntent({
    amount: 1500,
    currency: 'usd',
    metadata: { order_id: 'order-1', customer_id: 'customer-7' },
  });
  account.succeed(intent.id);
  const { payload, signature } = signedIntentEvent(account, intent.id, 'payment_intent.succeeded', SECRET, {
    livemode: true,
    account: 'acct_1Connected',
  });
  expect(readStripeEvent(payload, signature, SECRET)).toMatchObject({
    payment: { currency: 'usd', livemode: true, connectAccount: 'acct_1Connected', customerId: 'customer-7' },
  });
});

it('reads a signed refund.failed as the failed refund of the payment it gives back, with Stripe’s reason', () => {
  const account = new FakeStripeAccount();
  const intentId = paidIntent(account, new Date());
  const refund = account.createRefund({ paymentIntent: intentId, amount: 1500, metadata: {} });
  const { payload, signature } = signedRefundEvent(
    account.failRefund(refund.id, 'lost_or_stolen_card'),
    'refund.failed',
    SECRET,
  );
  expect(readStripeEvent(payload, signature, SECRET)).toEqual({
    eventId: JSON.parse(payload).id,
    type: 'refund.failed',
    refund: { refundRef: refund.id, paymentId: intentId, reason: 'lost_or_stolen_card' },
  });
  // Any other refund event is acknowledged and ignored: only a failure owes the money again.
  for (const status of ['pending', 'succeeded'] as const) {
    const updated = signedRefundEvent({ ...refund, status }, 'refund.updated', SECRET);
    expect(readStripeEvent(updated.payload, updated.signature, SECRET)).toBeUndefined();
  }
});

it.each([
  ['canceled', undefined, 'canceled'],
  ['failed', 'lost_or_stolen_card', 'lost_or_stolen_card'],
] as const)(
  'reads a signed refund.updated to %s as a failed refund: the money did not go back',
  (status, failureReason, reason) => {
    const account = new FakeStripeAccount();
    const intentId = paidIntent(account, new Date());
    const refund = account.createRefund({ paymentIntent: intentId, amount: 1500, metadata: {} });
    const { payload, signature } = signedRefundEvent(
      { ...refund, status, ...(failureReason && { failureReason }) },
      'refund.updated',
      SECRET,
    );
    expect(readStripeEvent(payload, signature, SECRET)).toEqual({
      eventId: JSON.parse(payload).id,
      type: 'refund.failed',
      refund: { refundRef: refund.id, paymentId: intentId, reason },
    });
  },
);

it('acknowledges a failed refund of a charge made without a payment intent: never one of this service’s', () => {
  const account = new FakeStripeAccount();
  const refund = account.createRefund({ paymentIntent: paidIntent(account, new Date()), amount: 1500, metadata: {} });
  const { payload, signature } = signedRefundEvent(
    { ...account.failRefund(refund.id), paymentIntent: null },
    'refund.failed',
    SECRET,
  );
  expect(readStripeEvent(payload, signature, SECRET)).toBeUndefined();
});

it('acknowledges an event of another type without reading it as a payment', () => {
  const account = new FakeStripeAccount();
  const intentId = account.createIntent({ amount: 1500, currency: 'eur', metadata: {} }).id;
  const { payload, signature } = signedIntentEvent(account, intentId, 'payment_intent.created', SECRET);
  expect(readStripeEvent(payload, signature, SECRET)).toBeUndefined();
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
  expect(() => readStripeEvent(payload, signature, secret)).toThrow(StripeSignatureError);
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
  expect(() => readStripeEvent(payload, signature, SECRET)).toThrow(StripeSignatureError);
  const fresh = signedIntentEvent(account, paidIntent(account, sentAt), 'payment_intent.succeeded', SECRET, {
    at: sentAt,
  });
  expect(readStripeEvent(fresh.payload, fresh.signature, SECRET)).toMatchObject({
    payment: { paidAt: sentAt.toISOString().replace(/\.\d{3}Z$/, '.000Z') },
  });
});
