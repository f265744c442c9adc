import { Prisma } from '@prisma/client';
import { log } from '@temporalio/activity';
import type { PaymentNotice, RefundFailure } from '../domain/messages.js';
import {
  canTransition,
  COUPON_TRANSITIONS,
  FULFILLMENT_STEPS,
  INITIAL_STATUS,
  ORDER_TRANSITIONS,
  PAYMENT_TRANSITIONS,
  type OrderStatus,
  type PaymentStatus,
  type RefundReason,
} from '../domain/statuses.js';
import { inTransaction, query, type Queryable } from '../lib/sql.js';
import { asOf, type ActivityDeps } from './deps.js';
import { storedStep } from '../store/fulfillment-steps.js';
import { nowOr, statusMove } from '../store/guarded-sql.js';
import { moveReservedUnits } from './inventory.js';
import { reopenRefund } from '../store/refund-reopening.js';
import { appendOrderEvent, BUMP_EVENT_SEQ, EVENT_COLUMNS } from '../store/order-events.js';

/** What the database decided about one payment. */
export type PaymentDecision =
  | {
      /** PAID: this payment paid the order. REFUND_PENDING: it must be given back. */
      outcome: 'PAID' | 'REFUND_PENDING';
      paymentStatus: PaymentStatus;
      /** True when this payment had been decided before: a redelivery, with no new effect. */
      duplicate: boolean;
    }
  /** The webhook never recorded this payment for this order (a forged notice): nothing changed. */
  | { outcome: 'NOT_RECEIVED' };

