import { Prisma } from '@prisma/client';
import type pg from 'pg';
import { z } from 'zod';
import type { CustomerEmail, CustomerEmailKind, Mailer } from '../adapters/ports/mailer.js';
import type { OrderEventType } from '../domain/order-events.js';
import { CANCEL_REASONS, REFUND_REASONS, type CancelReason, type RefundReason } from '../domain/statuses.js';
import { inTransaction, query, type Queryable } from '../lib/sql.js';

/**
 * The customers' emails, one per order event that has one: a consumer of the outbox, run as a job
 * of the event queue (graphile-worker), not as a Temporal activity. It shares the activities' room
 * and rules: dependencies handed in, idempotent, and a failure thrown means "try again".
 */

/** An `order_events` row, as the queue hands it over (occurredAt as a Date or its JSON string). */
export interface OrderEventRow {
  id: string;
  orderId: string;
  seq: number;
  type: string;
  data: unknown;
  occurredAt: Date | string;
}

/** The order events a customer hears about by email, and which email each is. */
export const CUSTOMER_EMAIL_EVENTS: Readonly<Partial<Record<OrderEventType, CustomerEmailKind>>> = {
  'order.placed': 'placed',
  'order.payment_reminder': 'payment_reminder',
  'order.paid': 'paid',
  'order.cancelled': 'cancelled',
  'order.refunded': 'refunded',
};

export type CustomerEmailOutcome =
  /** The SMTP server took it: recorded, so the event sends nothing again. */
  | { outcome: 'sent'; messageId: string }
  /** The server refused it for good (an unknown mailbox): recorded with why, not retried. */
  | { outcome: 'rejected'; messageId: string; reason: string }
  /** An earlier call sent it (or had it refused). */
  | { outcome: 'already_handled' }
  /** Nothing to send: not an email event, no address on the order, or a reminder no longer due. */
  | { outcome: 'none'; why: string };

export interface CustomerEmailDeps {
  pool: pg.Pool;
  mailer: Mailer;
  /** CURRENCY: what an order placed before orders stored their currency was placed in. */
  currency: string;
}

/** The graphile-worker task name the job handler below is registered under. */
export const CUSTOMER_EMAIL_TASK = 'customer_email';

export function createCustomerEmails(deps: CustomerEmailDeps) {
  /**
   * Sends the email this event calls for, at most once per event as far as this service can tell:
   * the claim on the event's row in `customer_emails` is inserted in a transaction that commits only
   * after the server answered, so a second call (or one running at the same time, which waits on
   * the claim) sends nothing. A failed send rolls the claim back and throws MailerUnavailable, to be
   * retried; the retry's message carries the same Message-ID. A process that dies after the server
   * took the message and before the commit sends it again, with that same Message-ID
   * (docs/operations.md, "Customer emails").
   */
  async function sendCustomerEmail(event: OrderEventRow): Promise<CustomerEmailOutcome> {
    const kind = CUSTOMER_EMAIL_EVENTS[event.type as OrderEventType];
    if (kind === undefined) return { outcome: 'none', why: `${event.type} has no email` };
    return inTransaction(deps.pool, async (tx) => {
      const order = await readOrder(tx, event.orderId);
      if (order.email === null) return { outcome: 'none', why: 'the order has no email address' };
      const notDue = kind === 'payment_reminder' ? reminderNotDue(order, event.data) : undefined;
      if (notDue !== undefined) return { outcome: 'none', why: notDue };
      const messageId = deps.mailer.messageId(event.id);
      const { rowCount } = await query(
        tx,
        Prisma.sql`
          INSERT INTO customer_emails (event_id, order_id, type, recipient, message_id)
          VALUES (${event.id}::uuid, ${event.orderId}::uuid, ${event.type}, ${order.email}, ${messageId})
          ON CONFLICT (event_id) DO NOTHING`,
      );
      if (rowCount === 0) return { outcome: 'already_handled' };
      const currency = order.currency ?? deps.currency;
      const email = await customerEmail(tx, kind, event, { ...order, currency }, order.email);
      const result = await deps.mailer.send(email);
      if (result.outcome === 'accepted') return { outcome: 'sent', messageId: result.messageId };
      await query(
        tx,
        Prisma.sql`UPDATE customer_emails SET rejection = ${result.reason} WHERE event_id = ${event.id}::uuid`,
      );
      return result;
    });
  }

  return {
    sendCustomerEmail,
    /**
     * The graphile-worker task (CUSTOMER_EMAIL_TASK): its payload is the event row, or `{ eventId }`
     * to read it from order_events. A throw is the queue's cue to retry with backoff.
     */
    async customerEmailTask(payload: unknown): Promise<void> {
      const parsed = TaskPayload.parse(payload);
      await sendCustomerEmail('eventId' in parsed ? await readEvent(deps.pool, parsed.eventId) : parsed);
    },
  };
}

