import { Prisma } from '@prisma/client';
import { log } from '@temporalio/activity';
import type { OrderPayment } from '../domain/messages.js';
import { businessFailure, THIRD_PARTY_FAILURES } from '../domain/errors.js';
import { canTransition, ORDER_TRANSITIONS, type CancelReason, type OrderStatus } from '../domain/statuses.js';
import { DEFAULT_PAYMENT_HOLDS } from '../lib/config/orders.js';
import { query } from '../lib/sql.js';
import { asOf, type ActivityDeps } from './deps.js';
import { nowOr, statusIn, statusMove } from '../store/guarded-sql.js';
import { recordReceivedPayment } from '../store/received-payments.js';
import { appendOrderEvent, BUMP_EVENT_SEQ, EVENT_COLUMNS } from '../store/order-events.js';
import type { PaymentRef, ProviderClosing, SucceededPayment } from '../adapters/ports/payment-provider.js';
import type { GuardedCancelOutcome } from './orders.js';

/**
 * What closing an order's payment came to (closePayment): the provider's answer in its own words
 * (ProviderClosing), a payment it took named by its id; or, when the provider was not asked, the
 * database's, in the guarded cancel's words.
 */
export type ClosingOutcome =
  | Exclude<ProviderClosing, { outcome: 'PAID_AT_PROVIDER' | 'CUSTOMER_ACTION' | 'FUNDS_IN_TRANSIT' }>
  /** The customer is acting (3-D Secure, a redirect): the order waits until `graceEndsAt`, then the payment is cancelled. */
  | { outcome: 'CUSTOMER_ACTION'; graceEndsAt: string }
  /** The money is on its way: the order is AWAITING_FUNDS, held at most until `holdEndsAt`. */
  | { outcome: 'FUNDS_IN_TRANSIT'; holdEndsAt: string }
  /** The customer paid before the provider could close it: recorded (RECEIVED), to be settled like a webhook's. */
  | { outcome: 'PAID_AT_PROVIDER'; paymentId: string }
  /** Still UNPAID and its deadline (maybe moved) lies ahead; or paid or cancelled meanwhile: nothing to close. */
  | Extract<GuardedCancelOutcome, { outcome: 'NOT_DUE' | 'ALREADY_FINAL' }>
  /** The provider cannot cancel a payment: the database decides first, a late payment is refunded. */
  | { outcome: 'NOT_CANCELLABLE' };

/** What closing a cancelled order's payment came to: the provider's answer, a payment it took named by its id. */
export type AfterCancelClosing =
  Exclude<ProviderClosing, { outcome: 'PAID_AT_PROVIDER' }> | { outcome: 'PAID_AT_PROVIDER'; paymentId: string };

