import { randomUUID } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/common';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createStripeClient } from '../../../adapters/stripe/client.js';
import { StripePaymentProvider } from '../../../adapters/stripe/payment-provider.js';
import { THIRD_PARTY_FAILURES } from '../../../domain/errors.js';
import { FakeStripe, type Outage } from '../../../dev/fakes/stripe/server.js';

/**
 * The adapter's behaviour, through the official client, against the stateful fake of Stripe's
 * API (dev/fakes/stripe), which moves intents and refunds the way Stripe does.
 */
const SECRET_KEY = 'sk_test_fake';
let fake: FakeStripe;
let provider: StripePaymentProvider;

beforeEach(async () => {
  fake = await FakeStripe.start(SECRET_KEY);
  provider = new StripePaymentProvider(createStripeClient({ secretKey: SECRET_KEY, apiBase: fake.apiBase }));
});
afterEach(async () => {
  await fake.close();
});

const newPayment = () => ({ orderId: randomUUID(), amountCents: 2599, currency: 'EUR', customerId: 'customer-7' });

async function failureOf(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => expect.unreachable('the call succeeded'),
    (err: unknown) => err,
  );
}

describe('createPayment', () => {
  it('creates one intent per order, carrying the order and the customer, and answers its client secret', async () => {
    const request = newPayment();
    const first = await provider.createPayment(request);
    const again = await provider.createPayment(request);
    expect(again).toEqual(first);
    expect(fake.account.intents.size).toBe(1);
    expect(fake.account.intent(first.paymentId)).toMatchObject({
      amount: 2599,
      currency: 'eur',
      metadata: { order_id: request.orderId, customer_id: 'customer-7' },
      clientSecret: first.clientSecret,
    });
    expect(fake.callsTo('create-intent').map((c) => c.replayed)).toEqual([false, true]);
  });

  it('goes on under a key of its own after a server error Stripe keeps under the order’s key', async () => {
    const request = newPayment();
    fake.outage = 'server-error-kept';
    await failureOf(provider.createPayment(request));
    fake.outage = undefined;
    const created = await provider.createPayment(request);
    expect(fake.account.intent(created.paymentId)).toMatchObject({ metadata: { order_id: request.orderId } });
    const key = `create-payment-${request.orderId}`;
    const calls = fake.callsTo('create-intent');
    // The order's key still answers the kept 500 (a day long at Stripe); the call goes on under another.
    expect(calls.map((c) => [c.idempotencyKey === key, c.status, c.replayed])).toEqual([
      [true, 500, false],
      [false, 500, false],
      [true, 500, true],
      [false, 200, false],
    ]);
    expect(calls[3]!.idempotencyKey).toMatch(new RegExp(`^${key}-`));
  });
});

