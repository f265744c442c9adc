import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { placeOrder, seedCatalog } from '../helpers/catalog.js';
import { startOrderHarness, type HttpResult, type OrderHarness } from '../helpers/order-harness.js';

/** ORDERS_PER_MINUTE_PER_CLIENT, with a window short enough to watch it reopen. */
const LIMIT = 3;
/** READS_PER_MINUTE_PER_CLIENT, in the same window. */
const READ_LIMIT = 4;
const WINDOW_MS = 10_000;
let h: OrderHarness;
beforeAll(async () => {
  h = await startOrderHarness({
    taskQueue: 'orders-rate-limit',
    ordersRateLimit: { limit: LIMIT, windowMs: WINDOW_MS },
    readsRateLimit: { limit: READ_LIMIT, windowMs: WINDOW_MS },
  });
});
afterAll(async () => {
  await h?.close();
});

/** The Retry-After of a 429 RATE_LIMITED, checked to lie within the window. */
function retryAfterOf(refused: HttpResult): number {
  expect(refused.status).toBe(429);
  expect(refused.body.error).toMatchObject({ code: 'RATE_LIMITED', message: expect.any(String) });
  const retryAfter = Number(refused.headers.get('retry-after'));
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(WINDOW_MS / 1000);
  return retryAfter;
}

it('POST /orders beyond the limit is 429 with Retry-After, per customer, writes nothing, and recovers after the window', async () => {
  const { sku } = await seedCatalog(h, { stock: 100 });
  const customerId = `eager-${randomUUID().slice(0, 8)}`;
  const body = { items: [{ sku, quantity: 1 }] };
  const place = (who = customerId) => h.asCustomer(who, 'POST', '/orders', body);

  const allowed = await Promise.all(Array.from({ length: LIMIT }, () => place()));
  expect(allowed.map((a) => a.status)).toEqual(Array(LIMIT).fill(201));
  const ordersBefore = await h.db.order.count();

  const retryAfter = retryAfterOf(await place());
  expect(await h.db.order.count()).toBe(ordersBefore);

  // Keyed by customer: another customer and the operator are not throttled, and reads have a budget of their own.
  expect((await place(`${customerId}-other`)).status).toBe(201);
  expect((await h.admin('POST', '/orders', { customerId, ...body })).status).toBe(201);
  expect((await h.asCustomer(customerId, 'GET', '/orders')).status).toBe(200);

  await sleep(retryAfter * 1000 + 250);
  expect((await place()).status).toBe(201);
});

it("a customer's GET /orders, GET /orders/:id and cancels share one budget: beyond it 429 before anything is read or changed", async () => {
  const { sku } = await seedCatalog(h, { stock: 100 });
  const customerId = `reader-${randomUUID().slice(0, 8)}`;
  const order = await placeOrder(h, { sku, quantity: 1, customerId });
  const list = () => h.asCustomer(customerId, 'GET', '/orders?limit=200');
  const read = () => h.asCustomer(customerId, 'GET', `/orders/${order.id}`);
  const cancel = () => h.asCustomer(customerId, 'POST', `/orders/${order.id}/cancel`);

  for (let i = 0; i < READ_LIMIT; i++) expect((await (i % 2 ? read : list)()).status).toBe(200);
  const retryAfter = retryAfterOf(await list());
  retryAfterOf(await read());
  retryAfterOf(await cancel());
  expect((await h.db.order.findUniqueOrThrow({ where: { id: order.id } })).status).toBe('UNPAID');

  // Placements count apart; another customer and the operator are not limited.
  expect((await placeOrder(h, { sku, quantity: 1, customerId })).status).toBe('UNPAID');
  expect((await h.asCustomer(`${customerId}-other`, 'GET', '/orders')).status).toBe(200);
  for (let i = 0; i <= READ_LIMIT; i++) expect((await h.admin('GET', `/orders/${order.id}`)).status).toBe(200);

  await sleep(retryAfter * 1000 + 250);
  expect((await cancel()).status).toBe(202);
});
