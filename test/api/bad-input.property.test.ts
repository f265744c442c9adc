import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERRORS, type ErrorCode } from '../../api/errors.js';
import { MAX_CLOCK_SKEW_SECONDS, signPayload } from '../../api/webhook-signature.js';
import { placeOrder, seedCatalog } from '../helpers/catalog.js';
import { eventually } from '../helpers/eventually.js';
import { startOrderHarness, WEBHOOK_SECRET, type HttpResult, type OrderHarness } from '../helpers/order-harness.js';

/**
 * Whatever arrives — any body, header or path parameter — the answer is a 4xx JSON error from the
 * contract, never a 5xx, and nothing is written.
 */
const RUNS = { numRuns: Number(process.env.PROPERTY_RUNS ?? 40) };

let h: OrderHarness;
let order: { id: string; totalCents: number };
beforeAll(async () => {
  h = await startOrderHarness({ taskQueue: 'orders-property' });
  const { sku } = await seedCatalog(h);
  order = await placeOrder(h, { sku });
});
afterAll(async () => {
  await h?.close();
});

async function snapshot() {
  const db = h.db;
  return Promise.all([
    db.order.findMany({ orderBy: { id: 'asc' }, select: { id: true, status: true, expiresAt: true } }),
    db.product.findMany({ orderBy: { sku: 'asc' } }),
    db.coupon.findMany({ orderBy: { code: 'asc' } }),
    db.payment.count(),
    db.$queryRaw`SELECT * FROM fakes.faults ORDER BY service`,
  ]);
}

function expectContractError(res: HttpResult, context: unknown) {
  const where = JSON.stringify(context).slice(0, 300);
  expect(res.status, where).toBeGreaterThanOrEqual(400);
  expect(res.status, where).toBeLessThan(500);
  // A code of the contract (api/errors.ts), at the status it has there.
  expect(ERRORS[res.body?.error?.code as ErrorCode]?.status, `${where} → ${JSON.stringify(res.body)}`).toBe(res.status);
}

/** Runs the property, then checks that none of its requests wrote anything. */
async function unchangedAfter(property: fc.IAsyncProperty<any>) {
  const before = await snapshot();
  await fc.assert(property, RUNS);
  expect(await snapshot()).toEqual(before);
}

const injection = fc.constantFrom(
  "'; DROP TABLE orders; --",
  '" OR 1=1 --',
  '<script>alert(1)</script>',
  '../../etc/passwd',
  '${jndi:ldap://x}',
  '%00',
  '{"$ne":null}',
);
const text = fc.oneof(fc.string(), fc.string({ unit: 'grapheme' }), injection);
/** JSON that is shaped like an order but wrong in some way. */
const orderish = fc.record(
  {
    customerId: fc.oneof(text, fc.integer(), fc.constant(null)),
    items: fc.oneof(
      fc.array(
        fc.record(
          { sku: fc.oneof(text, fc.integer()), quantity: fc.oneof(fc.integer(), fc.double(), text) },
          { requiredKeys: [] },
        ),
      ),
      fc.anything(),
    ),
    couponCode: fc.oneof(text, fc.integer()),
  },
  { requiredKeys: [] },
);

