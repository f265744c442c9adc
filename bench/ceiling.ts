import pg from 'pg';
import { createDb } from '../lib/db.js';
import { cancelStatement } from '../activities/orders.js';
import { setTimeout as sleep } from 'node:timers/promises';
import type { PhaseContext } from './context.js';
import { ResourceMeter, type ResourceUse } from './resources.js';
import { ROLES } from './stack.js';

/**
 * The machine's limit for the one statement every cancellation needs: the guarded cancel
 * (cancelOrder's statement: by id, status among the transition's from-states, deadline passed,
 * with its stock and coupon release) on pre-created due rows, in tight loops on N connections,
 * nothing else running.
 */
export interface CeilingLevel {
  connections: number;
  updatesPerS: number;
  resources: ResourceUse;
}

/**
 * Prisma vs `pg` for the guarded cancel on one connection: what the client costs the calling
 * process per statement. Both send the service's own statement (activities/orders.ts
 * cancelStatement): Prisma through `$queryRaw`, as cancelOrder did before it ran on pg; pg as a
 * named prepared statement.
 */
export interface ClientCost {
  client: 'pg' | 'Prisma $queryRaw';
  updatesPerS: number;
  /** CPU of the calling process per statement, microseconds. */
  cpuUsPerStatement: number;
}

export interface CeilingResult {
  levels: CeilingLevel[];
  clients: ClientCost[];
}

/** The guarded cancel of a due order by the database's clock, as the timer path sends it. */
const cancelDue = (orderId: string) => cancelStatement({ orderId, reason: 'PAYMENT_TIMEOUT' }, null);
/** The statement answers every order it was sent; it cancelled the ones with a cancellation time. */
const cancelled = (rows: Array<{ cancelled_at?: unknown }>) => rows.filter((r) => r.cancelled_at != null).length;

/** The same statement through pg: its text (with $n placeholders) prepared once per connection. */
function pgCancel(client: pg.ClientBase, orderId: string): Promise<pg.QueryResult> {
  const statement = cancelDue(orderId);
  return client.query({ name: 'guarded-cancel', text: statement.text, values: statement.values });
}

export async function runCeiling(ctx: PhaseContext): Promise<CeilingResult> {
  const { options, stack, observer } = ctx;
  const rowsNeeded = (options.ceilingConnections.length + 2) * options.ceilingS * 6_000;
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
    const meter = new ResourceMeter(stack.pids);
    const until = Date.now() + options.ceilingS * 1000;
    let done = 0;
    await Promise.all(
      Array.from({ length: n }, async () => {
        const client = await pool.connect();
        try {
          while (Date.now() < until && next < ids.length) {
            done += cancelled((await pgCancel(client, ids[next++]!)).rows);
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
  const take = () => (next < ids.length ? ids[next++]! : undefined);
  const clients = [
    await timeClient(ctx, 'pg', take, async () => {
      const client = new pg.Client({ connectionString: stack.urlAs(ROLES.seed) });
      await client.connect();
      return {
        cancel: async (id) => cancelled((await pgCancel(client, id)).rows),
        close: () => client.end(),
      };
    }),
    await timeClient(ctx, 'Prisma $queryRaw', take, async () => {
      const db = createDb(stack.urlAs(ROLES.seed), { maxConnections: 1 });
      await db.$queryRaw`SELECT 1`;
      return {
        cancel: async (id) => cancelled(await db.$queryRaw<Array<{ cancelled_at: Date | null }>>(cancelDue(id))),
        close: () => db.$disconnect(),
      };
    }),
  ];
  return { levels, clients };
}

async function timeClient(
  ctx: PhaseContext,
  client: ClientCost['client'],
  take: () => string | undefined,
  open: () => Promise<{ cancel(id: string): Promise<number>; close(): Promise<void> }>,
): Promise<ClientCost> {
  const c = await open();
  try {
    const cpu = process.cpuUsage();
    const t0 = performance.now();
    const until = Date.now() + ctx.options.ceilingS * 1000;
    let done = 0;
    for (let id = take(); id !== undefined && Date.now() < until; id = take()) done += await c.cancel(id);
    const wallS = (performance.now() - t0) / 1000;
    const used = process.cpuUsage(cpu);
    const result = {
      client,
      updatesPerS: done / wallS,
      cpuUsPerStatement: (used.user + used.system) / Math.max(1, done),
    };
    ctx.progress(
      `ceiling: ${client} on 1 connection → ${result.updatesPerS.toFixed(0)}/s, ${result.cpuUsPerStatement.toFixed(0)} µs of client CPU per statement`,
    );
    return result;
  } finally {
    await c.close();
  }
}
