import { Prisma } from '@prisma/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BUSINESS_INVARIANTS, checkInvariants, countRows } from '../../ops/invariants.js';
import { writeCheckedHistory, type CheckedHistory } from '../helpers/checked-history.js';

/**
 * The business invariants against a real database: a history written by the real activities
 * passes, and each invariant fails when the data it guards is corrupted (inside a transaction that
 * is rolled back, so every case starts from the same clean history).
 */
let h: CheckedHistory;

beforeAll(async () => {
  h = await writeCheckedHistory();
});
afterAll(async () => {
  await h?.database.drop();
});

const sql = Prisma.sql;
/** One corruption per invariant: what a bug (a lost update, a missed compensation) would leave behind. */
function corruptions({ sku, orders, payments, coupons }: CheckedHistory): Record<string, Prisma.Sql> {
  return {
    'stock-adds-up': sql`UPDATE products SET available = available + 1 WHERE sku = ${sku}`,
    'reserved-matches-unpaid-orders': sql`UPDATE products SET available = available - 1, reserved = reserved + 1 WHERE sku = ${sku}`,
    'sold-matches-paid-orders': sql`UPDATE products SET available = available - 1, sold = sold + 1 WHERE sku = ${sku}`,
    'order-status-matches-timestamps': sql`UPDATE orders SET cancelled_at = now() WHERE id = ${orders.paid}::uuid`,
    'no-unpaid-past-deadline': sql`UPDATE orders SET expires_at = now() - interval '1 hour' WHERE id = ${orders.unpaid}::uuid`,
    'losing-payments-refunded': sql`
      INSERT INTO payments (payment_id, order_id, amount_cents, status, paid_at, received_at, refund_reason)
      VALUES ('pay-forgotten', ${orders.unpaid}::uuid, 1, 'REFUND_PENDING', now(), now() - interval '1 hour', 'AMOUNT_MISMATCH')`,
    'refunded-once': sql`DELETE FROM refunds WHERE payment_id = ${payments.refunded}`,
    'captured-never-refunded': sql`
      INSERT INTO refunds (payment_id, amount_cents, provider_ref)
      SELECT payment_id, amount_cents, 'ref-wrong' FROM payments WHERE payment_id = ${payments.captured}`,
    // A payment in another currency than its order's, captured as if it were the order's own money.
    'only-own-money-captured': sql`
      WITH o AS (UPDATE orders SET currency = 'eur' WHERE id = ${orders.paid}::uuid)
      UPDATE payments SET currency = 'usd' WHERE payment_id = ${payments.captured}`,
    // Money for no order of ours, its grace long past, never refunded.
    'unclaimed-money-accounted': sql`
      INSERT INTO unclaimed_payments (payment_id, amount_cents, currency, livemode, received_at, refund_due_at)
      VALUES ('pi-unclaimed-forgotten', 1500, 'eur', false, now() - interval '2 days', now() - interval '1 day')`,
    'paid-order-one-captured-payment': sql`
      INSERT INTO payments (payment_id, order_id, amount_cents, status, paid_at)
      SELECT 'pay-twice', id, total_cents, 'CAPTURED', now() FROM orders WHERE id = ${orders.paid}::uuid`,
    'coupon-locked-only-by-unpaid-order': sql`UPDATE coupons SET status = 'LOCKED', order_id = ${orders.cancelled}::uuid WHERE code = ${coupons.cancelled}`,
    'coupon-redeemed-only-by-paid-order': sql`UPDATE coupons SET status = 'REDEEMED', order_id = ${orders.cancelled}::uuid WHERE code = ${coupons.cancelled}`,
    'coupon-used-by-its-customer': sql`UPDATE coupons SET customer_id = 'someone-else' WHERE code = ${coupons.paid}`,
    'fulfillment-steps-owed': sql`INSERT INTO fulfillment_steps (order_id, step) VALUES (${orders.cancelled}::uuid, 'INVOICE')`,
  };
}

