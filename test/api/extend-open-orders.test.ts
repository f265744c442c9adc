import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { extendOpenOrders } from '../../api/routes/extend-open-orders.js';
import { orderWorkflowId } from '../../domain/messages.js';
import { OrderExpiresAtKey } from '../../domain/search-attributes.js';
import { createDb } from '../../lib/db.js';
import { createLogger } from '../../lib/logger.js';
import { inTransaction } from '../../lib/sql.js';
import { placeOrder, seedCatalog } from '../helpers/catalog.js';
import { eventually } from '../helpers/eventually.js';
import { startOrderHarness, type OrderHarness } from '../helpers/order-harness.js';

/** POST /orders/extend: every open order's deadline moved in one statement, the workflows catching up at their timers. */
const MINUTE = 60_000;
/** How long the bulk extend waits on a lock in the last test: well past its pool's 200-ms bound. */
const EXTEND_WAITS_MS = 1_000;
let h: OrderHarness;

beforeAll(async () => {
  h = await startOrderHarness({ taskQueue: 'orders-extend-open' });
});
afterAll(async () => {
  await h?.close();
});

const later = (iso: string, ms: number) => new Date(Date.parse(iso) + ms).toISOString();
const expiresAtInDb = async (id: string) =>
  (await h.db.order.findUniqueOrThrow({ where: { id } })).expiresAt.toISOString();
/** What the Web UI filters by; read without letting the time-skipping server skip. */
const expiresAtAttribute = async (id: string) =>
  (await h.clockStoppedClient.workflow.getHandle(orderWorkflowId(id)).describe()).typedSearchAttributes
    .get(OrderExpiresAtKey)
    ?.toISOString();
const finished = (id: string) => h.env.client.workflow.getHandle(orderWorkflowId(id)).result();

