import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { couponOf, seedCatalog, stockOf } from '../helpers/catalog.js';
import { startOrderHarness, type OrderHarness } from '../helpers/order-harness.js';

/** COUPON_REFUSALS_PER_HOUR_PER_CUSTOMER through the real service: guessing codes is slowed per customer. */
const LIMIT = 3;
let h: OrderHarness;
beforeAll(async () => {
  h = await startOrderHarness({
    taskQueue: 'orders-coupon-attempts',
    couponRefusalLimit: { limit: LIMIT, windowMs: 60 * 60_000 },
  });
});
afterAll(async () => {
  await h?.close();
});

const unique = (prefix: string) => `${prefix}-${randomUUID().slice(0, 8)}`;

describe('refused coupon codes, counted per customer', () => {
  it('after the limit the customer gets 429 on coupon attempts, a good code included; without a coupon they still order, and others are not affected', async () => {
    const { sku, couponCode } = await seedCatalog(h, { priceCents: 1000, stock: 10 });
    const [guesser, owner] = [unique('guesser'), unique('owner')];
    const owned = unique('OWNED');
    await h.admin('PUT', `/coupons/${owned}`, { discountCents: 100, customerId: owner });
    const order = (customerId: string, code?: string) =>
      h.asCustomer(customerId, 'POST', '/orders', {
        items: [{ sku, quantity: 1 }],
        ...(code === undefined ? {} : { couponCode: code }),
      });

    // Unknown codes and another customer's code count alike.
    for (const code of [unique('GUESS'), owned, unique('GUESS')])
      expect((await order(guesser, code)).body.error.code).toBe('COUPON_UNAVAILABLE');

    const refused = await order(guesser, couponCode);
    expect(refused.status).toBe(429);
    expect(refused.body.error).toMatchObject({ code: 'TOO_MANY_COUPON_ATTEMPTS', message: expect.any(String) });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(3500);
    expect(await couponOf(h, couponCode)).toMatchObject({ status: 'AVAILABLE', orderId: null });
    expect(await stockOf(h, sku)).toMatchObject({ available: 10, reserved: 0 });

    expect((await order(guesser)).status).toBe(201);
    expect((await order(owner, owned)).status).toBe(201);
    const neighbour = await order(unique('neighbour'), couponCode);
    expect(neighbour.status).toBe(201);
    expect(await couponOf(h, couponCode)).toMatchObject({ status: 'LOCKED', orderId: neighbour.body.id });
  });

  it('an operator placing orders for a customer is not counted', async () => {
    const { sku } = await seedCatalog(h, { priceCents: 1000, stock: 10 });
    const customerId = unique('served');
    const body = (couponCode: string) => ({ customerId, items: [{ sku, quantity: 1 }], couponCode });
    for (let i = 0; i <= LIMIT; i++)
      expect((await h.admin('POST', '/orders', body(unique('TYPO')))).body.error.code).toBe('COUPON_UNAVAILABLE');
    const mistyped = await h.asCustomer(customerId, 'POST', '/orders', body(unique('TYPO')));
    expect(mistyped.body.error.code).toBe('COUPON_UNAVAILABLE');
  });
});