export function createProviderPaymentActivities(deps: ActivityDeps) {
  const { db, paymentProvider } = deps;
  const holds = deps.paymentHolds ?? DEFAULT_PAYMENT_HOLDS;

  return {
    /** The order's payment, created if it is still missing (the placement could not create it): openPayment. */
    createPayment: (orderId: string): Promise<OrderPayment | null> => openPayment(deps, orderId),

    /**
     * Provider first: marks the order as closing (a guarded statement: still UNPAID or AWAITING_FUNDS
     * and, for a timeout, due by the database's clock; from then on its deadline cannot move), then
     * cancels its payment at the provider and answers what the provider said. The time since the
     * closing began sets what a payment under way may still have: a customer's action is cancelled
     * once PAYMENT_ACTION_GRACE is over, and money on its way moves the order to AWAITING_FUNDS, held
     * until AWAITING_FUNDS_MAX. A payment the provider already took is recorded as the webhook would
     * record it, by the provider's word, so it pays the order however late its webhook comes. Safe
     * to run again: each step is idempotent.
     */
    async closePayment(input: { orderId: string; reason: CancelReason }): Promise<ClosingOutcome> {
      if (!paymentProvider.cancelsPayments) return { outcome: 'NOT_CANCELLABLE' };
      const now = await asOf(deps);
      // A customer's cancel closes at once; a timeout only once due by the database's clock.
      const due = input.reason === 'PAYMENT_TIMEOUT' ? Prisma.sql`expires_at <= ${nowOr(now)}` : Prisma.sql`true`;
      const { rows: marked } = await query<{
        provider_payment_id: string | null;
        grace_ends_at: Date;
        hold_ends_at: Date;
        grace_over: boolean;
      }>(
        db.pool,
        Prisma.sql`
          UPDATE orders SET closing_since = COALESCE(closing_since, ${nowOr(now)})
          WHERE id = ${input.orderId}::uuid AND ${statusIn('orders', ORDER_TRANSITIONS.cancel.from)}
            AND (closing_since IS NOT NULL OR ${due})
          RETURNING provider_payment_id,
            closing_since + ${holds.actionGraceMs} * interval '1 millisecond' AS grace_ends_at,
            closing_since + ${holds.awaitingFundsMaxMs} * interval '1 millisecond' AS hold_ends_at,
            closing_since + ${holds.actionGraceMs} * interval '1 millisecond' <= ${nowOr(now)} AS grace_over`,
      );
      if (marked.length === 0) return notClosing(input.orderId);

      const order = marked[0]!;
      const paymentId = order.provider_payment_id;
      const ref: PaymentRef = paymentId ? { paymentId } : { orderId: input.orderId };
      const answer = await paymentProvider.cancelPayment(ref, { duringCustomerAction: order.grace_over });
      switch (answer.outcome) {
        case 'CUSTOMER_ACTION':
          return { outcome: 'CUSTOMER_ACTION', graceEndsAt: order.grace_ends_at.toISOString() };
        case 'FUNDS_IN_TRANSIT':
          await awaitFunds(input.orderId);
          return { outcome: 'FUNDS_IN_TRANSIT', holdEndsAt: order.hold_ends_at.toISOString() };
        case 'PAID_AT_PROVIDER':
          return { outcome: 'PAID_AT_PROVIDER', paymentId: await recordTaken(input.orderId, answer.payment, now) };
        default:
          return answer;
      }
    },

    /**
     * The payment of an order cancelled without the provider closing it (an operator forced the
     * cancel, or the funds never came within AWAITING_FUNDS_MAX), closed now: a customer's action is
     * cancelled at once, and a payment the provider took is recorded, to be settled (refunded).
     */
    async closeCancelledPayment(orderId: string): Promise<AfterCancelClosing> {
      const { rows } = await query<{ provider_payment_id: string | null }>(
        db.pool,
        Prisma.sql`SELECT provider_payment_id FROM orders WHERE id = ${orderId}::uuid`,
      );
      if (rows.length === 0) throw businessFailure('UNKNOWN_ORDER', { orderId });
      const paymentId = rows[0]!.provider_payment_id;
      const answer = await paymentProvider.cancelPayment(paymentId ? { paymentId } : { orderId }, {
        duringCustomerAction: true,
      });
      if (answer.outcome !== 'PAID_AT_PROVIDER') return answer;
      return { outcome: 'PAID_AT_PROVIDER', paymentId: await recordTaken(orderId, answer.payment, await asOf(deps)) };
    },
  };

  /** A payment the provider took, recorded as the webhook would record it (by the provider's word). */
  /** Judged as the webhook judges it: only the order's own money pays it, anything else is refunded. */
  async function recordTaken(orderId: string, paid: SucceededPayment, now: Date | null): Promise<string> {
    const recorded = await recordReceivedPayment(db.pool, { ...paid, orderId }, now, deps.paymentAccount);
    const refusal = recorded.known ? recorded.refusal : null;
    log.info(
      refusal === null
        ? 'the provider had taken the payment already: it is settled by the order'
        : "the provider had taken a payment that is not the order's own money: it will be refunded",
      { orderId, paymentId: paid.paymentId, refusal },
    );
    return paid.paymentId;
  }

  /** UNPAID → AWAITING_FUNDS, with its `order.awaiting_funds`; an order awaiting funds already stays so. */
  async function awaitFunds(orderId: string): Promise<void> {
    const move = statusMove('orders', ORDER_TRANSITIONS.awaitFunds);
    const { rows } = await query<{ moved: boolean }>(
      db.pool,
      Prisma.sql`
        WITH awaiting AS (
          UPDATE orders SET ${move.set}, ${BUMP_EVENT_SEQ} WHERE id = ${orderId}::uuid AND ${move.guard}
          RETURNING ${EVENT_COLUMNS}, provider_payment_id),
        ${appendOrderEvent({ type: 'order.awaiting_funds', changed: { order: 'awaiting' }, data: { paymentId: Prisma.sql`c.provider_payment_id` } })}
        SELECT EXISTS (SELECT 1 FROM awaiting) AS moved`,
    );
    if (rows[0]!.moved) log.info('the payment is on its way: the order awaits its funds', { orderId });
  }

  async function notClosing(orderId: string): Promise<ClosingOutcome> {
    const { rows } = await query<{ status: OrderStatus; expires_at: Date }>(
      db.pool,
      Prisma.sql`SELECT status, expires_at FROM orders WHERE id = ${orderId}::uuid`,
    );
    const order = rows[0];
    if (!order) throw businessFailure('UNKNOWN_ORDER', { orderId });
    return canTransition<OrderStatus>(ORDER_TRANSITIONS.cancel, order.status)
      ? { outcome: 'NOT_DUE', expiresAt: order.expires_at.toISOString() }
      : { outcome: 'ALREADY_FINAL', status: order.status };
  }
}

