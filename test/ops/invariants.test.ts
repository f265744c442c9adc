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
    ...EVENT_CORRUPTIONS(orders),
  };
}

/**
 * One for each outbox invariant, each leaving the others intact: an event lost while its counter
 * moved (a gap), a change whose event says something else (no event for it), and an event of a
 * change never made (the unpaid order announced as paid).
 */
const EVENT_CORRUPTIONS = (orders: CheckedHistory['orders']): Record<string, Prisma.Sql> => ({
  'order-events-numbered-without-gaps': sql`
    WITH last AS (UPDATE orders SET event_seq = event_seq + 1 WHERE id = ${orders.paid}::uuid RETURNING event_seq - 1 AS seq)
    UPDATE order_events SET seq = seq + 1 WHERE order_id = ${orders.paid}::uuid AND seq = (SELECT seq FROM last)`,
  'order-changes-have-events': sql`
    UPDATE order_events SET type = 'order.deadline_extended' WHERE order_id = ${orders.paid}::uuid AND type = 'order.paid'`,
  'order-events-have-changes': appended(orders.unpaid, 'order.paid'),
});

/** An event appended to the order's as its statement would append it: numbered by its counter. */
function appended(orderId: string, type: string, data: Prisma.Sql = sql`'{}'::jsonb`): Prisma.Sql {
  return sql`
    WITH bumped AS (UPDATE orders SET event_seq = event_seq + 1 WHERE id = ${orderId}::uuid RETURNING id, event_seq)
    INSERT INTO order_events (id, order_id, seq, type, data) SELECT gen_random_uuid(), id, event_seq, ${type}, ${data} FROM bumped`;
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
    // Nor has it the event the guarded cancel writes in its statement: that is never given grace either.
    const fresh = await h.checkCorrupted(BUSINESS_INVARIANTS, cancelled(sql`interval '0 seconds'`), 60_000);
    expect(fresh.violations.map((v) => v.invariant).sort()).toEqual([
      'order-changes-have-events',
      'reserved-matches-unpaid-orders',
    ]);
    const strict = await h.checkCorrupted(BUSINESS_INVARIANTS, cancelled(sql`interval '1 hour'`), 60_000);
    expect(strict.violations.map((v) => v.invariant).sort()).toEqual([
      'coupon-locked-only-by-unpaid-order',
      'order-changes-have-events',
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

describe('the outbox invariants', () => {
  it.each(['order-events-numbered-without-gaps', 'order-changes-have-events', 'order-events-have-changes'])(
    '%s alone fails on its corruption',
    async (name) => {
      const report = await h.checkCorrupted(BUSINESS_INVARIANTS, EVENT_CORRUPTIONS(h.orders)[name]!);
      expect(report.violations.map((v) => v.invariant)).toEqual([name]);
    },
  );

  /** One more case each for what the invariants read besides an order's own status. */
  const cases: Array<[string, (h: CheckedHistory) => Prisma.Sql, string]> = [
    [
      'an event of an order that does not exist',
      () => sql`INSERT INTO order_events (id, order_id, seq, type, data)
                VALUES (gen_random_uuid(), gen_random_uuid(), 1, 'order.placed', '{}')`,
      'order-events-have-changes',
    ],
    [
      'an event of no known type',
      ({ orders }) => appended(orders.unpaid, 'order.shipped'),
      'order-events-have-changes',
    ],
    ['a second order.placed', ({ orders }) => appended(orders.unpaid, 'order.placed'), 'order-events-have-changes'],
    [
      'a payment reminder of an order never reminded',
      ({ orders }) => appended(orders.unpaid, 'order.payment_reminder'),
      'order-events-have-changes',
    ],
    [
      'an order reminded without its event',
      ({ orders }) => sql`UPDATE orders SET reminded_at = now() WHERE id = ${orders.unpaid}::uuid`,
      'order-changes-have-events',
    ],
    [
      'a refund announced for a payment that paid the order',
      ({ orders, payments }) =>
        appended(orders.paid, 'order.refunded', sql`jsonb_build_object('paymentId', ${payments.captured}::text)`),
      'order-events-have-changes',
    ],
    [
      'a refund announced as failed while the payment stands REFUNDED',
      ({ orders, payments }) =>
        appended(
          orders.cancelled,
          'order.refund_failed',
          sql`jsonb_build_object('paymentId', ${payments.refunded}::text)`,
        ),
      'order-changes-have-events',
    ],
    [
      'a step announced done twice',
      ({ orders }) =>
        appended(orders.paid, 'order.fulfillment_step_done', sql`jsonb_build_object('step', 'invoice'::text)`),
      'order-events-have-changes',
    ],
    [
      'a step of an order that has none',
      ({ orders }) =>
        appended(orders.unpaid, 'order.fulfillment_step_done', sql`jsonb_build_object('step', 'invoice'::text)`),
      'order-events-have-changes',
    ],
    [
      'a step done without its event',
      ({ orders }) =>
        sql`UPDATE order_events SET data = data || '{"step": "shipping"}' WHERE order_id = ${orders.paid}::uuid
            AND type = 'order.fulfillment_step_done' AND data->>'step' = 'loyalty'`,
      'order-changes-have-events',
    ],
    [
      'a counter ahead of the events (an event lost after its bump)',
      ({ orders }) => sql`UPDATE orders SET event_seq = event_seq + 1 WHERE id = ${orders.cancelled}::uuid`,
      'order-events-numbered-without-gaps',
    ],
  ];
  it.each(cases)('%s fails', async (_, corrupt, invariant) => {
    const report = await h.checkCorrupted(BUSINESS_INVARIANTS, corrupt(h));
    expect(report.violations.map((v) => v.invariant)).toContain(invariant);
  });
});
