import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { orderWorkflowId } from '../../domain/messages.js';
import { MAX_ORDER_TOTAL_CENTS } from '../../domain/order-total.js';
import { MINIMUM_CHARGE_CENTS } from '../../lib/currencies.js';
import { BUSINESS_INVARIANTS, checkInvariants } from '../../ops/invariants.js';
import { couponOf, placeOrder, seedCatalog, stockOf } from '../helpers/catalog.js';
import { startOrderHarness, type OrderHarness } from '../helpers/order-harness.js';

/**
 * The limits on an order's total: placement refuses above the largest and below the provider's
 * smallest charge, and the webhook pays anything up to the largest; a total of 0 is paid at placement.
 */
let h: OrderHarness;

beforeAll(async () => {
  h = await startOrderHarness({ taskQueue: 'orders-total-limit' });
});
afterAll(async () => {
  await h?.close();
});

const order = (customerId: string, lines: Array<{ sku: string; quantity: number }>, couponCode?: string) =>
  h.asCustomer(customerId, 'POST', '/orders', { items: lines, ...(couponCode ? { couponCode } : {}) });

describe('the largest order total', () => {
  it('an order of exactly the limit is placed and paid through the signed callback', async () => {
    expect(MAX_ORDER_TOTAL_CENTS % 3).toBe(0);
    const { sku } = await seedCatalog(h, { priceCents: MAX_ORDER_TOTAL_CENTS / 3, stock: 3 });
    const placed = await placeOrder(h, { sku, quantity: 3, customerId: `big-${randomUUID()}` });
    expect(placed.totalCents).toBe(MAX_ORDER_TOTAL_CENTS);

    const paymentId = `pay-${placed.id}`;
    expect((await h.pay({ paymentId, orderId: placed.id, amountCents: MAX_ORDER_TOTAL_CENTS })).status).toBe(202);
    const end = await h.env.client.workflow.getHandle(orderWorkflowId(placed.id)).result();
    expect(end.status).toBe('PAID');
    expect(await h.db.payment.findUniqueOrThrow({ where: { paymentId } })).toMatchObject({
      amountCents: MAX_ORDER_TOTAL_CENTS,
      status: 'CAPTURED',
    });
  });

  it('one cent more is refused at placement with a clear error, reserving and locking nothing', async () => {
    const { sku, couponCode } = await seedCatalog(h, { priceCents: 50_000_000, stock: 10, discountCents: 1 });
    // 2 × 50,000,000 − 1 = 99,999,999 is the limit; without the coupon it is one cent over.
    const refused = await order(`over-${randomUUID()}`, [{ sku, quantity: 2 }]);
    expect(refused.status).toBe(422);
    expect(refused.body.error).toMatchObject({
      code: 'ORDER_TOTAL_TOO_LARGE',
      details: { totalCents: MAX_ORDER_TOTAL_CENTS + 1, maxTotalCents: MAX_ORDER_TOTAL_CENTS },
    });
    expect(await stockOf(h, sku)).toMatchObject({ available: 10, reserved: 0 });

    const withCoupon = await order(`under-${randomUUID()}`, [{ sku, quantity: 2 }], couponCode);
    expect(withCoupon.status).toBe(201);
    expect(withCoupon.body.totalCents).toBe(MAX_ORDER_TOTAL_CENTS);
    expect(await couponOf(h, couponCode)).toMatchObject({ status: 'LOCKED' });
  });

  it('a total beyond 32 bits is refused the same way, never a 5xx', async () => {
    const skus = await Promise.all(
      Array.from({ length: 50 }, async () => (await seedCatalog(h, { priceCents: 100_000_000, stock: 1000 })).sku),
    );
    const refused = await order(
      `huge-${randomUUID()}`,
      skus.map((sku) => ({ sku, quantity: 1000 })),
    );
    expect(refused.status).toBe(422);
    expect(refused.body.error).toMatchObject({
      code: 'ORDER_TOTAL_TOO_LARGE',
      details: { totalCents: 50 * 1000 * 100_000_000 },
    });
    expect(await stockOf(h, skus[0]!)).toMatchObject({ available: 1000, reserved: 0 });
    expect(await h.db.order.count({ where: { totalCents: { gt: MAX_ORDER_TOTAL_CENTS } } })).toBe(0);
  });

  it('the webhook accepts any amount up to the limit and refuses more before anything is recorded', async () => {
    const { sku } = await seedCatalog(h, { stock: 1 });
    const placed = await placeOrder(h, { sku, quantity: 1, customerId: `payer-${randomUUID()}` });
    const tooMuch = await h.pay({
      paymentId: `over-${placed.id}`,
      orderId: placed.id,
      amountCents: MAX_ORDER_TOTAL_CENTS + 1,
    });
    expect(tooMuch.status).toBe(400);
    expect(tooMuch.body.error.code).toBe('VALIDATION_FAILED');
    expect(await h.db.payment.count({ where: { orderId: placed.id } })).toBe(0);
  });
});