export function createPaymentActivities(deps: ActivityDeps) {
  const { db, paymentProvider } = deps;

  return {
    /**
     * Decides a payment the webhook recorded (RECEIVED): if it pays an unpaid order the exact
     * amount, marks the order PAID, redeems the coupon and turns
     * reserved units into sold ones — one transaction (payWithin: one statement after the
     * payment's row is locked). Otherwise, or when it was recorded as not the order's own money
     * (store/received-payments.ts), the payment is owed back: REFUND_PENDING, with the reason.
     * Amount and arrival come from the row, never from the notice; a payment already decided
     * changes nothing, and one the webhook never recorded for this order is NOT_RECEIVED.
     *
     * When the deadline counts: with a provider that cannot cancel a payment, the payment must have
     * arrived before it (a later one is refunded). A provider that cancels payments has the last
     * word instead: the order is not cancelled until its payment is closed there, so a payment the
     * provider took pays the order, whenever its webhook comes.
     */
    async settlePayment(notice: PaymentNotice): Promise<PaymentDecision> {
      const now = await asOf(deps);
      return inTransaction(db.pool, async (tx) => {
        // Compared as text: a forged notice's order id need not even be a uuid.
        const { rows } = await query<ReceivedPayment>(
          tx,
          Prisma.sql`
            SELECT payment_id, order_id, amount_cents, status, received_at, refusal FROM payments
            WHERE payment_id = ${notice.paymentId} AND order_id::text = ${notice.orderId}
            FOR UPDATE`,
        );
        const payment = rows[0];
        if (!payment) {
          log.warn('payment notice names no payment the webhook recorded: dropped', { ...notice });
          return { outcome: 'NOT_RECEIVED' };
        }
        if (payment.status !== INITIAL_STATUS.payment) {
          const seen = payment.status;
          return { outcome: seen === 'CAPTURED' ? 'PAID' : 'REFUND_PENDING', paymentStatus: seen, duplicate: true };
        }
        const deadlineCounts = !paymentProvider.cancelsPayments;
        // Not the order's own money (recorded with its refusal): never pays it, whatever the amount.
        if (payment.refusal === null && (await payWithin(tx, payment, now, deadlineCounts)))
          return { outcome: 'PAID', paymentStatus: 'CAPTURED', duplicate: false };
        const reason = await recordRefundReason(tx, payment);
        log.warn('payment will be refunded', { orderId: payment.order_id, paymentId: payment.payment_id, ...reason });
        return { outcome: 'REFUND_PENDING', paymentStatus: 'REFUND_PENDING', duplicate: false };
      });
    },

    /**
     * Refunds a REFUND_PENDING payment. The provider refunds a paymentId at most once, and the
     * refund row, status change and `order.refunded` are written together, so running this again
     * is harmless.
     * Not refunded: the payment is not one owed back (unknown, captured, or REFUND_FAILED, held by
     * the run that recorded its refund's failure), and `status` says what it is instead.
     */
    async refundPayment(
      paymentId: string,
    ): Promise<{ refunded: true } | { refunded: false; status: PaymentStatus | null }> {
      const { rows } = await query<{ order_id: string; amount_cents: number; status: PaymentStatus }>(
        db.pool,
        Prisma.sql`SELECT order_id, amount_cents, status FROM payments WHERE payment_id = ${paymentId}`,
      );
      const payment = rows[0];
      if (!payment || !canTransition<PaymentStatus>(PAYMENT_TRANSITIONS.refund, payment.status)) {
        // Out of order or not ours to refund (unknown, or a payment that paid its order): refused, never applied.
        if (payment?.status !== 'REFUNDED')
          log.warn('refund refused by the transition table', { paymentId, status: payment?.status ?? null });
        return payment?.status === 'REFUNDED'
          ? { refunded: true }
          : { refunded: false, status: payment?.status ?? null };
      }
      const { refundRef } = await paymentProvider.refund({ paymentId, amountCents: payment.amount_cents });
      const refund = statusMove('payments', PAYMENT_TRANSITIONS.refund);
      await query(
        db.pool,
        Prisma.sql`
          WITH recorded AS (
            INSERT INTO refunds (payment_id, amount_cents, provider_ref) VALUES (${paymentId}, ${payment.amount_cents}, ${refundRef})
            ON CONFLICT (payment_id) DO NOTHING),
          refunded AS (
            UPDATE payments SET ${refund.set} WHERE payment_id = ${paymentId} AND ${refund.guard}
            RETURNING order_id, payment_id, amount_cents, refund_reason),
          ${refundEvent('order.refunded', 'refunded')}
          SELECT count(*) FROM refunded`,
      );
      log.info('payment refunded', { orderId: payment.order_id, paymentId, amountCents: payment.amount_cents });
      return { refunded: true };
    },

    /**
     * The provider rejected the refund for good (an `order.refund_failed`): it stays owed, visible,
     * until an operator retries it. `recorded` when this call made it REFUND_FAILED (not an earlier run of the same local activity).
     */
    async recordRefundFailure(input: { paymentId: string; error: string }): Promise<{ recorded: boolean }> {
      const fail = statusMove('payments', PAYMENT_TRANSITIONS.failRefund);
      const { rows } = await query<{ recorded: boolean }>(
        db.pool,
        Prisma.sql`
          WITH failed AS (
            UPDATE payments SET ${fail.set}, refund_error = ${input.error}, refund_failed_at = now()
            WHERE payment_id = ${input.paymentId} AND ${fail.guard}
            RETURNING order_id, payment_id, amount_cents, refund_reason, refund_error),
          ${refundEvent('order.refund_failed', 'failed')}
          SELECT EXISTS (SELECT 1 FROM failed) AS recorded`,
      );
      return { recorded: rows[0]!.recorded };
    },

    /**
     * The provider failed a refund it had accepted: REFUNDED → REFUND_FAILED, only while the
     * payment's recorded refund is the one that failed. Its refunds row goes in the same statement
     * (refund_error names it), so the retry's refund is recorded in its place. `failed` false,
     * having changed nothing, for a redelivery, an older attempt's event, or a payment of another
     * order; and `refundInFlight` too while the payment's refund is still being made
     * (REFUND_PENDING): the failure may be of that very refund, answered by the provider and not
     * recorded yet, so it can be judged only once refundPayment has recorded it.
     */
    async recordRefundFailedLater(failure: RefundFailure): Promise<{ failed: boolean; refundInFlight: boolean }> {
      const fail = statusMove('payments', PAYMENT_TRANSITIONS.refundFailedLater);
      const { rows } = await query<{ failed: boolean; status: PaymentStatus | null }>(
        db.pool,
        Prisma.sql`
          WITH failed AS (
            UPDATE payments SET ${fail.set}, refund_error = ${`refund ${failure.refundRef} failed: ${failure.reason}`},
              refund_failed_at = now()
            WHERE payment_id = ${failure.paymentId} AND order_id = ${failure.orderId}::uuid AND ${fail.guard}
              AND EXISTS (SELECT 1 FROM refunds WHERE payment_id = ${failure.paymentId} AND provider_ref = ${failure.refundRef})
            RETURNING order_id, payment_id, amount_cents, refund_reason, refund_error),
          forgotten AS (DELETE FROM refunds WHERE payment_id IN (SELECT payment_id FROM failed)),
          ${refundEvent('order.refund_failed', 'failed')}
          SELECT EXISTS (SELECT 1 FROM failed) AS failed,
                 (SELECT status FROM payments WHERE payment_id = ${failure.paymentId} AND order_id = ${failure.orderId}::uuid) AS status`,
      );
      const { failed, status } = rows[0]!;
      const refundInFlight =
        !failed && status !== null && canTransition<PaymentStatus>(PAYMENT_TRANSITIONS.refund, status);
      return { failed, refundInFlight };
    },

    /** An operator's retry: REFUND_FAILED → REFUND_PENDING, so that refundPayment may run again. */
    async reopenRefund(paymentId: string): Promise<{ reopened: boolean }> {
      const reopened = await reopenRefund(db.pool, paymentId);
      log.info('refund retried by an operator', { paymentId });
      return { reopened };
    },
  };
}

/** A payment's row as the webhook recorded it: what settlement decides from. */
interface ReceivedPayment {
  payment_id: string;
  order_id: string;
  amount_cents: number;
  status: PaymentStatus;
  /** By the database clock (or the tests' clock), when the webhook accepted it: the deadline is judged at arrival. */
  received_at: Date;
  /** Why it is not the order's own money, as recorded: it never pays the order. */
  refusal: RefundReason | null;
}

