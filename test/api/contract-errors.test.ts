import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_CLOCK_SKEW_SECONDS, signPayload } from '../../api/webhook-signature.js';
import { couponOf, placeOrder, seedCatalog, stockOf } from '../helpers/catalog.js';
import { eventually } from '../helpers/eventually.js';
import { startOrderHarness, WEBHOOK_SECRET, type HttpResult, type OrderHarness } from '../helpers/order-harness.js';

let h: OrderHarness;
beforeAll(async () => {
  h = await startOrderHarness({ taskQueue: 'orders-contract' });
});
afterAll(async () => {
  await h?.close();
});

/** Row counts of everything a request could write: an error must leave all of them as they were. */
async function writes() {
  const db = h.db;
  const [orders, items, payments, refunds, products, coupons] = await Promise.all([
    db.order.count(),
    db.orderItem.count(),
    db.payment.count(),
    db.refund.count(),
    db.product.findMany({
      orderBy: { sku: 'asc' },
      select: { sku: true, available: true, reserved: true, sold: true, stockAdded: true },
    }),
    db.coupon.findMany({ orderBy: { code: 'asc' }, select: { code: true, status: true, orderId: true } }),
  ]);
  return { orders, items, payments, refunds, products, coupons };
}

async function expectError(request: Promise<HttpResult>, status: number, code: string) {
  const before = await writes();
  const res = await request;
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.body.error).toMatchObject({ code, message: expect.any(String) });
  expect(await writes()).toEqual(before);
  return res;
}

describe('POST /orders errors change nothing', () => {
  it('VALIDATION_FAILED for malformed bodies and keys', async () => {
    const { sku } = await seedCatalog(h);
    const bad: unknown[] = [
      {},
      { customerId: 'c', items: [] },
      { customerId: 'c', items: [{ sku, quantity: 0 }] },
      { customerId: 'c', items: [{ sku, quantity: 1.5 }] },
      {
        customerId: 'c',
        items: [
          { sku, quantity: 1 },
          { sku, quantity: 2 },
        ],
      },
      { customerId: '', items: [{ sku, quantity: 1 }] },
      { customerId: 'c', items: [{ sku, quantity: 1 }], extra: true },
      { customerId: 'c', items: [{ sku: "x' OR 1=1 --", quantity: 1 }] },
    ];
    for (const body of bad) await expectError(h.asCustomer('c', 'POST', '/orders', body), 400, 'VALIDATION_FAILED');
    await expectError(
      h.asCustomer('c', 'POST', '/orders', '{"customerId":', { 'content-type': 'application/json' }),
      400,
      'VALIDATION_FAILED',
    );
    await expectError(
      h.asCustomer(
        'c',
        'POST',
        '/orders',
        { customerId: 'c', items: [{ sku, quantity: 1 }] },
        { 'idempotency-key': 'x'.repeat(300) },
      ),
      400,
      'VALIDATION_FAILED',
    );
  });

  it('UNKNOWN_SKU, OUT_OF_STOCK and COUPON_UNAVAILABLE roll back everything already reserved', async () => {
    const { sku, couponCode } = await seedCatalog(h, { stock: 3 });
    const other = await seedCatalog(h, { stock: 1 });
    const order = (items: unknown[], coupon?: string) =>
      h.asCustomer('c', 'POST', '/orders', { customerId: 'c', items, ...(coupon ? { couponCode: coupon } : {}) });

    await expectError(
      order([
        { sku, quantity: 1 },
        { sku: 'NO-SUCH-SKU', quantity: 1 },
      ]),
      404,
      'UNKNOWN_SKU',
    );
    await expectError(
      order([
        { sku, quantity: 1 },
        { sku: other.sku, quantity: 2 },
      ]),
      409,
      'OUT_OF_STOCK',
    );
    await expectError(order([{ sku, quantity: 1 }], 'NO-SUCH-COUPON'), 409, 'COUPON_UNAVAILABLE');

    const first = await placeOrder(h, { sku, quantity: 1, couponCode });
    expect(await couponOf(h, couponCode)).toMatchObject({ status: 'LOCKED', orderId: first.id });
    await expectError(order([{ sku, quantity: 1 }], couponCode), 409, 'COUPON_UNAVAILABLE');
    expect(await stockOf(h, sku)).toMatchObject({ available: 2, reserved: 1 });
  });

  it('Idempotency-Key: same body returns the same order, another body is IDEMPOTENCY_KEY_REUSED', async () => {
    const { sku } = await seedCatalog(h, { stock: 10 });
    const key = `key-${randomUUID()}`;
    const first = await placeOrder(h, { sku, quantity: 2 }, { 'idempotency-key': key });
    const again = await placeOrder(h, { sku, quantity: 2 }, { 'idempotency-key': key });
    expect(again).toEqual(first);
    expect(await stockOf(h, sku)).toMatchObject({ available: 8, reserved: 2 });
    await expectError(
      h.asCustomer(
        'cust-1',
        'POST',
        '/orders',
        { customerId: 'cust-1', items: [{ sku, quantity: 3 }] },
        { 'idempotency-key': key },
      ),
      422,
      'IDEMPOTENCY_KEY_REUSED',
    );
  });
});

