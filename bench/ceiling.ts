import pg from 'pg';
import { ORDER_TRANSITIONS } from '../workflows/order-status.js';
import { sleep, type PhaseContext } from './context.js';
import { ResourceMeter, type ResourceUse } from './resources.js';
import { ROLES } from './stack.js';

/**
 * The machine's limit for the one statement every cancellation needs: the guarded cancel
 * (cancelOrder's UPDATE: by id, status among the transition's from-states, deadline passed) on
 * pre-created due rows, in tight loops on N connections, nothing else running.
 */
export interface CeilingLevel {
  connections: number;
  updatesPerS: number;
  resources: ResourceUse;
}

const GUARDED_CANCEL = `
  UPDATE orders SET status = 'CANCELLED'::"OrderStatus", cancelled_at = now(), cancel_reason = 'PAYMENT_TIMEOUT'::"CancelReason"
  WHERE id = $1::uuid AND status = ANY($2::"OrderStatus"[]) AND expires_at <= now()`;

export async function runCeiling(ctx: PhaseContext): Promise<CeilingLevel[]> {
  const { options, stack, observer } = ctx;
  const rowsNeeded = options.ceilingConnections.length * options.ceilingS * 6_000;
  ctx.progress(`ceiling: creating ${rowsNeeded} due UNPAID rows`);
  const { rows } = await observer.query<{ id: string }>(
    `INSERT INTO orders (id, customer_id, status, total_cents, created_at, expires_at, request_hash)
     SELECT gen_random_uuid(), 'bench-ceiling-' || n, 'UNPAID', 100, now(), now() - interval '1 second', 'ceiling'
     FROM generate_series(1, ${rowsNeeded}) AS n RETURNING id`,
  );
  await observer.query('VACUUM ANALYZE orders');
  const ids = rows.map((r) => r.id);
  let next = 0;
  const levels: CeilingLevel[] = [];
  for (const n of options.ceilingConnections) {
    const pool = new pg.Pool({ connectionString: stack.urlAs(ROLES.seed), max: n });
    await Promise.all(Array.from({ length: n }, () => pool.query('SELECT 1')));
    const meter = new ResourceMeter(() => stack.pids());
    const until = Date.now() + options.ceilingS * 1000;
    let done = 0;
    await Promise.all(
      Array.from({ length: n }, async () => {
        const client = await pool.connect();
        try {
          while (Date.now() < until && next < ids.length) {
            const r = await client.query({ name: 'guarded-cancel', text: GUARDED_CANCEL, values: [ids[next++], ORDER_TRANSITIONS.cancel.from] });
            done += r.rowCount ?? 0;
          }
        } finally {
          client.release();
        }
      }),
    );
    const resources = meter.finish();
    await pool.end();
    levels.push({ connections: n, updatesPerS: done / resources.wallS, resources });
    ctx.progress(`ceiling: ${n} connections → ${(done / resources.wallS).toFixed(0)} guarded updates/s`);
    await sleep(500);
  }
  return levels;
}
