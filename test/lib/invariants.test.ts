import { randomUUID } from 'node:crypto';
import { Prisma } from '@prisma/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Activities } from '../../activities/index.js';
import { checkInvariants, INVARIANTS, type InvariantReport } from '../../lib/invariants.js';
import { realActivities, runActivity as run } from '../helpers/activities.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';

/**
 * The checker against a real database: a history written by the real activities passes, and each
 * invariant fails when the data it guards is corrupted (inside a transaction that is rolled back,
 * so every case starts from the same clean history).
 */
let database: TestDatabase;
let acts: Activities;

const sku = `SKU-${randomUUID().slice(0, 8)}`;
const coupons = { paid: `PAID-${sku}`, cancelled: `CANC-${sku}`, unpaid: `UNPD-${sku}` };
/** paid: paid with a coupon and fulfilled; cancelled: cancelled with a coupon, then paid late (refunded); unpaid: waiting, with a coupon. */
const orders = { paid: randomUUID(), cancelled: randomUUID(), unpaid: randomUUID() };
const payments = { captured: `pay-${orders.paid}`, refunded: `pay-late-${orders.cancelled}` };

beforeAll(async () => {
  database = await createTestDatabase();
  const db = database.prisma;
  acts = realActivities(db);
  await db.product.create({ data: { sku, name: 'Widget', priceCents: 1000, available: 10, stockAdded: 10 } });
  await db.coupon.createMany({ data: Object.values(coupons).map((code) => ({ code, discountCents: 100 })) });
  const place = (orderId: string, couponCode?: string) =>
    run(acts.placeOrder, { orderId, customerId: 'c1', items: [{ sku, quantity: 2 }], couponCode, requestHash: orderId });

  const paid = await place(orders.paid, coupons.paid);
  await run(acts.settlePayment, { paymentId: payments.captured, orderId: paid.id, amountCents: paid.totalCents, paidAt: new Date().toISOString() });
  await run(acts.issueInvoice, paid.id);
  await run(acts.sendPaymentNotification, paid.id);
  await run(acts.awardLoyaltyPoints, paid.id);

  const cancelled = await place(orders.cancelled, coupons.cancelled);
  await run(acts.cancelOrder, { orderId: cancelled.id, reason: 'CUSTOMER' });
  await run(acts.releaseStock, cancelled.id);
  await run(acts.releaseCoupon, cancelled.id);
  await run(acts.closePaymentIntent, cancelled.id);
  await run(acts.notifyCustomer, { orderId: cancelled.id, template: 'ORDER_CANCELLED' });
  await run(acts.settlePayment, { paymentId: payments.refunded, orderId: cancelled.id, amountCents: cancelled.totalCents, paidAt: new Date().toISOString() });
  await run(acts.refundPayment, payments.refunded);

  await place(orders.unpaid, coupons.unpaid);
});
afterAll(async () => {
  await database?.drop();
});

class RolledBack extends Error {}

/** Runs the checker on the data as `corrupt` leaves it, then rolls the corruption back. */
async function checkCorrupted(corrupt: Prisma.Sql, graceMs = 0): Promise<InvariantReport> {
  let report: InvariantReport | undefined;
  await database.prisma
    .$transaction(
      async (tx) => {
        await tx.$executeRaw(corrupt);
        report = await checkInvariants(tx, { graceMs });
        throw new RolledBack();
      },
      { timeout: 20_000 },
    )
    .catch((err: unknown) => {
      if (!(err instanceof RolledBack)) throw err;
    });
  return report!;
}