describe('the customer email address', () => {
  it('is stored on the order when given, absent otherwise; not an address is VALIDATION_FAILED', async () => {
    const { sku } = await seedCatalog(h, { stock: 10 });
    const customer = `email-${randomUUID()}`;
    const order = (body: Record<string, unknown>, headers: Record<string, string> = {}) =>
      h.asCustomer(customer, 'POST', '/orders', { items: [{ sku, quantity: 1 }], ...body }, headers);
    const withEmail = await order({ email: 'buyer@customers.example' });
    expect(withEmail.status, JSON.stringify(withEmail.body)).toBe(201);
    const without = await order({});
    expect(without.status).toBe(201);
    expect(await h.db.order.findUniqueOrThrow({ where: { id: withEmail.body.id as string } })).toMatchObject({
      email: 'buyer@customers.example',
    });
    expect(await h.db.order.findUniqueOrThrow({ where: { id: without.body.id as string } })).toMatchObject({
      email: null,
    });
    for (const email of ['not-an-address', 'buyer@', '<script>@x.example', `${'x'.repeat(250)}@customers.example`, 42])
      await expectError(order({ email }), 400, 'VALIDATION_FAILED');

    const key = `key-${randomUUID()}`;
    const first = await order({ email: 'first@customers.example' }, { 'idempotency-key': key });
    expect(first.status).toBe(201);
    await expectError(
      order({ email: 'second@customers.example' }, { 'idempotency-key': key }),
      422,
      'IDEMPOTENCY_KEY_REUSED',
    );
  });
});

