import { PrismaClient } from '@prisma/client';
import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';

/**
 * The database: Prisma's client for its API (reads, admin writes), and under it the node-postgres
 * pool, on which the activities run their SQL directly (lib/sql.ts). One pool, one connection
 * limit; `$disconnect()` closes both.
 */
export type Db = PrismaClient & { readonly pool: pg.Pool };

/** Prisma over node-postgres: the Rust-free client needs no engine download. */
export function createDb(databaseUrl: string, options: { maxConnections?: number } = {}): Db {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: options.maxConnections ?? 10 });
  // An idle connection the server dropped (a restart, an outage) is reported here, and the pool
  // discards it; unheard, the event would end the process. The next query reports the outage itself
  // (activities retry, /healthz says the database is down), so there is nothing more to do here.
  pool.on('error', () => undefined);
  const prisma = new PrismaClient({ adapter: new PrismaPg(pool) });
  const disconnect = prisma.$disconnect.bind(prisma);
  // Prisma leaves a pool it was given open (and never saw it if it never connected): we end it.
  prisma.$disconnect = async () => {
    try {
      await disconnect();
    } finally {
      if (!pool.ended) await pool.end();
    }
  };
  return Object.defineProperty(prisma, 'pool', { value: pool, enumerable: false }) as Db;
}