const sql = Prisma.sql;
/** One corruption per invariant: what a bug (a lost update, a duplicate effect, a missed compensation) would leave behind. */
const CORRUPTIONS: Record<string, Prisma.Sql> = {
  'stock-adds-up': sql`UPDATE products SET available = available + 1 WHERE sku = ${sku}`,
  'reserved-matches-unpaid-orders': sql`UPDATE products SET available = available - 1, reserved = reserved + 1 WHERE sku = ${sku}`,
  'sold-matches-paid-orders': sql`UPDATE products SET available = available - 1, sold = sold + 1 WHERE sku = ${sku}`,
  'order-status-matches-timestamps': sql`UPDATE orders SET cancelled_at = now() WHERE id = ${orders.paid}::uuid`,
  'no-unpaid-past-deadline': sql`UPDATE orders SET expires_at = now() - interval '1 hour' WHERE id = ${orders.unpaid}::uuid`,
  'cancelled-stock-released': sql`UPDATE orders SET stock_released_at = NULL WHERE id = ${orders.cancelled}::uuid`,
  'payment-intent-closed-once': sql`DELETE FROM fakes.effects WHERE operation = 'closeIntent' AND idempotency_key = ${orders.cancelled}`,
  'cancellation-notified-once': sql`
    INSERT INTO fakes.effects (service, operation, idempotency_key, payload)
    VALUES ('notification', 'ORDER_CANCELLED', ${orders.paid} || ':ORDER_CANCELLED', '{}')`,
  'losing-payments-refunded': sql`
    INSERT INTO payments (payment_id, order_id, amount_cents, status, paid_at, received_at, refund_reason)
    VALUES ('pay-forgotten', ${orders.unpaid}::uuid, 1, 'REFUND_PENDING', now(), now() - interval '1 hour', 'AMOUNT_MISMATCH')`,
  'refunded-once': sql`DELETE FROM fakes.effects WHERE operation = 'refund' AND idempotency_key = ${payments.refunded}`,
  'captured-never-refunded': sql`
    INSERT INTO fakes.effects (service, operation, idempotency_key, payload) VALUES ('payments', 'refund', ${payments.captured}, '{}')`,
  'paid-order-one-captured-payment': sql`
    INSERT INTO payments (payment_id, order_id, amount_cents, status, paid_at)
    SELECT 'pay-twice', id, total_cents, 'CAPTURED', now() FROM orders WHERE id = ${orders.paid}::uuid`,
  'coupon-locked-only-by-unpaid-order': sql`UPDATE coupons SET status = 'LOCKED', order_id = ${orders.cancelled}::uuid WHERE code = ${coupons.cancelled}`,
  'coupon-redeemed-only-by-paid-order': sql`UPDATE coupons SET status = 'REDEEMED', order_id = ${orders.cancelled}::uuid WHERE code = ${coupons.cancelled}`,
  'fulfillment-steps-owed': sql`INSERT INTO fulfillment_steps (order_id, step) VALUES (${orders.cancelled}::uuid, 'INVOICE')`,
  'fulfillment-effect-once': sql`DELETE FROM fakes.effects WHERE service = 'invoice' AND idempotency_key = ${orders.paid} || ':INVOICE'`,
};

describe('checkInvariants', () => {
  it('passes on a history written by the real activities, and counts it', async () => {
    const report = await checkInvariants(database.prisma, { graceMs: 0 });
    expect(report.violations).toEqual([]);
    expect(report.ok).toBe(true);
    expect(report.counts).toMatchObject({ orders: 3, paid: 1, cancelled: 1, unpaid: 1, payments: 2, captured: 1, refunded: 1, refunds: 1, fulfillmentEffects: 3 });
  });

  it('has a corruption case for every invariant', () => {
    expect(Object.keys(CORRUPTIONS).sort()).toEqual(INVARIANTS.map((i) => i.name).sort());
  });

  it.each(INVARIANTS.map((i) => i.name))('%s fails when its data is corrupted', async (name) => {
    const report = await checkCorrupted(CORRUPTIONS[name]!);
    expect(report.ok).toBe(false);
    expect(report.results.find((r) => r.invariant === name)?.violations, JSON.stringify(report.violations)).toBeGreaterThan(0);
  });

  it('gives asynchronous work its grace: a fresh cancellation without compensation yet is not a violation', async () => {
    const report = await checkCorrupted(sql`
      UPDATE orders SET status = 'CANCELLED', cancelled_at = now(), cancel_reason = 'CUSTOMER' WHERE id = ${orders.unpaid}::uuid`, 60_000);
    expect(report.violations).toEqual([]);
    const strict = await checkCorrupted(sql`
      UPDATE orders SET status = 'CANCELLED', cancelled_at = now() - interval '1 hour', cancel_reason = 'CUSTOMER' WHERE id = ${orders.unpaid}::uuid`, 60_000);
    expect(strict.violations.map((v) => v.invariant).sort()).toEqual([
      'cancellation-notified-once',
      'cancelled-stock-released',
      'coupon-locked-only-by-unpaid-order',
      'payment-intent-closed-once',
    ]);
  });

  it('gives a timer that just fell due and a refund just owed their grace too', async () => {
    const dueAndOwed = (ago: Prisma.Sql) => sql`
      WITH due AS (UPDATE orders SET expires_at = now() - ${ago} WHERE id = ${orders.unpaid}::uuid RETURNING id)
      INSERT INTO payments (payment_id, order_id, amount_cents, status, paid_at, received_at, refund_reason)
      SELECT 'pay-owed', id, 1, 'REFUND_PENDING', now(), now() - ${ago}, 'AMOUNT_MISMATCH' FROM due`;
    expect((await checkCorrupted(dueAndOwed(sql`interval '10 seconds'`), 60_000)).violations).toEqual([]);
    const strict = await checkCorrupted(dueAndOwed(sql`interval '1 hour'`), 60_000);
    expect(strict.violations.map((v) => v.invariant).sort()).toEqual(['losing-payments-refunded', 'no-unpaid-past-deadline']);
  });
});
