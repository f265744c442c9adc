import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Activities } from '../../activities/index.js';
import { placeWith, realActivities } from '../helpers/activities.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';

/**
 * What a placement costs the service's database: each statement is a round trip, so their number
 * is held here (docs/benchmark.md, "The levers, before and after"). Counted on node-postgres's
 * client, through which the pool and the transaction both run; the local fake provider's own
 * statements (schema `fakes`) are not the service's.
 */
let database: TestDatabase;
let acts: Activities;
const statements: string[] = [];
const clientQuery = pg.Client.prototype.query;

beforeAll(async () => {
  database = await createTestDatabase();
  // The service's defaults: both anti-hoarding limits on, and a provider that makes payments.
  acts = realActivities(database.prisma, {
    maxOpenOrdersPerCustomer: 3,
    maxUnpaidUnitsPerProduct: 10,
    payments: 'cancellable',
  });
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const text = typeof args[0] === 'string' ? args[0] : (args[0] as { text?: string } | undefined)?.text;
    if (text !== undefined && !/\bfakes\./.test(text)) statements.push(text.trim().split(/\s+/).slice(0, 3).join(' '));
    return (clientQuery as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof clientQuery;
});
afterAll(async () => {
  pg.Client.prototype.query = clientQuery;
  await database?.drop();
});

async function newProduct(): Promise<string> {
  const sku = `SKU-${randomUUID().slice(0, 8)}`;
  await database.prisma.product.create({
    data: { sku, name: 'Widget', priceCents: 1000, available: 10, stockAdded: 10 },
  });
  return sku;
}

async function statementsOf(work: () => Promise<unknown>): Promise<string[]> {
  statements.length = 0;
  await work();
  return [...statements];
}

describe('a placement’s round trips', () => {
  it('places a one-line order and keeps its payment in 7 statements, none of them a read before the write', async () => {
    const sku = await newProduct();
    const request = { orderId: randomUUID(), customerId: 'c-trips', items: [{ sku, quantity: 1 }], requestHash: 'h' };
    const placed = await statementsOf(() => placeWith(acts, request));
    expect(placed).toEqual([
      'BEGIN',
      "SELECT pg_advisory_xact_lock(hashtext('open-orders-per-customer'), hashtext($1))",
      'SELECT (SELECT count(*)::int',
      'UPDATE products SET',
      'WITH placed AS',
      'COMMIT',
      'UPDATE orders SET',
    ]);
  });

  it('answers a second delivery of the same request with the order written, without placing it twice', async () => {
    const sku = await newProduct();
    const request = { orderId: randomUUID(), customerId: 'c-replay', items: [{ sku, quantity: 2 }], requestHash: 'h' };
    const first = await placeWith(acts, request);
    const again = await placeWith(acts, request);
    expect(again).toEqual(first);
    const product = await database.prisma.product.findUniqueOrThrow({ where: { sku } });
    expect(product).toMatchObject({ reserved: 2, available: 8 });
  });
});
