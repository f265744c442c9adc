import { createHash } from 'node:crypto';
import type { Prisma } from '@prisma/client';
import type pg from 'pg';

/**
 * SQL on node-postgres directly, for the activities: statements are built with Prisma.sql (values
 * always bound, fragments composable: store/guarded-sql.ts) and run on the pool or on a
 * transaction's client. Prisma's client would run the same statement through its query compiler
 * at several times the CPU (the bench measures both, docs/benchmark.md).
 */
export type Queryable = Pick<pg.Pool | pg.PoolClient, 'query'>;

export async function query<Row extends pg.QueryResultRow = pg.QueryResultRow>(
  on: Queryable,
  statement: Prisma.Sql,
): Promise<{ rows: Row[]; rowCount: number }> {
  const { text, values } = statement;
  const result = await on.query<Row>(preparing.has(on) ? { name: preparedName(text), text, values } : { text, values });
  return { rows: result.rows, rowCount: result.rowCount ?? 0 };
}

/** The pools whose statements are prepared (DATABASE_PREPARED_STATEMENTS), and each connection they open. */
const preparing = new WeakSet<object>();

/**
 * Prepares every statement run on `pool`, once per connection: PostgreSQL then parses it once,
 * not at every call (its CPU per order 0.72× in the bench's interleaved comparison,
 * docs/benchmark.md). The statements' texts are the code's own, values always bound, so a
 * connection holds a bounded set. Needs a session per connection: directly, or through PgBouncer
 * 1.21 or newer with `max_prepared_statements` set (docs/operations.md).
 */
export function prepareStatementsOn(pool: pg.Pool): void {
  preparing.add(pool);
  pool.on('connect', (client) => preparing.add(client));
}

/** A statement's name is its text's: the same text, the same prepared statement on every connection. */
const names = new Map<string, string>();
function preparedName(text: string): string {
  let name = names.get(text);
  if (name === undefined) {
    name = `s_${createHash('sha1').update(text).digest('hex').slice(0, 24)}`;
    names.set(text, name);
  }
  return name;
}

/** Runs `work` in one transaction on one connection: committed if it returns, rolled back if it throws. */
export async function inTransaction<T>(pool: pg.Pool, work: (tx: pg.PoolClient) => Promise<T>): Promise<T> {
  const tx = await pool.connect();
  let broken: Error | undefined;
  // While a client is checked out the pool no longer listens for its errors: a connection lost
  // mid-transaction (a restart, a failover) would be an unheard 'error' event, which ends the
  // process. The statement in flight rejects by itself; here the connection is only marked broken.
  const onError = (lost: Error) => (broken ??= lost);
  tx.on('error', onError);
  try {
    await tx.query('BEGIN');
    const result = await work(tx);
    await tx.query('COMMIT');
    return result;
  } catch (err) {
    await tx.query('ROLLBACK').catch((rollbackFailed: Error) => (broken = rollbackFailed));
    throw err;
  } finally {
    tx.off('error', onError);
    tx.release(broken); // a lost connection, or one that could not roll back, is closed, not reused
  }
}

/** PostgreSQL's unique_violation: a row with that key exists already. */
export function isUniqueViolation(err: unknown): boolean {
  return (err as { code?: unknown } | null)?.code === '23505';
}
