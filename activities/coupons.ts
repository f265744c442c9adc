import { Prisma } from '@prisma/client';
import { COUPON_TRANSITIONS } from '../domain/statuses.js';
import { query, type Queryable } from '../lib/sql.js';
import { statusMove } from '../store/guarded-sql.js';

/**
 * Locks the coupon `code` for the order, in the placement's transaction: only an AVAILABLE coupon
 * that is open to anyone or bound to the order's own customer moves. null when none did: an unknown
 * code, one in use, and another customer's code are one answer, so a refusal never tells a customer
 * that someone else's code exists.
 */
export async function lockCoupon(
  tx: Queryable,
  code: string,
  order: { orderId: string; customerId: string },
): Promise<{ discountCents: number } | null> {
  const lock = statusMove('coupons', COUPON_TRANSITIONS.lock);
  const { rows } = await query<{ discount_cents: number }>(
    tx,
    Prisma.sql`
      UPDATE coupons SET ${lock.set}, order_id = ${order.orderId}::uuid, updated_at = now()
      WHERE code = ${code} AND ${lock.guard} AND (customer_id IS NULL OR customer_id = ${order.customerId})
      RETURNING discount_cents`,
  );
  return rows.length === 0 ? null : { discountCents: rows[0]!.discount_cents };
}

/**
 * A WITH-query entry that makes the coupons still LOCKED by the orders in `orders` (an earlier
 * WITH query returning their `id`) usable again. Only a coupon still locked by that order moves.
 */
export function releaseLockedCoupons(orders: string): Prisma.Sql {
  const release = statusMove('coupons', COUPON_TRANSITIONS.release);
  return Prisma.sql`
    coupons_released AS (
      UPDATE coupons c SET ${release.set}, order_id = NULL, updated_at = now()
      FROM ${Prisma.raw(orders)} r
      WHERE c.order_id = r.id AND ${release.guard}
      RETURNING c.code)`;
}
