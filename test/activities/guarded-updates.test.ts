import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createActivities, type Activities } from '../../activities/index.js';
import { cancelWithin } from '../../activities/orders.js';
import type { Placement } from '../../domain/placement.js';
import { FAKE_PAYMENT_ACCOUNT } from '../../dev/fakes/payment-provider.js';
import { recordReceivedPayment, type RecordedPayment, type VerifiedPayment } from '../../store/received-payments.js';
import { FakeFaults } from '../../dev/fakes/faults.js';
import { createFakeThirdParties } from '../../dev/fakes/index.js';
import { findFakePayment } from '../../dev/fakes/payment-provider.js';
import { countFakes } from '../../dev/fakes/recorder.js';
import { realActivities, runActivity as run, placeWith } from '../helpers/activities.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { eventually } from '../helpers/eventually.js';

/** Real concurrency against real PostgreSQL: the guarded updates, not the workflow, decide every race. */
let database: TestDatabase;
let acts: Activities;

beforeAll(async () => {
  database = await createTestDatabase();
  acts = realActivities(database.prisma);
});
afterAll(async () => {
  await database?.drop();
});

async function placedOrder(stock = 10) {
  const sku = `SKU-${randomUUID().slice(0, 8)}`;
  await database.prisma.product.create({
    data: { sku, name: 'Widget', priceCents: 1000, available: stock, stockAdded: stock },
  });
  const order = await placeWith(acts, {
    orderId: randomUUID(),
    customerId: 'c1',
    items: [{ sku, quantity: 2 }],
    requestHash: 'h',
  });
  return { sku, order };
}

/** As the webhook does it: the verified payment is recorded (arriving at `arrivedAt`, default the database's now), then settled from that record. */
async function settle(payment: VerifiedPayment, arrivedAt: Date | null = null) {
  await recordReceivedPayment(database.prisma.pool, payment, arrivedAt, FAKE_PAYMENT_ACCOUNT);
  return run(acts.settlePayment, { paymentId: payment.paymentId, orderId: payment.orderId });
}

async function stockBalances(sku: string) {
  const p = await database.prisma.product.findUniqueOrThrow({ where: { sku } });
  return { ...p, balanced: p.available + p.reserved + p.sold === p.stockAdded };
}

