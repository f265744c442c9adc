import { Prisma } from '@prisma/client';
import { ApplicationFailure } from '@temporalio/common';
import type pg from 'pg';
import { MailerUnavailable } from '../adapters/ports/mailer.js';
import type { Notifier } from '../adapters/ports/notifier.js';
import { THIRD_PARTY_FAILURES } from '../domain/errors.js';
import type { OrderEventType } from '../domain/order-events.js';
import type { NotificationTemplate } from '../domain/statuses.js';
import { query } from '../lib/sql.js';
import { createCustomerEmails, type CustomerEmailDeps, type OrderEventRow } from './customer-emails.js';

/** The stored event whose email each notice is. */
const NOTICE_EVENTS: Record<NotificationTemplate, OrderEventType> = {
  PAYMENT_RECEIVED: 'order.paid',
  ORDER_CANCELLED: 'order.cancelled',
  PAYMENT_REFUNDED: 'order.refunded',
};

/**
 * The Notifier as the customer's email: a notice sends the email of its stored event through
 * sendCustomerEmail, the same claim (customer_emails, by event id) as the outbox's email job, so
 * whichever of the two comes first sends it and the other finds it handled. An order without an
 * address has nothing to send: the notice is done. The server refusing the address for good is
 * THIRD_PARTY_REJECTED, whether this notice or the job was told; a server it cannot hand the
 * message to is THIRD_PARTY_UNAVAILABLE, retried.
 */
export function createCustomerEmailNotifier(deps: CustomerEmailDeps): Notifier {
  const { sendCustomerEmail } = createCustomerEmails(deps);
  return {
    async send({ orderId, template, key }) {
      const event = await noticeEvent(deps.pool, orderId, template, key);
      // Each notice follows the change that writes its event: without it, ours is the fault.
      if (!event) throw new Error(`notice ${template}: order ${orderId} has no ${NOTICE_EVENTS[template]} event`);
      let outcome;
      try {
        outcome = await sendCustomerEmail(event);
      } catch (err) {
        if (err instanceof MailerUnavailable)
          throw ApplicationFailure.retryable(`the mail server: ${err.message}`, THIRD_PARTY_FAILURES.unavailable);
        throw err;
      }
      const rejection =
        outcome.outcome === 'rejected'
          ? outcome.reason
          : outcome.outcome === 'already_handled'
            ? await rejectionOf(deps.pool, event.id)
            : null;
      if (rejection !== null)
        throw ApplicationFailure.nonRetryable(
          `the mail server refused the customer's address: ${rejection}`,
          THIRD_PARTY_FAILURES.rejected,
        );
    },
  };
}

/** The order's event this notice is about; for a refund, the one of the refunded payment (`key`). */
async function noticeEvent(
  pool: pg.Pool,
  orderId: string,
  template: NotificationTemplate,
  key: string | undefined,
): Promise<OrderEventRow | undefined> {
  const ofPayment =
    template === 'PAYMENT_REFUNDED' ? Prisma.sql`AND data->>'paymentId' = ${key ?? null}` : Prisma.empty;
  const { rows } = await query<OrderEventRow>(
    pool,
    Prisma.sql`
      SELECT id, order_id AS "orderId", seq, type, data, occurred_at AS "occurredAt"
        FROM order_events WHERE order_id = ${orderId}::uuid AND type = ${NOTICE_EVENTS[template]} ${ofPayment}
       ORDER BY seq DESC LIMIT 1`,
  );
  return rows[0];
}

/** Why the server refused the email an earlier call sent for this event; null: it took it. */
async function rejectionOf(pool: pg.Pool, eventId: string): Promise<string | null> {
  const { rows } = await query<{ rejection: string | null }>(
    pool,
    Prisma.sql`SELECT rejection FROM customer_emails WHERE event_id = ${eventId}::uuid`,
  );
  return rows[0]?.rejection ?? null;
}
