import { log } from '@temporalio/activity';
import { ORDER_TRANSITIONS } from '../domain/statuses.js';
import type { ActivityDeps } from './deps.js';
import { statusIn } from './guarded-sql.js';

export function createInventoryActivities({ db }: ActivityDeps) {
  return {
    /**
     * Gives a cancelled order's reserved units back. The order's stock_released_at marker is set
     * in the same transaction as the increments, so a retry or a second caller releases nothing more.
     */
    async releaseStock(orderId: string): Promise<{ released: boolean }> {
      const released = await db.$transaction(async (tx) => {
        const claimed = await tx.$executeRaw`
          UPDATE orders SET stock_released_at = now()
          WHERE id = ${orderId}::uuid AND ${statusIn('orders', [ORDER_TRANSITIONS.cancel.to])} AND stock_released_at IS NULL`;
        if (claimed === 0) return false;
        const items = await tx.orderItem.findMany({ where: { orderId }, orderBy: { sku: 'asc' } });
        for (const item of items) {
          await tx.$executeRaw`
            UPDATE products SET available = available + ${item.quantity}, reserved = reserved - ${item.quantity}
            WHERE sku = ${item.sku}`;
        }
        return true;
      });
      if (released) log.info('stock released', { orderId });
      return { released };
    },
  };
}
