import { randomUUID } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/common';
import type Stripe from 'stripe';
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { createStripeClient } from '../../../adapters/stripe/client.js';
import { READ_EVENT_TYPES } from '../../../adapters/stripe/events.js';
import { toProviderPayment } from '../../../adapters/stripe/intents.js';
import { StripePaymentProvider } from '../../../adapters/stripe/payment-provider.js';
import { THIRD_PARTY_FAILURES } from '../../../domain/errors.js';
import { startStripeMock, type RunningStripeMock } from '../../../dev/stripe-mock.js';

/**
 * Every request the Stripe adapter makes, sent to stripe-mock, which checks each against Stripe's
 * OpenAPI description and answers 400 to a parameter Stripe does not know or a value it would
 * refuse. Its answers are fixed fixtures (a cancel always "succeeds"), so this proves the requests
 * are well-formed, not how the adapter behaves: the stateful fake's tests do that.
 */
let mock: RunningStripeMock;
let stripe: Stripe;
let provider: StripePaymentProvider;
/** What the client sent and what stripe-mock answered, per request, in order. */
let exchanges: Array<{ method: string; path: string; status: number; idempotencyKey: string | undefined }>;

beforeAll(async () => {
  mock = await startStripeMock();
  stripe = createStripeClient({ secretKey: 'sk_test_stripemock', apiBase: mock.apiBase });
  stripe.on('response', (r: Stripe.ResponseEvent) =>
    exchanges.push({
      method: r.method,
      path: r.path.split('?')[0]!,
      status: r.status,
      idempotencyKey: r.idempotency_key,
    }),
  );
  provider = new StripePaymentProvider(stripe);
}, 10 * 60_000); // a fresh machine builds stripe-mock first (about a minute on 2 cores)

afterAll(async () => {
  await mock?.stop();
});

beforeEach(() => {
  exchanges = [];
});

it('stripe-mock refuses a parameter Stripe would refuse, so its acceptance below means something', async () => {
  const refused = stripe.paymentIntents.cancel('pi_123', {
    cancellation_reason: 'deadline' as Stripe.PaymentIntentCancelParams.CancellationReason,
  });
  await expect(refused).rejects.toMatchObject({ statusCode: 400 });
});

it('creates a payment: the intent, with an idempotency key derived from the order', async () => {
  const orderId = randomUUID();
  const created = await provider.createPayment({ orderId, amountCents: 4200, currency: 'EUR', customerId: 'c-1' });
  expect(created.paymentId).toMatch(/^pi_/);
  expect(created.clientSecret).toMatch(/_secret_/);
  expect(exchanges).toEqual([
    { method: 'POST', path: '/v1/payment_intents', status: 200, idempotencyKey: `create-payment-${orderId}` },
  ]);
});

it.each([
  ['the Dashboard’s methods', undefined],
  ['a chosen list with vouchers', ['card', 'konbini', 'boleto', 'oxxo']],
])('creates a payment offering %s, each voucher expiring within AWAITING_FUNDS_MAX', async (_, paymentMethods) => {
  const withMethods = new StripePaymentProvider(stripe, { paymentMethods, awaitingFundsMaxMs: 14 * 86_400_000 });
  const created = await withMethods.createPayment({
    orderId: randomUUID(),
    amountCents: 4200,
    currency: 'jpy',
    customerId: 'c-1',
  });
  expect(created.paymentId).toMatch(/^pi_/);
  expect(exchanges).toMatchObject([{ method: 'POST', path: '/v1/payment_intents', status: 200 }]);
});

it('reports an amount Stripe refuses as the provider rejecting it, not to be retried', async () => {
  const failure = await provider
    .createPayment({ orderId: randomUUID(), amountCents: 12.5, currency: 'eur', customerId: 'c-1' })
    .catch((err: unknown) => err);
  expect(failure).toBeInstanceOf(ApplicationFailure);
  expect(failure).toMatchObject({ type: THIRD_PARTY_FAILURES.rejected, nonRetryable: true });
  expect(exchanges).toMatchObject([{ method: 'POST', path: '/v1/payment_intents', status: 400 }]);
});