/**
 * The order's payment at a provider that cancels payments, created once (its idempotency key is the
 * order's) and kept on the order; null when there is none to create: a callback-only provider, or
 * an order no longer open for payment. The provider's failure is passed on. `placed`: the order as
 * its placement has just written it, open and without a payment, so it is not read again (the
 * guarded statement that keeps the payment still checks that it is open).
 */
export async function openPayment(
  deps: ActivityDeps,
  orderId: string,
  placed?: { customerId: string; totalCents: number },
): Promise<OrderPayment | null> {
  const { paymentProvider } = deps;
  if (!paymentProvider.cancelsPayments) return null;
  if (placed) return createAndKeep(deps, orderId, placed);
  const { rows } = await query<{
    customer_id: string;
    total_cents: number;
    provider_payment_id: string | null;
    payment_client_secret: string | null;
    open: boolean;
  }>(
    deps.db.pool,
    Prisma.sql`
      SELECT customer_id, total_cents, provider_payment_id, payment_client_secret,
             ${statusIn('orders', ORDER_TRANSITIONS.cancel.from)} AND closing_since IS NULL AS open
      FROM orders WHERE id = ${orderId}::uuid`,
  );
  const order = rows[0];
  if (order?.provider_payment_id)
    return { paymentId: order.provider_payment_id, clientSecret: order.payment_client_secret! };
  if (!order?.open) return null;
  return createAndKeep(deps, orderId, { customerId: order.customer_id, totalCents: order.total_cents });
}

async function createAndKeep(
  deps: ActivityDeps,
  orderId: string,
  order: { customerId: string; totalCents: number },
): Promise<OrderPayment | null> {
  const { db, paymentProvider } = deps;
  const created = await paymentProvider.createPayment({
    orderId,
    amountCents: order.totalCents,
    currency: deps.paymentAccount.currency,
    customerId: order.customerId,
  });
  // Kept only while the order is still open for payment. The closing may have begun during the
  // provider's call and not seen this payment (Stripe's search lags its writes): once the closing
  // has read the order, nothing may give the customer a payment that it did not close.
  const { rowCount } = await query(
    db.pool,
    Prisma.sql`
      UPDATE orders SET provider_payment_id = ${created.paymentId}, payment_client_secret = ${created.clientSecret}
      WHERE id = ${orderId}::uuid AND provider_payment_id IS NULL
        AND ${statusIn('orders', ORDER_TRANSITIONS.cancel.from)} AND closing_since IS NULL`,
  );
  if (rowCount === 1) {
    log.info('payment created at the provider', { orderId, paymentId: created.paymentId });
    return created;
  }
  // Read again, by a statement of its own, so that it sees a call that kept the payment first:
  // the same payment, since the idempotency key is the order's.
  const { rows: kept } = await query<{ provider_payment_id: string | null; payment_client_secret: string | null }>(
    db.pool,
    Prisma.sql`SELECT provider_payment_id, payment_client_secret FROM orders WHERE id = ${orderId}::uuid`,
  );
  const payment = kept[0];
  if (payment?.provider_payment_id)
    return { paymentId: payment.provider_payment_id, clientSecret: payment.payment_client_secret! };
  await closeUnkept(deps, orderId, created.paymentId);
  return null;
}

/**
 * A payment created for an order that stopped taking payment meanwhile: never shown to the
 * customer, so nobody can pay it; closed at the provider too, so that it does not linger there.
 * An answer other than closed is logged, not retried: without its client secret it cannot be paid.
 */
async function closeUnkept({ paymentProvider }: ActivityDeps, orderId: string, paymentId: string): Promise<void> {
  const answer = await paymentProvider.cancelPayment({ paymentId });
  const context = { orderId, paymentId, outcome: answer.outcome };
  if (answer.outcome === 'CLOSED') log.info('payment created as the order closed: cancelled, never shown', context);
  else if (answer.outcome === 'PAID_AT_PROVIDER')
    log.warn('payment created as the order closed was paid nonetheless: its webhook settles it (a refund)', context);
  else log.warn('payment created as the order closed: never shown, and the provider did not cancel it', context);
}

/** The provider's own failure (unavailable, or refused for good), as the adapters report it. */
export function isProviderFailure(err: unknown): boolean {
  const type = (err as { type?: unknown } | null)?.type;
  return type === THIRD_PARTY_FAILURES.unavailable || type === THIRD_PARTY_FAILURES.rejected;
}