describe('the smallest order totals', () => {
  const result = (orderId: string) => h.env.client.workflow.getHandle(orderWorkflowId(orderId)).result();

  it('a total of 0 (a coupon covers it) is paid at placement, with no payment, and fulfilled', async () => {
    const { sku, couponCode } = await seedCatalog(h, { priceCents: 400, stock: 3, discountCents: 1000 });
    const placed = await order(`free-${randomUUID()}`, [{ sku, quantity: 2 }], couponCode);
    expect(placed.status).toBe(201);
    expect(placed.body).toMatchObject({ status: 'PAID', totalCents: 0, payment: null });

    expect(await result(placed.body.id)).toMatchObject({
      status: 'PAID',
      fulfillment: { invoice: 'DONE', notification: 'DONE', loyalty: 'DONE' },
    });
    expect(await stockOf(h, sku)).toMatchObject({ available: 1, reserved: 0, sold: 2 });
    expect(await couponOf(h, couponCode)).toMatchObject({ status: 'REDEEMED', orderId: placed.body.id });
    expect(await h.db.payment.count({ where: { orderId: placed.body.id } })).toBe(0);
    const view = (await h.asCustomer(placed.body.customerId, 'GET', `/orders/${placed.body.id}`)).body;
    expect(view).toMatchObject({ status: 'PAID', payable: false, paidAt: expect.any(String), payment: null });
    // The checker knows a PAID order of total 0 has no captured payment.
    const report = await checkInvariants(h.db, BUSINESS_INVARIANTS, { graceMs: 0 });
    expect(report.violations.filter((v) => v.detail.includes(placed.body.id))).toEqual([]);
  });

  it('a total above 0 and under the smallest charge is refused at placement, holding nothing', async () => {
    const minimum = MINIMUM_CHARGE_CENTS.eur;
    expect(minimum).toBe(50);
    const { sku, couponCode } = await seedCatalog(h, { priceCents: 20, stock: 5, discountCents: 10 });
    const customerId = `small-${randomUUID()}`;
    const refused = await order(customerId, [{ sku, quantity: 2 }], couponCode); // 2 × 20 − 10 = 30 cents
    expect(refused.status).toBe(422);
    expect(refused.body.error).toMatchObject({
      code: 'ORDER_TOTAL_TOO_SMALL',
      details: { totalCents: 30, minTotalCents: minimum, currency: 'eur' },
    });
    expect(await stockOf(h, sku)).toMatchObject({ available: 5, reserved: 0, sold: 0 });
    expect(await couponOf(h, couponCode)).toMatchObject({ status: 'AVAILABLE', orderId: null });
    expect(await h.db.order.count({ where: { customerId } })).toBe(0);

    // The smallest charge itself is placed, with the same coupon, and waits for its payment as usual.
    const atMinimum = await order(customerId, [{ sku, quantity: 3 }], couponCode); // 3 × 20 − 10 = 50 cents
    expect(atMinimum.status).toBe(201);
    expect(atMinimum.body).toMatchObject({ status: 'UNPAID', totalCents: minimum });
  });
});
