import Stripe from 'stripe';
import { describe, expect, it } from 'vitest';
import { STRIPE_WEBHOOK_PATH } from '../../api/endpoint-table.js';
import { PAYMENT_CALLBACK_PATH, signedHeaders } from '../../api/webhook-signature.js';
import { FakeStripeAccount } from '../../dev/fakes/stripe/account.js';
import { signedIntentEvent, signedRefundEvent, type SignedEvent } from '../../dev/fakes/stripe/events.js';
import { appWithoutBackends, listening } from '../helpers/app-without-backends.js';

/**
 * Stripe's webhook on the app without backends: whatever touches the database or Temporal answers
 * 500, so each answer here shows that the request changed nothing.
 */
const SECRET = 'whsec_unit_test_endpoint_secret_0123456789';
const ORDER_ID = '4b0f8a4e-6a4e-4e0b-9d5e-0f6f3c1d2a10';

const app = appWithoutBackends({ faultsEnabled: false, stripeWebhookSecret: SECRET });

async function post(
  event: { payload: string; signature?: string },
  on = app,
): Promise<{ status: number; body: any; cacheControl: string | null }> {
  return listening(on, async (base) => {
    const res = await fetch(base + STRIPE_WEBHOOK_PATH, {
      method: 'POST',
      headers: {
        'content-type': 'application/json; charset=utf-8',
        ...(event.signature === undefined ? {} : { 'Stripe-Signature': event.signature }),
      },
      body: event.payload,
    });
    return { status: res.status, body: await res.json(), cacheControl: res.headers.get('cache-control') };
  });
}

/** A succeeded intent's event, signed with `secret`. */
function succeeded(
  metadata: Record<string, string> = { order_id: ORDER_ID },
  { amount = 2200, secret = SECRET, sentAt = new Date() } = {},
): SignedEvent {
  const account = new FakeStripeAccount();
  const intent = account.createIntent({ amount, currency: 'eur', metadata });
  account.succeed(intent.id);
  return signedIntentEvent(account, intent.id, 'payment_intent.succeeded', secret, { sentAt });
}

const refused = {
  status: 400,
  body: { error: { code: 'INVALID_STRIPE_SIGNATURE', message: expect.stringContaining('Stripe-Signature') } },
  cacheControl: 'no-store',
};

describe('POST /webhooks/stripe refuses what Stripe did not sign, before anything is read or changed', () => {
  it.each([
    ['no Stripe-Signature', () => ({ payload: succeeded().payload })],
    ['an empty one', () => ({ ...succeeded(), signature: '' })],
    ['a malformed one', () => ({ ...succeeded(), signature: 'sha256=00' })],
    ['another endpoint’s secret', () => succeeded(undefined, { secret: 'whsec_another_endpoint' })],
    ['a changed body', () => ({ ...succeeded(), payload: succeeded().payload })],
    [
      'an amount changed after signing',
      () => {
        const event = succeeded();
        return { ...event, payload: event.payload.replaceAll('2200', '1') };
      },
    ],
    ['a signature older than 5 minutes', () => succeeded(undefined, { sentAt: new Date(Date.now() - 6 * 60_000) })],
  ])('%s: 400 INVALID_STRIPE_SIGNATURE', async (_, event) => {
    expect(await post(event())).toEqual(refused);
  });

  it('a body Stripe signed that is not JSON: 400 VALIDATION_FAILED, never a 5xx Stripe would retry', async () => {
    const payload = 'not json';
    const signature = Stripe.webhooks.generateTestHeaderString({ payload, secret: SECRET });
    expect(await post({ payload, signature })).toMatchObject({
      status: 400,
      body: { error: { code: 'VALIDATION_FAILED' } },
    });
  });

  describe('a body Stripe signed that is not an event the service can read: 400 VALIDATION_FAILED, never a 5xx', () => {
    const signed = (body: unknown) => {
      const payload = JSON.stringify(body);
      return { payload, signature: Stripe.webhooks.generateTestHeaderString({ payload, secret: SECRET }) };
    };
    const genuine = (): Record<string, any> => JSON.parse(succeeded().payload);
    const withObject = (change: (object: Record<string, unknown>) => void) => {
      const event = genuine();
      change(event.data.object);
      return event;
    };
    const refundFailed = (change: (object: Record<string, unknown>) => void) => {
      const account = new FakeStripeAccount();
      const intent = account.createIntent({ amount: 2200, currency: 'eur', metadata: { order_id: ORDER_ID } });
      account.succeed(intent.id);
      const refund = account.createRefund({ paymentIntent: intent.id, amount: 2200, metadata: {} });
      const event = JSON.parse(signedRefundEvent(account.failRefund(refund.id), 'refund.failed', SECRET).payload);
      change(event.data.object);
      return event;
    };

    it.each([
      ['JSON null', () => null],
      ['an array', () => [genuine()]],
      ['a string', () => 'payment_intent.succeeded'],
      [
        'no data',
        () => {
          const { data: _, ...event } = genuine();
          return event;
        },
      ],
      ['data: null', () => ({ ...genuine(), data: null })],
      ['no data.object', () => ({ ...genuine(), data: {} })],
      ['no type', () => ({ ...genuine(), type: undefined })],
      ['an intent without metadata', () => withObject((o) => delete o.metadata)],
      ['an intent without status', () => withObject((o) => delete o.status)],
      ['an intent of an unknown status', () => withObject((o) => (o.status = 'paid_somehow'))],
      ['an amount that is a string', () => withObject((o) => (o.amount_received = '2200'))],
      ['a refund whose payment_intent is a number', () => refundFailed((o) => (o.payment_intent = 42))],
      ['a refund whose object is a list', () => ({ ...refundFailed(() => {}), data: { object: [] } })],
    ])('%s', async (_, body) => {
      expect(await post(signed(body()))).toEqual({
        status: 400,
        body: { error: { code: 'VALIDATION_FAILED', message: expect.any(String) } },
        cacheControl: 'no-store',
      });
    });
  });

  it('is not mounted without a signing secret: 404 like any unknown path', async () => {
    const withoutStripe = appWithoutBackends({ faultsEnabled: false });
    expect(await post(succeeded(), withoutStripe)).toMatchObject({
      status: 404,
      body: { error: { code: 'NOT_FOUND' } },
    });
  });
});

