import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { seedCatalog } from '../helpers/catalog.js';
import { startOrderHarness, type OrderHarness } from '../helpers/order-harness.js';

/** ORDERS_PER_MINUTE_PER_CLIENT, with a window short enough to watch it reopen. */
const LIMIT = 3;
const WINDOW_MS = 10_000;
let h: OrderHarness;
beforeAll(async () => {
  h = await startOrderHarness({
    taskQueue: 'orders-rate-limit',
    ordersRateLimit: { limit: LIMIT, windowMs: WINDOW_MS },
  });
});
afterAll(async () => {
  await h?.close();
});

it('POST /orders beyond the limit is 429 with Retry-After, per customer, writes nothing, and recovers after the window', async () => {
  const { sku } = await seedCatalog(h, { stock: 100 });
  const customerId = `eager-${randomUUID().slice(0, 8)}`;
  const body = { items: [{ sku, quantity: 1 }] };
  const place = (who = customerId) => h.asCustomer(who, 'POST', '/orders', body);

  const allowed = await Promise.all(Array.from({ length: LIMIT }, () => place()));
  expect(allowed.map((a) => a.status)).toEqual(Array(LIMIT).fill(201));
  const ordersBefore = await h.db.order.count();

  const refused = await place();
  expect(refused.status).toBe(429);
  expect(refused.body.error).toMatchObject({ code: 'RATE_LIMITED', message: expect.any(String) });
  const retryAfter = Number(refused.headers.get('retry-after'));
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(WINDOW_MS / 1000);
  expect(await h.db.order.count()).toBe(ordersBefore);

  // Keyed by customer: another customer and the operator are not throttled, and reads are never limited.
  expect((await place(`${customerId}-other`)).status).toBe(201);
  expect((await h.admin('POST', '/orders', { customerId, ...body })).status).toBe(201);
  expect((await h.asCustomer(customerId, 'GET', '/orders')).status).toBe(200);

  await sleep(retryAfter * 1000 + 250);
  expect((await place()).status).toBe(201);
});
