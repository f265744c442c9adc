import { Prisma } from '@prisma/client';
import type { OrderEventType } from '../domain/order-events.js';

/**
 * The one way this service writes to the outbox (`order_events`): WITH-query entries appended to the
 * statement of the guarded change that causes the event, so the event commits with the change or not
 * at all. The event is inserted for the rows of the change's own WITH query (its RETURNING): a loser
 * of the race changed no row, and writes no event. Its `seq` is the order's `event_seq`, bumped on
 * the order's row by the same statement: concurrent events of one order wait for each other's
 * commit on that row and are numbered 1, 2, 3, … without gaps.
 */
export interface OrderEventOf {
  type: OrderEventType;
  /**
   * The WITH query of the change, one row per order that changed (a second row for the same order
   * would get the same seq):
   * - `order`: the guarded UPDATE of the order's own row, which sets BUMP_EVENT_SEQ itself (one
   *   statement cannot update a row twice) and returns EVENT_COLUMNS (an INSERT sets `event_seq` 1);
   * - `rowOfOrder`: a row of another table (a payment, a step) naming its order by `order_id`; the
   *   order's row is bumped here.
   */
  changed: { order: string } | { rowOfOrder: string };
  /**
   * What `data` holds besides `orderId` and `status` (the order's after the change): SQL over `c`,
   * the changed row. Bound values need a cast (`${x}::text`): jsonb_build_object takes any type.
   */
  data: Record<string, Prisma.Sql>;
}

/** For the SET of a guarded UPDATE of orders that causes an event (`changed: { order }`). */
export const BUMP_EVENT_SEQ = Prisma.sql`event_seq = event_seq + 1`;

/**
 * For its RETURNING: what the event takes from the order's row. The status is renamed so that the
 * WITH queries joining the change (a coupon's, a product's guarded move) still read their own.
 */
export const EVENT_COLUMNS = Prisma.sql`id, event_seq, status AS order_status`;

/** The WITH-query entries (comma-separated, without WITH) that append the event, named after `changed`. */
export function appendOrderEvent({ type, changed, data }: OrderEventOf): Prisma.Sql {
  const fields = Object.entries(data).flatMap(([key, value]) => [Prisma.sql`${key}::text`, value]);
  if ('order' in changed) {
    const c = Prisma.raw(changed.order);
    return Prisma.sql`
      ${Prisma.raw(`${changed.order}_event`)} AS (
        INSERT INTO order_events (id, order_id, seq, type, data)
        SELECT gen_random_uuid(), c.id, c.event_seq, ${type}::text,
               ${eventData(Prisma.sql`c.id`, Prisma.sql`c.order_status`, fields)}
        FROM ${c} c)`;
  }
  const c = Prisma.raw(changed.rowOfOrder);
  const bumped = Prisma.raw(`${changed.rowOfOrder}_event_seq`);
  return Prisma.sql`
      ${bumped} AS (
        UPDATE orders o SET event_seq = o.event_seq + 1
        FROM ${c} c WHERE o.id = c.order_id
        RETURNING o.id, o.event_seq, ${eventData(Prisma.sql`o.id`, Prisma.sql`o.status`, fields)} AS data),
      ${Prisma.raw(`${changed.rowOfOrder}_event`)} AS (
        INSERT INTO order_events (id, order_id, seq, type, data)
        SELECT gen_random_uuid(), id, event_seq, ${type}::text, data FROM ${bumped})`;
}

function eventData(orderId: Prisma.Sql, status: Prisma.Sql, fields: Prisma.Sql[]): Prisma.Sql {
  return Prisma.sql`jsonb_build_object('orderId', ${orderId}, 'status', ${status}${
    fields.length > 0 ? Prisma.sql`, ${Prisma.join(fields)}` : Prisma.empty
  })`;
}

/** A timestamptz as the API writes times (`Date.toISOString()`: UTC, milliseconds, `Z`). */
export function isoTime(column: Prisma.Sql): Prisma.Sql {
  return Prisma.sql`to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
}
