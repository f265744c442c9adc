import { Prisma } from '@prisma/client';
import { log } from '@temporalio/activity';
import type { Db } from '../lib/db.js';
import type { PlacedOrder, PlaceOrderRequest } from '../domain/messages.js';
import { canTransition, COUPON_TRANSITIONS, INITIAL_STATUS, ORDER_TRANSITIONS, type CancelReason, type OrderStatus } from '../domain/statuses.js';
import { asOf, type ActivityDeps } from './deps.js';
import { releaseLockedCoupon } from './coupons.js';
import { businessFailure } from './errors.js';
import { releaseReservedStock } from './inventory.js';
import { nowOr, statusMove, statusValue } from './guarded-sql.js';

export type CancelOutcome =
  /** Both times from the winning row: cancelledAt - expiresAt is the cancel lag (a worker metric). */
  | { outcome: 'CANCELLED'; cancelledAt: string; expiresAt: string }
  /** Still UNPAID and its deadline (maybe moved by an extension) lies ahead: sleep until then. */
  | { outcome: 'NOT_DUE'; expiresAt: string }
  /** Something else (payment, or an earlier cancel) won the race; nothing was changed. */
  | { outcome: 'ALREADY_FINAL'; status: OrderStatus };

export function createOrderActivities(deps: ActivityDeps) {
  const { db } = deps;

  return {
    /**
     * Checks the customer's open-order limit, reserves stock, locks the coupon and writes the
     * order, all in one transaction. Safe to run again for the same order id: a replay returns the
     * order that was written (even once the customer is at the limit).
     */
    async placeOrder(request: PlaceOrderRequest): Promise<PlacedOrder> {
      const existing = await loadPlacedOrder(db, request.orderId);
      if (existing) return replay(existing, request);

      const now = await asOf(deps);
      const lines = [...request.items].sort((a, b) => a.sku.localeCompare(b.sku)); // one lock order: no deadlocks
      const unitPrices = new Map<string, number>();
      try {
        await db.$transaction(async (tx) => {
          await holdOpenOrderLimit(tx, request.customerId, deps.maxOpenOrdersPerCustomer);
          let subtotal = 0;
          for (const line of lines) {
            const reserved = await tx.$queryRaw<Array<{ price_cents: number }>>`
              UPDATE products SET available = available - ${line.quantity}, reserved = reserved + ${line.quantity}
              WHERE sku = ${line.sku} AND available >= ${line.quantity}
              RETURNING price_cents`;
            if (reserved.length === 0) {
              const known = await tx.product.count({ where: { sku: line.sku } });
              throw businessFailure(known ? 'OUT_OF_STOCK' : 'UNKNOWN_SKU', { sku: line.sku });
            }
            unitPrices.set(line.sku, reserved[0]!.price_cents);
            subtotal += reserved[0]!.price_cents * line.quantity;
          }
          let discount = 0;
          if (request.couponCode !== undefined) {
            const lock = statusMove('coupons', COUPON_TRANSITIONS.lock);
            const locked = await tx.$queryRaw<Array<{ discount_cents: number }>>`
              UPDATE coupons SET ${lock.set}, order_id = ${request.orderId}::uuid, updated_at = now()
              WHERE code = ${request.couponCode} AND ${lock.guard}
              RETURNING discount_cents`;
            if (locked.length === 0) throw businessFailure('COUPON_UNAVAILABLE', { couponCode: request.couponCode });
            discount = locked[0]!.discount_cents;
          }
          await tx.$executeRaw`
            INSERT INTO orders (id, customer_id, status, total_cents, coupon_code, created_at, expires_at, idempotency_key, request_hash)
            VALUES (${request.orderId}::uuid, ${request.customerId}, ${statusValue('orders', INITIAL_STATUS.order)}, ${Math.max(0, subtotal - discount)},
                    ${request.couponCode ?? null}, ${nowOr(now)},
                    ${nowOr(now)} + ${deps.paymentWindowMs} * interval '1 millisecond',
                    ${request.idempotencyKey ?? null}, ${request.requestHash})`;
          await tx.orderItem.createMany({
            data: lines.map((l) => ({ orderId: request.orderId, sku: l.sku, quantity: l.quantity, unitPriceCents: unitPrices.get(l.sku)! })),
          });
        });
      } catch (err) {
        // A concurrent replay of the same request wrote the order first: answer like a replay.
        if (err instanceof Prisma.PrismaClientKnownRequestError && err.code === 'P2002') {
          const winner = await loadPlacedOrder(db, request.orderId);
          if (winner) return replay(winner, request);
          throw businessFailure('IDEMPOTENCY_KEY_REUSED', { idempotencyKey: request.idempotencyKey });
        }
        throw err;
      }
      const placed = await loadPlacedOrder(db, request.orderId);
      log.info('order placed', { orderId: request.orderId, expiresAt: placed!.order.expiresAt });
      return placed!.order;
    },

    /** The guarded cancel with its releases (cancelWithin), as one transaction of its own. */
    async cancelOrder(input: { orderId: string; reason: CancelReason }): Promise<CancelOutcome> {
      const now = await asOf(deps);
      const result = await db.$transaction((tx) => cancelWithin(tx, input, now));
      if (result.outcome === 'CANCELLED') log.info('order cancelled', { orderId: input.orderId, reason: input.reason });
      return result;
    },

    /** The order as written, for a workflow run that adopts an existing order (reconciliation). */
    async loadOrder(orderId: string): Promise<PlacedOrder | null> {
      return (await loadPlacedOrder(db, orderId))?.order ?? null;
    },

    /** Moves the deadline of an order that is still unpaid and not yet expired. */
    async extendDeadline(input: { orderId: string; minutes: number }): Promise<{ expiresAt: string }> {
      const now = await asOf(deps);
      const extend = statusMove('orders', ORDER_TRANSITIONS.extend);
      const rows = await db.$queryRaw<Array<{ expires_at: Date }>>`
        UPDATE orders SET ${extend.set}, expires_at = expires_at + ${input.minutes} * interval '1 minute'
        WHERE id = ${input.orderId}::uuid AND ${extend.guard} AND expires_at > ${nowOr(now)}
        RETURNING expires_at`;
      if (rows.length === 0) throw businessFailure('ORDER_NOT_UNPAID', { orderId: input.orderId });
      return { expiresAt: rows[0]!.expires_at.toISOString() };
    },
  };
}