describe('catalog and order reads', () => {
  it('admin calls need the token; unknown products, coupons and orders are 404', async () => {
    await expectError(h.http('PUT', '/products/ABC', { name: 'x', priceCents: 1, stock: 1 }), 401, 'UNAUTHORIZED');
    await expectError(
      h.http('PUT', '/products/ABC', { name: 'x', priceCents: 1, stock: 1 }, { authorization: 'Bearer wrong' }),
      401,
      'UNAUTHORIZED',
    );
    await expectError(
      h.admin('PUT', '/products/ABC', { name: 'x', priceCents: -1, stock: 1 }),
      400,
      'VALIDATION_FAILED',
    );
    await expectError(h.admin('PUT', '/coupons/C1', { discountCents: 'ten' }), 400, 'VALIDATION_FAILED');
    await expectError(h.http('PUT', '/coupons/C1', { discountCents: 10 }), 401, 'UNAUTHORIZED');
    await expectError(h.http('GET', '/products/NOPE'), 404, 'UNKNOWN_SKU');
    await expectError(h.admin('GET', '/coupons/NOPE'), 404, 'UNKNOWN_COUPON');
    await expectError(h.asCustomer('c', 'GET', `/orders/${randomUUID()}`), 404, 'UNKNOWN_ORDER');
    await expectError(h.asCustomer('c', 'GET', '/orders/not-a-uuid'), 400, 'VALIDATION_FAILED');
    await expectError(h.asCustomer('c', 'GET', '/orders?limit=1000'), 400, 'VALIDATION_FAILED');
    await expectError(h.asCustomer('c', 'POST', `/orders/${randomUUID()}/cancel`), 404, 'UNKNOWN_ORDER');
    await expectError(h.http('POST', `/orders/${randomUUID()}/extend`, { minutes: 5 }), 401, 'UNAUTHORIZED');
    await expectError(h.admin('POST', `/orders/${randomUUID()}/extend`, { minutes: 5 }), 404, 'UNKNOWN_ORDER');
    await expectError(h.http('GET', '/no/such/route'), 404, 'NOT_FOUND');
  });

  it('every UNAUTHORIZED carries WWW-Authenticate: Bearer (RFC 6750), with error="invalid_token" when a token was refused', async () => {
    const missing = 'Bearer realm="order-lifecycle"';
    const refused = 'Bearer realm="order-lifecycle", error="invalid_token"';
    const cases: Array<[() => Promise<HttpResult>, string]> = [
      [() => h.http('GET', '/coupons/C1'), missing],
      [() => h.http('GET', '/orders'), missing],
      [() => h.http('GET', '/metrics', undefined, { authorization: 'Basic b3BzOm9wcw==' }), missing],
      [() => h.http('PUT', '/coupons/C1', { discountCents: 10 }, { authorization: 'Bearer wrong' }), refused],
      [() => h.http('GET', '/orders', undefined, { authorization: 'Bearer not.a.jwt' }), refused],
      [() => h.asCustomer('c', 'GET', '/coupons/C1'), refused], // a customer's valid token where only operators may call
    ];
    for (const [request, challenge] of cases) {
      const res = await expectError(request(), 401, 'UNAUTHORIZED');
      expect(res.headers.get('www-authenticate')).toBe(challenge);
    }
  });

  it('VALIDATION_FAILED about the path, not the body, when a path parameter does not percent-decode', async () => {
    const requests = [
      () => h.asCustomer('c', 'GET', '/orders/%ZZ'),
      () => h.asCustomer('c', 'POST', '/orders/%E0%A4%A/cancel'),
      () => h.http('GET', '/products/%ZZ'),
      () => h.admin('PUT', '/products/%ZZ', { name: 'x', priceCents: 1, stock: 1 }),
      () => h.admin('GET', '/coupons/100%'),
    ];
    for (const request of requests) {
      const res = await expectError(request(), 400, 'VALIDATION_FAILED');
      expect(res.body.error.message).toBe(
        'the request path is not valid: a path parameter is not correctly percent-encoded',
      );
    }
  });

  it('an order id in capitals reaches the same order and its workflow', async () => {
    const { sku } = await seedCatalog(h);
    const order = await placeOrder(h, { sku });
    const shouted = order.id.toUpperCase();
    expect(shouted).not.toBe(order.id);
    expect((await h.asCustomer('cust-1', 'GET', `/orders/${shouted}`)).body).toMatchObject({ id: order.id });
    const cancel = await h.asCustomer('cust-1', 'POST', `/orders/${shouted}/cancel`);
    expect(cancel.status, JSON.stringify(cancel.body)).toBe(202);
    expect(cancel.body).toEqual({ id: order.id, cancelRequested: true });
    await eventually(
      async () => (await h.db.order.findUniqueOrThrow({ where: { id: order.id } })).status === 'CANCELLED',
    );
  });

  it('an order past its deadline is never payable, even before the cancellation lands', async () => {
    const { sku } = await seedCatalog(h);
    const order = await placeOrder(h, { sku });
    expect((await h.asCustomer('cust-1', 'GET', `/orders/${order.id}`)).body).toMatchObject({
      status: 'UNPAID',
      payable: true,
    });
    // The workflow's timer is on the test server's clock; move the deadline behind the database's.
    await h.db.$executeRaw`UPDATE orders SET expires_at = now() - interval '1 second' WHERE id = ${order.id}::uuid`;
    expect((await h.asCustomer('cust-1', 'GET', `/orders/${order.id}`)).body).toMatchObject({
      status: 'UNPAID',
      payable: false,
    });
    const listed = await h.asCustomer('cust-1', 'GET', '/orders?status=UNPAID&customerId=cust-1&limit=200');
    expect(listed.body.orders.find((o: { id: string }) => o.id === order.id)).toMatchObject({ payable: false });
  });
});

