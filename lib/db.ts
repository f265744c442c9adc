import { PrismaClient } from '@prisma/client';
import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';
import { prepareStatementsOn } from './sql.js';

/**
 * The database: Prisma's client for its API (reads, admin writes), and under it the node-postgres
 * pool, on which the activities run their SQL directly (lib/sql.ts). One pool, one connection
 * limit; `$disconnect()` closes both.
 */
export type Db = ReturnType<typeof createDb>;

export interface PoolOptions {
  /** Connections this pool may open (default 10). */
  maxConnections?: number;
  /**
   * How long a statement may wait for a connection (queued behind the others, or connecting) before
   * it fails; unset: forever. A caller that cannot get one in time fails and is retried (an activity)
   * or answered (a request), instead of waiting without end behind whatever holds the pool.
   */
  acquireTimeoutMs?: number;
  /** PostgreSQL's statement_timeout on every connection (lock waits included); unset: none. */
  statementTimeoutMs?: number;
  /** Statements run through lib/sql.ts prepared once per connection; unset: prepared (false: not). */
  preparedStatements?: boolean;
}

/** Prisma over node-postgres: the Rust-free client needs no engine download. */
/**
 * A call that waited the pool's acquire timeout for a connection and got none (pg-pool's own error,
 * which Prisma's adapter passes on as it is): the process is overloaded, nothing is broken.
 */
export function isPoolExhausted(err: unknown): boolean {
  for (let e: unknown = err; e instanceof Error; e = e.cause) {
    if (e.message === 'timeout exceeded when trying to connect') return true;
  }
  return false;
}

export function createDb(databaseUrl: string, options: PoolOptions = {}) {
  const pool = new pg.Pool({
    connectionString: databaseUrl,
    max: options.maxConnections ?? 10,
    ...(options.acquireTimeoutMs === undefined ? {} : { connectionTimeoutMillis: options.acquireTimeoutMs }),
    ...(options.statementTimeoutMs === undefined ? {} : { statement_timeout: options.statementTimeoutMs }),
  });
  // An idle connection the server dropped (a restart, an outage) is reported here, and the pool
  // discards it; unheard, the event would end the process. The next query reports the outage itself
  // (activities retry, /healthz says the database is down), so there is nothing more to do here.
  pool.on('error', () => undefined);
  if (options.preparedStatements !== false) prepareStatementsOn(pool);
  const prisma = new PrismaClient({ adapter: new PrismaPg(pool) });
  // A client extension: `pool` beside the models, and a `$disconnect` that also ends the pool,
  // which Prisma leaves open when it was given one (and never saw if it never connected).
  return prisma.$extends({
    client: {
      pool,
      async $disconnect() {
        try {
          await prisma.$disconnect();
        } finally {
          if (!pool.ended) await pool.end();
        }
      },
    },
  });
}