describe('cancelPayment', () => {
  it('cancels an intent the customer has not paid; cancelling it again answers the same', async () => {
    const { paymentId } = await provider.createPayment(newPayment());
    expect(await provider.cancelPayment({ paymentId })).toEqual({ outcome: 'CLOSED' });
    expect(fake.account.intent(paymentId)).toMatchObject({ status: 'canceled', cancellationReason: 'abandoned' });
    expect(await provider.cancelPayment({ paymentId })).toEqual({ outcome: 'CLOSED' });
    expect(fake.callsTo('cancel-intent')).toHaveLength(1);
  });

  it('answers PAID_AT_PROVIDER, with what Stripe received and when, for an intent the customer paid', async () => {
    const { paymentId } = await provider.createPayment(newPayment());
    const paidAt = new Date(Date.now() - 60_000);
    fake.account.succeed(paymentId, paidAt);
    expect(await provider.cancelPayment({ paymentId })).toEqual({
      outcome: 'PAID_AT_PROVIDER',
      payment: {
        paymentId,
        amountCents: 2599,
        paidAt: new Date(Math.floor(paidAt.getTime() / 1000) * 1000).toISOString(),
        // Where the money came from, for the deadline's closing to judge as the webhook does.
        currency: 'eur',
        livemode: false,
        connectAccount: null,
        customerId: 'customer-7',
      },
    });
    expect(fake.callsTo('cancel-intent')).toHaveLength(0);
  });

  it('answers PAID_AT_PROVIDER when the payment succeeds while the deadline fires (Stripe refuses the cancel)', async () => {
    const { paymentId } = await provider.createPayment(newPayment());
    fake.beforeNext('cancel-intent', () => fake.account.succeed(paymentId));
    expect(await provider.cancelPayment({ paymentId })).toMatchObject({
      outcome: 'PAID_AT_PROVIDER',
      payment: { paymentId, amountCents: 2599 },
    });
    expect(fake.callsTo('cancel-intent')).toMatchObject([{ status: 400 }]);
  });

  it.each([
    ['a bank debit is processing', (id: string) => fake.account.startProcessing(id)],
    ['a Konbini voucher waits to be paid', (id: string) => fake.account.requireAction(id, 'konbini_display_details')],
    [
      'a bank transfer waits for its funds',
      (id: string) => fake.account.requireAction(id, 'display_bank_transfer_instructions'),
    ],
    ['a Boleto waits to be paid', (id: string) => fake.account.requireAction(id, 'boleto_display_details')],
  ])('answers FUNDS_IN_TRANSIT and leaves the intent alone while %s, even past a grace', async (_, move) => {
    const { paymentId } = await provider.createPayment(newPayment());
    const before = move(paymentId).status;
    expect(await provider.cancelPayment({ paymentId })).toEqual({ outcome: 'FUNDS_IN_TRANSIT' });
    expect(await provider.cancelPayment({ paymentId }, { duringCustomerAction: true })).toEqual({
      outcome: 'FUNDS_IN_TRANSIT',
    });
    expect(fake.account.intent(paymentId).status).toBe(before);
    expect(fake.callsTo('cancel-intent')).toHaveLength(0);
  });

  it.each([
    ['is in a 3-D Secure challenge', (id: string) => fake.account.requireAction(id, 'use_stripe_sdk')],
    ['was redirected to their bank', (id: string) => fake.account.requireAction(id, 'redirect_to_url')],
  ])('answers CUSTOMER_ACTION while the customer %s; past its grace, cancels it', async (_, move) => {
    const { paymentId } = await provider.createPayment(newPayment());
    move(paymentId);
    expect(await provider.cancelPayment({ paymentId })).toEqual({ outcome: 'CUSTOMER_ACTION' });
    expect(fake.account.intent(paymentId).status).toBe('requires_action');
    expect(fake.callsTo('cancel-intent')).toHaveLength(0);
    expect(await provider.cancelPayment({ paymentId }, { duringCustomerAction: true })).toEqual({ outcome: 'CLOSED' });
    expect(fake.account.intent(paymentId)).toMatchObject({ status: 'canceled', cancellationReason: 'abandoned' });
  });

  it('cancels a debit that bounced (back to requires_payment_method): CLOSED', async () => {
    const { paymentId } = await provider.createPayment(newPayment());
    fake.account.startProcessing(paymentId);
    expect(await provider.cancelPayment({ paymentId })).toEqual({ outcome: 'FUNDS_IN_TRANSIT' });
    fake.account.failPayment(paymentId);
    expect(await provider.cancelPayment({ paymentId })).toEqual({ outcome: 'CLOSED' });
    expect(fake.account.intent(paymentId).status).toBe('canceled');
  });

  it('answers FUNDS_IN_TRANSIT when a bank debit starts while the deadline fires', async () => {
    const { paymentId } = await provider.createPayment(newPayment());
    fake.beforeNext('cancel-intent', () => fake.account.startProcessing(paymentId));
    expect(await provider.cancelPayment({ paymentId })).toEqual({ outcome: 'FUNDS_IN_TRANSIT' });
    expect(fake.callsTo('cancel-intent')).toMatchObject([{ status: 400 }]);
  });

  it('finds the intent by the order it was created for', async () => {
    const request = newPayment();
    const { paymentId } = await provider.createPayment(request);
    await provider.createPayment(newPayment()); // another order's, left alone
    expect(await provider.cancelPayment({ orderId: request.orderId })).toEqual({ outcome: 'CLOSED' });
    expect([...fake.account.intents.values()].map((i) => [i.id === paymentId, i.status])).toEqual([
      [true, 'canceled'],
      [false, 'requires_payment_method'],
    ]);
  });

  it('answers CLOSED for an order that has no intent: nothing can be paid', async () => {
    expect(await provider.cancelPayment({ orderId: randomUUID() })).toEqual({ outcome: 'CLOSED' });
  });

  it('is refused, not retried, for a payment id Stripe does not know', async () => {
    const failure = await failureOf(provider.cancelPayment({ paymentId: 'pi_unknown' }));
    expect(failure).toBeInstanceOf(ApplicationFailure);
    expect(failure).toMatchObject({ type: THIRD_PARTY_FAILURES.rejected, nonRetryable: true });
  });

  it.each<Outage>(['server-error', 'server-error-kept', 'rate-limited', 'connection-dropped'])(
    'answers UNAVAILABLE during an outage (%s), and leaves the intent as it was',
    async (outage) => {
      const { paymentId } = await provider.createPayment(newPayment());
      fake.outage = outage;
      expect(await provider.cancelPayment({ paymentId })).toEqual({ outcome: 'UNAVAILABLE' });
      fake.outage = undefined;
      expect(fake.account.intent(paymentId).status).toBe('requires_payment_method');
      expect(await provider.cancelPayment({ paymentId })).toEqual({ outcome: 'CLOSED' });
    },
  );

  it('answers UNAVAILABLE when Stripe fails between reading the intent and cancelling it', async () => {
    const { paymentId } = await provider.createPayment(newPayment());
    fake.beforeNext('cancel-intent', () => (fake.outage = 'server-error'));
    expect(await provider.cancelPayment({ paymentId })).toEqual({ outcome: 'UNAVAILABLE' });
    expect(fake.callsTo('retrieve-intent')).toHaveLength(1);
  });
});

