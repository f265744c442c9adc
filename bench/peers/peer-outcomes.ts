import type { DbObserver } from '../db-stats.js';

/**
 * What a crash can do to a peer's expiries, read from the database after everything settled (the
 * fakes log every call durably, dev/fakes/recorder.ts): expiries lost (orders still UNPAID past
 * their deadline), cancelled but never compensated (no cancellation notice), run twice (the notice
 * asked for more than once; the guarded cancel itself cannot win twice), and paid orders cancelled.
 */
export interface CrashOutcome {
  lost: number;
  uncompensated: number;
  runTwice: number;
  paidButCancelled: number;
}

export async function crashOutcome(db: DbObserver, prefix: string, paidIds: readonly string[]): Promise<CrashOutcome> {
  const { rows } = await db.query<{ lost: string; uncompensated: string; run_twice: string; paid_cancelled: string }>(
    `WITH o AS (SELECT id, status, expires_at FROM orders WHERE customer_id LIKE $1),
     notices AS (
       SELECT c.idempotency_key, count(*) AS calls FROM fakes.calls c
       WHERE c.service = 'notification' AND c.operation = 'ORDER_CANCELLED'
         AND c.idempotency_key IN (SELECT id::text || ':ORDER_CANCELLED' FROM o)
       GROUP BY c.idempotency_key)
     SELECT
       (SELECT count(*) FROM o WHERE status = 'UNPAID' AND expires_at < now()) AS lost,
       (SELECT count(*) FROM o WHERE status = 'CANCELLED'
          AND NOT EXISTS (SELECT 1 FROM notices n WHERE n.idempotency_key = o.id::text || ':ORDER_CANCELLED')) AS uncompensated,
       (SELECT count(*) FROM notices WHERE calls > 1) AS run_twice,
       (SELECT count(*) FROM o WHERE id = ANY($2::uuid[]) AND status <> 'PAID') AS paid_cancelled`,
    [`${prefix}%`, paidIds],
  );
  const r = rows[0]!;
  return {
    lost: Number(r.lost),
    uncompensated: Number(r.uncompensated),
    runTwice: Number(r.run_twice),
    paidButCancelled: Number(r.paid_cancelled),
  };
}
