import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signCustomerToken } from '../../dev/customer-token.js';
import { countFakes } from '../../dev/fakes/recorder.js';
import { createLogger } from '../../lib/logger.js';
import { cancelSignal, orderWorkflowId } from '../../domain/messages.js';
import { placeOrder, seedCatalog } from '../helpers/catalog.js';
import { eventually } from '../helpers/eventually.js';
import {
  ADMIN_TOKEN,
  CUSTOMER_JWT_SECRET,
  ORDER_ID_SECRET,
  startOrderHarness,
  WEBHOOK_SECRET,
  type HttpResult,
  type OrderHarness,
} from '../helpers/order-harness.js';

/**
 * Who may reach which order, over every order endpoint: a customer's token reaches only that
 * customer's orders (another's answer exactly as if they did not exist), bad or missing tokens get
 * 401, and a refused call writes nothing — not in PostgreSQL, not in Temporal.
 */
const RUNS = { numRuns: Number(process.env.PROPERTY_RUNS ?? 40) };
const CUSTOMERS = ['alice', 'bob', 'carol'] as const;
/** A customer with a valid token and no orders at all. */
const STRANGER = 'mallory';

let h: OrderHarness;
let sku: string;
/** Each customer's orders: one UNPAID, one PAID (a refused cancel must not tell "not yours" from "already paid"). */
const orders: Array<{ id: string; customerId: string }> = [];
const logLines: string[] = [];

beforeAll(async () => {
  const capture = new Writable({
    write(chunk, _encoding, done) {
      logLines.push(String(chunk));
      done();
    },
  });
  h = await startOrderHarness({ taskQueue: 'orders-ownership', logger: createLogger('api-test', 'debug', capture) });
  ({ sku } = await seedCatalog(h, { stock: 100 }));
  for (const customerId of CUSTOMERS) {
    const unpaid = await placeOrder(h, { sku, customerId, quantity: 1 });
    const paid = await placeOrder(h, { sku, customerId, quantity: 1 });
    expect((await h.pay({ paymentId: `pay-${paid.id}`, orderId: paid.id, amountCents: paid.totalCents })).status).toBe(
      202,
    );
    orders.push({ id: unpaid.id, customerId }, { id: paid.id, customerId });
  }
  // Fulfillment of the paid orders finishes first: from then on the fixture writes nothing by itself.
  await eventually(
    async () => (await h.db.fulfillmentRecord.count({ where: { status: 'DONE' } })) === 3 * CUSTOMERS.length,
  );
});
afterAll(async () => {
  await h?.close();
});

/** Everything a request could write, in full. */
async function snapshot() {
  const db = h.db;
  return Promise.all([
    db.order.findMany({ orderBy: { id: 'asc' } }),
    db.orderItem.findMany({ orderBy: [{ orderId: 'asc' }, { sku: 'asc' }] }),
    db.payment.findMany({ orderBy: { paymentId: 'asc' } }),
    db.product.findMany({ orderBy: { sku: 'asc' } }),
    db.coupon.findMany({ orderBy: { code: 'asc' } }),
    db.fulfillmentRecord.findMany({ orderBy: [{ orderId: 'asc' }, { step: 'asc' }] }),
    countFakes(db),
  ]);
}

/** Cancel signals that reached each order's workflow: a refused cancel must not have sent one. */
async function cancelSignals(): Promise<number[]> {
  return Promise.all(
    orders.map(async ({ id }) => {
      const history = await h.env.client.workflow.getHandle(orderWorkflowId(id)).fetchHistory();
      return (history.events ?? []).filter(
        (e) => e.workflowExecutionSignaledEventAttributes?.signalName === cancelSignal.name,
      ).length;
    }),
  );
}

async function unchangedAfter(property: fc.IAsyncProperty<any>) {
  const [before, signalsBefore] = [await snapshot(), await cancelSignals()];
  await fc.assert(property, RUNS);
  expect(await snapshot()).toEqual(before);
  expect(await cancelSignals()).toEqual(signalsBefore);
}

function expectError(res: HttpResult, status: number, code: string, context: unknown) {
  const where = `${JSON.stringify(context)} → ${res.status} ${JSON.stringify(res.body)}`;
  expect(res.status, where).toBe(status);
  expect(res.body?.error, where).toMatchObject({ code, message: expect.any(String) });
}

