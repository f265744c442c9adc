import { Prisma } from '@prisma/client';
import { statusValue } from './guarded-sql.js';
import { INITIAL_STATUS } from '../domain/statuses.js';
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
 * RECEIVED, with the signed amount and the arrival time (`arrivedAt`, or the database's now()).
 * A redelivery of the same paymentId keeps the first record. False when no such order exists.
 */
export async function recordReceivedPayment(
  on: Queryable,
  payment: VerifiedPayment,
  arrivedAt: Date | null,
): Promise<boolean> {
  const { rows } = await query<{ known: boolean }>(
    on,
    Prisma.sql`
      WITH target AS (SELECT id FROM orders WHERE id = ${payment.orderId}::uuid),
      recorded AS (
        INSERT INTO payments (payment_id, order_id, amount_cents, status, paid_at, received_at)
        SELECT ${payment.paymentId}, id, ${payment.amountCents}, ${statusValue('payments', INITIAL_STATUS.payment)},
               ${new Date(payment.paidAt)}, COALESCE(${arrivedAt}::timestamptz, now())
        FROM target
        ON CONFLICT (payment_id) DO NOTHING)
      SELECT EXISTS (SELECT 1 FROM target) AS known`,
  );
  return rows[0]!.known;
}
