import { randomUUID } from 'node:crypto';
import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { Endpoint } from '../../api/endpoint.js';
import { CALLBACK_ENDPOINTS, DEV_ENDPOINTS, ENDPOINTS, STRIPE_ENDPOINTS } from '../../api/endpoints.js';
import type { ErrorCode } from '../../api/errors.js';
import { orderWorkflowId, statusQuery } from '../../domain/messages.js';
import { MAX_ORDER_TOTAL_CENTS } from '../../domain/order-total.js';
import { createFakeThirdParties } from '../../dev/fakes/index.js';
import { FAULT_ENDPOINTS } from '../../dev/fakes/fault-endpoints.js';
import { STRIPE_WEBHOOK_PATH } from '../../api/endpoint-table.js';
import { signedHeaders } from '../../api/webhook-signature.js';
import { FakeStripeAccount } from '../../dev/fakes/stripe/account.js';
import { signedIntentEvent } from '../../dev/fakes/stripe/events.js';
import { PayloadEncryptionCodec } from '../../lib/payload-encryption.js';
import { placeOrder, seedCatalog } from '../helpers/catalog.js';
import { eventually } from '../helpers/eventually.js';
import {
  ADMIN_TOKEN,
  startOrderHarness,
  WEBHOOK_SECRET,
  type HttpResult,
  type OrderHarness,
} from '../helpers/order-harness.js';

/**
 * Drives every route of the OpenAPI document through the real service: one call that succeeds,
 * whose body must match the documented schema, and one call per documented error code, which must
 * answer that code at the documented status. A route that answers a code it does not document, or
 * documents one that no call here produces, fails. INTERNAL (any route, when something of ours
 * breaks) is not driven, nor BUSY (any route, when no database connection comes in time:
 * test/api/anonymous-flood.test.ts drives it), nor TOO_MANY_FAILED_ATTEMPTS (any bearer route, once an address has had
 * too many tokens refused): turned on here it would refuse the probes' own 401s, so
 * test/api/auth-throttle.unit.test.ts drives it.
 */
const NOT_DRIVEN: ErrorCode[] = ['INTERNAL', 'BUSY', 'TOO_MANY_FAILED_ATTEMPTS'];
/** Calls per customer per minute of each budget: placements, and reads with cancels. */
const RATE_LIMIT = 3;
const STRIPE_WEBHOOK_SECRET = 'whsec_openapi_errors_endpoint_0123456789';
const UNITS_LIMIT = 5;
/** Refused coupon codes per customer before their coupon attempts are 429. */
const COUPON_REFUSALS = 2;

let h: OrderHarness;
let f: Fixture;
let document: any;

interface Order {
  id: string;
  totalCents: number;
}
interface Fixture {
  sku: string;
  couponCode: string;
  /** Stock 1: two units are out of stock. */
  scarceSku: string;
  /** UNPAID; its customer, `holder`, is at the open-order limit (1). */
  unpaid: Order;
  /** PAID, its loyalty step FAILED; `paymentId` CAPTURED. */
  paid: Order & { paymentId: string };
  /** UNPAID; `paymentId` (of the wrong amount) REFUND_FAILED. */
  refundFailed: Order & { paymentId: string };
  toCancel: Order;
  toSimulate: Order;
  /**
   * A total above what a payment callback may carry, so the simulated callback is refused: written
   * straight into the database, since placement refuses such a total.
   */
  unpayable: Order;
  /** Priced so that one unit is above the largest order total. */
  pricySku: string;
  /** Priced under the smallest charge: one unit alone cannot be paid. */
  cheapSku: string;
}

beforeAll(async () => {
  h = await startOrderHarness({
    taskQueue: 'orders-openapi',
    maxOpenOrdersPerCustomer: 1,
    maxUnpaidUnitsPerProduct: UNITS_LIMIT,
    ordersRateLimit: { limit: RATE_LIMIT, windowMs: 60_000 },
    readsRateLimit: { limit: RATE_LIMIT, windowMs: 60_000 },
    couponRefusalLimit: { limit: COUPON_REFUSALS, windowMs: 60 * 60_000 },
    stripeWebhookSecret: STRIPE_WEBHOOK_SECRET,
  });
  document = (await h.http('GET', '/openapi.json')).body;
  f = await fixture();
}, 180_000);
afterAll(async () => {
  await h?.close();
});