describe('guarded updates under real concurrency', () => {
  it('many parallel cancels and payments on one order: exactly one winner, stock counted once', async () => {
    for (let round = 0; round < 5; round++) {
      const { sku, order } = await placedOrder();
      const cancels = Array.from({ length: 10 }, () =>
        run(acts.cancelOrder, { orderId: order.id, reason: 'CUSTOMER' }),
      );
      const payments = Array.from({ length: 10 }, (_, i) =>
        settle({
          paymentId: `p-${order.id}-${i}`,
          orderId: order.id,
          amountCents: order.totalCents,
          paidAt: new Date().toISOString(),
        }),
      );
      const [cancelResults, paymentResults] = await Promise.all([Promise.all(cancels), Promise.all(payments)]);

      const cancelWins = cancelResults.filter((r) => r.outcome === 'CANCELLED').length;
      const payWins = paymentResults.filter((r) => r.outcome === 'PAID').length;
      expect(cancelWins + payWins).toBe(1);
      const row = await database.prisma.order.findUniqueOrThrow({ where: { id: order.id } });
      expect(row.status).toBe(payWins === 1 ? 'PAID' : 'CANCELLED');
      // Every payment that did not win waits for its refund.
      expect(await database.prisma.payment.count({ where: { orderId: order.id, status: 'REFUND_PENDING' } })).toBe(
        10 - payWins,
      );

      // The winner of a cancel told the customer, once; no loser did.
      expect(
        await countFakes(database.prisma, {
          service: 'notification',
          idempotencyKey: `${order.id}:ORDER_CANCELLED`,
        }),
      ).toEqual(payWins ? { effects: 0, calls: 0 } : { effects: 1, calls: 1 });
      if (!payWins) expect(cancelResults.find((r) => r.outcome === 'CANCELLED')).toMatchObject({ customerTold: true });

      // The winner's statement moved the units once: back to available, or sold.
      const stock = await stockBalances(sku);
      expect(stock.balanced).toBe(true);
      expect(stock).toMatchObject(
        payWins ? { available: 8, reserved: 0, sold: 2 } : { available: 10, reserved: 0, sold: 0 },
      );
    }
  });

  it('orders sharing several products, cancelled and paid all at once, move their units without a deadlock', async () => {
    const skus = Array.from({ length: 4 }, (_, i) => `MULTI-${i}-${randomUUID().slice(0, 8)}`);
    await database.prisma.product.createMany({
      data: skus.map((sku) => ({ sku, name: 'Part', priceCents: 100, available: 1_000, stockAdded: 1_000 })),
    });
    // Each order holds every product; half of them list the products the other way round. (Today's
    // plans would lock the products in SKU order even without moveReservedUnits' explicit lock, by
    // the items' primary key; the lock keeps it so whatever plan PostgreSQL chooses.)
    const orders = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        placeWith(acts, {
          orderId: randomUUID(),
          customerId: `multi-${i}`,
          items: (i % 2 ? [...skus].reverse() : skus).map((sku) => ({ sku, quantity: 1 })),
          requestHash: 'h',
        }),
      ),
    );
    const settled = await Promise.allSettled(
      orders.map((order, i) =>
        i % 2
          ? run(acts.cancelOrder, { orderId: order.id, reason: 'CUSTOMER' })
          : settle({
              paymentId: `multi-${order.id}`,
              orderId: order.id,
              amountCents: order.totalCents,
              paidAt: new Date().toISOString(),
            }),
      ),
    );
    expect(settled.filter((s) => s.status === 'rejected').map((s) => String(s.reason))).toEqual([]);
    for (const sku of skus)
      expect(await stockBalances(sku)).toMatchObject({ available: 980, reserved: 0, sold: 20, balanced: true });
  });

  it('placement takes the products in the order the database locks them, byte order by SKU', async () => {
    // Placement locks products line by line; cancel and pay lock them with ORDER BY sku COLLATE "C".
    // A placement replayed returns its items in that database order, so equal answers mean one
    // lock order. These SKUs sort differently under a locale (SKU_1, sku-1, SKU-2).
    const prefix = randomUUID().slice(0, 8);
    const skus = ['SKU-2', 'sku-1', 'SKU_1'].map((s) => `${prefix}-${s}`);
    await database.prisma.product.createMany({
      data: skus.map((sku) => ({ sku, name: 'Part', priceCents: 100, available: 5, stockAdded: 5 })),
    });
    const request = {
      orderId: randomUUID(),
      customerId: 'c-order',
      items: [...skus].reverse().map((sku) => ({ sku, quantity: 1 })),
      requestHash: 'h',
    };
    const placed = await placeWith(acts, request);
    expect(placed.items.map((i) => i.sku)).toEqual([...skus].sort());
    expect(await placeWith(acts, request)).toEqual(placed);
  });

  it('the same placement delivered in parallel for the last units: every delivery answers the one order', async () => {
    // Two requests with one Idempotency-Key, or an attempt retried while the first still runs: the
    // later ones find the stock taken by the order the first wrote, which is theirs.
    const sku = `SKU-${randomUUID().slice(0, 8)}`;
    await database.prisma.product.create({ data: { sku, name: 'Last', priceCents: 100, available: 2, stockAdded: 2 } });
    const request = { orderId: randomUUID(), customerId: 'c-same', items: [{ sku, quantity: 2 }], requestHash: 'h' };
    const answers = await Promise.allSettled(Array.from({ length: 8 }, () => run(acts.placeOrder, request)));
    expect(answers.filter((a) => a.status === 'rejected').map((a) => String(a.reason))).toEqual([]);
    const written = await database.prisma.order.findUniqueOrThrow({ where: { id: request.orderId } });
    for (const answer of answers)
      expect((answer as PromiseFulfilledResult<Placement>).value).toMatchObject({
        totalCents: written.totalCents,
        expiresAt: written.expiresAt.toISOString(),
      });
    expect(await stockBalances(sku)).toMatchObject({ available: 0, reserved: 2, balanced: true });
  });

  it("a refund's failure that comes before the refund is recorded is judged once it is", async () => {
    const { order } = await placedOrder();
    await run(acts.cancelOrder, { orderId: order.id, reason: 'CUSTOMER' });
    const paymentId = `p-early-failure-${order.id}`;
    await settle({ paymentId, orderId: order.id, amountCents: order.totalCents, paidAt: new Date().toISOString() });
    // Owed back (REFUND_PENDING); the provider has answered the refund (the local one names it after
    // the payment) and its failure arrives before refundPayment records it.
    const failure = { orderId: order.id, paymentId, refundRef: `fake-refund-${paymentId}`, reason: 'card_expired' };
    expect(await run(acts.recordRefundFailedLater, failure)).toEqual({ failed: false, refundInFlight: true });
    expect(await database.prisma.payment.findUniqueOrThrow({ where: { paymentId } })).toMatchObject({
      status: 'REFUND_PENDING',
    });

    await run(acts.refundPayment, paymentId);
    expect(await run(acts.recordRefundFailedLater, failure)).toEqual({ failed: true, refundInFlight: false });
    expect(await database.prisma.payment.findUniqueOrThrow({ where: { paymentId } })).toMatchObject({
      status: 'REFUND_FAILED',
    });
    // Once judged, a redelivery changes nothing and waits for nothing.
    expect(await run(acts.recordRefundFailedLater, failure)).toEqual({ failed: false, refundInFlight: false });
  });

  it('an extension run again (the same extension id) moves the deadline once, even after another; another extension moves it again', async () => {
    const { order } = await placedOrder();
    const extend = (extensionId: string) => run(acts.extendDeadline, { orderId: order.id, minutes: 30, extensionId });
    const first = await extend('update-1');
    expect(Date.parse(first.expiresAt) - Date.parse(order.expiresAt)).toBe(30 * 60_000);
    expect(await extend('update-1')).toEqual(first);
    const second = await extend('update-2');
    expect(Date.parse(second.expiresAt) - Date.parse(first.expiresAt)).toBe(30 * 60_000);
    // The first run again after the second landed: still applied once; the answer is the deadline now.
    expect(await extend('update-1')).toEqual(second);
    // Once the order is no longer unpaid, a new extension is refused; the one applied still answers.
    await run(acts.cancelOrder, { orderId: order.id, reason: 'CUSTOMER' });
    await expect(extend('update-3')).rejects.toMatchObject({ type: 'ORDER_NOT_UNPAID' });
    expect(await extend('update-2')).toEqual(second);
  });

  it('parallel orders for the last units never oversell', async () => {
    const sku = `SKU-${randomUUID().slice(0, 8)}`;
    await database.prisma.product.create({
      data: { sku, name: 'Scarce', priceCents: 100, available: 5, stockAdded: 5 },
    });
    const attempts = await Promise.allSettled(
      Array.from({ length: 12 }, () =>
        placeWith(acts, {
          orderId: randomUUID(),
          customerId: 'c',
          items: [{ sku, quantity: 1 }],
          requestHash: 'h',
        }),
      ),
    );
    expect(attempts.filter((a) => a.status === 'fulfilled')).toHaveLength(5);
    const failures = attempts.filter((a): a is PromiseRejectedResult => a.status === 'rejected');
    expect(failures.every((f) => (f.reason as { type?: string }).type === 'OUT_OF_STOCK')).toBe(true);
    expect(await stockBalances(sku)).toMatchObject({ available: 0, reserved: 5, balanced: true });
  });

  it('a cancel that waited on a payment committing reports the payment, not the order as it was', async () => {
    const { order } = await placedOrder();
    // A payment holds the order's row when the cancel arrives; the cancel waits for it, loses, and
    // must answer with the committed state (its own statement's snapshot still shows UNPAID).
    const payer = await database.prisma.pool.connect();
    try {
      await payer.query('BEGIN');
      await payer.query(`UPDATE orders SET status = 'PAID', paid_at = now() WHERE id = $1`, [order.id]);
      const cancel = run(acts.cancelOrder, { orderId: order.id, reason: 'CUSTOMER' });
      await eventually(async () => {
        const { rowCount } = await database.prisma.pool.query(
          `SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%WITH won AS%' AND datname = current_database()`,
        );
        return rowCount === 1;
      });
      await payer.query('COMMIT');
      expect(await cancel).toEqual({ outcome: 'ALREADY_FINAL', status: 'PAID' });
    } finally {
      payer.release();
    }
  });

  it('the timeout cancel refuses an order whose deadline has not passed by the database clock', async () => {
    const { order } = await placedOrder();
    const result = await run(acts.cancelOrder, { orderId: order.id, reason: 'PAYMENT_TIMEOUT' });
    expect(result).toEqual({ outcome: 'NOT_DUE', expiresAt: order.expiresAt });
    expect((await database.prisma.order.findUniqueOrThrow({ where: { id: order.id } })).status).toBe('UNPAID');
  });
});