describe('business invariants', () => {
  it('pass on a history written by the real activities, and count it', async () => {
    const report = await checkInvariants(h.database.prisma, BUSINESS_INVARIANTS, { graceMs: 0 });
    expect(report.violations).toEqual([]);
    expect(report.ok).toBe(true);
    expect(await countRows(h.database.prisma)).toMatchObject({
      orders: 3,
      paid: 1,
      cancelled: 1,
      unpaid: 1,
      payments: 2,
      captured: 1,
      refunded: 1,
      refunds: 1,
    });
  });

  it('run on a database without the fakes (a deployment with real providers), and pass there', async () => {
    const report = await h.checkCorrupted(BUSINESS_INVARIANTS, sql`DROP SCHEMA fakes CASCADE`);
    expect(report.violations).toEqual([]);
    expect(report.results).toHaveLength(BUSINESS_INVARIANTS.length);
  });

  it('have a corruption case each', () => {
    expect(Object.keys(corruptions(h)).sort()).toEqual(BUSINESS_INVARIANTS.map((i) => i.name).sort());
  });

  it.each(BUSINESS_INVARIANTS.map((i) => i.name))('%s fails when its data is corrupted', async (name) => {
    const report = await h.checkCorrupted(BUSINESS_INVARIANTS, corruptions(h)[name]!);
    expect(report.ok).toBe(false);
    expect(
      report.results.find((r) => r.invariant === name)?.violations,
      JSON.stringify(report.violations),
    ).toBeGreaterThan(0);
  });

  it('give no grace to what the guarded cancel does in its own statement, and grace to what follows it', async () => {
    // A cancellation written by hand, without the releases the guarded cancel makes in the same statement.
    const cancelled = (ago: Prisma.Sql) => sql`
      UPDATE orders SET status = 'CANCELLED', cancelled_at = now() - ${ago}, cancel_reason = 'CUSTOMER' WHERE id = ${h.orders.unpaid}::uuid`;
    const fresh = await h.checkCorrupted(BUSINESS_INVARIANTS, cancelled(sql`interval '0 seconds'`), 60_000);
    expect(fresh.violations.map((v) => v.invariant)).toEqual(['reserved-matches-unpaid-orders']);
    const strict = await h.checkCorrupted(BUSINESS_INVARIANTS, cancelled(sql`interval '1 hour'`), 60_000);
    expect(strict.violations.map((v) => v.invariant).sort()).toEqual([
      'coupon-locked-only-by-unpaid-order',
      'reserved-matches-unpaid-orders',
    ]);
  });

  it('give a payment the webhook recorded grace to be decided, and flag one left undecided', async () => {
    const received = (ago: Prisma.Sql) => sql`
      INSERT INTO payments (payment_id, order_id, amount_cents, status, paid_at, received_at)
      VALUES ('pay-received', ${h.orders.unpaid}::uuid, 1, 'RECEIVED', now(), now() - ${ago})`;
    expect(
      (await h.checkCorrupted(BUSINESS_INVARIANTS, received(sql`interval '10 seconds'`), 60_000)).violations,
    ).toEqual([]);
    const stuck = await h.checkCorrupted(BUSINESS_INVARIANTS, received(sql`interval '1 hour'`), 60_000);
    expect(stuck.violations.map((v) => v.invariant)).toEqual(['losing-payments-refunded']);
  });

  it('give a timer that just fell due and a refund just owed their grace too', async () => {
    const dueAndOwed = (ago: Prisma.Sql) => sql`
      WITH due AS (UPDATE orders SET expires_at = now() - ${ago} WHERE id = ${h.orders.unpaid}::uuid RETURNING id)
      INSERT INTO payments (payment_id, order_id, amount_cents, status, paid_at, received_at, refund_reason)
      SELECT 'pay-owed', id, 1, 'REFUND_PENDING', now(), now() - ${ago}, 'AMOUNT_MISMATCH' FROM due`;
    expect(
      (await h.checkCorrupted(BUSINESS_INVARIANTS, dueAndOwed(sql`interval '10 seconds'`), 60_000)).violations,
    ).toEqual([]);
    const strict = await h.checkCorrupted(BUSINESS_INVARIANTS, dueAndOwed(sql`interval '1 hour'`), 60_000);
    expect(strict.violations.map((v) => v.invariant).sort()).toEqual([
      'losing-payments-refunded',
      'no-unpaid-past-deadline',
    ]);
  });
});