describe("with Stripe, the local provider's callback", () => {
  it('is not mounted: 404 for a correctly signed payment, and /openapi.json does not name it', async () => {
    const body = JSON.stringify({
      paymentId: 'p-1',
      orderId: ORDER_ID,
      amountCents: 2200,
      paidAt: new Date().toISOString(),
    });
    await listening(appWithoutBackends({ faultsEnabled: false, stripeWebhookSecret: SECRET }), async (base) => {
      const res = await fetch(`${base}${PAYMENT_CALLBACK_PATH}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...signedHeaders('s', body) },
        body,
      });
      expect({ status: res.status, body: await res.json() }).toMatchObject({
        status: 404,
        body: { error: { code: 'NOT_FOUND' } },
      });
      const document = (await (await fetch(`${base}/openapi.json`)).json()) as { paths: Record<string, unknown> };
      expect(Object.keys(document.paths)).toContain(STRIPE_WEBHOOK_PATH);
      expect(Object.keys(document.paths)).not.toContain(PAYMENT_CALLBACK_PATH);
    });
  });
});

describe('POST /webhooks/stripe acknowledges, and ignores, events that take no money', () => {
  const ignored = (event: SignedEvent) => ({
    status: 200,
    body: { eventId: JSON.parse(event.payload).id, outcome: 'IGNORED' },
    cacheControl: 'no-store',
  });

  it.each(['payment_intent.created', 'payment_intent.processing', 'charge.succeeded'])(
    '%s: 200 IGNORED',
    async (type) => {
      const account = new FakeStripeAccount();
      const intent = account.createIntent({ amount: 2200, currency: 'eur', metadata: { order_id: ORDER_ID } });
      const event = signedIntentEvent(account, intent.id, type, SECRET);
      expect(await post(event)).toEqual(ignored(event));
    },
  );
});

describe('POST /webhooks/stripe answers 5xx only when the payment could not be handed over', () => {
  it('a payment for an order, with the database unreachable: 500 INTERNAL, so that Stripe redelivers', async () => {
    expect(await post(succeeded())).toMatchObject({ status: 500, body: { error: { code: 'INTERNAL' } } });
  });

  it('money for no order of ours, with the database unreachable: 500 INTERNAL, since it must be recorded', async () => {
    expect(await post(succeeded({}))).toMatchObject({ status: 500, body: { error: { code: 'INTERNAL' } } });
  });

  it('a failed refund, with the database unreachable: 500 INTERNAL, so that Stripe redelivers', async () => {
    const account = new FakeStripeAccount();
    const intent = account.createIntent({ amount: 2200, currency: 'eur', metadata: { order_id: ORDER_ID } });
    account.succeed(intent.id);
    const refund = account.createRefund({ paymentIntent: intent.id, amount: 2200, metadata: {} });
    const event = signedRefundEvent(account.failRefund(refund.id), 'refund.failed', SECRET);
    expect(await post(event)).toMatchObject({ status: 500, body: { error: { code: 'INTERNAL' } } });
  });
});
