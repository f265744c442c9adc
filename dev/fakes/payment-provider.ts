import { randomBytes } from 'node:crypto';
import { Prisma } from '@prisma/client';
import type { PaymentProvider } from '../../adapters/ports/index.js';
import type {
  CreatedPayment,
  EventsPage,
  EventsRequest,
  NewPayment,
  PaymentRef,
  ProviderClosing,
  ProviderPayment,
  ProviderPaymentStatus,
  RefundRequest,
} from '../../adapters/ports/payment-provider.js';
import { THIRD_PARTY_FAILURES } from '../../domain/errors.js';
import type { FakePaymentsMode, PaymentAccount } from '../../lib/config/third-parties.js';
import type { Db } from '../../lib/db.js';
import { query, type Queryable } from '../../lib/sql.js';
import type { FakeRecorder } from './recorder.js';

/**
 * The local payment provider, in one of two modes (FAKE_PAYMENTS):
 * - `cancellable` (npm start's default) keeps one payment per order in `fakes.payment_intents`, as a
 *   provider with an SDK does: the customer pays it (chargeFakePayment: `npm run pay`), the deadline
 *   cancels it, and a cancelled payment refuses the customer;
 * - `callback-only` is a provider without one: it can only refund, and payments reach the service
 *   through its signed callback alone (the chaos suite and the bench judge by that callback).
 * Every call obeys the injected faults of the `payments` service and is recorded (recorder.ts).
 */
export class FakePaymentProvider implements PaymentProvider {
  readonly cancelsPayments: boolean;

  constructor(
    private readonly recorder: FakeRecorder,
    private readonly db: Db,
    mode: FakePaymentsMode,
  ) {
    this.cancelsPayments = mode === 'cancellable';
  }

  async createPayment(request: NewPayment): Promise<CreatedPayment> {
    await this.recorder.record('payments', 'createPayment', request.orderId, request);
    const clientSecret = `${fakePaymentId(request.orderId)}_secret_${randomBytes(12).toString('hex')}`;
    // A repeat answers the first payment, secret included, as an idempotency key would. DO NOTHING
    // with no target: concurrent first calls collide on the id and the order alike, and an arbiter
    // names only one of them. The loser reads the winner's row in a statement of its own, whose
    // snapshot sees it committed.
    const { rows } = await query<{ payment_id: string; client_secret: string }>(
      this.db.pool,
      Prisma.sql`
        INSERT INTO fakes.payment_intents (payment_id, order_id, amount_cents, currency, client_secret, state)
        VALUES (${fakePaymentId(request.orderId)}, ${request.orderId}::uuid, ${request.amountCents}, ${request.currency},
                ${clientSecret}, ${'OPEN' satisfies ProviderPaymentStatus})
        ON CONFLICT DO NOTHING
        RETURNING payment_id, client_secret`,
    );
    const [created] = rows.length
      ? rows
      : (
          await query<{ payment_id: string; client_secret: string }>(
            this.db.pool,
            Prisma.sql`SELECT payment_id, client_secret FROM fakes.payment_intents WHERE order_id = ${request.orderId}::uuid`,
          )
        ).rows;
    return { paymentId: created!.payment_id, clientSecret: created!.client_secret };
  }

  /**
   * Cancels an OPEN payment (and one in a customer's action, when asked); one under way or paid is
   * left alone and reported; no payment: nothing can pay.
   */
  async cancelPayment(request: PaymentRef, options: { duringCustomerAction?: boolean } = {}): Promise<ProviderClosing> {
    try {
      await this.recorder.record('payments', 'cancelPayment', refKey(request), request);
    } catch (err) {
      if ((err as { type?: string }).type === THIRD_PARTY_FAILURES.unavailable) return { outcome: 'UNAVAILABLE' };
      throw err;
    }
    const cancellable: ProviderPaymentStatus[] = options.duringCustomerAction ? ['OPEN', 'CUSTOMER_ACTION'] : ['OPEN'];
    await query(
      this.db.pool,
      Prisma.sql`
        UPDATE fakes.payment_intents SET state = 'CANCELLED', cancelled_at = now()
        WHERE ${matches(request)} AND state = ANY(${cancellable})`,
    );
    const payment = await findFakePayment(this.db.pool, request);
    switch (payment?.status) {
      case undefined:
      case 'CANCELLED':
        return { outcome: 'CLOSED' };
      case 'CUSTOMER_ACTION':
      case 'FUNDS_IN_TRANSIT':
        return { outcome: payment.status };
      case 'SUCCEEDED':
        return { outcome: 'PAID_AT_PROVIDER', payment: { ...payment, paidAt: payment.paidAt! } };
      case 'OPEN':
        throw new Error(`fake payment ${payment.paymentId} is still open after its cancel`);
    }
  }

