import type { ActivityDeps } from './deps.js';

export function createCouponActivities({ db }: ActivityDeps) {
  return {
    /** Makes a cancelled order's coupon usable again. Only a coupon still LOCKED by this order moves. */
    async releaseCoupon(orderId: string): Promise<{ released: boolean }> {
      const released = await db.$executeRaw`
        UPDATE coupons SET status = 'AVAILABLE', order_id = NULL, updated_at = now()
        WHERE order_id = ${orderId}::uuid AND status = 'LOCKED'
          AND EXISTS (SELECT 1 FROM orders WHERE id = ${orderId}::uuid AND status = 'CANCELLED')`;
      return { released: released === 1 };
    },
  };
}