/** The calls a caller can make about one order, each with the body it needs. */
const ORDER_CALLS = [
  { method: 'GET', path: (id: string) => `/orders/${id}` },
  { method: 'POST', path: (id: string) => `/orders/${id}/cancel` },
  { method: 'POST', path: (id: string) => `/orders/${id}/extend`, body: { minutes: 5 }, operatorOnly: true },
  { method: 'POST', path: (id: string) => `/orders/${id}/fulfillment/invoice/retry`, operatorOnly: true },
  { method: 'POST', path: (id: string) => `/orders/${id}/payments/pay-${id}/refund/retry`, operatorOnly: true },
  { method: 'POST', path: (id: string) => `/dev/orders/${id}/simulate-payment`, operatorOnly: true },
] as const;

const otherCustomersOrder = (actor: string) => fc.constantFrom(...orders.filter((o) => o.customerId !== actor));
const listQuery = fc.record(
  { status: fc.constantFrom('UNPAID', 'PAID', 'CANCELLED'), limit: fc.integer({ min: 1, max: 200 }) },
  { requiredKeys: [] },
);

describe("a customer's token reaches only that customer's orders", () => {
  it("another customer's order: read, cancel and operator calls are refused as if it did not exist; nothing is written", async () => {
    await unchangedAfter(
      fc.asyncProperty(
        fc
          .constantFrom(...CUSTOMERS, STRANGER)
          .chain((actor) => fc.tuple(fc.constant(actor), otherCustomersOrder(actor), fc.constantFrom(...ORDER_CALLS))),
        async ([actor, target, call]) => {
          const res = await h.asCustomer(
            actor,
            call.method,
            call.path(target.id),
            'body' in call ? call.body : undefined,
          );
          const context = { actor, target, call: call.path(':id') };
          if ('operatorOnly' in call) expectError(res, 401, 'UNAUTHORIZED', context);
          else expectError(res, 404, 'UNKNOWN_ORDER', context);
          expect(JSON.stringify(res.body)).not.toContain(target.id);
        },
      ),
    );
  });

  it("lists: without a filter only the caller's own orders; naming another customer is 403; nothing is written", async () => {
    await unchangedAfter(
      fc.asyncProperty(
        fc.constantFrom(...CUSTOMERS, STRANGER),
        listQuery,
        fc.option(fc.constantFrom(...CUSTOMERS), { nil: undefined }),
        async (actor, query, named) => {
          const params = new URLSearchParams({
            ...query,
            ...(named === undefined ? {} : { customerId: named }),
          } as Record<string, string>);
          const res = await h.asCustomer(actor, 'GET', `/orders?${params}`);
          const context = { actor, params: String(params) };
          if (named !== undefined && named !== actor) return expectError(res, 403, 'CUSTOMER_MISMATCH', context);
          expect(res.status, JSON.stringify(context)).toBe(200);
          for (const order of res.body.orders) expect(order.customerId, JSON.stringify(context)).toBe(actor);
          const own = orders.filter((o) => o.customerId === actor).map((o) => o.id);
          const listed = res.body.orders.map((o: { id: string }) => o.id);
          if (query.status === undefined && query.limit === undefined) expect(listed.sort()).toEqual(own.sort());
        },
      ),
    );
  });

  it('placing an order for another customer is 403 and writes nothing', async () => {
    await unchangedAfter(
      fc.asyncProperty(
        fc
          .constantFrom(...CUSTOMERS, STRANGER)
          .chain((actor) => fc.tuple(fc.constant(actor), fc.constantFrom(...CUSTOMERS.filter((c) => c !== actor)))),
        fc.option(fc.uuid(), { nil: undefined }),
        async ([actor, victim], key) => {
          const body = { customerId: victim, items: [{ sku, quantity: 1 }] };
          const res = await h.asCustomer(
            actor,
            'POST',
            '/orders',
            body,
            key === undefined ? {} : { 'idempotency-key': key },
          );
          expectError(res, 403, 'CUSTOMER_MISMATCH', { actor, victim, key });
        },
      ),
    );
  });

  it('(the other side) the owner and the operator do reach each order', async () => {
    for (const order of orders) {
      expect((await h.asCustomer(order.customerId, 'GET', `/orders/${order.id}`)).body).toMatchObject({
        id: order.id,
        customerId: order.customerId,
      });
      expect((await h.admin('GET', `/orders/${order.id}`)).body).toMatchObject({ id: order.id });
    }
    const all = (await h.admin('GET', '/orders?limit=200')).body.orders.map((o: { id: string }) => o.id);
    expect(all).toEqual(expect.arrayContaining(orders.map((o) => o.id)));
  });

  it('a customer places orders for themselves with or without naming themselves; an operator must name the customer', async () => {
    const own = await h.asCustomer('dave', 'POST', '/orders', { items: [{ sku, quantity: 1 }] });
    expect(own.status).toBe(201);
    expect(own.body.customerId).toBe('dave');
    const forDave = await h.admin('POST', '/orders', { customerId: 'dave', items: [{ sku, quantity: 1 }] });
    expect(forDave.body).toMatchObject({ customerId: 'dave', status: 'UNPAID' });
    expectError(
      await h.admin('POST', '/orders', { items: [{ sku, quantity: 1 }] }),
      400,
      'VALIDATION_FAILED',
      'operator without customerId',
    );
  });
});

