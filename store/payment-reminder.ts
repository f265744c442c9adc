import { Prisma } from '@prisma/client';
import { query, type Queryable } from '../lib/sql.js';
import { nowOr, statusIn } from './guarded-sql.js';
import { appendOrderEvent, BUMP_EVENT_SEQ, EVENT_COLUMNS, isoTime } from './order-events.js';

/**
 * What the reminder came to: written; not written because the order's deadline is no longer the
 * one it was timed for (moved by `POST /orders/extend`, which does not tell the runs), while the order
 * could still be reminded before the new one; or not written, and nothing to remind of (paid,
 * cancelled, closing, awaiting funds, reminded already, or its deadline passed).
 */
export type PaymentReminderOutcome =
  { outcome: 'REMINDED' } | { outcome: 'DEADLINE_MOVED'; expiresAt: string } | { outcome: 'NOT_REMINDED' };

/**
 * Marks the order reminded and writes its `order.payment_reminder` event, in one statement: only
 * while it is still UNPAID with the deadline `expiresAt` (the one the reminder was timed for), that
 * deadline still ahead by `now` (the database's clock when null), its payment not being closed, and
 * not reminded before. A loser writes nothing, and reads the committed row to say why.
 */
export async function recordPaymentReminder(
  on: Queryable,
  { orderId, expiresAt }: { orderId: string; expiresAt: string },
  now: Date | null,
): Promise<PaymentReminderOutcome> {
  const deadline = new Date(expiresAt);
  const still = Prisma.sql`${statusIn('orders', ['UNPAID'])} AND expires_at > ${nowOr(now)}
    AND closing_since IS NULL AND reminded_at IS NULL`;
  const { rows } = await query(
    on,
    Prisma.sql`
      WITH reminded AS (
        UPDATE orders SET reminded_at = ${nowOr(now)}, ${BUMP_EVENT_SEQ}
        WHERE id = ${orderId}::uuid AND expires_at = ${deadline} AND ${still}
        RETURNING ${EVENT_COLUMNS}, expires_at),
      ${appendOrderEvent({
        type: 'order.payment_reminder',
        changed: { order: 'reminded' },
        data: { expiresAt: isoTime(Prisma.sql`c.expires_at`) },
      })}
      SELECT id FROM reminded`,
  );
  if (rows.length > 0) return { outcome: 'REMINDED' };
  // Read after the statement: a change it waited for (an extension, a payment) is committed by now.
  const { rows: moved } = await query<{ expires_at: Date }>(
    on,
    Prisma.sql`SELECT expires_at FROM orders WHERE id = ${orderId}::uuid AND expires_at <> ${deadline} AND ${still}`,
  );
  return moved[0]
    ? { outcome: 'DEADLINE_MOVED', expiresAt: moved[0].expires_at.toISOString() }
    : { outcome: 'NOT_REMINDED' };
}
