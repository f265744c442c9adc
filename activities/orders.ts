import { Prisma } from '@prisma/client';
import { log } from '@temporalio/activity';
import type { OrderForRun, PlacedOrder, PlaceOrderRequest } from '../domain/messages.js';
import { inSkuOrder, placementOf, type Placement } from '../domain/placement.js';
import { MAX_ORDER_TOTAL_CENTS } from '../domain/order-total.js';
import { MINIMUM_CHARGE_CENTS } from '../lib/currencies.js';
import {
  canTransition,
  INITIAL_STATUS,
  ORDER_TRANSITIONS,
  type CancelReason,
  type OrderStatus,
} from '../domain/statuses.js';
import { inTransaction, isUniqueViolation, query, type Queryable } from '../lib/sql.js';
import { lockCoupon, releaseLockedCoupons } from './coupons.js';
import { asOf, type ActivityDeps } from './deps.js';
import { businessFailure, isBusinessFailure } from '../domain/errors.js';
import { nowOr, statusMove, statusValue } from '../store/guarded-sql.js';
import { appendOrderEvent, BUMP_EVENT_SEQ, EVENT_COLUMNS, isoTime } from '../store/order-events.js';
import { moveReservedUnits } from './inventory.js';
import { whatPayingMoves } from './payments.js';
import { sendNotice } from './notifications.js';
import { isProviderFailure, openPayment } from './provider-payments.js';

/**
 * What the guarded cancel came to (cancelWithin): who won the race for the order, by the database.
 * Its NOT_DUE and ALREADY_FINAL are also what closePayment answers when it does not ask the provider.
 */
export type GuardedCancelOutcome =
  /**
   * Both times from the winning row: cancelledAt - expiresAt is the cancel lag (a worker metric);
   * the customer, for the notice.
   */
  | { outcome: 'CANCELLED'; cancelledAt: string; expiresAt: string; customerId: string }
  /** Still UNPAID and its deadline (maybe moved by an extension) lies ahead: sleep until then. */
  | { outcome: 'NOT_DUE'; expiresAt: string }
  /** Something else (payment, or an earlier cancel) won the race; nothing was changed. */
  | { outcome: 'ALREADY_FINAL'; status: OrderStatus }
  /**
   * Still UNPAID, and a payment of its total the webhook recorded before the deadline awaits
   * settlement (its signal not handled yet): it pays the order, so nothing was changed.
   */
  | { outcome: 'PAYMENT_RECEIVED'; paymentId: string };

/**
 * cancelOrder's answer, which the run's history keeps: the guarded cancel's, and for its winner only
 * what is read of it. `customerTold`: whether the customer was told in the same call (`false`: the
 * notice is still owed, and the workflow sends it with its own retries). `lagMs`: how long after its
 * deadline the order was cancelled (negative: before it), for the cancel-lag metric.
 */
export type CancelOrderOutcome =
  | Exclude<GuardedCancelOutcome, { outcome: 'CANCELLED' }>
  | { outcome: 'CANCELLED'; customerTold: boolean; lagMs: number };

/**
 * How long the placement waits for the provider to create the payment: well inside the placement's
 * own timeout (workflows/activity-options.ts), so a slow provider delays the answer, never fails it.
 * The creation is idempotent by order, so the run's later attempt gets the same payment.
 */
const PAYMENT_AT_PLACEMENT_MS = 3_000;

/**
 * How long the cancel waits for the messaging provider to take the customer's notice: well inside
 * the cancel's own timeout, so a slow provider leaves the notice to the workflow's retries instead
 * of running the cancel again.
 */
const NOTICE_WITH_CANCEL_MS = 3_000;

class TookTooLong extends Error {
  override readonly name = 'TookTooLong';
}

