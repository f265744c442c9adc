import { Prisma } from '@prisma/client';
import type { OrderEventType } from '../domain/order-events.js';
import { query, type Queryable } from '../lib/sql.js';
import { nowOr, statusIn } from './guarded-sql.js';

const PAYMENT_REMINDER: OrderEventType = 'order.payment_reminder';

/**
 * Marks the order reminded and writes its `order.payment_reminder` event, in one statement: only
 * while it is still UNPAID with the deadline `expiresAt` (not moved since the reminder was timed),
 * that deadline still ahead by `now` (the database's clock when null), its payment not being closed,
 * and not reminded before. The event takes its `seq` from the bump of the order's counter in the
 * same statement. A loser writes nothing. Whether it wrote is the answer.
 */
export async function recordPaymentReminder(
  on: Queryable,
  { orderId, expiresAt }: { orderId: string; expiresAt: string },
  now: Date | null,
): Promise<boolean> {
  const deadline = new Date(expiresAt);
  const { rowCount } = await query(
    on,
    Prisma.sql`
      WITH reminded AS (
        UPDATE orders SET reminded_at = ${nowOr(now)}, event_seq = event_seq + 1
        WHERE id = ${orderId}::uuid AND ${statusIn('orders', ['UNPAID'])} AND expires_at = ${deadline}
          AND expires_at > ${nowOr(now)} AND closing_since IS NULL AND reminded_at IS NULL
        RETURNING id, status, event_seq, reminded_at)
      INSERT INTO order_events (id, order_id, seq, type, data, occurred_at)
      SELECT gen_random_uuid(), id, event_seq, ${PAYMENT_REMINDER},
             jsonb_build_object('orderId', id, 'status', status, 'expiresAt', ${deadline.toISOString()}::text),
             reminded_at
      FROM reminded
      RETURNING seq`,
  );
  return rowCount > 0;
}
