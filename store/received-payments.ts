import { Prisma } from '@prisma/client';
import { statusIn, statusValue } from './guarded-sql.js';
import { INITIAL_STATUS, ORDER_TRANSITIONS } from '../domain/statuses.js';
import { query, type Queryable } from '../lib/sql.js';

/** A payment as the provider's signature vouches for it. */
export interface VerifiedPayment {
  paymentId: string;
  orderId: string;
  amountCents: number;
  /** ISO-8601, as the provider reports it. */
  paidAt: string;
}

/**
 * The record every settlement decides from, written by the webhook once the signature is checked:
 * RECEIVED, with the signed amount and the arrival time (`arrivedAt`, or the database's clock).
 * A redelivery of the same paymentId keeps the first record. False when no such order exists.
 *
 * A payment of the order's total that arrives before the deadline of an UNPAID order pays it, so
 * the same statement marks the order (`payment_in_time_id`, the first such payment): the guarded
 * cancel (activities/orders.ts) is refused by that mark. The statement takes the order's row first
 * and reads the arrival time only once it holds it, so the record and the cancel are decided in one
 * order: a cancel that took the row first wins, and the payment arrived after it, late; one that
 * came while this statement held the row waits for it, then sees the mark and loses.
 */
export async function recordReceivedPayment(
  on: Queryable,
  payment: VerifiedPayment,
  arrivedAt: Date | null,
): Promise<boolean> {
  const { rows } = await query<{ known: boolean }>(
    on,
    Prisma.sql`
      WITH target AS (SELECT id FROM orders WHERE id = ${payment.orderId}::uuid FOR NO KEY UPDATE),
      recorded AS (
        INSERT INTO payments (payment_id, order_id, amount_cents, status, paid_at, received_at)
        SELECT ${payment.paymentId}, id, ${payment.amountCents}, ${statusValue('payments', INITIAL_STATUS.payment)},
               ${new Date(payment.paidAt)}, COALESCE(${arrivedAt}::timestamptz, clock_timestamp())
        FROM target
        ON CONFLICT (payment_id) DO NOTHING
        RETURNING payment_id, order_id, amount_cents, received_at),
      in_time AS (
        UPDATE orders o SET payment_in_time_id = r.payment_id
        FROM recorded r
        WHERE o.id = r.order_id AND o.payment_in_time_id IS NULL AND ${statusIn('orders', ORDER_TRANSITIONS.pay.from)}
          AND r.received_at < o.expires_at AND r.amount_cents = o.total_cents)
      SELECT EXISTS (SELECT 1 FROM target) AS known`,
  );
  return rows[0]!.known;
}
