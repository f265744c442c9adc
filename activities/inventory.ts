import type { Prisma } from '@prisma/client';
import { log } from '@temporalio/activity';
import { ORDER_TRANSITIONS } from '../domain/statuses.js';
import type { ActivityDeps } from './deps.js';
import { statusIn } from './guarded-sql.js';

/**
 * Gives a cancelled order's reserved units back, inside the caller's transaction. The order's
 * stock_released_at marker is set with the increments, so a retry or a second caller releases
 * nothing more. True when this call released them.
 */
export async function releaseReservedStock(tx: Prisma.TransactionClient, orderId: string): Promise<boolean> {
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
}

export function createInventoryActivities({ db }: ActivityDeps) {
  return {
    /** The release on its own: for runs that cancelled before it joined the cancel's transaction. */
    async releaseStock(orderId: string): Promise<{ released: boolean }> {
      const released = await db.$transaction((tx) => releaseReservedStock(tx, orderId));
      if (released) log.info('stock released', { orderId });
      return { released };
    },
  };
}
