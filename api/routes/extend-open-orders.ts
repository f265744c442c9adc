import { Prisma } from '@prisma/client';
import { statusMove } from '../../store/guarded-sql.js';
import { appendOrderEvent, BUMP_EVENT_SEQ, EVENT_COLUMNS, isoTime } from '../../store/order-events.js';
import { ORDER_TRANSITIONS } from '../../domain/statuses.js';
import type { Db } from '../../lib/db.js';
import { inTransaction, query } from '../../lib/sql.js';
import type { ApiHandler } from '../endpoint-table.js';
import type { Logger } from '../../lib/logger.js';

/**
 * Holds the deadline during a provider incident: every open order (of one customer, or due before
 * a time, if asked) gets `minutes` more, in one guarded statement — only UNPAID orders not yet due
 * move, so it cannot race a payment or a cancel into a wrong state. The workflows are not told:
 * each learns its new deadline when its timer fires and the guarded cancel answers NOT_DUE, and
 * waits again (workflows/order-lifecycle.ts); the Web UI's OrderExpiresAt follows then.
 */
export const extendOpenOrders: ApiHandler<
  'extendOpenOrders',
  { db: Db; logger: Logger; clock?: (() => Promise<Date>) | undefined }
> = async ({ body }, deps) => {
  const now = deps.clock ? await deps.clock() : null;
  const { rows } = await inTransaction(deps.db.pool, async (tx) => {
    await tx.query(`SET LOCAL statement_timeout = ${EXTEND_STATEMENT_TIMEOUT_MS}`);
    return query<{ extended: number }>(tx, extendOpenOrdersStatement(body, now));
  });
  const { extended } = rows[0]!;
  deps.logger.info({ ...body, extended }, 'open orders extended');
  return { extended, minutes: body.minutes };
};

/**
 * The extend's own statement_timeout, above the pool's (DATABASE_STATEMENT_TIMEOUT, 10 s by
 * default): its time grows with the open orders (10.3 s for 100,100 with their events, docs/capacity.md), and it is
 * one deliberate operator call that would otherwise start failing at a size only a big sale reaches.
 * Two minutes is about 1.2 million open orders at that rate.
 */
export const EXTEND_STATEMENT_TIMEOUT_MS = 120_000;

/**
 * The one guarded statement, with an `order.deadline_extended` per order it moved; it answers how
 * many it moved (`extended`). `now` being the database's clock when null (bench/ times it as it is).
 * The clock is read per row, not once (now() is the transaction's start): the statement may run for
 * seconds, or wait on a row, and an order whose deadline passes meanwhile is due, not extended.
 */
export function extendOpenOrdersStatement(
  { minutes, customerId, expiringBefore }: { minutes: number; customerId?: string; expiringBefore?: string },
  now: Date | null,
): Prisma.Sql {
  const extend = statusMove('orders', ORDER_TRANSITIONS.extend);
  return Prisma.sql`
    WITH extended AS (
      UPDATE orders SET ${extend.set}, expires_at = expires_at + ${minutes} * interval '1 minute', ${BUMP_EVENT_SEQ}
      WHERE ${extend.guard} AND expires_at > COALESCE(${now}::timestamptz, clock_timestamp()) AND closing_since IS NULL
        ${customerId === undefined ? Prisma.empty : Prisma.sql`AND customer_id = ${customerId}`}
        ${expiringBefore === undefined ? Prisma.empty : Prisma.sql`AND expires_at < ${new Date(expiringBefore)}`}
      RETURNING ${EVENT_COLUMNS}, expires_at),
    ${appendOrderEvent({ type: 'order.deadline_extended', changed: { order: 'extended' }, data: { expiresAt: isoTime(Prisma.sql`c.expires_at`) } })}
    SELECT count(*)::int AS extended FROM extended`;
}