it('cancels by payment id: reads the intent (its charge expanded), then cancels it', async () => {
  expect(await provider.cancelPayment({ paymentId: 'pi_123' })).toEqual({ outcome: 'CLOSED' });
  expect(exchanges.map(({ method, path, status }) => ({ method, path, status }))).toEqual([
    { method: 'GET', path: '/v1/payment_intents/pi_123', status: 200 },
    { method: 'POST', path: '/v1/payment_intents/pi_123/cancel', status: 200 },
  ]);
});

it('cancels by order: searches the intents by the order id in their metadata, then cancels each', async () => {
  expect(await provider.cancelPayment({ orderId: randomUUID() })).toEqual({ outcome: 'CLOSED' });
  expect(exchanges).toMatchObject([
    { method: 'GET', path: '/v1/payment_intents/search', status: 200 },
    { method: 'POST', path: expect.stringMatching(/^\/v1\/payment_intents\/pi_\w+\/cancel$/), status: 200 },
  ]);
});

it('refunds: lists the payment’s refunds, then creates one with an idempotency key derived from the payment', async () => {
  // stripe-mock's listed refund has none of this service's metadata: it is not ours, so a refund is made.
  const { refundRef } = await provider.refund({ paymentId: 'pi_123', amountCents: 1099 });
  expect(refundRef).toMatch(/^re_/);
  expect(exchanges).toEqual([
    { method: 'GET', path: '/v1/refunds', status: 200, idempotencyKey: undefined },
    { method: 'POST', path: '/v1/refunds', status: 200, idempotencyKey: 'refund-pi_123-0' },
  ]);
});

it('lists the undelivered events of the types the webhook reads, from a time and after an event', async () => {
  const queries: string[] = [];
  const onRequest = (r: Stripe.RequestEvent) => queries.push(decodeURIComponent(r.path));
  stripe.on('request', onRequest);
  const since = new Date('2026-12-01T10:00:00Z');
  const page = await provider
    .listEvents({ createdSince: since.toISOString(), startingAfter: 'evt_123', limit: 100 })
    .finally(() => stripe.off('request', onRequest));
  // stripe-mock's canned event is of a type the webhook does not read: listed, with nothing to act on.
  expect(page.events.length).toBeGreaterThan(0);
  for (const listed of page.events) {
    expect(listed).toEqual({
      eventId: expect.stringMatching(/^evt_/),
      createdAt: expect.any(String),
      event: undefined,
    });
  }
  expect(exchanges).toEqual([{ method: 'GET', path: '/v1/events', status: 200, idempotencyKey: undefined }]);
  const sent = new URLSearchParams(queries[0]!.split('?')[1]);
  expect(Object.fromEntries([...sent].filter(([key]) => !key.startsWith('types')))).toEqual({
    'created[gte]': String(since.getTime() / 1000),
    delivery_success: 'false',
    limit: '100',
    starting_after: 'evt_123',
  });
  const types = [...sent].filter(([key]) => key.startsWith('types')).map(([, value]) => value);
  expect(types.sort()).toEqual([...READ_EVENT_TYPES].sort());
});

it('with a Connect account configured, acts on it, and reads its intents as taken on it, with their currency and mode', async () => {
  const connected = createStripeClient({
    secretKey: 'sk_test_stripemock',
    apiBase: mock.apiBase,
    connectAccount: 'acct_1Connected',
  });
  const accounts: Array<string | undefined> = [];
  // The request as sent: its Stripe-Account header.
  connected.on('request', (r: Stripe.RequestEvent) => accounts.push(r.account));
  const onAccount = new StripePaymentProvider(connected, { connectAccount: 'acct_1Connected' });
  expect(await onAccount.cancelPayment({ paymentId: 'pi_123' })).toEqual({ outcome: 'CLOSED' });
  expect(accounts).toEqual(['acct_1Connected', 'acct_1Connected']);

  // What the deadline's closing judges a payment by, read from the intent stripe-mock answers.
  const intent = await connected.paymentIntents.retrieve('pi_123');
  expect(toProviderPayment(intent, 'acct_1Connected')).toMatchObject({
    currency: intent.currency.toLowerCase(),
    livemode: false,
    connectAccount: 'acct_1Connected',
  });
});
