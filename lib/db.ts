import { PrismaClient } from '@prisma/client';
import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';

/**
 * The database: Prisma's client for its API (reads, admin writes), and under it the node-postgres
 * pool, on which the activities run their SQL directly (lib/sql.ts). One pool, one connection
 * limit; `$disconnect()` closes both.
 */
export type Db = ReturnType<typeof createDb>;

/** Prisma over node-postgres: the Rust-free client needs no engine download. */
export function createDb(databaseUrl: string, options: { maxConnections?: number } = {}) {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: options.maxConnections ?? 10 });
  // An idle connection the server dropped (a restart, an outage) is reported here, and the pool
  // discards it; unheard, the event would end the process. The next query reports the outage itself
  // (activities retry, /healthz says the database is down), so there is nothing more to do here.
  pool.on('error', () => undefined);
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