async function fixture(): Promise<Fixture> {
  const { sku, couponCode } = await seedCatalog(h, { stock: 50 });
  const scarceSku = (await seedCatalog(h, { stock: 1 })).sku;
  const pricySku = (await seedCatalog(h, { priceCents: MAX_ORDER_TOTAL_CENTS + 1, stock: 2 })).sku;
  const cheapSku = (await seedCatalog(h, { priceCents: 1, stock: 2 })).sku;
  const order = (customerId: string, item = sku, quantity = 1) => placeOrder(h, { sku: item, quantity, customerId });

  const paid = await order('payer');
  const paidPaymentId = `pay-${paid.id}`;
  await withFault('loyalty', async () => {
    expect((await h.pay({ paymentId: paidPaymentId, orderId: paid.id, amountCents: paid.totalCents })).status).toBe(
      202,
    );
    await eventually(
      async () => (await h.admin('GET', `/orders/${paid.id}`)).body.fulfillment?.loyalty === 'FAILED',
      30_000,
    );
  });

  const refundFailed = await order('refundee');
  const refundPaymentId = `wrong-amount-${refundFailed.id}`;
  await withFault('payments', async () => {
    expect((await h.pay({ paymentId: refundPaymentId, orderId: refundFailed.id, amountCents: 1 })).status).toBe(202);
    await eventually(
      async () =>
        (await h.db.payment.findUnique({ where: { paymentId: refundPaymentId } }))?.status === 'REFUND_FAILED',
      30_000,
    );
  });

  return {
    sku,
    couponCode,
    scarceSku,
    unpaid: await order('holder'),
    paid: { ...paid, paymentId: paidPaymentId },
    refundFailed: { ...refundFailed, paymentId: refundPaymentId },
    toCancel: await order('canceller'),
    toSimulate: await order('simulator'),
    unpayable: await orderBeyondTheLimit(),
    pricySku,
    cheapSku,
  };
}

async function orderBeyondTheLimit(): Promise<Order> {
  const row = await h.db.order.create({
    data: {
      id: randomUUID(),
      customerId: 'whale',
      totalCents: MAX_ORDER_TOTAL_CENTS + 1,
      expiresAt: new Date(Date.now() + 60 * 60_000),
      requestHash: 'written-by-the-test',
    },
  });
  return { id: row.id, totalCents: row.totalCents };
}

async function withFault(service: string, during: () => Promise<void>): Promise<void> {
  expect((await h.admin('PUT', `/admin/faults/${service}`, { failAlways: true })).status).toBe(200);
  try {
    await during();
  } finally {
    await h.admin('DELETE', `/admin/faults/${service}`);
  }
}

/** A customer of their own for each call: the rate and open-order limits count per customer. */
const someone = () => `c-${randomUUID().slice(0, 8)}`;
const admin = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
  h.http(method, path, body, { ...headers, authorization: `Bearer ${ADMIN_TOKEN}` });
const customer = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
  h.asCustomer(someone(), method, path, body, headers);
/** The call a customer of its own makes after RATE_LIMIT others alike: refused calls count too. */
const pastTheLimit = async (method: string, path: string, body?: unknown) => {
  const spammer = someone();
  for (let i = 0; i < RATE_LIMIT; i++) await h.asCustomer(spammer, method, path, body);
  return h.asCustomer(spammer, method, path, body);
};
const signed = (body: string, headers: Record<string, string> = {}) =>
  h.http('POST', '/payments/callback', body, { ...signedHeaders(WEBHOOK_SECRET, body), ...headers });
/** Posts `payload` to Stripe's webhook, signed by Stripe's scheme with the endpoint's secret. */
const stripeSigned = (payload: string, headers: Record<string, string> = {}) =>
  h.http('POST', STRIPE_WEBHOOK_PATH, payload, {
    'Stripe-Signature': Stripe.webhooks.generateTestHeaderString({ payload, secret: STRIPE_WEBHOOK_SECRET }),
    ...headers,
  });
/** Over the JSON body parser's 64 kB. */
/**
 * An order held while closing its payment: placed with a provider that cancels payments, then
 * cancelled by its customer while that provider does not answer (the harness runs callback-only).
 */
async function heldForSilentProvider(): Promise<Order> {
  const callbackOnly = h.thirdParties.paymentProvider;
  const cancellable = createFakeThirdParties(h.db, 'cancellable').paymentProvider;
  h.thirdParties.paymentProvider = {
    cancelsPayments: true,
    createPayment: (request) => cancellable.createPayment(request),
    cancelPayment: async () => ({ outcome: 'UNAVAILABLE' }),
    refund: (request) => cancellable.refund(request),
    listEvents: (request) => cancellable.listEvents(request),
  };
  try {
    const order = await placeOrder(h, { sku: f.sku, quantity: 1, customerId: 'forcer' });
    expect((await h.asCustomer('forcer', 'POST', `/orders/${order.id}/cancel`)).status).toBe(202);
    const run = h.clockStoppedClient.workflow.getHandle(orderWorkflowId(order.id));
    await eventually(async () => (await run.query(statusQuery)).phase === 'closing-payment');
    return order;
  } finally {
    h.thirdParties.paymentProvider = callbackOnly;
  }
}

