import { Prisma } from '@prisma/client';
import { COUPON_TRANSITIONS } from '../domain/statuses.js';
import { statusMove } from './guarded-sql.js';

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