describe("the cancel's notice", () => {
  it("the winning cancel answers only what its run and the worker's metric read: told, and the lag past the deadline", async () => {
    const { order } = await placedOrder();
    const result = await run(acts.cancelOrder, { orderId: order.id, reason: 'CUSTOMER' });
    const row = await database.prisma.order.findUniqueOrThrow({ where: { id: order.id } });
    // A customer's cancel comes before the deadline: a negative lag.
    expect(result).toEqual({
      outcome: 'CANCELLED',
      customerTold: true,
      lagMs: row.cancelledAt!.getTime() - row.expiresAt.getTime(),
    });
    expect((result as { lagMs: number }).lagMs).toBeLessThan(0);
  });

  it('a notice the messaging provider fails does not undo or fail the cancel: the answer says it is still owed', async () => {
    const { sku, order } = await placedOrder();
    const faults = new FakeFaults(database.prisma);
    await faults.set('notification', { failNext: 1 });
    try {
      const result = await run(acts.cancelOrder, { orderId: order.id, reason: 'CUSTOMER' });
      expect(result).toMatchObject({ outcome: 'CANCELLED', customerTold: false });
    } finally {
      await faults.set('notification', { failNext: 0 });
    }
    expect((await database.prisma.order.findUniqueOrThrow({ where: { id: order.id } })).status).toBe('CANCELLED');
    expect(await stockBalances(sku)).toMatchObject({ available: 10, reserved: 0, balanced: true });
    expect(
      await countFakes(database.prisma, { service: 'notification', idempotencyKey: `${order.id}:ORDER_CANCELLED` }),
    ).toEqual({ effects: 0, calls: 1 });
  });
});