describe('tokens that prove nothing', () => {
  const now = () => Math.floor(Date.now() / 1000);
  const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const badToken = fc
    .constantFrom('forged', 'expired', 'alg-none', 'tampered', 'garbage', 'empty-sub', 'none')
    .chain((kind) => fc.constantFrom(...CUSTOMERS).map((customerId) => ({ kind, customerId })));
  async function tokenFor({ kind, customerId }: { kind: string; customerId: string }): Promise<string | undefined> {
    switch (kind) {
      case 'forged':
        return signCustomerToken('not-the-customer-jwt-secret-at-all!!', customerId);
      case 'expired':
        return signCustomerToken(CUSTOMER_JWT_SECRET, customerId, {
          now: Date.now() - 2 * 3600_000,
          expiresInMs: 3600_000,
        });
      case 'alg-none':
        return `${b64({ alg: 'none', typ: 'JWT' })}.${b64({ sub: customerId, exp: now() + 3600 })}.`;
      case 'tampered': {
        const [header, , signature] = (await signCustomerToken(CUSTOMER_JWT_SECRET, STRANGER)).split('.');
        return `${header}.${b64({ sub: customerId, exp: now() + 3600 })}.${signature}`;
      }
      case 'garbage':
        return randomUUID();
      case 'empty-sub':
        return signCustomerToken(CUSTOMER_JWT_SECRET, '');
      default:
        return undefined; // no Authorization header at all
    }
  }

  it('forged, expired, alg: none, tampered, malformed or missing tokens get 401 on every order endpoint; nothing is written', async () => {
    const calls = [
      ...ORDER_CALLS,
      { method: 'GET', path: () => '/orders' },
      { method: 'POST', path: () => '/orders', body: { items: [{ sku, quantity: 1 }] } },
    ];
    await unchangedAfter(
      fc.asyncProperty(badToken, fc.constantFrom(...calls), fc.constantFrom(...orders), async (bad, call, target) => {
        const token = await tokenFor(bad);
        const headers: Record<string, string> = token === undefined ? {} : { authorization: `Bearer ${token}` };
        const res = await h.http(call.method, call.path(target.id), 'body' in call ? call.body : undefined, headers);
        expectError(res, 401, 'UNAUTHORIZED', { bad, call: call.path(':id') });
      }),
    );
  });

  it('an anonymous caller still reads the public catalog and health', async () => {
    expect((await h.http('GET', `/products/${sku}`)).status).toBe(200);
    expect((await h.http('GET', '/healthz')).status).toBe(200);
    expect((await h.http('GET', '/metrics')).status).toBe(401);
    expect((await h.http('GET', '/ui/config')).status).toBe(401);
  });
});

describe('Idempotency-Key per customer', () => {
  it("the same key from two customers makes two orders; each customer's replay reaches their own", async () => {
    const key = `shared-${randomUUID()}`;
    const body = { items: [{ sku, quantity: 1 }] };
    const a = await h.asCustomer('erin', 'POST', '/orders', body, { 'idempotency-key': key });
    const b = await h.asCustomer('frank', 'POST', '/orders', body, { 'idempotency-key': key });
    expect([a.status, b.status]).toEqual([201, 201]);
    expect(a.body.id).not.toBe(b.body.id);
    expect((await h.asCustomer('erin', 'POST', '/orders', body, { 'idempotency-key': key })).body).toEqual(a.body);
    expect((await h.asCustomer('frank', 'POST', '/orders', body, { 'idempotency-key': key })).body).toEqual(b.body);
    expect(await h.db.order.count({ where: { idempotencyKey: key } })).toBe(2);
  });
});

describe('logs', () => {
  it('carry no secret and no token, though they record every request', async () => {
    const token = await signCustomerToken(CUSTOMER_JWT_SECRET, 'alice');
    await h.http('GET', '/orders', undefined, { authorization: `Bearer ${token}` });
    await h.http('GET', '/orders', undefined, { authorization: 'Bearer forged.token.value' });
    await h.admin('GET', '/orders');
    const log = logLines.join('');
    expect(log).toContain('"msg":"request"');
    for (const secret of [
      ADMIN_TOKEN,
      CUSTOMER_JWT_SECRET,
      ORDER_ID_SECRET,
      WEBHOOK_SECRET,
      token,
      'forged.token.value',
    ]) {
      expect(log).not.toContain(secret);
    }
  });
});
