import { randomUUID } from 'node:crypto';
import { Prisma } from '@prisma/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lockCoupon } from '../../activities/coupons.js';
import { inTransaction, query } from '../../lib/sql.js';
import { couponOf, placeOrder, seedCatalog, stockOf } from '../helpers/catalog.js';
import { eventually } from '../helpers/eventually.js';
import { startOrderHarness, type OrderHarness } from '../helpers/order-harness.js';

/** A coupon bound to one customer: only that customer's orders can lock it, and nobody else learns it exists. */
let h: OrderHarness;
beforeAll(async () => {
  h = await startOrderHarness({ taskQueue: 'orders-customer-coupons' });
});
afterAll(async () => {
  await h?.close();
});

const unique = (prefix: string) => `${prefix}-${randomUUID().slice(0, 8)}`;
const order = (customerId: string, sku: string, couponCode: string) =>
  h.asCustomer(customerId, 'POST', '/orders', { items: [{ sku, quantity: 1 }], couponCode });

describe('a coupon bound to a customer', () => {
  it("refuses another customer's order exactly as an unknown code, and stays AVAILABLE, reserving nothing", async () => {
    const { sku } = await seedCatalog(h, { priceCents: 1000, stock: 5 });
    const [alice, bob, code] = [unique('alice'), unique('bob'), unique('ALICE')];
    const put = await h.admin('PUT', `/coupons/${code}`, { discountCents: 300, customerId: alice });
    expect(put.body).toEqual({ code, discountCents: 300, status: 'AVAILABLE', orderId: null, customerId: alice });

    const strangers = await order(bob, sku, code);
    const unknown = await order(bob, sku, `${code}-X`);
    expect(strangers.status).toBe(409);
    expect(strangers.body).toEqual({
      error: { ...unknown.body.error, details: { couponCode: code } },
    });
    expect(unknown.body.error).toMatchObject({ code: 'COUPON_UNAVAILABLE', details: { couponCode: `${code}-X` } });
    expect(await couponOf(h, code)).toMatchObject({ status: 'AVAILABLE', orderId: null });
    expect(await stockOf(h, sku)).toMatchObject({ available: 5, reserved: 0 });
    expect(await h.db.order.count({ where: { customerId: bob } })).toBe(0);
  });

  it("is used by its customer's order: LOCKED by it, REDEEMED once it is paid", async () => {
    const { sku } = await seedCatalog(h, { priceCents: 1000, stock: 5 });
    const [alice, code] = [unique('alice'), unique('ALICE')];
    await h.admin('PUT', `/coupons/${code}`, { discountCents: 300, customerId: alice });

    const placed = await order(alice, sku, code);
    expect(placed.status, JSON.stringify(placed.body)).toBe(201);
    expect(placed.body).toMatchObject({ totalCents: 700, couponCode: code });
    expect(await couponOf(h, code)).toMatchObject({ status: 'LOCKED', orderId: placed.body.id });

    const { id, totalCents } = placed.body;
    expect((await h.pay({ paymentId: `pay-${id}`, orderId: id, amountCents: totalCents })).status).toBe(202);
    await eventually(async () => (await couponOf(h, code)).status === 'REDEEMED');
    expect(await couponOf(h, code)).toMatchObject({ orderId: id, customerId: alice });
  });

  it('an operator placing an order names the customer, and only that customer may use it', async () => {
    const { sku } = await seedCatalog(h, { priceCents: 1000, stock: 5 });
    const [alice, code] = [unique('alice'), unique('ALICE')];
    await h.admin('PUT', `/coupons/${code}`, { discountCents: 300, customerId: alice });
    const forOther = { customerId: unique('bob'), items: [{ sku, quantity: 1 }], couponCode: code };
    expect((await h.admin('POST', '/orders', forOther)).body.error.code).toBe('COUPON_UNAVAILABLE');
    const forAlice = await h.admin('POST', '/orders', { ...forOther, customerId: alice });
    expect(forAlice.status).toBe(201);
  });

  it('released by a cancel, it is AVAILABLE to its customer again, and to nobody else', async () => {
    const { sku } = await seedCatalog(h, { priceCents: 1000, stock: 5 });
    const [alice, code] = [unique('alice'), unique('ALICE')];
    await h.admin('PUT', `/coupons/${code}`, { discountCents: 300, customerId: alice });
    const first = await placeOrder(h, { sku, quantity: 1, customerId: alice, couponCode: code });
    expect((await h.asCustomer(alice, 'POST', `/orders/${first.id}/cancel`)).status).toBe(202);
    await eventually(async () => (await couponOf(h, code)).status === 'AVAILABLE');

    expect((await order(unique('bob'), sku, code)).body.error.code).toBe('COUPON_UNAVAILABLE');
    expect((await order(alice, sku, code)).status).toBe(201);
  });
});