describe('out-of-order events follow the transition table', () => {
  const notice = (orderId: string, paymentId: string, amountCents: number) => ({
    paymentId,
    orderId,
    amountCents,
    paidAt: new Date().toISOString(),
  });
  const refundsAtProvider = (paymentId: string) =>
    countFakes(database.prisma, { service: 'payments', operation: 'refund', idempotencyKey: paymentId }).then(
      ({ effects }) => effects,
    );

  it('refund before paid: refused, then the payment pays the order, and a refund of a captured payment is refused too', async () => {
    const { order } = await placedOrder();
    const paymentId = `p-${order.id}`;
    expect(await run(acts.refundPayment, paymentId)).toEqual({ refunded: false, status: null }); // nothing to refund yet

    expect(await settle(notice(order.id, paymentId, order.totalCents))).toMatchObject({
      outcome: 'PAID',
    });
    expect(await run(acts.refundPayment, paymentId)).toEqual({ refunded: false, status: 'CAPTURED' }); // CAPTURED → REFUNDED is not in the table

    expect(await database.prisma.payment.findUniqueOrThrow({ where: { paymentId } })).toMatchObject({
      status: 'CAPTURED',
    });
    expect((await database.prisma.order.findUniqueOrThrow({ where: { id: order.id } })).status).toBe('PAID');
    expect(await refundsAtProvider(paymentId)).toBe(0);
  });

  it('paid after refund: the redelivered notice finds REFUNDED and changes nothing', async () => {
    const { order } = await placedOrder();
    const paymentId = `p-${order.id}`;
    await run(acts.cancelOrder, { orderId: order.id, reason: 'CUSTOMER' });
    expect(await settle(notice(order.id, paymentId, order.totalCents))).toMatchObject({
      outcome: 'REFUND_PENDING',
    });
    expect(await run(acts.refundPayment, paymentId)).toEqual({ refunded: true });

    expect(await settle(notice(order.id, paymentId, order.totalCents))).toEqual({
      outcome: 'REFUND_PENDING',
      paymentStatus: 'REFUNDED',
      duplicate: true,
    });
    expect(await run(acts.refundPayment, paymentId)).toEqual({ refunded: true }); // already done: no second refund
    expect(await database.prisma.payment.findUniqueOrThrow({ where: { paymentId } })).toMatchObject({
      status: 'REFUNDED',
    });
    expect((await database.prisma.order.findUniqueOrThrow({ where: { id: order.id } })).status).toBe('CANCELLED');
    expect(await refundsAtProvider(paymentId)).toBe(1);
  });

  it('a cancel arriving after the payment is refused and changes nothing', async () => {
    const { sku, order } = await placedOrder();
    await settle(notice(order.id, `p-${order.id}`, order.totalCents));
    expect(await run(acts.cancelOrder, { orderId: order.id, reason: 'CUSTOMER' })).toEqual({
      outcome: 'ALREADY_FINAL',
      status: 'PAID',
    });
    expect(await stockBalances(sku)).toMatchObject({ available: 8, reserved: 0, sold: 2, balanced: true });
  });
});