function withinMs<T>(ms: number, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new TookTooLong(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

export function createOrderActivities(deps: ActivityDeps) {
  const { db } = deps;

  return {
    /**
     * Checks the customer's open-order limit, reserves stock, locks the coupon and writes the
     * order, all in one transaction; then creates its payment at the provider, so the answer
     * carries what the customer needs to pay (or PENDING, when the provider cannot create it now:
     * the order stands, and its run creates the payment later). Safe to run again for the same
     * order id: a replay returns the order that was written (even once the customer is at the limit).
     * The answer is what the placement decided (Placement); the run has the rest in its request.
     */
    async placeOrder(request: PlaceOrderRequest): Promise<Placement> {
      const { order: placed, reminded, placedNow } = await placeOrReplay(request);
      // Only an unpaid order needs a payment: one of total 0 is paid as it is placed.
      if (placed.payment !== null || placed.status !== INITIAL_STATUS.order)
        return placementOf(forRun(placed, reminded));
      try {
        // An order placed by this call is known open; one an earlier delivery wrote is read again.
        const known = placedNow ? { customerId: placed.customerId, totalCents: placed.totalCents } : undefined;
        const payment = await withinMs(PAYMENT_AT_PLACEMENT_MS, openPayment(deps, placed.id, known));
        return placementOf(forRun({ ...placed, payment }, reminded));
      } catch (err) {
        if (!isProviderFailure(err) && !(err instanceof TookTooLong)) throw err;
        log.warn('the provider could not create the payment yet: the order stands, its run tries again', {
          orderId: placed.id,
          error: err instanceof Error ? err.message : String(err),
        });
        return placementOf(forRun({ ...placed, payment: 'PENDING' }, reminded));
      }
    },

    /**
     * The guarded cancel with its releases (one statement, cancelWithin); its winner then tries
     * once to tell the customer, in the same call, since the workflow would ask for that next: an
     * expiry is one local activity instead of two. A notice that fails here is not an error of the
     * cancel, which has happened: the answer says it is still owed.
     */
    async cancelOrder(input: { orderId: string; reason: CancelReason }): Promise<CancelOrderOutcome> {
      const result = await cancelWithin(db.pool, input, await asOf(deps));
      if (result.outcome !== 'CANCELLED') return result;
      log.info('order cancelled', { orderId: input.orderId, reason: input.reason });
      const lagMs = Date.parse(result.cancelledAt) - Date.parse(result.expiresAt);
      try {
        // A notice still running when the wait ends may land later: its key keeps it to one message.
        await withinMs(
          NOTICE_WITH_CANCEL_MS,
          sendNotice(deps.notifier, { orderId: input.orderId, template: 'ORDER_CANCELLED' }, result.customerId),
        );
        return { outcome: 'CANCELLED', customerTold: true, lagMs };
      } catch (err) {
        log.warn('order cancelled, its notice left to the workflow', {
          orderId: input.orderId,
          error: err instanceof Error ? err.message : String(err),
        });
        return { outcome: 'CANCELLED', customerTold: false, lagMs };
      }
    },

    /**
     * The order as written, for a run that adopts an existing order (reconciliation) or reads back
     * one its failed placement wrote. Where the provider makes payments, one not kept yet is still
     * to be created (PENDING): the run creates it, and closes it at the provider before the order
     * lets go; the provider's idempotency key makes it the one an earlier attempt may have begun.
     */
    async loadOrder(orderId: string): Promise<OrderForRun | null> {
      const loaded = await loadPlacedOrder(db.pool, orderId);
      if (loaded === null) return null;
      const { order, reminded } = loaded;
      return forRun(
        order.payment === null && deps.paymentProvider.cancelsPayments ? { ...order, payment: 'PENDING' } : order,
        reminded,
      );
    },

    /**
     * Moves the deadline of an order that is still unpaid, not yet expired, and whose payment is not
     * being closed. `extensionId` names the extension (its update's id): the row keeps every one
     * applied, so an attempt run again (a worker lost before its workflow task was recorded, an
     * attempt that timed out after it committed) answers the deadline instead of adding the minutes
     * twice, even when another extension landed in between.
     */
    async extendDeadline(input: {
      orderId: string;
      minutes: number;
      extensionId: string;
    }): Promise<{ expiresAt: string }> {
      const now = await asOf(deps);
      const extend = statusMove('orders', ORDER_TRANSITIONS.extend);
      const { rows } = await query<{ expires_at: Date }>(
        db.pool,
        Prisma.sql`
          WITH extended AS (
            UPDATE orders SET ${extend.set}, expires_at = expires_at + ${input.minutes} * interval '1 minute',
              extension_ids = array_append(extension_ids, ${input.extensionId}), ${BUMP_EVENT_SEQ}
            WHERE id = ${input.orderId}::uuid AND ${extend.guard} AND expires_at > ${nowOr(now)} AND closing_since IS NULL
              AND array_position(extension_ids, ${input.extensionId}) IS NULL
            RETURNING ${EVENT_COLUMNS}, expires_at),
          ${appendOrderEvent({ type: 'order.deadline_extended', changed: { order: 'extended' }, data: { expiresAt: isoTime(Prisma.sql`c.expires_at`) } })}
          SELECT expires_at FROM extended`,
      );
      if (rows.length > 0) return { expiresAt: rows[0]!.expires_at.toISOString() };
      // Not moved: applied already by an earlier attempt (read now, after it committed), or refused.
      const { rows: earlier } = await query<{ expires_at: Date }>(
        db.pool,
        Prisma.sql`SELECT expires_at FROM orders WHERE id = ${input.orderId}::uuid AND array_position(extension_ids, ${input.extensionId}) IS NOT NULL`,
      );
      if (earlier.length === 0) throw businessFailure('ORDER_NOT_UNPAID', { orderId: input.orderId });
      return { expiresAt: earlier[0]!.expires_at.toISOString() };
    },
  };

  /** The order with its reminder, while PAYMENT_REMINDER_BEFORE is set (`reminded`: sent already). */
  function forRun(order: PlacedOrder, reminded: boolean): OrderForRun {
    const beforeMs = deps.paymentReminderBeforeMs;
    return beforeMs ? { ...order, reminder: { beforeMs, sent: reminded } } : order;
  }

  /**
   * The placement itself, or the order it wrote for an earlier delivery of the same request. A
   * delivery is placed without reading first (a round trip fewer for nearly every order): one
   * whose order stands fails in the transaction, on the order id or on a check that counts that
   * order, and answers like a replay.
   */
  async function placeOrReplay(
    request: PlaceOrderRequest,
  ): Promise<{ order: PlacedOrder; reminded: boolean; placedNow: boolean }> {
    const now = await asOf(deps);
    try {
      const placed = await inTransaction(db.pool, (tx) => placeWithin(tx, request, now, deps));
      log.info('order placed', { orderId: request.orderId, expiresAt: placed.expiresAt });
      return { order: placed, reminded: false, placedNow: true };
    } catch (err) {
      // Another delivery of the same request (an earlier attempt, still running or done, or a second
      // request with the same Idempotency-Key) may have written the order. This one then fails on
      // the order id, or on a check that now counts that order (its stock, its coupon, the customer's
      // limits): either way the order stands, so answer like a replay.
      if (!isUniqueViolation(err) && !isBusinessFailure(err)) throw err;
      const winner = await loadPlacedOrder(db.pool, request.orderId);
      if (winner) return { ...replay(winner, request), placedNow: false };
      if (isUniqueViolation(err))
        throw businessFailure('IDEMPOTENCY_KEY_REUSED', { idempotencyKey: request.idempotencyKey });
      throw err;
    }
  }
}

/**
 * The guarded cancel, run on `on` (the pool, or a caller's transaction): only an UNPAID order
 * changes, and for a timeout only once its deadline has passed by `now` (the database's clock when
 * null). Whether the row changed decides who won the race. The winner gives the reserved stock and
 * the locked coupon back in the same statement, so a cancelled order never holds either, not even
 * for a moment; the statement also reads what a loser needs to know.
 */
export async function cancelWithin(
  on: Queryable,
  input: { orderId: string; reason: CancelReason },
  now: Date | null,
): Promise<GuardedCancelOutcome> {
  const { rows } = await query<{
    status: OrderStatus;
    expires_at: Date;
    cancelled_at: Date | null;
    customer_id: string;
    paid_in_time: string | null;
  }>(on, cancelStatement(input, now));
  const seen = rows[0];
  if (!seen) throw businessFailure('UNKNOWN_ORDER', { orderId: input.orderId });
  if (seen.cancelled_at)
    return {
      outcome: 'CANCELLED',
      cancelledAt: seen.cancelled_at.toISOString(),
      expiresAt: seen.expires_at.toISOString(),
      customerId: seen.customer_id,
    };
  if (!canTransition<OrderStatus>(ORDER_TRANSITIONS.cancel, seen.status))
    return { outcome: 'ALREADY_FINAL', status: seen.status };
  if (seen.paid_in_time !== null) return { outcome: 'PAYMENT_RECEIVED', paymentId: seen.paid_in_time };
  // Lost while the statement saw a cancellable order: either not due, or the update waited for a
  // change that committed meanwhile (a payment, a payment recorded in time, an extension), which the
  // statement's snapshot cannot show. The committed row says which.
  const { rows: committed } = await query<{ status: OrderStatus; expires_at: Date; payment_in_time_id: string | null }>(
    on,
    Prisma.sql`SELECT status, expires_at, payment_in_time_id FROM orders WHERE id = ${input.orderId}::uuid`,
  );
  const current = committed[0]!;
  if (!canTransition<OrderStatus>(ORDER_TRANSITIONS.cancel, current.status))
    return { outcome: 'ALREADY_FINAL', status: current.status };
  return current.payment_in_time_id !== null
    ? { outcome: 'PAYMENT_RECEIVED', paymentId: current.payment_in_time_id }
    : { outcome: 'NOT_DUE', expiresAt: current.expires_at.toISOString() };
}

/**
 * The guarded cancel and its releases as one statement: `won` is the order if it moved UNPAID →
 * CANCELLED, the other WITH queries give its units and its
 * coupon back, the outbox gets its `order.cancelled`, and the final SELECT reads the winner's cancellation time, or for a loser the order
 * as it was when the statement began (cancelWithin reads it again when that may be stale).
 * A payment of the order's total that the webhook recorded before the deadline pays the order,
 * even when its signal is late or was lost with a restarting Temporal: the webhook marked the order
 * (`payment_in_time_id`, store/received-payments.ts), so the cancel loses to it and names it
 * for the run to settle. The mark is on the row the cancel updates, so a payment recorded while
 * this statement runs is seen too (the update waits for it, then checks the row again).
 */
export function cancelStatement(input: { orderId: string; reason: CancelReason }, now: Date | null): Prisma.Sql {
  const cancel = statusMove('orders', ORDER_TRANSITIONS.cancel);
  const due = input.reason === 'PAYMENT_TIMEOUT' ? Prisma.sql`AND expires_at <= ${nowOr(now)}` : Prisma.empty;
  return Prisma.sql`
    WITH won AS (
      UPDATE orders SET ${cancel.set}, cancelled_at = ${nowOr(now)}, cancel_reason = ${input.reason}::"CancelReason",
        ${BUMP_EVENT_SEQ}
      WHERE id = ${input.orderId}::uuid AND ${cancel.guard} ${due} AND payment_in_time_id IS NULL
      RETURNING ${EVENT_COLUMNS}, cancelled_at, cancel_reason),
    ${moveReservedUnits('won', 'available')},
    ${releaseLockedCoupons('won')},
    ${appendOrderEvent({ type: 'order.cancelled', changed: { order: 'won' }, data: { reason: Prisma.sql`c.cancel_reason` } })}
    SELECT o.status, o.expires_at, won.cancelled_at, o.customer_id, o.payment_in_time_id AS paid_in_time
    FROM orders o LEFT JOIN won ON won.id = o.id
    WHERE o.id = ${input.orderId}::uuid`;
}

/** The placement's writes, in the caller's transaction; returns the order as written. */
async function placeWithin(
  tx: Queryable,
  request: PlaceOrderRequest,
  now: Date | null,
  deps: ActivityDeps,
): Promise<PlacedOrder> {
  await holdCustomerLimits(tx, request, deps);
  const lines = [...request.items].sort(inSkuOrder); // one lock order with cancel and pay: no deadlocks
  const items: PlacedOrder['items'] = [];
  for (const line of lines) {
    const { rows } = await query<{ price_cents: number }>(
      tx,
      Prisma.sql`
        UPDATE products SET available = available - ${line.quantity}, reserved = reserved + ${line.quantity}
        WHERE sku = ${line.sku} AND available >= ${line.quantity}
        RETURNING price_cents`,
    );
    if (rows.length === 0) {
      const known = await query(tx, Prisma.sql`SELECT 1 FROM products WHERE sku = ${line.sku}`);
      throw businessFailure(known.rowCount ? 'OUT_OF_STOCK' : 'UNKNOWN_SKU', { sku: line.sku });
    }
    items.push({ sku: line.sku, quantity: line.quantity, unitPriceCents: rows[0]!.price_cents });
  }
  let discount = 0;
  if (request.couponCode !== undefined) {
    const locked = await lockCoupon(tx, request.couponCode, request);
    if (locked === null) throw businessFailure('COUPON_UNAVAILABLE', { couponCode: request.couponCode });
    discount = locked.discountCents;
  }
  const subtotal = items.reduce((sum, i) => sum + i.unitPriceCents * i.quantity, 0);
  const totalCents = Math.max(0, subtotal - discount);
  // Refused here, where prices decide the total: the transaction rolls back what it reserved and locked.
  if (totalCents > MAX_ORDER_TOTAL_CENTS) {
    throw businessFailure('ORDER_TOTAL_TOO_LARGE', { totalCents, maxTotalCents: MAX_ORDER_TOTAL_CENTS });
  }
  const minTotalCents = MINIMUM_CHARGE_CENTS[deps.paymentAccount.currency];
  if (totalCents > 0 && totalCents < minTotalCents) {
    throw businessFailure('ORDER_TOTAL_TOO_SMALL', {
      totalCents,
      minTotalCents,
      currency: deps.paymentAccount.currency,
    });
  }
  const { rows } = await query<{ total_cents: number; expires_at: Date }>(
    tx,
    Prisma.sql`
      WITH placed AS (
        INSERT INTO orders (id, customer_id, email, status, total_cents, currency, coupon_code, created_at, expires_at,
                            idempotency_key, request_hash, event_seq)
        VALUES (${request.orderId}::uuid, ${request.customerId}, ${request.email ?? null}, ${statusValue('orders', INITIAL_STATUS.order)}, ${totalCents},
                ${deps.paymentAccount.currency},
                ${request.couponCode ?? null}, ${nowOr(now)},
                ${nowOr(now)} + ${deps.paymentWindowMs} * interval '1 millisecond',
                ${request.idempotencyKey ?? null}, ${request.requestHash}, 1)
        RETURNING ${EVENT_COLUMNS}, total_cents, expires_at, customer_id, currency),
      placed_items AS (
        INSERT INTO order_items (order_id, sku, quantity, unit_price_cents)
        SELECT ${request.orderId}::uuid, * FROM unnest(${items.map((i) => i.sku)}::text[], ${items.map((i) => i.quantity)}::int[], ${items.map((i) => i.unitPriceCents)}::int[])),
      ${appendOrderEvent({
        type: 'order.placed',
        changed: { order: 'placed' },
        data: {
          customerId: Prisma.sql`c.customer_id`,
          totalCents: Prisma.sql`c.total_cents`,
          currency: Prisma.sql`c.currency`,
          expiresAt: isoTime(Prisma.sql`c.expires_at`),
          items: Prisma.sql`${JSON.stringify(items)}::jsonb`,
        },
      })}
      SELECT total_cents, expires_at FROM placed`,
  );
  // Nothing to pay (a coupon covers it all): paid as it is placed, with no payment at the provider.
  if (totalCents === 0) await payNothingOwed(tx, request.orderId, now);
  return {
    id: request.orderId,
    customerId: request.customerId,
    status: totalCents === 0 ? ORDER_TRANSITIONS.pay.to : INITIAL_STATUS.order,
    totalCents: rows[0]!.total_cents,
    expiresAt: rows[0]!.expires_at.toISOString(),
    couponCode: request.couponCode ?? null,
    items,
    payment: null,
  };
}

/**
 * An order of total 0, just written: the guarded pay moves it to PAID with what goes with it (its
 * units sold, its coupon redeemed, its fulfillment owed, its `order.paid`), as a payment would, but
 * with no payment.
 */
async function payNothingOwed(tx: Queryable, orderId: string, now: Date | null): Promise<void> {
  const pay = statusMove('orders', ORDER_TRANSITIONS.pay);
  await query(
    tx,
    Prisma.sql`
      WITH paid AS (
        UPDATE orders SET ${pay.set}, paid_at = ${nowOr(now)}, ${BUMP_EVENT_SEQ}
        WHERE id = ${orderId}::uuid AND ${pay.guard} AND total_cents = 0
        RETURNING ${EVENT_COLUMNS}),
      ${whatPayingMoves('paid')},
      ${appendOrderEvent({ type: 'order.paid', changed: { order: 'paid' }, data: { paymentId: Prisma.sql`NULL::text`, amountCents: Prisma.sql`0` } })}
      SELECT count(*) FROM paid`,
  );
}

/**
 * Anti-hoarding: refuses a customer's order while they hold `maxOpenOrdersPerCustomer` unpaid ones,
 * or when it would bring the units they hold unpaid of one product past `maxUnpaidUnitsPerProduct`
 * (each 0: no limit). The per-customer advisory lock, held until the placement commits, makes
 * concurrent placements of one customer count one after the other, so together they can never pass
 * either limit. It is taken first and only here, so it cannot join a deadlock with the row locks
 * that follow. (Lock and counts are two statements, both counts in the second: a count in the locking
 * statement would read a snapshot taken before the wait.) Open means still as placed, holding its stock.
 */
async function holdCustomerLimits(tx: Queryable, request: PlaceOrderRequest, deps: ActivityDeps): Promise<void> {
  const { maxOpenOrdersPerCustomer: maxOrders, maxUnpaidUnitsPerProduct: maxUnits } = deps;
  if (maxOrders === 0 && maxUnits === 0) return;
  // Two keys: this lock's own name (kept from when it guarded the order count alone, so workers of
  // both builds take the same lock during a rollout), then the customer. A hash collision only
  // makes two customers wait for each other.
  await query(
    tx,
    Prisma.sql`SELECT pg_advisory_xact_lock(hashtext('open-orders-per-customer'), hashtext(${request.customerId}))`,
  );
  const open = statusValue('orders', INITIAL_STATUS.order);
  const skus = request.items.map((i) => i.sku);
  const { rows } = await query<{ open: number; held: Record<string, number> }>(
    tx,
    Prisma.sql`
      SELECT (SELECT count(*)::int FROM orders WHERE customer_id = ${request.customerId} AND status = ${open}) AS open,
             (SELECT COALESCE(json_object_agg(sku, held), '{}') FROM (
                SELECT i.sku, sum(i.quantity)::int AS held FROM order_items i JOIN orders o ON o.id = i.order_id
                WHERE o.customer_id = ${request.customerId} AND o.status = ${open} AND i.sku = ANY(${skus}::text[])
                GROUP BY i.sku) h) AS held`,
  );
  const { open: openOrders, held: heldBySku } = rows[0]!;
  const held = new Map(Object.entries(heldBySku));
  if (maxOrders > 0 && openOrders >= maxOrders) throw businessFailure('TOO_MANY_OPEN_ORDERS', { limit: maxOrders });
  if (maxUnits > 0) {
    for (const line of [...request.items].sort(inSkuOrder)) {
      const already = held.get(line.sku) ?? 0;
      if (already + line.quantity > maxUnits)
        throw businessFailure('TOO_MANY_UNITS_HELD', { sku: line.sku, limit: maxUnits, held: already });
    }
  }
}

/** The order with its items (in lock order), in one statement. */
async function loadPlacedOrder(
  on: Queryable,
  orderId: string,
): Promise<{ order: PlacedOrder; requestHash: string; reminded: boolean } | null> {
  const { rows } = await query<{
    id: string;
    customer_id: string;
    status: OrderStatus;
    total_cents: number;
    expires_at: Date;
    coupon_code: string | null;
    request_hash: string;
    items: PlacedOrder['items'];
    provider_payment_id: string | null;
    payment_client_secret: string | null;
    reminded: boolean;
  }>(
    on,
    Prisma.sql`
      SELECT o.id, o.customer_id, o.status, o.total_cents, o.expires_at, o.coupon_code, o.request_hash,
             o.provider_payment_id, o.payment_client_secret, o.reminded_at IS NOT NULL AS reminded,
             COALESCE(json_agg(json_build_object('sku', i.sku, 'quantity', i.quantity, 'unitPriceCents', i.unit_price_cents) ORDER BY i.sku COLLATE "C")
                      FILTER (WHERE i.sku IS NOT NULL), '[]') AS items
      FROM orders o LEFT JOIN order_items i ON i.order_id = o.id
      WHERE o.id = ${orderId}::uuid
      GROUP BY o.id`,
  );
  const row = rows[0];
  if (!row) return null;
  return {
    requestHash: row.request_hash,
    reminded: row.reminded,
    order: {
      id: row.id,
      customerId: row.customer_id,
      status: row.status,
      totalCents: row.total_cents,
      expiresAt: row.expires_at.toISOString(),
      couponCode: row.coupon_code,
      items: row.items,
      payment: row.provider_payment_id
        ? { paymentId: row.provider_payment_id, clientSecret: row.payment_client_secret! }
        : null,
    },
  };
}

function replay<T extends { requestHash: string }>(existing: T, request: PlaceOrderRequest): T {
  if (existing.requestHash !== request.requestHash) {
    throw businessFailure('IDEMPOTENCY_KEY_REUSED', { idempotencyKey: request.idempotencyKey });
  }
  return existing;
}
