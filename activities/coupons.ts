import type { Prisma } from '@prisma/client';
import { COUPON_TRANSITIONS, ORDER_TRANSITIONS } from '../domain/statuses.js';
import type { ActivityDeps } from './deps.js';
import { statusIn, statusMove } from './guarded-sql.js';

/** Makes a cancelled order's coupon usable again. Only a coupon still LOCKED by this order moves. */
export async function releaseLockedCoupon(tx: Prisma.TransactionClient, orderId: string): Promise<boolean> {
  const release = statusMove('coupons', COUPON_TRANSITIONS.release);
  const released = await tx.$executeRaw`
    UPDATE coupons SET ${release.set}, order_id = NULL, updated_at = now()
    WHERE order_id = ${orderId}::uuid AND ${release.guard}
      AND EXISTS (SELECT 1 FROM orders WHERE id = ${orderId}::uuid AND ${statusIn('orders', [ORDER_TRANSITIONS.cancel.to])})`;
  return released === 1;
}

export function createCouponActivities({ db }: ActivityDeps) {
  return {
    /** The release on its own: for runs that cancelled before it joined the cancel's transaction. */
    async releaseCoupon(orderId: string): Promise<{ released: boolean }> {
      return { released: await releaseLockedCoupon(db, orderId) };
    },
  };
}