/**
 * The guarded pay and everything that goes with it, as one statement: `paid` is the order if it
 * moved UNPAID → PAID (exact amount and, where the deadline counts, received before it); then its reserved
 * units are sold, its coupon redeemed, the payment captured, and its fulfillment steps owed
 * (PENDING) from this moment, and the outbox gets its `order.paid`. True when this payment paid the order.
 */
async function payWithin(
  tx: Queryable,
  payment: ReceivedPayment,
  now: Date | null,
  deadlineCounts: boolean,
): Promise<boolean> {
  const pay = statusMove('orders', ORDER_TRANSITIONS.pay);
  const capture = statusMove('payments', PAYMENT_TRANSITIONS.capture);
  const { rows } = await query<{ paid: number }>(
    tx,
    Prisma.sql`
      WITH paid AS (
        UPDATE orders SET ${pay.set}, paid_at = ${nowOr(now)}, ${BUMP_EVENT_SEQ}
        WHERE id = ${payment.order_id}::uuid AND ${pay.guard}
          AND total_cents = ${payment.amount_cents}
          ${deadlineCounts ? Prisma.sql`AND expires_at > ${payment.received_at}` : Prisma.empty}
        RETURNING ${EVENT_COLUMNS}, total_cents),
      ${whatPayingMoves('paid')},
      captured AS (
        UPDATE payments SET ${capture.set}
        WHERE payment_id = ${payment.payment_id} AND ${capture.guard} AND EXISTS (SELECT 1 FROM paid)),
      ${appendOrderEvent({
        type: 'order.paid',
        changed: { order: 'paid' },
        data: { paymentId: Prisma.sql`${payment.payment_id}::text`, amountCents: Prisma.sql`c.total_cents` },
      })}
      SELECT count(*)::int AS paid FROM paid`,
  );
  return rows[0]!.paid === 1;
}

/**
 * WITH-query entries for what goes with an order's move to PAID, for the orders in `paid` (an
 * earlier WITH query returning their `id`, the guarded pay): its reserved units are sold, its coupon
 * redeemed, and its fulfillment steps owed (PENDING) from this moment.
 */
export function whatPayingMoves(paid: string): Prisma.Sql {
  const redeem = statusMove('coupons', COUPON_TRANSITIONS.redeem);
  const moving = Prisma.raw(paid);
  return Prisma.sql`
      ${moveReservedUnits(paid, 'sold')},
      redeemed AS (
        UPDATE coupons c SET ${redeem.set}, updated_at = now()
        FROM ${moving} WHERE c.order_id = ${moving}.id AND ${redeem.guard}),
      owed AS (
        INSERT INTO fulfillment_steps (order_id, step)
        SELECT ${moving}.id, step FROM ${moving}, unnest(${FULFILLMENT_STEPS.map(storedStep)}::"FulfillmentStep"[]) AS step
        ON CONFLICT DO NOTHING)`;
}

/**
 * The outbox entry of a refund made or failed, for the payment in `changed` (a WITH query returning
 * its `order_id`, `payment_id`, `amount_cents`, `refund_reason`, and for a failure `refund_error`).
 */
function refundEvent(type: 'order.refunded' | 'order.refund_failed', changed: string): Prisma.Sql {
  return appendOrderEvent({
    type,
    changed: { rowOfOrder: changed },
    data: {
      paymentId: Prisma.sql`c.payment_id`,
      amountCents: Prisma.sql`c.amount_cents`,
      reason: Prisma.sql`c.refund_reason`,
      ...(type === 'order.refund_failed' ? { error: Prisma.sql`c.refund_error` } : {}),
    },
  });
}

/** Why a payment that did not pay its order is owed back, recorded on the payment. */
async function recordRefundReason(
  tx: Queryable,
  payment: ReceivedPayment,
): Promise<{ reason: RefundReason; orderStatus: OrderStatus }> {
  const { rows } = await query<{ status: OrderStatus; total_cents: number }>(
    tx,
    Prisma.sql`SELECT status, total_cents FROM orders WHERE id = ${payment.order_id}::uuid`,
  );
  const order = rows[0]!;
  const reason: RefundReason =
    payment.refusal ??
    (order.status === 'PAID'
      ? 'ALREADY_PAID'
      : order.total_cents !== payment.amount_cents
        ? 'AMOUNT_MISMATCH'
        : 'ORDER_NOT_PAYABLE');
  const oweBack = statusMove('payments', PAYMENT_TRANSITIONS.oweBack);
  // A payment owed back does not pay its order, so it no longer refuses the order's cancel (the
  // in-time mark names only a payment that pays): else the cancel would wait on it forever. Only a
  // hand-made change (a deadline moved back by SQL) leads here for a marked payment.
  await query(
    tx,
    Prisma.sql`
      WITH unmarked AS (
        UPDATE orders SET payment_in_time_id = NULL
        WHERE id = ${payment.order_id}::uuid AND payment_in_time_id = ${payment.payment_id})
      UPDATE payments SET ${oweBack.set}, refund_reason = ${reason}::"RefundReason"
      WHERE payment_id = ${payment.payment_id} AND ${oweBack.guard}`,
  );
  return { reason, orderStatus: order.status };
}