/**
 * The guarded cancel inside the caller's transaction: only an UNPAID order changes, and for a
 * timeout only once its deadline has passed by `now` (the database's clock when null). The row
 * count decides who won the race. The winner gives the reserved stock and the locked coupon back
 * in the same transaction, so a cancelled order never holds either, not even for a moment.
 */
export async function cancelWithin(tx: Prisma.TransactionClient, input: { orderId: string; reason: CancelReason }, now: Date | null): Promise<CancelOutcome> {
  const [won] = await tx.$queryRaw<Array<{ cancelled_at: Date; expires_at: Date }>>(guardedCancel(input, now));
  if (won) {
    await releaseReservedStock(tx, input.orderId);
    await releaseLockedCoupon(tx, input.orderId);
    return { outcome: 'CANCELLED', cancelledAt: won.cancelled_at.toISOString(), expiresAt: won.expires_at.toISOString() };
  }
  const order = await tx.order.findUnique({ where: { id: input.orderId }, select: { status: true, expiresAt: true } });
  if (!order) throw businessFailure('UNKNOWN_ORDER', { orderId: input.orderId });
  return canTransition<OrderStatus>(ORDER_TRANSITIONS.cancel, order.status)
    ? { outcome: 'NOT_DUE', expiresAt: order.expiresAt.toISOString() }
    : { outcome: 'ALREADY_FINAL', status: order.status };
}

/**
 * The guarded cancel as one statement: the order moves UNPAID → CANCELLED only if it is still
 * UNPAID, and for a timeout only once its deadline has passed by `now` (the database's clock when
 * null). It returns the winning row's times, none when something else won.
 */
export function guardedCancel(input: { orderId: string; reason: CancelReason }, now: Date | null): Prisma.Sql {
  const cancel = statusMove('orders', ORDER_TRANSITIONS.cancel);
  const due = input.reason === 'PAYMENT_TIMEOUT' ? Prisma.sql`AND expires_at <= ${nowOr(now)}` : Prisma.empty;
  return Prisma.sql`
    UPDATE orders SET ${cancel.set}, cancelled_at = ${nowOr(now)}, cancel_reason = ${input.reason}::"CancelReason"
    WHERE id = ${input.orderId}::uuid AND ${cancel.guard} ${due}
    RETURNING cancelled_at, expires_at`;
}

/**
 * Anti-hoarding: refuses a customer's order while they hold `limit` unpaid ones (0: no limit).
 * The per-customer advisory lock, held until the placement commits, makes concurrent placements of
 * one customer count one after the other, so together they can never pass the limit. It is taken
 * first and only here, so it cannot join a deadlock with the row locks that follow.
 */
async function holdOpenOrderLimit(tx: Prisma.TransactionClient, customerId: string, limit: number): Promise<void> {
  if (limit === 0) return;
  // Two keys: this lock's own name, then the customer. A hash collision only makes two customers wait for each other.
  await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext('open-orders-per-customer'), hashtext(${customerId}))`;
  // Open: still as placed, holding its stock.
  const open = await tx.order.count({ where: { customerId, status: INITIAL_STATUS.order } });
  if (open >= limit) throw businessFailure('TOO_MANY_OPEN_ORDERS', { limit });
}

async function loadPlacedOrder(db: Db, orderId: string): Promise<{ order: PlacedOrder; requestHash: string } | null> {
  const row = await db.order.findUnique({ where: { id: orderId }, include: { items: { orderBy: { sku: 'asc' } } } });
  if (!row) return null;
  return {
    requestHash: row.requestHash,
    order: {
      id: row.id,
      customerId: row.customerId,
      status: row.status,
      totalCents: row.totalCents,
      expiresAt: row.expiresAt.toISOString(),
      couponCode: row.couponCode,
      items: row.items.map((i) => ({ sku: i.sku, quantity: i.quantity, unitPriceCents: i.unitPriceCents })),
    },
  };
}

function replay(existing: { order: PlacedOrder; requestHash: string }, request: PlaceOrderRequest): PlacedOrder {
  if (existing.requestHash !== request.requestHash) {
    throw businessFailure('IDEMPOTENCY_KEY_REUSED', { idempotencyKey: request.idempotencyKey });
  }
  return existing.order;
}