  async refund(request: RefundRequest): Promise<{ refundRef: string }> {
    await this.recorder.record('payments', 'refund', request.paymentId, request);
    return { refundRef: fakeRefundRef(request.paymentId) };
  }

  /**
   * Every event in fakes.provider_events: the fake delivers no webhook of its own (the callback is
   * posted by whoever plays the customer), so it cannot tell which were delivered. Neither faulted
   * nor recorded: the sweep's listing is not one of the effects the checker counts.
   */
  async listEvents({ createdSince, startingAfter, limit }: EventsRequest): Promise<EventsPage> {
    const after =
      startingAfter === undefined
        ? Prisma.empty
        : Prisma.sql`AND (e.created_at, e.seq) < (SELECT created_at, seq FROM fakes.provider_events WHERE event_id = ${startingAfter})`;
    const { rows } = await query<{
      event_id: string;
      type: 'payment_intent.succeeded' | 'refund.failed';
      payment_id: string;
      refund_ref: string | null;
      reason: string | null;
      created_at: Date;
    }>(
      this.db.pool,
      Prisma.sql`
        SELECT e.event_id, e.type, e.payment_id, e.refund_ref, e.reason, e.created_at
        FROM fakes.provider_events e
        WHERE e.created_at >= ${new Date(createdSince)} ${after}
        ORDER BY e.created_at DESC, e.seq DESC
        LIMIT ${limit + 1}`,
    );
    const events = await Promise.all(
      rows.slice(0, limit).map(async (row) => {
        const eventId = row.event_id;
        if (row.type === 'refund.failed') {
          const refund = { refundRef: row.refund_ref!, paymentId: row.payment_id, reason: row.reason! };
          return { eventId, createdAt: row.created_at.toISOString(), event: { eventId, type: row.type, refund } };
        }
        const payment = await findFakePayment(this.db.pool, { paymentId: row.payment_id });
        return {
          eventId,
          createdAt: row.created_at.toISOString(),
          event: payment && { eventId, type: row.type, payment: { ...payment, status: 'SUCCEEDED' as const } },
        };
      }),
    );
    return { events, hasMore: rows.length > limit };
  }
}

const fakeRefundRef = (paymentId: string): string => `fake-refund-${paymentId}`;

/**
 * The provider fails a refund it had made (a card issuer turning it down days later), and keeps
 * the event; nothing posts it, as when its webhook is lost. Returns the event's id.
 */
export async function failFakeRefund(
  db: Pick<Db, 'pool'>,
  failure: { paymentId: string; reason: string },
): Promise<string> {
  const eventId = `evt_fake_${randomBytes(12).toString('hex')}`;
  await query(
    db.pool,
    Prisma.sql`
      INSERT INTO fakes.provider_events (event_id, type, payment_id, refund_ref, reason)
      VALUES (${eventId}, 'refund.failed', ${failure.paymentId}, ${fakeRefundRef(failure.paymentId)}, ${failure.reason})`,
  );
  return eventId;
}

/** The local provider's account: test mode, in euros, on no Connect account. */
export const FAKE_PAYMENT_ACCOUNT: PaymentAccount = { currency: 'eur', livemode: false, connectAccount: null };

/** One payment per order, named after it, so the customer side (`npm run pay`) can find it. */
export const fakePaymentId = (orderId: string): string => `pi_fake_${orderId.replaceAll('-', '')}`;

export type FakeCharge =
  | { outcome: 'SUCCEEDED'; payment: ProviderPayment }
  /** The provider refuses: the payment was cancelled, or is paid already (`payment` says which). */
  | { outcome: 'REFUSED'; status: ProviderPaymentStatus; payment: ProviderPayment }
  /** The order has no payment at this provider (callback-only, or not created yet). */
  | { outcome: 'NO_PAYMENT' };

/**
 * The customer pays the order's payment (`amountCents`: what the card was charged, in `currency`
 * when given; a test may send a wrong amount or currency), or the money on its way arrives. Only a
 * payment not cancelled nor paid can succeed, so a cancelled order cannot be paid. The provider
 * keeps the payment's event (listEvents), whether or not its webhook is then posted.
 */