const huge = JSON.stringify({ name: 'x'.repeat(70_000) });
/** Past the codec endpoints' own limit, 4 MB. */
const hugeForCodec = JSON.stringify({ payloads: [], pad: 'x'.repeat(4.2e6) });
/** A payload sealed with a key the service does not hold, in the codec protocol's form. */
async function sealedElsewhere(): Promise<{ payloads: Array<{ metadata: Record<string, string>; data: string }> }> {
  const codec = new PayloadEncryptionCodec([{ id: 'elsewhere', key: Buffer.alloc(32, 'e') }]);
  const [sealed] = await codec.encode([{ metadata: {}, data: Buffer.from('{}') }]);
  const base64 = (bytes: Uint8Array | null | undefined) => Buffer.from(bytes ?? []).toString('base64');
  const metadata = Object.fromEntries(Object.entries(sealed!.metadata!).map(([k, v]) => [k, base64(v)]));
  return { payloads: [{ metadata, data: base64(sealed!.data) }] };
}
const codecProbes = (path: string, more: Partial<Record<ErrorCode, Send>> = {}): Probes => ({
  success: () => admin('POST', path, { payloads: [{ metadata: {}, data: '' }] }),
  errors: {
    UNAUTHORIZED: () => h.http('POST', path, { payloads: [] }),
    VALIDATION_FAILED: () => admin('POST', path, { payloads: 'x' }),
    PAYLOAD_TOO_LARGE: () => admin('POST', path, hugeForCodec),
    UNSUPPORTED_MEDIA_TYPE: () => admin('POST', path, { payloads: [] }, unknownEncoding),
    ...more,
  },
});
/** body-parser refuses an encoding it cannot decode with 415. */
const unknownEncoding = { 'content-encoding': 'x-unknown' };

const HOOK = { url: 'https://erp.example.com/hooks/orders', eventTypes: ['order.paid'] };
async function webhookEndpoint(): Promise<string> {
  const res = await admin('POST', '/webhook-endpoints', HOOK);
  expect(res.status).toBe(201);
  return (res.body as { endpoint: { id: string } }).endpoint.id;
}
/** A delivery as the fan-out makes it, written by hand: no job runner runs in this harness. */
async function webhookDelivery(status: 'DEAD' | 'PENDING'): Promise<string> {
  const endpointId = await webhookEndpoint();
  const event = await h.db.orderEvent.create({
    data: { id: randomUUID(), orderId: randomUUID(), seq: 1, type: 'order.paid', data: {} },
  });
  const delivery = await h.db.webhookDelivery.create({ data: { eventId: event.id, endpointId, status } });
  return delivery.id;
}

type Send = () => Promise<HttpResult>;
interface Probes {
  success: Send;
  errors: Partial<Record<ErrorCode, Send>>;
}