describe('payment webhook', () => {
  const signed = (raw: string, ts = Math.floor(Date.now() / 1000), secret = WEBHOOK_SECRET) => ({
    'x-payment-timestamp': String(ts),
    'x-payment-signature': signPayload(secret, ts, raw),
  });

  it('INVALID_SIGNATURE for a missing, wrong, stale or tampered signature', async () => {
    const { sku } = await seedCatalog(h);
    const order = await placeOrder(h, { sku });
    const raw = JSON.stringify({
      paymentId: 'p1',
      orderId: order.id,
      amountCents: order.totalCents,
      paidAt: new Date().toISOString(),
    });
    const post = (body: string, headers: Record<string, string>) => h.http('POST', '/payments/callback', body, headers);

    await expectError(post(raw, {}), 401, 'INVALID_SIGNATURE');
    await expectError(post(raw, signed(raw, undefined, 'not-the-secret')), 401, 'INVALID_SIGNATURE');
    // Clearly outside the window: a whole-second timestamp 1 s past the bound could fall back inside it
    // by the time the request arrives (it did, once in CI).
    const offWindow = MAX_CLOCK_SKEW_SECONDS + 5;
    await expectError(post(raw, signed(raw, Math.floor(Date.now() / 1000) - offWindow)), 401, 'INVALID_SIGNATURE');
    await expectError(post(raw, signed(raw, Math.floor(Date.now() / 1000) + offWindow)), 401, 'INVALID_SIGNATURE');
    await expectError(post(raw.replace(String(order.totalCents), '1'), signed(raw)), 401, 'INVALID_SIGNATURE');
    await expectError(post(raw, { ...signed(raw), 'x-payment-signature': 'sha256=zz' }), 401, 'INVALID_SIGNATURE');
  });

  it('VALIDATION_FAILED for a signed but malformed body, UNKNOWN_ORDER for an order that does not exist', async () => {
    const bad = JSON.stringify({ paymentId: 'p2', orderId: randomUUID(), amountCents: -5, paidAt: 'yesterday' });
    await expectError(h.http('POST', '/payments/callback', bad, signed(bad)), 400, 'VALIDATION_FAILED');
    const notJson = 'paymentId=p2';
    await expectError(h.http('POST', '/payments/callback', notJson, signed(notJson)), 400, 'VALIDATION_FAILED');
    const unknown = JSON.stringify({
      paymentId: 'p3',
      orderId: randomUUID(),
      amountCents: 100,
      paidAt: new Date().toISOString(),
    });
    await expectError(h.http('POST', '/payments/callback', unknown, signed(unknown)), 404, 'UNKNOWN_ORDER');
  });
});

describe('fault injection and fulfillment retry endpoints', () => {
  it('need the admin token, validate their input, and refuse to retry a step that has not failed', async () => {
    await expectError(h.http('PUT', '/admin/faults/invoice', { failNext: 1 }), 401, 'UNAUTHORIZED');
    await expectError(h.admin('PUT', '/admin/faults/printer', { failNext: 1 }), 400, 'VALIDATION_FAILED');
    await expectError(h.admin('PUT', '/admin/faults/invoice', { failNext: -1 }), 400, 'VALIDATION_FAILED');
    await expectError(h.admin('PUT', '/admin/faults/invoice', { failSometimes: true }), 400, 'VALIDATION_FAILED');

    const { sku } = await seedCatalog(h);
    const order = await placeOrder(h, { sku });
    await expectError(h.http('POST', `/orders/${order.id}/fulfillment/invoice/retry`), 401, 'UNAUTHORIZED');
    await expectError(h.admin('POST', `/orders/${order.id}/fulfillment/shipping/retry`), 400, 'VALIDATION_FAILED');
    await expectError(h.admin('POST', `/orders/${randomUUID()}/fulfillment/invoice/retry`), 404, 'UNKNOWN_ORDER');
    await expectError(h.admin('POST', `/orders/${order.id}/fulfillment/invoice/retry`), 409, 'STEP_NOT_FAILED');
  });
});