describe('a payment is judged by when it arrived', () => {
  it('accepted before the deadline it pays, even if settled after; accepted after it is refunded', async () => {
    const onTime = await placedOrder();
    const late = await placedOrder();
    // Both deadlines passed a moment ago; the webhook had accepted the first payment before that.
    await database.prisma
      .$executeRaw`UPDATE orders SET expires_at = now() - interval '1 second' WHERE id IN (${onTime.order.id}::uuid, ${late.order.id}::uuid)`;
    const notice = (order: { id: string; totalCents: number }) => ({
      paymentId: `p-${order.id}`,
      orderId: order.id,
      amountCents: order.totalCents,
      paidAt: new Date().toISOString(),
    });
    expect(await settle(notice(onTime.order), new Date(Date.now() - 5_000))).toMatchObject({ outcome: 'PAID' });
    expect(await settle(notice(late.order), new Date())).toMatchObject({ outcome: 'REFUND_PENDING' });
    expect(
      await database.prisma.payment.findUniqueOrThrow({ where: { paymentId: `p-${late.order.id}` } }),
    ).toMatchObject({
      refundReason: 'ORDER_NOT_PAYABLE',
    });
  });
});

describe('a payment is decided from the record the webhook made', () => {
  it('a notice naming no recorded payment, or one recorded for another order, changes nothing', async () => {
    const { sku, order } = await placedOrder();
    const other = await placedOrder();
    await recordReceivedPayment(
      database.prisma.pool,
      { paymentId: `p-${other.order.id}`, orderId: other.order.id, amountCents: 1, paidAt: new Date().toISOString() },
      null,
      FAKE_PAYMENT_ACCOUNT,
    );
    expect(await run(acts.settlePayment, { paymentId: `forged-${order.id}`, orderId: order.id })).toEqual({
      outcome: 'NOT_RECEIVED',
    });
    expect(await run(acts.settlePayment, { paymentId: `p-${other.order.id}`, orderId: order.id })).toEqual({
      outcome: 'NOT_RECEIVED',
    });
    expect(await run(acts.settlePayment, { paymentId: 'forged', orderId: 'not-a-uuid' })).toEqual({
      outcome: 'NOT_RECEIVED',
    });
    expect((await database.prisma.order.findUniqueOrThrow({ where: { id: order.id } })).status).toBe('UNPAID');
    expect(await database.prisma.payment.count({ where: { orderId: order.id } })).toBe(0);
    expect(await stockBalances(sku)).toMatchObject({ available: 8, reserved: 2, sold: 0, balanced: true });
  });

  it('the recorded amount decides, and a redelivery keeps the first record', async () => {
    const { order } = await placedOrder();
    const paymentId = `p-${order.id}`;
    const paidAt = new Date().toISOString();
    await recordReceivedPayment(
      database.prisma.pool,
      { paymentId, orderId: order.id, amountCents: 1, paidAt },
      null,
      FAKE_PAYMENT_ACCOUNT,
    );
    // Redelivered with the right amount: the first, signed record stands.
    expect(await settle({ paymentId, orderId: order.id, amountCents: order.totalCents, paidAt })).toMatchObject({
      outcome: 'REFUND_PENDING',
    });
    expect(await database.prisma.payment.findUniqueOrThrow({ where: { paymentId } })).toMatchObject({
      amountCents: 1,
      refundReason: 'AMOUNT_MISMATCH',
    });
    expect((await database.prisma.order.findUniqueOrThrow({ where: { id: order.id } })).status).toBe('UNPAID');
  });
});

