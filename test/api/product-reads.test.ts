import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { placeOrder, seedCatalog } from '../helpers/catalog.js';
import { startOrderHarness, type OrderHarness } from '../helpers/order-harness.js';

/**
 * `GET /products/:sku` shows anyone what is available, and only an operator the sales figures
 * (`reserved`, `sold`): they would tell a competitor how the shop sells.
 */
let h: OrderHarness;
let sku: string;
beforeAll(async () => {
  h = await startOrderHarness({ taskQueue: 'orders-product-reads' });
  ({ sku } = await seedCatalog(h, { priceCents: 1200, stock: 10 }));
  await placeOrder(h, { sku, quantity: 3, customerId: 'shopper' }); // 3 reserved
}, 120_000);
afterAll(async () => {
  await h?.close();
});

describe('GET /products/:sku', () => {
  const availability = () => ({ sku, name: 'Widget', priceCents: 1200, available: 7 });

  it('answers an anonymous caller the availability, without the sales figures', async () => {
    const res = await h.http('GET', `/products/${sku}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual(availability());
    expect(res.headers.get('vary')).toMatch(/authorization/i);
  });

  it("answers a customer's token the same, kept by no cache", async () => {
    const res = await h.asCustomer('shopper', 'GET', `/products/${sku}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual(availability());
    expect(res.headers.get('cache-control')).toBe('no-store');
  });

  it('answers the admin token with the sales figures', async () => {
    const res = await h.admin('GET', `/products/${sku}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ...availability(), reserved: 3, sold: 0 });
    expect(res.headers.get('cache-control')).toBe('no-store');
  });

  it('refuses a token that is neither (401, as on every bearer route), rather than answer it as anonymous', async () => {
    const res = await h.http('GET', `/products/${sku}`, undefined, { authorization: 'Bearer not-the-admin-token' });
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ error: { code: 'UNAUTHORIZED' } });
  });
});
