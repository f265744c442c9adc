import { randomUUID } from 'node:crypto';
import { Prisma } from '@prisma/client';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { extendOpenOrdersStatement } from '../api/routes/extend-open-orders.js';
import { query } from '../lib/sql.js';
import { placeOrder, seedCatalog } from '../test/helpers/catalog.js';
import { startOrderHarness, type OrderHarness } from '../test/helpers/order-harness.js';

/**
 * How long holding every deadline takes: the one guarded statement of POST /orders/extend over
 * OPEN_ORDERS orders written straight into a throwaway database, beside the per-order path
 * (POST /orders/:id/extend, the `extendDeadline` update through each order's workflow) for
 * PER_ORDER real orders one after the other, extrapolated. Prints its figures (docs/capacity.md).
 */
const OPEN_ORDERS = Number(process.env.OPEN_ORDERS ?? 100_000);
const PER_ORDER = Number(process.env.PER_ORDER ?? 100);
const ROUNDS = 3;
let h: OrderHarness;

beforeAll(async () => {
  h = await startOrderHarness({ taskQueue: 'orders-extend-measure' });
});
afterAll(async () => {
  await h?.close();
});

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

it('extends every open order in one statement, and one by one', async () => {
  const { sku } = await seedCatalog(h, { stock: PER_ORDER });
  const orders = [];
  for (let i = 0; i < PER_ORDER; i++) orders.push(await placeOrder(h, { sku, quantity: 1, customerId: `c-${i}` }));
  const oneByOne = performance.now();
  for (const order of orders)
    expect((await h.admin('POST', `/orders/${order.id}/extend`, { minutes: 5 })).status).toBe(200);
  const perOrderMs = (performance.now() - oneByOne) / PER_ORDER;

  await query(
    h.db.pool,
    Prisma.sql`
      INSERT INTO orders (id, customer_id, status, total_cents, created_at, expires_at, request_hash)
      SELECT gen_random_uuid(), 'bulk-' || (n % 5000), 'UNPAID', 1500, now(), now() + interval '30 minutes', ${randomUUID()}
      FROM generate_series(1, ${OPEN_ORDERS}) AS n`,
  );
  await query(h.db.pool, Prisma.sql`ANALYZE orders`);
  const statementMs: number[] = [];
  const endpointMs: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const started = performance.now();
    const { rows } = await query<{ extended: number }>(h.db.pool, extendOpenOrdersStatement({ minutes: 5 }, null));
    statementMs.push(performance.now() - started);
    expect(rows[0]!.extended).toBe(OPEN_ORDERS + PER_ORDER);
    const called = performance.now();
    const answer = await h.admin('POST', '/orders/extend', { minutes: 5 });
    endpointMs.push(performance.now() - called);
    expect(answer.body.extended).toBeGreaterThanOrEqual(OPEN_ORDERS);
  }

  const figures = {
    openOrders: OPEN_ORDERS + PER_ORDER,
    oneStatementMs: Math.round(median(statementMs)),
    endpointMs: Math.round(median(endpointMs)),
    perOrderSampled: PER_ORDER,
    perOrderMs: Math.round(perOrderMs * 10) / 10,
    perOrderExtrapolatedMinutes: Math.round(((perOrderMs * OPEN_ORDERS) / 60_000) * 10) / 10,
  };
  console.log(`extend-open-orders ${JSON.stringify(figures)}`);
});