describe("a payment recorded while the deadline's cancel runs", () => {
  it('the cancel waits for the record, then loses to a payment that arrived in time', async () => {
    const { sku, order } = await placedOrder();
    const paymentId = `p-${order.id}`;
    const arrivedAt = new Date(Date.parse(order.expiresAt) - 1_000);
    const webhook = await database.prisma.pool.connect();
    try {
      // The webhook's statement has run before the deadline; its commit comes only once the cancel runs.
      await webhook.query('BEGIN');
      const verified = { paymentId, orderId: order.id, amountCents: order.totalCents, paidAt: arrivedAt.toISOString() };
      expect(await recordReceivedPayment(webhook, verified, arrivedAt, FAKE_PAYMENT_ACCOUNT)).toMatchObject({
        known: true,
        refusal: null,
      });
      let cancelDone = false;
      const afterDeadline = new Date(Date.parse(order.expiresAt) + 100);
      const cancel = cancelWithin(
        database.prisma.pool,
        { orderId: order.id, reason: 'PAYMENT_TIMEOUT' },
        afterDeadline,
      );
      void cancel.finally(() => (cancelDone = true)).catch(() => undefined);
      await eventually(async () => {
        const { rows } = await database.prisma.pool.query<{ waiting: number }>(
          `SELECT count(*)::int AS waiting FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`,
        );
        return cancelDone || rows[0]!.waiting > 0;
      });
      await webhook.query('COMMIT');
      expect(await cancel).toEqual({ outcome: 'PAYMENT_RECEIVED', paymentId });
    } finally {
      webhook.release();
    }
    expect((await database.prisma.order.findUniqueOrThrow({ where: { id: order.id } })).status).toBe('UNPAID');
    expect(await run(acts.settlePayment, { paymentId, orderId: order.id })).toMatchObject({ outcome: 'PAID' });
    expect(await stockBalances(sku)).toMatchObject({ available: 8, reserved: 0, sold: 2, balanced: true });
  });

  it('a payment whose record waited on the cancel that took the order first arrived after it: late', async () => {
    const { order } = await placedOrder();
    const { rows } = await database.prisma.pool.query<{ expires_at: Date }>(
      `UPDATE orders SET expires_at = now() + interval '2 seconds' WHERE id = $1 RETURNING expires_at`,
      [order.id],
    );
    const deadline = rows[0]!.expires_at;
    const cancelling = await database.prisma.pool.connect();
    let recording: Promise<RecordedPayment> | undefined;
    try {
      // The deadline's cancel holds the order's row; the webhook's statement starts before the deadline.
      await cancelling.query('BEGIN');
      const afterDeadline = new Date(deadline.getTime() + 100);
      expect(
        await cancelWithin(cancelling, { orderId: order.id, reason: 'PAYMENT_TIMEOUT' }, afterDeadline),
      ).toMatchObject({ outcome: 'CANCELLED' });
      const paidAt = new Date().toISOString();
      recording = recordReceivedPayment(
        database.prisma.pool,
        { paymentId: `p-${order.id}`, orderId: order.id, amountCents: order.totalCents, paidAt },
        null,
        FAKE_PAYMENT_ACCOUNT,
      );
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, deadline.getTime() - Date.now()) + 200));
      await cancelling.query('COMMIT');
    } finally {
      cancelling.release();
    }
    expect(await recording).toMatchObject({ known: true, refusal: null });
    const payment = await database.prisma.payment.findUniqueOrThrow({ where: { paymentId: `p-${order.id}` } });
    // Its arrival is read once the cancel has let go of the row: after the deadline, as the decision was.
    expect(payment.receivedAt.getTime()).toBeGreaterThan(deadline.getTime());
    expect(await run(acts.settlePayment, { paymentId: payment.paymentId, orderId: order.id })).toMatchObject({
      outcome: 'REFUND_PENDING',
    });
  });

  it('a marked payment that is owed back after all (a deadline moved back by hand) no longer refuses the cancel', async () => {
    const { order } = await placedOrder();
    const paymentId = `p-${order.id}`;
    const arrivedAt = new Date(Date.parse(order.expiresAt) - 60_000);
    const paidAt = arrivedAt.toISOString();
    await recordReceivedPayment(
      database.prisma.pool,
      { paymentId, orderId: order.id, amountCents: order.totalCents, paidAt },
      arrivedAt,
      FAKE_PAYMENT_ACCOUNT,
    );
    await database.prisma.pool.query(`UPDATE orders SET expires_at = $2 WHERE id = $1`, [
      order.id,
      new Date(arrivedAt.getTime() - 1_000),
    ]);
    expect(await run(acts.settlePayment, { paymentId, orderId: order.id })).toMatchObject({
      outcome: 'REFUND_PENDING',
    });
    expect(
      await cancelWithin(database.prisma.pool, { orderId: order.id, reason: 'PAYMENT_TIMEOUT' }, arrivedAt),
    ).toMatchObject({ outcome: 'CANCELLED' });
  });
});