/** Keyed like the document: `METHOD /path/{param}`. */
const PROBES: Record<string, Probes> = {
  'GET /healthz': { success: () => h.http('GET', '/healthz'), errors: {} },
  'GET /metrics': {
    success: () => admin('GET', '/metrics'),
    errors: { UNAUTHORIZED: () => h.http('GET', '/metrics') },
  },
  'GET /openapi.json': { success: () => h.http('GET', '/openapi.json'), errors: {} },
  'PUT /products/{sku}': {
    success: () =>
      admin('PUT', `/products/NEW-${randomUUID().slice(0, 8)}`, { name: 'Tea', priceCents: 100, stock: 3 }),
    errors: {
      UNAUTHORIZED: () => h.http('PUT', '/products/ABC', { name: 'Tea', priceCents: 100, stock: 3 }),
      VALIDATION_FAILED: () => admin('PUT', '/products/ABC', { name: 'Tea', priceCents: -1, stock: 3 }),
      PAYLOAD_TOO_LARGE: () => admin('PUT', '/products/ABC', huge),
      UNSUPPORTED_MEDIA_TYPE: () =>
        admin('PUT', '/products/ABC', { name: 'Tea', priceCents: 100, stock: 3 }, unknownEncoding),
    },
  },
  'GET /products/{sku}': {
    success: () => h.http('GET', `/products/${f.sku}`),
    errors: {
      UNAUTHORIZED: () => h.http('GET', `/products/${f.sku}`, undefined, { authorization: 'Bearer not-a-token' }),
      VALIDATION_FAILED: () => h.http('GET', '/products/a%20b'),
      UNKNOWN_SKU: () => h.http('GET', '/products/NO-SUCH-SKU'),
    },
  },
  'PUT /coupons/{code}': {
    success: () => admin('PUT', `/coupons/NEW-${randomUUID().slice(0, 8)}`, { discountCents: 100, customerId: 'c-1' }),
    errors: {
      UNAUTHORIZED: () => h.http('PUT', '/coupons/C1', { discountCents: 100 }),
      VALIDATION_FAILED: () => admin('PUT', '/coupons/C1', { discountCents: 'ten' }),
      PAYLOAD_TOO_LARGE: () => admin('PUT', '/coupons/C1', huge),
      UNSUPPORTED_MEDIA_TYPE: () => admin('PUT', '/coupons/C1', { discountCents: 100 }, unknownEncoding),
      COUPON_IN_USE: async () => {
        const [who, code] = [someone(), `HELD-${randomUUID().slice(0, 8)}`];
        expect((await admin('PUT', `/coupons/${code}`, { discountCents: 100 })).status).toBe(200);
        const held = await h.asCustomer(who, 'POST', '/orders', {
          items: [{ sku: f.sku, quantity: 1 }],
          couponCode: code,
        });
        expect(held.status).toBe(201);
        return admin('PUT', `/coupons/${code}`, { discountCents: 100, customerId: who });
      },
    },
  },
  'GET /coupons/{code}': {
    success: () => admin('GET', `/coupons/${f.couponCode}`),
    errors: {
      UNAUTHORIZED: () => h.http('GET', `/coupons/${f.couponCode}`),
      VALIDATION_FAILED: () => admin('GET', '/coupons/a%20b'),
      UNKNOWN_COUPON: () => admin('GET', '/coupons/NO-SUCH-COUPON'),
    },
  },
  'POST /orders': {
    success: () => customer('POST', '/orders', { items: [{ sku: f.sku, quantity: 1 }], couponCode: f.couponCode }),
    errors: {
      UNAUTHORIZED: () => h.http('POST', '/orders', { items: [{ sku: f.sku, quantity: 1 }] }),
      VALIDATION_FAILED: () => customer('POST', '/orders', { items: [] }),
      CUSTOMER_MISMATCH: () =>
        customer('POST', '/orders', { customerId: 'someone-else', items: [{ sku: f.sku, quantity: 1 }] }),
      RATE_LIMITED: () => pastTheLimit('POST', '/orders', {}),
      UNKNOWN_SKU: () => customer('POST', '/orders', { items: [{ sku: 'NO-SUCH-SKU', quantity: 1 }] }),
      OUT_OF_STOCK: () => customer('POST', '/orders', { items: [{ sku: f.scarceSku, quantity: 2 }] }),
      COUPON_UNAVAILABLE: () =>
        customer('POST', '/orders', { items: [{ sku: f.sku, quantity: 1 }], couponCode: 'NO-SUCH-COUPON' }),
      TOO_MANY_COUPON_ATTEMPTS: async () => {
        const guesser = someone();
        const guess = () =>
          h.asCustomer(guesser, 'POST', '/orders', {
            items: [{ sku: f.sku, quantity: 1 }],
            couponCode: `GUESS-${randomUUID().slice(0, 8)}`,
          });
        for (let i = 0; i < COUPON_REFUSALS; i++) expect((await guess()).status).toBe(409);
        return guess();
      },
      TOO_MANY_OPEN_ORDERS: () => h.asCustomer('holder', 'POST', '/orders', { items: [{ sku: f.sku, quantity: 1 }] }),
      TOO_MANY_UNITS_HELD: () => customer('POST', '/orders', { items: [{ sku: f.sku, quantity: UNITS_LIMIT + 1 }] }),
      ORDER_TOTAL_TOO_LARGE: () => customer('POST', '/orders', { items: [{ sku: f.pricySku, quantity: 1 }] }),
      ORDER_TOTAL_TOO_SMALL: () => customer('POST', '/orders', { items: [{ sku: f.cheapSku, quantity: 1 }] }),
      IDEMPOTENCY_KEY_REUSED: async () => {
        const [who, key] = [someone(), { 'idempotency-key': randomUUID() }];
        expect((await h.asCustomer(who, 'POST', '/orders', { items: [{ sku: f.sku, quantity: 1 }] }, key)).status).toBe(
          201,
        );
        return h.asCustomer(who, 'POST', '/orders', { items: [{ sku: f.sku, quantity: 2 }] }, key);
      },
      PAYLOAD_TOO_LARGE: () => customer('POST', '/orders', huge),
      UNSUPPORTED_MEDIA_TYPE: () =>
        customer('POST', '/orders', { items: [{ sku: f.sku, quantity: 1 }] }, unknownEncoding),
    },
  },
  'GET /orders': {
    success: () => h.asCustomer('holder', 'GET', '/orders?status=UNPAID'),
    errors: {
      UNAUTHORIZED: () => h.http('GET', '/orders'),
      VALIDATION_FAILED: () => customer('GET', '/orders?limit=1000'),
      CUSTOMER_MISMATCH: () => customer('GET', '/orders?customerId=someone-else'),
      RATE_LIMITED: () => pastTheLimit('GET', '/orders?limit=200'),
    },
  },
  'POST /orders/extend': {
    success: () => admin('POST', '/orders/extend', { minutes: 1, customerId: 'nobody-holds-orders' }),
    errors: {
      UNAUTHORIZED: () => h.asCustomer('holder', 'POST', '/orders/extend', { minutes: 5 }),
      VALIDATION_FAILED: () => admin('POST', '/orders/extend', { minutes: 0 }),
      PAYLOAD_TOO_LARGE: () => admin('POST', '/orders/extend', huge),
      UNSUPPORTED_MEDIA_TYPE: () => admin('POST', '/orders/extend', { minutes: 5 }, unknownEncoding),
    },
  },
  'GET /orders/{id}': {
    success: () => admin('GET', `/orders/${f.paid.id}`),
    errors: {
      UNAUTHORIZED: () => h.http('GET', `/orders/${f.unpaid.id}`),
      VALIDATION_FAILED: () => customer('GET', '/orders/not-a-uuid'),
      UNKNOWN_ORDER: () => customer('GET', `/orders/${f.unpaid.id}`), // another customer's: as if it did not exist
      RATE_LIMITED: () => pastTheLimit('GET', `/orders/${f.unpaid.id}`),
    },
  },
  'POST /orders/{id}/cancel': {
    success: () => h.asCustomer('canceller', 'POST', `/orders/${f.toCancel.id}/cancel`),
    errors: {
      UNAUTHORIZED: () => h.http('POST', `/orders/${f.unpaid.id}/cancel`),
      VALIDATION_FAILED: () => customer('POST', '/orders/not-a-uuid/cancel'),
      UNKNOWN_ORDER: () => customer('POST', `/orders/${randomUUID()}/cancel`),
      ORDER_NOT_UNPAID: () => h.asCustomer('payer', 'POST', `/orders/${f.paid.id}/cancel`),
      RATE_LIMITED: () => pastTheLimit('POST', `/orders/${randomUUID()}/cancel`),
    },
  },
  'POST /orders/{id}/extend': {
    success: () => admin('POST', `/orders/${f.unpaid.id}/extend`, { minutes: 5 }),
    errors: {
      UNAUTHORIZED: () => h.asCustomer('holder', 'POST', `/orders/${f.unpaid.id}/extend`, { minutes: 5 }),
      VALIDATION_FAILED: () => admin('POST', `/orders/${f.unpaid.id}/extend`, { minutes: 0 }),
      UNKNOWN_ORDER: () => admin('POST', `/orders/${randomUUID()}/extend`, { minutes: 5 }),
      ORDER_NOT_UNPAID: () => admin('POST', `/orders/${f.paid.id}/extend`, { minutes: 5 }),
      PAYLOAD_TOO_LARGE: () => admin('POST', `/orders/${f.unpaid.id}/extend`, huge),
      UNSUPPORTED_MEDIA_TYPE: () => admin('POST', `/orders/${f.unpaid.id}/extend`, { minutes: 5 }, unknownEncoding),
    },
  },
  'POST /orders/{id}/force-cancel': {
    success: async () => admin('POST', `/orders/${(await heldForSilentProvider()).id}/force-cancel`),
    errors: {
      UNAUTHORIZED: () => h.asCustomer('holder', 'POST', `/orders/${f.unpaid.id}/force-cancel`),
      VALIDATION_FAILED: () => admin('POST', '/orders/not-a-uuid/force-cancel'),
      UNKNOWN_ORDER: () => admin('POST', `/orders/${randomUUID()}/force-cancel`),
      ORDER_NOT_UNPAID: () => admin('POST', `/orders/${f.paid.id}/force-cancel`),
      ORDER_NOT_CLOSING: () => admin('POST', `/orders/${f.unpaid.id}/force-cancel`),
    },
  },
  'POST /orders/{id}/fulfillment/{step}/retry': {
    success: () => admin('POST', `/orders/${f.paid.id}/fulfillment/loyalty/retry`),
    errors: {
      UNAUTHORIZED: () => h.http('POST', `/orders/${f.paid.id}/fulfillment/loyalty/retry`),
      VALIDATION_FAILED: () => admin('POST', `/orders/${f.paid.id}/fulfillment/shipping/retry`),
      UNKNOWN_ORDER: () => admin('POST', `/orders/${randomUUID()}/fulfillment/loyalty/retry`),
      STEP_NOT_FAILED: () => admin('POST', `/orders/${f.unpaid.id}/fulfillment/loyalty/retry`),
    },
  },
  'POST /orders/{id}/payments/{paymentId}/refund/retry': {
    success: () => admin('POST', `/orders/${f.refundFailed.id}/payments/${f.refundFailed.paymentId}/refund/retry`),
    errors: {
      UNAUTHORIZED: () =>
        h.http('POST', `/orders/${f.refundFailed.id}/payments/${f.refundFailed.paymentId}/refund/retry`),
      VALIDATION_FAILED: () => admin('POST', `/orders/not-a-uuid/payments/${f.refundFailed.paymentId}/refund/retry`),
      UNKNOWN_PAYMENT: () => admin('POST', `/orders/${f.unpaid.id}/payments/${f.refundFailed.paymentId}/refund/retry`),
      REFUND_NOT_FAILED: () => admin('POST', `/orders/${f.paid.id}/payments/${f.paid.paymentId}/refund/retry`),
    },
  },
  'POST /payments/callback': {
    // A redelivery: accepted again, with one effect.
    success: () => h.pay({ paymentId: f.paid.paymentId, orderId: f.paid.id, amountCents: f.paid.totalCents }),
    errors: {
      INVALID_SIGNATURE: () =>
        h.http('POST', '/payments/callback', {
          paymentId: 'p',
          orderId: f.unpaid.id,
          amountCents: 1,
          paidAt: new Date().toISOString(),
        }),
      VALIDATION_FAILED: () =>
        signed(JSON.stringify({ paymentId: 'p', orderId: f.unpaid.id, amountCents: -1, paidAt: 'yesterday' })),
      UNKNOWN_ORDER: () =>
        signed(
          JSON.stringify({ paymentId: 'p', orderId: randomUUID(), amountCents: 1, paidAt: new Date().toISOString() }),
        ),
      PAYLOAD_TOO_LARGE: () => signed('x'.repeat(20_000)), // the webhook's own limit: 16 kB
      UNSUPPORTED_MEDIA_TYPE: () => signed(JSON.stringify({ paymentId: 'p' }), unknownEncoding),
    },
  },
  'GET /payments/unclaimed': {
    success: () => admin('GET', '/payments/unclaimed?status=HELD&limit=5'),
    errors: {
      UNAUTHORIZED: () => h.http('GET', '/payments/unclaimed'),
      VALIDATION_FAILED: () => admin('GET', '/payments/unclaimed?status=LOST'),
    },
  },
  'POST /webhook-endpoints': {
    success: () => admin('POST', '/webhook-endpoints', HOOK),
    errors: {
      UNAUTHORIZED: () => h.http('POST', '/webhook-endpoints', HOOK),
      VALIDATION_FAILED: () => admin('POST', '/webhook-endpoints', { ...HOOK, url: 'http://erp.example.com/in' }),
      PAYLOAD_TOO_LARGE: () => admin('POST', '/webhook-endpoints', huge),
      UNSUPPORTED_MEDIA_TYPE: () => admin('POST', '/webhook-endpoints', HOOK, unknownEncoding),
    },
  },
  'GET /webhook-endpoints': {
    success: () => admin('GET', '/webhook-endpoints'),
    errors: { UNAUTHORIZED: () => h.http('GET', '/webhook-endpoints') },
  },
  'PUT /webhook-endpoints/{endpointId}': {
    success: async () =>
      admin('PUT', `/webhook-endpoints/${await webhookEndpoint()}`, { ...HOOK, enabled: false, fulfillmentStep: null }),
    errors: {
      UNAUTHORIZED: () => h.http('PUT', `/webhook-endpoints/${randomUUID()}`, HOOK),
      VALIDATION_FAILED: () => admin('PUT', '/webhook-endpoints/not-a-uuid', HOOK),
      PAYLOAD_TOO_LARGE: () => admin('PUT', `/webhook-endpoints/${randomUUID()}`, huge),
      UNSUPPORTED_MEDIA_TYPE: () => admin('PUT', `/webhook-endpoints/${randomUUID()}`, HOOK, unknownEncoding),
      UNKNOWN_WEBHOOK_ENDPOINT: () =>
        admin('PUT', `/webhook-endpoints/${randomUUID()}`, { ...HOOK, enabled: true, fulfillmentStep: null }),
    },
  },
  'DELETE /webhook-endpoints/{endpointId}': {
    success: async () => admin('DELETE', `/webhook-endpoints/${await webhookEndpoint()}`),
    errors: {
      UNAUTHORIZED: () => h.http('DELETE', `/webhook-endpoints/${randomUUID()}`),
      VALIDATION_FAILED: () => admin('DELETE', '/webhook-endpoints/not-a-uuid'),
      UNKNOWN_WEBHOOK_ENDPOINT: () => admin('DELETE', `/webhook-endpoints/${randomUUID()}`),
    },
  },
  'POST /webhook-endpoints/{endpointId}/rotate-secret': {
    success: async () => admin('POST', `/webhook-endpoints/${await webhookEndpoint()}/rotate-secret`),
    errors: {
      UNAUTHORIZED: () => h.http('POST', `/webhook-endpoints/${randomUUID()}/rotate-secret`),
      VALIDATION_FAILED: () => admin('POST', '/webhook-endpoints/not-a-uuid/rotate-secret'),
      UNKNOWN_WEBHOOK_ENDPOINT: () => admin('POST', `/webhook-endpoints/${randomUUID()}/rotate-secret`),
    },
  },
  'GET /webhook-deliveries': {
    success: () => admin('GET', '/webhook-deliveries?status=DEAD&limit=5'),
    errors: {
      UNAUTHORIZED: () => h.http('GET', '/webhook-deliveries'),
      VALIDATION_FAILED: () => admin('GET', '/webhook-deliveries?status=LOST'),
    },
  },
  'POST /webhook-deliveries/{deliveryId}/redeliver': {
    success: async () => admin('POST', `/webhook-deliveries/${await webhookDelivery('DEAD')}/redeliver`),
    errors: {
      UNAUTHORIZED: () => h.http('POST', `/webhook-deliveries/${randomUUID()}/redeliver`),
      VALIDATION_FAILED: () => admin('POST', '/webhook-deliveries/not-a-uuid/redeliver'),
      UNKNOWN_WEBHOOK_DELIVERY: () => admin('POST', `/webhook-deliveries/${randomUUID()}/redeliver`),
      WEBHOOK_DELIVERY_PENDING: async () =>
        admin('POST', `/webhook-deliveries/${await webhookDelivery('PENDING')}/redeliver`),
    },
  },
  'GET /ui/config': {
    success: () => admin('GET', '/ui/config'),
    errors: { UNAUTHORIZED: () => h.http('GET', '/ui/config') },
  },
  'POST /operator/session': {
    success: () => admin('POST', '/operator/session'),
    errors: { UNAUTHORIZED: () => h.http('POST', '/operator/session') },
  },
  'DELETE /operator/session': { success: () => h.http('DELETE', '/operator/session'), errors: {} },
  'POST /codec/decode': codecProbes('/codec/decode', {
    PAYLOAD_NOT_DECODABLE: async () => admin('POST', '/codec/decode', await sealedElsewhere()),
  }),
  'POST /codec/encode': codecProbes('/codec/encode'),
  'POST /dev/orders/{id}/simulate-payment': {
    success: () => admin('POST', `/dev/orders/${f.toSimulate.id}/simulate-payment`),
    errors: {
      UNAUTHORIZED: () => h.http('POST', `/dev/orders/${f.toSimulate.id}/simulate-payment`),
      VALIDATION_FAILED: () => admin('POST', '/dev/orders/not-a-uuid/simulate-payment'),
      UNKNOWN_ORDER: () => admin('POST', `/dev/orders/${randomUUID()}/simulate-payment`),
      CALLBACK_REFUSED: () => admin('POST', `/dev/orders/${f.unpayable.id}/simulate-payment`),
    },
  },
  'POST /webhooks/stripe': {
    // An event of a type the service acknowledges and ignores.
    success: () => {
      const stripe = new FakeStripeAccount();
      const intent = stripe.createIntent({ amount: 100, currency: 'eur', metadata: {} });
      const event = signedIntentEvent(stripe, intent.id, 'payment_intent.created', STRIPE_WEBHOOK_SECRET);
      return h.http('POST', STRIPE_WEBHOOK_PATH, event.payload, { 'Stripe-Signature': event.signature });
    },
    errors: {
      INVALID_STRIPE_SIGNATURE: () => h.http('POST', STRIPE_WEBHOOK_PATH, { id: 'evt_1', type: 'charge.succeeded' }),
      VALIDATION_FAILED: () => stripeSigned('not json'),
      PAYLOAD_TOO_LARGE: () => stripeSigned('x'.repeat(20_000)), // the webhooks' own limit: 16 kB
      UNSUPPORTED_MEDIA_TYPE: () => stripeSigned('{}', unknownEncoding),
    },
  },
  'PUT /admin/faults/{service}': {
    success: () => admin('PUT', '/admin/faults/invoice', { latencyMs: 0 }),
    errors: {
      UNAUTHORIZED: () => h.http('PUT', '/admin/faults/invoice', { latencyMs: 0 }),
      VALIDATION_FAILED: () => admin('PUT', '/admin/faults/printer', { latencyMs: 0 }),
      PAYLOAD_TOO_LARGE: () => admin('PUT', '/admin/faults/invoice', huge),
      UNSUPPORTED_MEDIA_TYPE: () => admin('PUT', '/admin/faults/invoice', { latencyMs: 0 }, unknownEncoding),
    },
  },
  'DELETE /admin/faults/{service}': {
    success: () => admin('DELETE', '/admin/faults/invoice'),
    errors: {
      UNAUTHORIZED: () => h.http('DELETE', '/admin/faults/invoice'),
      VALIDATION_FAILED: () => admin('DELETE', '/admin/faults/printer'),
    },
  },
};

