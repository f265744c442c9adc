import { Prisma } from '@prisma/client';
import { COUPON_TRANSITIONS, ORDER_TRANSITIONS } from '../domain/statuses.js';
import { query } from '../lib/sql.js';
import type { ActivityDeps } from './deps.js';
import { statusIn, statusMove } from './guarded-sql.js';

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

export function createCouponActivities({ db }: ActivityDeps) {
  return {
    /** The release on its own: for runs that cancelled before it joined the cancel's statement. */
    async releaseCoupon(orderId: string): Promise<{ released: boolean }> {
      const { rows } = await query<{ released: number }>(
        db.pool,
        Prisma.sql`
          WITH cancelled AS (SELECT id FROM orders WHERE id = ${orderId}::uuid AND ${statusIn('orders', [ORDER_TRANSITIONS.cancel.to])}),
          ${releaseLockedCoupons('cancelled')}
          SELECT count(*)::int AS released FROM coupons_released`,
      );
      return { released: rows[0]!.released === 1 };
    },
  };
}