export async function chargeFakePayment(
  db: Pick<Db, 'pool'>,
  charge: { orderId: string; amountCents: number; currency?: string },
): Promise<FakeCharge> {
  const ref = { orderId: charge.orderId };
  const { rowCount } = await query(
    db.pool,
    Prisma.sql`
      WITH paid AS (
        UPDATE fakes.payment_intents SET state = 'SUCCEEDED', amount_received = ${charge.amountCents}, paid_at = now(),
          currency = COALESCE(${charge.currency ?? null}::text, currency)
        WHERE ${matches(ref)} AND state IN ('OPEN', 'CUSTOMER_ACTION', 'FUNDS_IN_TRANSIT')
        RETURNING payment_id, paid_at)
      INSERT INTO fakes.provider_events (event_id, type, payment_id, created_at)
      SELECT 'evt_' || payment_id || '_succeeded', 'payment_intent.succeeded', payment_id, paid_at FROM paid`,
  );
  const payment = await findFakePayment(db.pool, ref);
  if (!payment) return { outcome: 'NO_PAYMENT' };
  return rowCount === 1 ? { outcome: 'SUCCEEDED', payment } : { outcome: 'REFUSED', status: payment.status, payment };
}

/**
 * What the customer or their bank does to the order's payment short of paying it, as Stripe's
 * intents move: `action` starts a 3-D Secure challenge (CUSTOMER_ACTION), `funds` submits a debit or
 * shows a voucher (FUNDS_IN_TRANSIT), `bounce` is a debit that failed (OPEN again, as Stripe's
 * `requires_payment_method` after `payment_intent.payment_failed`). Only a payment not cancelled nor
 * paid moves; the answer is the payment as it now stands.
 */
export const FAKE_PAYMENT_MOVES = { action: 'CUSTOMER_ACTION', funds: 'FUNDS_IN_TRANSIT', bounce: 'OPEN' } as const;
export type FakePaymentMove = keyof typeof FAKE_PAYMENT_MOVES;

export async function moveFakePayment(
  db: Pick<Db, 'pool'>,
  move: { orderId: string; to: FakePaymentMove },
): Promise<FakeCharge> {
  const ref = { orderId: move.orderId };
  const { rowCount } = await query(
    db.pool,
    Prisma.sql`
      UPDATE fakes.payment_intents SET state = ${FAKE_PAYMENT_MOVES[move.to]}
      WHERE ${matches(ref)} AND state IN ('OPEN', 'CUSTOMER_ACTION', 'FUNDS_IN_TRANSIT')`,
  );
  const payment = await findFakePayment(db.pool, ref);
  if (!payment) return { outcome: 'NO_PAYMENT' };
  return rowCount === 1 ? { outcome: 'SUCCEEDED', payment } : { outcome: 'REFUSED', status: payment.status, payment };
}

export async function findFakePayment(on: Queryable, request: PaymentRef): Promise<ProviderPayment | undefined> {
  const { rows } = await query<{
    payment_id: string;
    order_id: string;
    amount_cents: string;
    amount_received: string | null;
    currency: string;
    status: ProviderPaymentStatus;
    paid_at: Date | null;
  }>(
    on,
    Prisma.sql`
      SELECT payment_id, order_id, amount_cents, amount_received, currency, state AS status, paid_at
      FROM fakes.payment_intents WHERE ${matches(request)}`,
  );
  const row = rows[0];
  if (!row) return undefined;
  return {
    paymentId: row.payment_id,
    orderId: row.order_id,
    amountCents: Number(row.amount_received ?? row.amount_cents),
    currency: row.currency,
    // A test-mode provider on the platform's own account; its payments name no customer.
    livemode: false,
    connectAccount: null,
    customerId: undefined,
    status: row.status,
    paidAt: row.paid_at?.toISOString(),
  };
}

function matches(request: PaymentRef): Prisma.Sql {
  // As text: an order id that is not a uuid names no payment rather than failing the statement.
  return 'paymentId' in request
    ? Prisma.sql`payment_id = ${request.paymentId}`
    : Prisma.sql`order_id::text = ${request.orderId}`;
}

const refKey = (request: PaymentRef): string => ('paymentId' in request ? request.paymentId : request.orderId);
