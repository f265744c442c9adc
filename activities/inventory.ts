import { Prisma } from '@prisma/client';

/**
 * WITH-query entries that move the reserved units of the orders in `orders` (an earlier WITH query
 * returning their `id`) on: back to `available` (a cancellation) or to `sold` (a payment). The
 * products are locked in SKU byte order first, the one lock order placement uses too (inSkuOrder
 * in orders.ts), so concurrent moves cannot deadlock. The caller decides in the same statement
 * that the orders' units move now, and only once (a guarded status change).
 */
export function moveReservedUnits(orders: string, to: 'available' | 'sold'): Prisma.Sql {
  const moving = Prisma.raw(orders);
  const column = Prisma.raw(to);
  return Prisma.sql`
    units_held AS (
      SELECT p.sku FROM products p
      WHERE p.sku IN (SELECT i.sku FROM order_items i JOIN ${moving} o ON i.order_id = o.id)
      ORDER BY p.sku COLLATE "C" FOR UPDATE),
    units_moved AS (
      UPDATE products p SET ${column} = p.${column} + i.quantity, reserved = p.reserved - i.quantity
      FROM order_items i JOIN ${moving} o ON i.order_id = o.id JOIN units_held h ON h.sku = i.sku
      WHERE p.sku = i.sku
      RETURNING p.sku)`;
}