describe('a payment created while the order closes', () => {
  /** The activities on a provider that cancels payments, `beforeAnswer` run between its creating a payment and answering. */
  function withCancellableProvider(beforeAnswer: (orderId: string) => Promise<void>): Activities {
    const thirdParties = createFakeThirdParties(database.prisma, 'cancellable');
    const provider = thirdParties.paymentProvider;
    return createActivities({
      db: database.prisma,
      paymentWindowMs: 30 * 60_000,
      paymentAccount: FAKE_PAYMENT_ACCOUNT,
      unclaimedRefundGraceMs: 24 * 3_600_000,
      maxOpenOrdersPerCustomer: 0,
      maxUnpaidUnitsPerProduct: 0,
      ...thirdParties,
      paymentProvider: Object.assign(Object.create(provider) as typeof provider, {
        async createPayment(request: Parameters<typeof provider.createPayment>[0]) {
          const created = await provider.createPayment(request);
          await beforeAnswer(request.orderId);
          return created;
        },
      }),
    });
  }
  const orderRow = (id: string) =>
    database.prisma.order.findUniqueOrThrow({
      where: { id },
      select: { providerPaymentId: true, paymentClientSecret: true },
    });

  it('is never shown when the closing began during the provider’s call, and is cancelled there', async () => {
    const { order } = await placedOrder();
    // A closing that read the order before the payment existed, and so did not close it.
    const acts = withCancellableProvider(async (orderId) => {
      await database.prisma.pool.query('UPDATE orders SET closing_since = now() WHERE id = $1', [orderId]);
    });
    expect(await run(acts.createPayment, order.id)).toBeNull();
    expect(await orderRow(order.id)).toEqual({ providerPaymentId: null, paymentClientSecret: null });
    expect(await findFakePayment(database.prisma.pool, { orderId: order.id })).toMatchObject({ status: 'CANCELLED' });
  });

  it('calls racing to create it all answer the one payment kept, which stays open', async () => {
    const { order } = await placedOrder();
    const acts = withCancellableProvider(async () => undefined);
    const answers = await Promise.all([1, 2, 3, 4].map(() => run(acts.createPayment, order.id)));
    const kept = await orderRow(order.id);
    expect(kept.providerPaymentId).not.toBeNull();
    expect(answers).toEqual(
      answers.map(() => ({ paymentId: kept.providerPaymentId, clientSecret: kept.paymentClientSecret })),
    );
    expect(await findFakePayment(database.prisma.pool, { orderId: order.id })).toMatchObject({ status: 'OPEN' });
  });
});
