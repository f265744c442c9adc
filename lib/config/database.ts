import { z } from 'zod';
import { nonEmpty, parseEnv, positiveDuration } from './env.js';

/**
 * Where the service's database is. A schema of its own, so that the commands that only touch the
 * database (`npm run db:deploy`, `npm run db:fakes`, `npm run check`: compose's `migrate` runs the
 * first two) read it alone (loadDatabaseUrl), without the secrets the worker and the API require.
 */
const DatabaseUrlSchema = z.object({ DATABASE_URL: nonEmpty.optional() });

export const DatabaseSchema = z.object({
  ...DatabaseUrlSchema.shape,
  DATABASE_POOL_SIZE: z.coerce.number().int().min(1).max(1_000).default(10),
  // Additions (docs/operations.md, "Configuration"): the database shielded from anonymous load.
  DATABASE_PUBLIC_POOL_SIZE: z.coerce.number().int().min(1).max(1_000).default(2),
  DATABASE_ACQUIRE_TIMEOUT: nonEmpty.default('5s'),
  DATABASE_STATEMENT_TIMEOUT: nonEmpty.default('10s'),
  // Off only behind a pooler that cannot keep prepared statements (PgBouncer before 1.21, or without
  // max_prepared_statements): docs/operations.md, "Configuration".
  DATABASE_PREPARED_STATEMENTS: z.enum(['true', 'false']).default('true'),
});

export interface DatabaseSettings {
  /** Unset: the runner starts the embedded PostgreSQL and passes its URL on. */
  databaseUrl: string | undefined;
  /**
   * PostgreSQL connections each process (worker, API) may open. It bounds the database's load
   * whatever the number of concurrent activities: the rest wait for a connection in the process.
   */
  databasePoolSize: number;
  /**
   * The API's second, small pool, for what anyone may ask without a token (GET /products/:sku): a
   * crowd of them queues there, never in front of the payment webhook and checkout on the main pool.
   */
  databasePublicPoolSize: number;
  /**
   * Every pool's settings (lib/db.ts): the wait for a connection, PostgreSQL's statement_timeout, and
   * whether statements are prepared once per connection.
   */
  databasePoolOptions: { acquireTimeoutMs: number; statementTimeoutMs: number; preparedStatements: boolean };
}

export function databaseSettings(e: z.infer<typeof DatabaseSchema>): DatabaseSettings {
  return {
    databaseUrl: e.DATABASE_URL,
    databasePoolSize: e.DATABASE_POOL_SIZE,
    databasePublicPoolSize: e.DATABASE_PUBLIC_POOL_SIZE,
    databasePoolOptions: {
      acquireTimeoutMs: positiveDuration('DATABASE_ACQUIRE_TIMEOUT', e.DATABASE_ACQUIRE_TIMEOUT),
      statementTimeoutMs: positiveDuration('DATABASE_STATEMENT_TIMEOUT', e.DATABASE_STATEMENT_TIMEOUT),
      preparedStatements: e.DATABASE_PREPARED_STATEMENTS === 'true',
    },
  };
}

/** DATABASE_URL alone, validated as loadConfig() does; undefined when unset. */
export function loadDatabaseUrl(env: NodeJS.ProcessEnv = process.env): string | undefined {
  return parseEnv(DatabaseUrlSchema, env).DATABASE_URL;
}
