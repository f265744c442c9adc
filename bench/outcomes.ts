import { setTimeout as sleep } from 'node:timers/promises';
import type { DbObserver } from './db-stats.js';

/**
 * What happened to a group of orders (by customer id prefix), read from the database: the cancel
 * lag is cancelled_at − expires_at (both from the database clock); "compensated" is when the
 * cancellation notice, the last compensation step, was recorded.
 */
export interface CancelOutcome {
  lagsMs: number[];
  compensatedLagsMs: number[];
  negative: number;
  stillUnpaidPastDeadline: number;
  firstExpiry: Date | null;
  lastCompensated: Date | null;
}

export async function cancelOutcome(db: DbObserver, prefix: string): Promise<CancelOutcome> {
  const { rows } = await db.query<{ lag_ms: number; comp_ms: number | null }>(
    `SELECT extract(epoch FROM o.cancelled_at - o.expires_at) * 1000 AS lag_ms,
            extract(epoch FROM e.created_at - o.expires_at) * 1000 AS comp_ms
     FROM orders o
     LEFT JOIN fakes.effects e ON e.service = 'notification' AND e.operation = 'ORDER_CANCELLED'
                              AND e.idempotency_key = o.id::text || ':ORDER_CANCELLED'
     WHERE o.customer_id LIKE $1 AND o.status = 'CANCELLED' AND o.cancel_reason = 'PAYMENT_TIMEOUT'`,
    [`${prefix}%`],
  );
  const lagsMs = rows.map((r) => Number(r.lag_ms));
  const edges = await db.query<{ unpaid: string; first_expiry: Date | null; last_comp: Date | null }>(
    `SELECT count(*) FILTER (WHERE o.status = 'UNPAID' AND o.expires_at < now()) AS unpaid,
            min(o.expires_at) AS first_expiry,
            max(e.created_at) AS last_comp
     FROM orders o
     LEFT JOIN fakes.effects e ON e.service = 'notification' AND e.operation = 'ORDER_CANCELLED'
                              AND e.idempotency_key = o.id::text || ':ORDER_CANCELLED'
     WHERE o.customer_id LIKE $1`,
    [`${prefix}%`],
  );
  return {
    lagsMs,
    compensatedLagsMs: rows.filter((r) => r.comp_ms !== null).map((r) => Number(r.comp_ms)),
    negative: lagsMs.filter((l) => l < 0).length,
    stillUnpaidPastDeadline: Number(edges.rows[0]!.unpaid),
    firstExpiry: edges.rows[0]!.first_expiry,
    lastCompensated: edges.rows[0]!.last_comp,
  };
}

/** Orders of the group not yet through: unpaid, or cancelled without the cancellation notice yet. */
export async function unsettledCount(
  db: DbObserver,
  prefix: string,
): Promise<{ unpaidDue: number; uncompensated: number; cancelled: number }> {
  const { rows } = await db.query<{ unpaid_due: string; uncompensated: string; cancelled: string }>(
    `SELECT count(*) FILTER (WHERE o.status = 'UNPAID' AND o.expires_at <= now()) AS unpaid_due,
            count(*) FILTER (WHERE o.status = 'CANCELLED' AND e.idempotency_key IS NULL) AS uncompensated,
            count(*) FILTER (WHERE o.status = 'CANCELLED') AS cancelled
     FROM orders o
     LEFT JOIN fakes.effects e ON e.service = 'notification' AND e.operation = 'ORDER_CANCELLED'
                              AND e.idempotency_key = o.id::text || ':ORDER_CANCELLED'
     WHERE o.customer_id LIKE $1`,
    [`${prefix}%`],
  );
  const r = rows[0]!;
  return { unpaidDue: Number(r.unpaid_due), uncompensated: Number(r.uncompensated), cancelled: Number(r.cancelled) };
}

/** Milliseconds from sending each webhook to the order's paid_at. */
export async function paidLatencies(
  db: DbObserver,
  sentAt: Map<string, number>,
): Promise<{ latenciesMs: number[]; notPaid: number }> {
  if (sentAt.size === 0) return { latenciesMs: [], notPaid: 0 };
  const { rows } = await db.query<{ id: string; paid_ms: number | null }>(
    `SELECT id, extract(epoch FROM paid_at) * 1000 AS paid_ms FROM orders WHERE id = ANY($1::uuid[])`,
    [[...sentAt.keys()]],
  );
  const latenciesMs: number[] = [];
  let notPaid = 0;
  for (const r of rows) {
    if (r.paid_ms === null) notPaid++;
    else latenciesMs.push(Number(r.paid_ms) - sentAt.get(r.id)!);
  }
  return { latenciesMs, notPaid };
}

/**
 * Waits (bounded) until every due order of the group is cancelled and compensated; reports progress.
 * `stallMs`: gives up sooner once nothing has moved for that long (what a dead consumer left behind
 * for good: the scan job's committed batch, graphile-worker's 4-hour lock).
 */
export async function waitUntilSettled(
  db: DbObserver,
  prefix: string,
  until: { notBefore: number; deadline: number; stallMs?: number },
  progress: (line: string) => void,
): Promise<boolean> {
  let last = '';
  let movedAt = Date.now();
  for (let round = 0; ; round++) {
    const u = await unsettledCount(db, prefix);
    const now = Date.now();
    const state = `${u.unpaidDue}/${u.uncompensated}`;
    if (state !== last) [last, movedAt] = [state, now];
    if (until.stallMs !== undefined && now >= until.notBefore && now - movedAt > until.stallMs) {
      progress(
        `nothing moved for ${until.stallMs / 1000} s: ${u.unpaidDue} due but unpaid, ${u.uncompensated} awaiting compensation left`,
      );
      return false;
    }
    if (round % 4 === 0)
      progress(`cancelled ${u.cancelled}, due but unpaid ${u.unpaidDue}, awaiting compensation ${u.uncompensated}`);
    if (now >= until.notBefore && u.unpaidDue === 0 && u.uncompensated === 0) return true;
    if (now > until.deadline) return false;
    await sleep(500);
  }
}

/**
 * Orders of the group whose work is not over: unpaid, paid with a fulfillment step still pending,
 * or cancelled without the notice yet. Probes are paid, so this is what their cost has to wait for.
 */
export async function unfinishedCount(db: DbObserver, prefix: string): Promise<number> {
  const { rows } = await db.query<{ unfinished: string }>(
    `SELECT count(*) AS unfinished
     FROM orders o
     WHERE o.customer_id LIKE $1
       AND (o.status = 'UNPAID'
            OR (o.status = 'PAID' AND EXISTS (SELECT 1 FROM fulfillment_steps f WHERE f.order_id = o.id AND f.status = 'PENDING'))
            OR (o.status = 'CANCELLED' AND NOT EXISTS (SELECT 1 FROM fakes.effects e WHERE e.service = 'notification'
                  AND e.operation = 'ORDER_CANCELLED' AND e.idempotency_key = o.id::text || ':ORDER_CANCELLED')))`,
    [`${prefix}%`],
  );
  return Number(rows[0]!.unfinished);
}

/** Waits until no order of the group has work left, or until `deadline`; true when none has. */
export async function waitUntilFinished(db: DbObserver, prefix: string, deadline: number): Promise<boolean> {
  for (;;) {
    if ((await unfinishedCount(db, prefix)) === 0) return true;
    if (Date.now() > deadline) return false;
    await sleep(250);
  }
}