const ENDPOINT_OF = new Map<string, Endpoint<never>>(
  [...ENDPOINTS, ...CALLBACK_ENDPOINTS, ...STRIPE_ENDPOINTS, ...DEV_ENDPOINTS, ...FAULT_ENDPOINTS].map((e) => [
    `${e.method.toUpperCase()} ${e.path.replace(/:(\w+)/g, '{$1}')}`,
    e,
  ]),
);

/** The contract's error shape. */
const ErrorBody = z.strictObject({
  error: z.strictObject({ code: z.string(), message: z.string().min(1), details: z.unknown().optional() }),
});

function operationOf(route: string) {
  const [method, path] = route.split(' ') as [string, string];
  return document.paths[path]?.[method.toLowerCase()];
}

/** code → status, as the document's error responses list them (each enumerates its codes). */
function documentedErrors(operation: any, endpoint: Endpoint<never>): Map<string, number> {
  const errors = new Map<string, number>();
  for (const [status, response] of Object.entries<any>(operation.responses)) {
    if (Number(status) < 400 || endpoint.otherResponses?.some((response) => response.status === Number(status)))
      continue;
    for (const code of response.content['application/json'].schema.properties.error.properties.code.enum)
      errors.set(code, Number(status));
  }
  return errors;
}

describe('every documented route answers as documented', () => {
  it('has probes for exactly the routes of the document', () => {
    const documented = Object.entries<Record<string, unknown>>(document.paths).flatMap(([path, ops]) =>
      Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`),
    );
    expect(Object.keys(PROBES).sort()).toEqual(documented.sort());
  });

  for (const [route, probes] of Object.entries(PROBES)) {
    it(route, async () => {
      const operation = operationOf(route);
      expect(operation, `${route} is documented`).toBeDefined();
      const endpoint = ENDPOINT_OF.get(route)!;

      const ok = await probes.success();
      expect(ok.status, JSON.stringify(ok.body)).toBe(endpoint.success.status);
      expect(Object.keys(operation.responses)).toContain(String(ok.status));
      if (endpoint.success.schema) endpoint.success.schema.parse(ok.body);

      const documented = documentedErrors(operation, endpoint);
      for (const [code, send] of Object.entries(probes.errors)) {
        const res = await send();
        expect({ code: res.body?.error?.code, status: res.status }, JSON.stringify(res.body)).toEqual({
          code,
          status: documented.get(code),
        });
        ErrorBody.parse(res.body);
      }
      expect(Object.keys(probes.errors).sort(), 'every documented code is produced by a call above').toEqual(
        [...documented.keys()].filter((code) => !NOT_DRIVEN.includes(code as ErrorCode)).sort(),
      );
    });
  }
});