describe('POST /orders/extend', () => {
  it("moves a customer's open orders only; each run learns its deadline at its timer, and OrderExpiresAt follows", async () => {
    const { sku } = await seedCatalog(h, { stock: 10 });
    const held = `held-${randomUUID()}`;
    const [a, b, paid] = [
      await placeOrder(h, { sku, quantity: 1, customerId: held }),
      await placeOrder(h, { sku, quantity: 1, customerId: held }),
      await placeOrder(h, { sku, quantity: 1, customerId: held }),
    ];
    const other = await placeOrder(h, { sku, quantity: 1, customerId: `other-${randomUUID()}` });
    expect((await h.pay({ paymentId: `pay-${paid.id}`, orderId: paid.id, amountCents: paid.totalCents })).status).toBe(
      202,
    );
    // Without letting the server skip time: a skip now would pass the other orders' deadlines.
    const paidRun = h.clockStoppedClient.workflow.getHandle(orderWorkflowId(paid.id));
    expect((await paidRun.result()).status).toBe('PAID');

    const res = await h.admin('POST', '/orders/extend', { minutes: 10, customerId: held });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ extended: 2, minutes: 10 });
    expect(await expiresAtInDb(a.id)).toBe(later(a.expiresAt, 10 * MINUTE));
    expect(await expiresAtInDb(b.id)).toBe(later(b.expiresAt, 10 * MINUTE));
    expect(await expiresAtInDb(paid.id)).toBe(paid.expiresAt);
    expect(await expiresAtInDb(other.id)).toBe(other.expiresAt);
    // Not signalled yet: still the deadline it was placed with, which the attribute shows to within a
    // second (given at start as the API expected it; rewritten at placement only beyond that).
    expect(Math.abs(Date.parse((await expiresAtAttribute(a.id))!) - Date.parse(a.expiresAt))).toBeLessThan(1000);

    await h.env.sleep(31 * MINUTE); // past the old deadlines
    await eventually(async () => (await expiresAtAttribute(a.id)) === later(a.expiresAt, 10 * MINUTE));
    await eventually(async () => (await expiresAtAttribute(b.id)) === later(b.expiresAt, 10 * MINUTE));
    expect((await h.db.order.findUniqueOrThrow({ where: { id: a.id } })).status).toBe('UNPAID');
    expect((await finished(other.id)).status).toBe('CANCELLED');

    const end = await finished(a.id);
    expect(end).toMatchObject({ status: 'CANCELLED', cancelReason: 'PAYMENT_TIMEOUT' });
    const row = await h.db.order.findUniqueOrThrow({ where: { id: a.id } });
    expect(row.cancelledAt!.getTime()).toBeGreaterThanOrEqual(Date.parse(later(a.expiresAt, 10 * MINUTE)));
  });

  it('expiringBefore narrows it; bad input is a clear 400, a customer is refused, and neither moves anything', async () => {
    const { sku } = await seedCatalog(h, { stock: 10 });
    const customerId = `narrow-${randomUUID()}`;
    const order = await placeOrder(h, { sku, quantity: 1, customerId });
    const extend = (body: unknown) => h.admin('POST', '/orders/extend', body);

    expect((await extend({ minutes: 5, customerId, expiringBefore: order.expiresAt })).body).toEqual({
      extended: 0,
      minutes: 5,
    });
    for (const bad of [
      { minutes: 0 },
      { minutes: 1.5 },
      { minutes: 7 * 24 * 60 + 1 },
      { minutes: 5, expiringBefore: 'tomorrow' },
      { minutes: 5, customerId: '' },
      { minutes: 5, status: 'PAID' },
      {},
    ]) {
      const refused = await extend(bad);
      expect(refused.status, JSON.stringify(bad)).toBe(400);
      expect(refused.body.error.code).toBe('VALIDATION_FAILED');
    }
    expect((await h.asCustomer(customerId, 'POST', '/orders/extend', { minutes: 5 })).status).toBe(401);
    expect(await expiresAtInDb(order.id)).toBe(order.expiresAt);

    const moved = await extend({ minutes: 5, customerId, expiringBefore: later(order.expiresAt, 1_000) });
    expect(moved.body).toEqual({ extended: 1, minutes: 5 });
    expect(await expiresAtInDb(order.id)).toBe(later(order.expiresAt, 5 * MINUTE));
  });

  it("runs past the pools' statement_timeout, under an allowance of its own", async () => {
    const { sku } = await seedCatalog(h, { stock: 10 });
    const customerId = `slow-${randomUUID()}`;
    const order = await placeOrder(h, { sku, quantity: 1, customerId });
    // A pool bounded far below how long the statement will wait for a lock on the orders.
    const bounded = createDb(h.databaseUrl, { statementTimeoutMs: 200 });
    try {
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      let locked!: () => void;
      const isLocked = new Promise<void>((resolve) => (locked = resolve));
      const holder = inTransaction(h.db.pool, async (tx) => {
        await tx.query('LOCK TABLE orders IN SHARE MODE');
        locked();
        await held;
      });
      await isLocked;
      // The bound, on any other statement that waits for the lock: query_canceled.
      await expect(
        bounded.pool.query('UPDATE orders SET expires_at = expires_at WHERE id = $1', [order.id]),
      ).rejects.toMatchObject({ code: '57014' });
      const extending = extendOpenOrders(
        { body: { minutes: 5, customerId }, caller: { role: 'operator' }, localPort: 0 },
        { db: bounded, logger: createLogger('test', 'silent') },
      );
      await sleep(EXTEND_WAITS_MS);
      release();
      await holder;
      expect(await extending).toEqual({ extended: 1, minutes: 5 });
      expect(await expiresAtInDb(order.id)).toBe(later(order.expiresAt, 5 * MINUTE));
    } finally {
      await bounded.$disconnect();
    }
  });

  it('leaves alone an order whose deadline passes while the statement waits for its row', async () => {
    const { sku } = await seedCatalog(h, { stock: 10 });
    const customerId = `passing-${randomUUID()}`;
    const order = await placeOrder(h, { sku, quantity: 1, customerId });
    const { rows } = await h.db.pool.query<{ expires_at: Date }>(
      `UPDATE orders SET expires_at = now() + interval '1 second' WHERE id = $1 RETURNING expires_at`,
      [order.id],
    );
    const deadline = rows[0]!.expires_at;
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let written!: () => void;
    const isWritten = new Promise<void>((resolve) => (written = resolve));
    // Another write on the order's row (a payment's record, a cancel) while the statement runs.
    const writer = inTransaction(h.db.pool, async (tx) => {
      await tx.query('UPDATE orders SET expires_at = expires_at WHERE id = $1', [order.id]);
      written();
      await held;
    });
    await isWritten;
    const extending = extendOpenOrders(
      { body: { minutes: 5, customerId }, caller: { role: 'operator' }, localPort: 0 },
      { db: h.db, logger: createLogger('test', 'silent') },
    );
    await sleep(Math.max(0, deadline.getTime() - Date.now()) + 300);
    release();
    await writer;
    expect(await extending).toEqual({ extended: 0, minutes: 5 });
    expect(await expiresAtInDb(order.id)).toBe(deadline.toISOString());
  });
});