describe('refund', () => {
  async function paidPayment(): Promise<string> {
    const { paymentId } = await provider.createPayment(newPayment());
    fake.account.succeed(paymentId);
    return paymentId;
  }

  it('refunds the payment once, however often it is asked', async () => {
    const paymentId = await paidPayment();
    const first = await provider.refund({ paymentId, amountCents: 2599 });
    expect(await provider.refund({ paymentId, amountCents: 2599 })).toEqual(first);
    expect(fake.account.refundsOf(paymentId)).toMatchObject([
      { id: first.refundRef, amount: 2599, status: 'succeeded' },
    ]);
  });

  it('finds the refund made before Stripe forgot its idempotency key, instead of refunding again', async () => {
    const paymentId = await paidPayment();
    const first = await provider.refund({ paymentId, amountCents: 2599 });
    fake.forgetIdempotencyKeys();
    expect(await provider.refund({ paymentId, amountCents: 2599 })).toEqual(first);
    expect(fake.account.refundsOf(paymentId)).toHaveLength(1);
    expect(fake.callsTo('create-refund')).toHaveLength(1);
  });

  it('finds the refund whose answers were lost (Stripe made it, the connection dropped, the key expired)', async () => {
    const paymentId = await paidPayment();
    fake.losingAnswersTo = 'create-refund';
    const lost = await failureOf(provider.refund({ paymentId, amountCents: 2599 }));
    expect(lost).toMatchObject({ type: THIRD_PARTY_FAILURES.unavailable, nonRetryable: false });
    // The client retries a dropped connection once by itself, with the same key: Stripe replays, nothing more.
    expect(fake.callsTo('create-refund').map((c) => c.replayed)).toEqual([false, true]);
    fake.losingAnswersTo = undefined;
    fake.forgetIdempotencyKeys();
    const { refundRef } = await provider.refund({ paymentId, amountCents: 2599 });
    expect(fake.account.refundsOf(paymentId)).toMatchObject([{ id: refundRef, amount: 2599 }]);
    expect(fake.callsTo('create-refund')).toHaveLength(2);
  });

  it('refunds once after a server error Stripe keeps under the refund’s key, reading the refunds again first', async () => {
    const paymentId = await paidPayment();
    fake.beforeNext('create-refund', () => (fake.outage = 'server-error-kept'));
    const failure = await failureOf(provider.refund({ paymentId, amountCents: 2599 }));
    expect(failure).toMatchObject({ type: THIRD_PARTY_FAILURES.unavailable, nonRetryable: false });
    fake.outage = undefined;
    const { refundRef } = await provider.refund({ paymentId, amountCents: 2599 });
    expect(fake.account.refundsOf(paymentId)).toMatchObject([{ id: refundRef, amount: 2599, status: 'succeeded' }]);
    const creates = fake.callsTo('create-refund');
    expect(creates.map((c) => [c.status, c.replayed])).toEqual([
      [500, false], // kept under refund-<id>-0
      [500, true], // the next call: the same key, the same answer
      [200, false], // under a key of its own
    ]);
    expect(creates[1]!.idempotencyKey).toBe(`refund-${paymentId}-0`);
    expect(creates[2]!.idempotencyKey).toMatch(new RegExp(`^refund-${paymentId}-0-`));
    // Asked again, the refund made under that key is found as this service's own.
    expect(await provider.refund({ paymentId, amountCents: 2599 })).toEqual({ refundRef });
    expect(fake.callsTo('create-refund')).toHaveLength(3);
  });

  it('answers the refund an attempt given up on made meanwhile, not Stripe’s refusal to refund twice', async () => {
    const paymentId = await paidPayment();
    // An earlier attempt, timed out but still running, makes the refund between this one's list and create.
    fake.beforeNext('create-refund', () =>
      fake.account.createRefund({
        paymentIntent: paymentId,
        amount: undefined,
        metadata: { order_lifecycle_refund_key: `refund-${paymentId}-0-${randomUUID()}` },
      }),
    );
    const { refundRef } = await provider.refund({ paymentId, amountCents: 2599 });
    expect(fake.account.refundsOf(paymentId)).toMatchObject([{ id: refundRef, status: 'succeeded' }]);
    expect(fake.callsTo('create-refund').map((c) => c.status)).toEqual([400]);
  });

  it('is refused for a payment refunded outside this service (in the dashboard): one for an operator', async () => {
    const paymentId = await paidPayment();
    fake.account.createRefund({ paymentIntent: paymentId, amount: undefined, metadata: {} });
    const failure = await failureOf(provider.refund({ paymentId, amountCents: 2599 }));
    expect(failure).toMatchObject({ type: THIRD_PARTY_FAILURES.rejected, nonRetryable: true });
    expect(fake.account.refundsOf(paymentId)).toHaveLength(1);
  });

  it('makes a new refund when the earlier one failed at the card issuer (an operator’s retry)', async () => {
    const paymentId = await paidPayment();
    const first = await provider.refund({ paymentId, amountCents: 2599 });
    fake.account.failRefund(first.refundRef);
    const second = await provider.refund({ paymentId, amountCents: 2599 });
    expect(second.refundRef).not.toBe(first.refundRef);
    expect(fake.account.refundsOf(paymentId).map((r) => r.status)).toEqual(['succeeded', 'failed']);
    expect(fake.callsTo('create-refund').map((c) => c.idempotencyKey)).toEqual([
      `refund-${paymentId}-0`,
      `refund-${paymentId}-1`,
    ]);
  });

  it('is refused, not retried, for a payment that was never paid', async () => {
    const { paymentId } = await provider.createPayment(newPayment());
    const failure = await failureOf(provider.refund({ paymentId, amountCents: 2599 }));
    expect(failure).toMatchObject({ type: THIRD_PARTY_FAILURES.rejected, nonRetryable: true });
  });
});