describe('PUT /coupons/:code and the customer', () => {
  it('without customerId a new coupon is open to anyone, as before', async () => {
    const { sku } = await seedCatalog(h, { priceCents: 1000, stock: 5 });
    const code = unique('OPEN');
    expect((await h.admin('PUT', `/coupons/${code}`, { discountCents: 100 })).body.customerId).toBeNull();
    expect((await order(unique('anyone'), sku, code)).status).toBe(201);
  });

  it('without customerId an existing coupon keeps its customer; null opens it to anyone', async () => {
    const [alice, code] = [unique('alice'), unique('ALICE')];
    await h.admin('PUT', `/coupons/${code}`, { discountCents: 300, customerId: alice });
    expect((await h.admin('PUT', `/coupons/${code}`, { discountCents: 400 })).body).toMatchObject({
      discountCents: 400,
      customerId: alice,
    });
    expect((await h.admin('PUT', `/coupons/${code}`, { discountCents: 400, customerId: null })).body).toMatchObject({
      customerId: null,
    });
  });

  it('moves an AVAILABLE coupon to another customer, but refuses to once an order holds it, changing nothing', async () => {
    const { sku } = await seedCatalog(h, { priceCents: 1000, stock: 5 });
    const [alice, bob, code] = [unique('alice'), unique('bob'), unique('ALICE')];
    await h.admin('PUT', `/coupons/${code}`, { discountCents: 300, customerId: bob });
    expect((await h.admin('PUT', `/coupons/${code}`, { discountCents: 300, customerId: alice })).status).toBe(200);
    const held = await placeOrder(h, { sku, quantity: 1, customerId: alice, couponCode: code });

    for (const customerId of [bob, null]) {
      const refused = await h.admin('PUT', `/coupons/${code}`, { discountCents: 900, customerId });
      expect(refused.status).toBe(409);
      expect(refused.body.error).toMatchObject({ code: 'COUPON_IN_USE', details: { code } });
    }
    expect((await h.admin('GET', `/coupons/${code}`)).body).toEqual({
      code,
      discountCents: 300,
      status: 'LOCKED',
      orderId: held.id,
      customerId: alice,
    });
    // Naming the customer it has, or none, still changes the discount.
    expect((await h.admin('PUT', `/coupons/${code}`, { discountCents: 250, customerId: alice })).status).toBe(200);
    expect((await h.admin('PUT', `/coupons/${code}`, { discountCents: 200 })).body).toMatchObject({
      discountCents: 200,
      customerId: alice,
      status: 'LOCKED',
    });
  });
});

/**
 * The customer check and a change of customer both update the coupon's row, so PostgreSQL orders
 * them: whichever waits sees the other's committed row. Each case holds one side's transaction open
 * until the other is seen waiting for the row, then commits.
 */
describe('a change of customer racing a placement', () => {
  /** Until a statement containing `statement` waits for a row lock. */
  const waiting = (statement: string) =>
    eventually(async () => {
      const { rows } = await query<{ n: number }>(
        h.db.pool,
        Prisma.sql`SELECT count(*)::int AS n FROM pg_stat_activity
                   WHERE wait_event_type = 'Lock' AND strpos(query, ${statement}) > 0`,
      );
      return rows[0]!.n > 0;
    });

  it("a PUT that waited for the placement's lock finds the coupon held and refuses, changing nothing", async () => {
    const [alice, bob, code] = [unique('alice'), unique('bob'), unique('ALICE')];
    await h.admin('PUT', `/coupons/${code}`, { discountCents: 300, customerId: alice });
    const orderId = randomUUID();
    const put = await inTransaction(h.db.pool, async (tx) => {
      expect(await lockCoupon(tx, code, { orderId, customerId: alice })).toEqual({ discountCents: 300 });
      const answer = h.admin('PUT', `/coupons/${code}`, { discountCents: 300, customerId: bob });
      await waiting('INSERT INTO coupons');
      return { answer }; // wrapped: a promise returned as such would be awaited before the commit
    });
    expect((await put.answer).body.error.code).toBe('COUPON_IN_USE');
    expect(await couponOf(h, code)).toMatchObject({ status: 'LOCKED', orderId, customerId: alice });
  });

  it("a placement that waited for a change of customer finds the coupon no longer its customer's", async () => {
    const [alice, bob, code] = [unique('alice'), unique('bob'), unique('ALICE')];
    await h.admin('PUT', `/coupons/${code}`, { discountCents: 300, customerId: alice });
    const locked = await inTransaction(h.db.pool, async (tx) => {
      await query(tx, Prisma.sql`UPDATE coupons SET customer_id = ${bob} WHERE code = ${code}`);
      const lock = inTransaction(h.db.pool, (other) =>
        lockCoupon(other, code, { orderId: randomUUID(), customerId: alice }),
      );
      await waiting('UPDATE coupons SET status');
      return { lock };
    });
    expect(await locked.lock).toBeNull();
    expect(await couponOf(h, code)).toMatchObject({ status: 'AVAILABLE', orderId: null, customerId: bob });
  });
});