describe('bad input never writes and never fails with a 5xx', () => {
  it('POST /orders: any body and any Idempotency-Key, from a customer', async () => {
    await unchangedAfter(
      fc.asyncProperty(
        fc.oneof(fc.jsonValue(), orderish, text),
        fc.option(text, { nil: undefined }),
        async (body, key) => {
          const headers: Record<string, string> = {};
          if (key !== undefined && /^[\x20-\x7e]*$/.test(key)) headers['idempotency-key'] = key;
          const res = await h.asCustomer(
            'prop-customer',
            'POST',
            '/orders',
            typeof body === 'string' ? body : JSON.stringify(body),
            {
              ...headers,
              'content-type': 'application/json',
            },
          );
          expectContractError(res, { body, key });
        },
      ),
    );
  });

  it('path parameters of every route', async () => {
    const routes: Array<[string, (p: string) => string, boolean]> = [
      ['GET', (p) => `/orders/${p}`, false],
      ['POST', (p) => `/orders/${p}/cancel`, false],
      ['POST', (p) => `/orders/${p}/extend`, true],
      ['POST', (p) => `/orders/${randomUUID()}/fulfillment/${p}/retry`, true],
      ['POST', (p) => `/orders/${p}/fulfillment/invoice/retry`, true],
      ['GET', (p) => `/products/${p}`, false],
      ['GET', (p) => `/coupons/${p}`, true],
      ['PUT', (p) => `/admin/faults/${p}`, true],
    ];
    await unchangedAfter(
      // An empty parameter turns GET /orders/:id into the list route, a legitimate 200; `.` and `..`
      // survive encodeURIComponent and the client resolves them as path segments (other routes).
      fc.asyncProperty(
        fc.constantFrom(...routes),
        text.filter((p) => !['', '.', '..'].includes(p)),
        async ([method, path, admin], param) => {
          const url = path(encodeURIComponent(param));
          const body = method === 'GET' ? undefined : { minutes: 5 };
          const res = admin ? await h.admin(method, url, body) : await h.asCustomer('prop-customer', method, url, body);
          // A syntactically valid id of something that does not exist is a 404; anything else a 400.
          expectContractError(res, { method, url });
        },
      ),
    );
  });

  it('admin endpoints without the token answer 401, whatever the body', async () => {
    const calls: Array<[string, string]> = [
      ['PUT', '/products/SKU1'],
      ['PUT', '/coupons/C1'],
      ['GET', '/coupons/C1'],
      ['POST', `/orders/${randomUUID()}/extend`],
      ['POST', '/orders/extend'],
      ['POST', `/orders/${randomUUID()}/fulfillment/invoice/retry`],
      ['POST', `/orders/${randomUUID()}/payments/p1/refund/retry`],
      ['PUT', '/admin/faults/invoice'],
      ['DELETE', '/admin/faults/invoice'],
      ['GET', '/metrics'],
      ['GET', '/ui/config'],
      ['POST', `/dev/orders/${order.id}/simulate-payment`],
    ];
    await unchangedAfter(
      fc.asyncProperty(
        fc.constantFrom(...calls),
        fc.jsonValue(),
        fc.option(text, { nil: undefined }),
        async ([method, url], body, auth) => {
          const headers: Record<string, string> = {};
          if (auth !== undefined && /^[\x20-\x7e]*$/.test(auth)) headers.authorization = auth;
          const withBody = method === 'GET' ? undefined : JSON.stringify(body);
          const res = await h.http(method, url, withBody, { ...headers, 'content-type': 'application/json' });
          expect(res.status).toBe(401);
          expect(res.body.error.code).toBe('UNAUTHORIZED');
        },
      ),
    );
  });

  it('payment webhook: forged, stale, tampered or malformed callbacks are rejected or neutral', async () => {
    const now = () => Math.floor(Date.now() / 1000);
    const genuine = () =>
      JSON.stringify({
        paymentId: `p-${randomUUID()}`,
        orderId: order.id,
        amountCents: order.totalCents,
        paidAt: new Date().toISOString(),
      });
    const attack = fc.oneof(
      // any body with any signature
      fc.record({
        body: fc.oneof(
          text,
          fc.jsonValue().map((j) => JSON.stringify(j)),
        ),
        signature: text,
        skew: fc.constant(0),
      }),
      // a genuine callback, signed, then tampered (amount or order id changed)
      fc.record({
        body: fc.constantFrom('amount', 'order').map((what) => ({ what })),
        signature: fc.constant(''),
        skew: fc.constant(0),
      }),
      // correctly signed, but stale or from the future (5 s clear of the window: whole-second timestamps)
      fc.record({
        body: fc.constant('genuine'),
        signature: fc.constant(''),
        skew: fc.integer({ min: MAX_CLOCK_SKEW_SECONDS + 5, max: 100_000 }).chain((s) => fc.constantFrom(s, -s)),
      }),
      // correctly signed garbage: must be a 400, or a 404 for an unknown order
      fc.record({
        body: fc.oneof(orderish, fc.jsonValue()).map((j) => ({ signedGarbage: JSON.stringify(j) })),
        signature: fc.constant(''),
        skew: fc.constant(0),
      }),
    );
    await unchangedAfter(
      fc.asyncProperty(attack, async ({ body, signature, skew }) => {
        let raw: string;
        let sig = signature;
        const ts = now() - skew;
        if (typeof body === 'object' && body !== null && 'what' in body) {
          const signedBody = genuine();
          sig = signPayload(WEBHOOK_SECRET, ts, signedBody);
          const parsed = JSON.parse(signedBody);
          if (body.what === 'amount') parsed.amountCents += 1;
          else parsed.orderId = randomUUID();
          raw = JSON.stringify(parsed);
        } else if (typeof body === 'object' && body !== null && 'signedGarbage' in body) {
          raw = body.signedGarbage;
          sig = signPayload(WEBHOOK_SECRET, ts, raw);
        } else if (body === 'genuine') {
          raw = genuine();
          sig = signPayload(WEBHOOK_SECRET, ts, raw);
        } else {
          raw = body;
        }
        const headers: Record<string, string> = {
          'content-type': 'application/json',
          'x-payment-timestamp': String(ts),
        };
        if (/^[\x20-\x7e]*$/.test(sig)) headers['x-payment-signature'] = sig;
        const res = await h.http('POST', '/payments/callback', raw, headers);
        expectContractError(res, { raw, sig, skew });
      }),
    );
  });

  it('a replayed genuine callback is neutral: one payment, one refund', async () => {
    const raw = JSON.stringify({
      paymentId: `replayed-${order.id}`,
      orderId: order.id,
      amountCents: 1,
      paidAt: new Date().toISOString(),
    });
    const ts = Math.floor(Date.now() / 1000);
    const headers = {
      'content-type': 'application/json',
      'x-payment-timestamp': String(ts),
      'x-payment-signature': signPayload(WEBHOOK_SECRET, ts, raw),
    };
    const answers = await Promise.all(
      Array.from({ length: 5 }, () => h.http('POST', '/payments/callback', raw, headers)),
    );
    expect(answers.map((a) => a.status)).toEqual([202, 202, 202, 202, 202]);
    await eventually(
      async () =>
        (await h.db.payment.findUnique({ where: { paymentId: `replayed-${order.id}` } }))?.status === 'REFUNDED',
    );
    expect(await h.db.payment.count({ where: { orderId: order.id } })).toBe(1);
    expect(await h.fakeCount('payments', 'refund', `replayed-${order.id}`)).toEqual({ effects: 1, calls: 1 });
  });
});