describe('failures', () => {
  it.each<Outage>(['server-error', 'server-error-kept', 'rate-limited', 'connection-dropped'])(
    'an outage (%s) is THIRD_PARTY_UNAVAILABLE, retryable, for create and refund',
    async (outage) => {
      const paymentId = (await provider.createPayment(newPayment())).paymentId;
      fake.outage = outage;
      // One after the other: a call started before its failure is awaited would reject unhandled.
      for (const call of [
        () => provider.createPayment(newPayment()),
        () => provider.refund({ paymentId, amountCents: 2599 }),
      ]) {
        const failure = await failureOf(call());
        expect(failure).toBeInstanceOf(ApplicationFailure);
        expect(failure).toMatchObject({ type: THIRD_PARTY_FAILURES.unavailable, nonRetryable: false });
      }
    },
  );

  it('a key Stripe refuses is our configuration’s fault: an error of ours, retried, that never quotes the key', async () => {
    const misconfigured = new StripePaymentProvider(
      createStripeClient({ secretKey: 'sk_test_wrong', apiBase: fake.apiBase }),
    );
    const failure = await failureOf(misconfigured.createPayment(newPayment()));
    expect(failure).not.toBeInstanceOf(ApplicationFailure);
    expect(failure).toBeInstanceOf(Error);
    expect((failure as Error).message).toContain('Stripe refused our API key to create');
    expect((failure as Error).message).not.toContain('sk_test_wrong');
  });
});
