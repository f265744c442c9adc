import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { placeOrder, seedCatalog, stockOf } from '../helpers/catalog.js';
import { eventually } from '../helpers/eventually.js';
import { startOrderHarness, type OrderHarness } from '../helpers/order-harness.js';

/** Anti-hoarding: one customer never holds more than MAX_OPEN_ORDERS_PER_CUSTOMER unpaid orders. */
const LIMIT = 3;
let h: OrderHarness;
beforeAll(async () => {
  h = await startOrderHarness({ taskQueue: 'orders-open-limit', maxOpenOrdersPerCustomer: LIMIT });
});
afterAll(async () => {
  await h?.close();
});

const unpaidOf = (customerId: string) => h.db.order.count({ where: { customerId, status: 'UNPAID' } });
const statusOf = async (id: string) => (await h.db.order.findUniqueOrThrow({ where: { id } })).status;

describe('MAX_OPEN_ORDERS_PER_CUSTOMER', () => {
  it('20 concurrent placements by one customer leave exactly the limit of unpaid orders; the others are 409 and reserve nothing', async () => {
    const { sku } = await seedCatalog(h, { stock: 100 });
    const customerId = `hoarder-${randomUUID().slice(0, 8)}`;
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => h.asCustomer(customerId, 'POST', '/orders', { items: [{ sku, quantity: 2 }] })),
    );
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses).toEqual([...Array(LIMIT).fill(201), ...Array(20 - LIMIT).fill(409)]);
    for (const refused of answers.filter((a) => a.status === 409)) {
      expect(refused.body.error).toMatchObject({ code: 'TOO_MANY_OPEN_ORDERS', message: expect.any(String) });
    }
    expect(await unpaidOf(customerId)).toBe(LIMIT);
    expect(await h.db.order.count({ where: { customerId } })).toBe(LIMIT);
    expect(await stockOf(h, sku)).toMatchObject({ available: 100 - 2 * LIMIT, reserved: 2 * LIMIT });

    // Another customer is not affected by the hoarder's limit.
    expect(
      (await h.asCustomer(`${customerId}-neighbour`, 'POST', '/orders', { items: [{ sku, quantity: 1 }] })).status,
    ).toBe(201);
  });

  it('at the limit, a replay of a placed order still answers it; paying or cancelling one frees a place', async () => {
    const { sku } = await seedCatalog(h, { stock: 100 });
    const customerId = `buyer-${randomUUID().slice(0, 8)}`;
    const key = `key-${randomUUID()}`;
    const first = await placeOrder(h, { sku, customerId, quantity: 1 }, { 'idempotency-key': key });
    const second = await placeOrder(h, { sku, customerId, quantity: 1 });
    await placeOrder(h, { sku, customerId, quantity: 1 });
    const body = { customerId, items: [{ sku, quantity: 1 }] };
    expect((await h.asCustomer(customerId, 'POST', '/orders', body)).body.error.code).toBe('TOO_MANY_OPEN_ORDERS');
    expect((await h.asCustomer(customerId, 'POST', '/orders', body, { 'idempotency-key': key })).body).toEqual(first);

    expect(
      (await h.pay({ paymentId: `pay-${first.id}`, orderId: first.id, amountCents: first.totalCents })).status,
    ).toBe(202);
    await eventually(async () => (await statusOf(first.id)) === 'PAID');
    await placeOrder(h, { sku, customerId, quantity: 1 });
    expect((await h.asCustomer(customerId, 'POST', '/orders', body)).body.error.code).toBe('TOO_MANY_OPEN_ORDERS');

    expect((await h.asCustomer(customerId, 'POST', `/orders/${second.id}/cancel`)).status).toBe(202);
    await eventually(async () => (await statusOf(second.id)) === 'CANCELLED');
    await placeOrder(h, { sku, customerId, quantity: 1 });
    expect(await unpaidOf(customerId)).toBe(LIMIT);
  });
});
