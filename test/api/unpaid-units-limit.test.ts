import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { placeOrder, seedCatalog, stockOf } from '../helpers/catalog.js';
import { eventually } from '../helpers/eventually.js';
import { startOrderHarness, type OrderHarness } from '../helpers/order-harness.js';

/** Anti-hoarding by units: one customer never holds more than MAX_UNPAID_UNITS_PER_PRODUCT unpaid units of a product. */
const LIMIT = 5;
let h: OrderHarness;
beforeAll(async () => {
  h = await startOrderHarness({ taskQueue: 'orders-units-limit', maxUnpaidUnitsPerProduct: LIMIT });
});
afterAll(async () => {
  await h?.close();
});

const statusOf = async (id: string) => (await h.db.order.findUniqueOrThrow({ where: { id } })).status;
const someone = () => `units-${randomUUID().slice(0, 8)}`;

describe('MAX_UNPAID_UNITS_PER_PRODUCT', () => {
  it('20 concurrent one-unit placements by one customer leave exactly the limit reserved; the others are 409 and reserve nothing', async () => {
    const { sku } = await seedCatalog(h, { stock: 100 });
    const customerId = someone();
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => h.asCustomer(customerId, 'POST', '/orders', { items: [{ sku, quantity: 1 }] })),
    );
    expect(answers.map((a) => a.status).sort()).toEqual([...Array(LIMIT).fill(201), ...Array(20 - LIMIT).fill(409)]);
    for (const refused of answers.filter((a) => a.status === 409))
      expect(refused.body.error).toMatchObject({ code: 'TOO_MANY_UNITS_HELD', details: { sku, limit: LIMIT } });
    expect(await h.db.order.count({ where: { customerId } })).toBe(LIMIT);
    expect(await stockOf(h, sku)).toMatchObject({ available: 100 - LIMIT, reserved: LIMIT });
  });

  it('one order past the limit is refused whole, other lines included; other products and customers are not affected', async () => {
    const { sku } = await seedCatalog(h, { stock: 100 });
    const { sku: other } = await seedCatalog(h, { stock: 100 });
    const customerId = someone();
    const tooMany = await h.asCustomer(customerId, 'POST', '/orders', {
      items: [
        { sku: other, quantity: 1 },
        { sku, quantity: LIMIT + 1 },
      ],
    });
    expect(tooMany.status).toBe(409);
    expect(tooMany.body.error).toMatchObject({ code: 'TOO_MANY_UNITS_HELD', details: { sku, held: 0 } });
    expect(await stockOf(h, other)).toMatchObject({ available: 100, reserved: 0 });

    await placeOrder(h, { sku, customerId, quantity: LIMIT });
    expect((await h.asCustomer(customerId, 'POST', '/orders', { items: [{ sku, quantity: 1 }] })).status).toBe(409);
    expect(
      (await h.asCustomer(customerId, 'POST', '/orders', { items: [{ sku: other, quantity: LIMIT }] })).status,
    ).toBe(201);
    expect((await h.asCustomer(someone(), 'POST', '/orders', { items: [{ sku, quantity: LIMIT }] })).status).toBe(201);
  });

  it('paying or cancelling an order frees its units', async () => {
    const { sku } = await seedCatalog(h, { stock: 100 });
    const customerId = someone();
    const first = await placeOrder(h, { sku, customerId, quantity: 3 });
    const second = await placeOrder(h, { sku, customerId, quantity: 2 });
    const one = { items: [{ sku, quantity: 1 }] };
    expect((await h.asCustomer(customerId, 'POST', '/orders', one)).body.error.code).toBe('TOO_MANY_UNITS_HELD');

    expect(
      (await h.pay({ paymentId: `pay-${first.id}`, orderId: first.id, amountCents: first.totalCents })).status,
    ).toBe(202);
    await eventually(async () => (await statusOf(first.id)) === 'PAID');
    await placeOrder(h, { sku, customerId, quantity: 3 });
    expect((await h.asCustomer(customerId, 'POST', '/orders', one)).body.error.code).toBe('TOO_MANY_UNITS_HELD');

    expect((await h.asCustomer(customerId, 'POST', `/orders/${second.id}/cancel`)).status).toBe(202);
    await eventually(async () => (await statusOf(second.id)) === 'CANCELLED');
    expect((await h.asCustomer(customerId, 'POST', '/orders', { items: [{ sku, quantity: 2 }] })).status).toBe(201);
  });
});