const TaskPayload = z.union([
  z.object({ eventId: z.uuid() }),
  z.object({
    id: z.uuid(),
    orderId: z.uuid(),
    seq: z.number().int(),
    type: z.string(),
    data: z.unknown(),
    occurredAt: z.union([z.string(), z.date()]),
  }),
]);

interface OrderRow {
  email: string | null;
  status: string;
  total_cents: number;
  currency: string | null;
  expires_at: Date;
  cancel_reason: CancelReason | null;
}

/** The order as it is now: the truth for its address, total, currency, deadline and cancel reason. */
async function readOrder(tx: Queryable, orderId: string): Promise<OrderRow> {
  const { rows } = await query<OrderRow>(
    tx,
    Prisma.sql`
      SELECT email, status::text, total_cents, currency, expires_at, cancel_reason::text AS cancel_reason
      FROM orders WHERE id = ${orderId}::uuid`,
  );
  // The event is written with its order's change: an event without its order is a bug, retried until seen.
  if (!rows[0]) throw new Error(`customer email: no order ${orderId}`);
  return rows[0];
}

async function readEvent(pool: pg.Pool, eventId: string): Promise<OrderEventRow> {
  const { rows } = await query<OrderEventRow>(
    pool,
    Prisma.sql`
      SELECT id, order_id AS "orderId", seq, type, data, occurred_at AS "occurredAt"
      FROM order_events WHERE id = ${eventId}::uuid`,
  );
  if (!rows[0]) throw new Error(`customer email: no order event ${eventId}`);
  return rows[0];
}

/**
 * A reminder that came too late to be true: the order was paid, cancelled or is awaiting funds
 * since it was written, or its deadline moved (the moved deadline's own reminder follows).
 */
function reminderNotDue(order: OrderRow, data: unknown): string | undefined {
  if (order.status !== 'UNPAID') return `the order is ${order.status} now`;
  const remindedOf = z.object({ expiresAt: z.iso.datetime({ offset: true }) }).safeParse(data);
  if (remindedOf.success && new Date(remindedOf.data.expiresAt).getTime() !== order.expires_at.getTime())
    return 'the deadline moved since the reminder was written';
  return undefined;
}

async function customerEmail(
  tx: Queryable,
  kind: CustomerEmailKind,
  event: OrderEventRow,
  order: OrderRow & { currency: string },
  to: string,
): Promise<CustomerEmail> {
  const base = { eventId: event.id, orderId: event.orderId, to };
  const total = { cents: order.total_cents, currency: order.currency };
  switch (kind) {
    case 'placed':
      return { ...base, kind, total, expiresAt: order.status === 'UNPAID' ? order.expires_at : null };
    case 'payment_reminder':
      return { ...base, kind, total, expiresAt: order.expires_at };
    case 'paid':
      return { ...base, kind, total };
    case 'cancelled':
      return { ...base, kind, reason: order.cancel_reason ?? reasonIn(event.data, CANCEL_REASONS) };
    case 'refunded':
      return { ...base, kind, ...(await refund(tx, event, order.currency)) };
  }
}

/**
 * The refunded payment, by the event's paymentId: what was given back and why, from the payments
 * and refunds tables; the event's own fields only where those are silent.
 */
async function refund(
  tx: Queryable,
  event: OrderEventRow,
  orderCurrency: string,
): Promise<{ amount: { cents: number; currency: string }; reason: RefundReason | null }> {
  const data = z
    .object({ paymentId: z.string().optional(), amountCents: z.number().int().optional() })
    .catch({})
    .parse(event.data);
  const { rows } = await query<{
    amount_cents: number;
    refunded_cents: number | null;
    currency: string | null;
    refund_reason: RefundReason | null;
  }>(
    tx,
    Prisma.sql`
      SELECT p.amount_cents, r.amount_cents AS refunded_cents, p.currency, p.refund_reason::text AS refund_reason
      FROM payments p LEFT JOIN refunds r ON r.payment_id = p.payment_id
      WHERE p.payment_id = ${data.paymentId ?? null} AND p.order_id = ${event.orderId}::uuid`,
  );
  const payment = rows[0];
  const cents = payment?.refunded_cents ?? data.amountCents ?? payment?.amount_cents;
  // A malformed event: it fails the same way on every retry, until the queue gives up on it.
  if (cents === undefined) throw new Error(`customer email: event ${event.id} names no refunded payment or amount`);
  return {
    amount: { cents, currency: payment?.currency ?? orderCurrency },
    reason: payment?.refund_reason ?? reasonIn(event.data, REFUND_REASONS),
  };
}

/** The event's `reason`, if it is one of `reasons`. */
function reasonIn<R extends string>(data: unknown, reasons: readonly R[]): R | null {
  const reason = (data as { reason?: unknown } | null)?.reason;
  return reasons.includes(reason as R) ? (reason as R) : null;
}
