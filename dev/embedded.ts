import { join } from 'node:path';
import { DATA_DIR } from './paths.js';
import { reachableDataDir, type PostgresOptions } from './postgres.js';

/** Where `npm start` runs what the environment does not provide; `npm run check` finds its database here too. */
export const EMBEDDED = {
  postgresPort: 5433, // not 5432, where a system PostgreSQL often runs
  databaseName: 'order_lifecycle',
  temporalPort: 7233,
  temporalUiPort: 8233,
} as const;

/**
 * The embedded PostgreSQL: data in .data/postgres, kept across restarts (under /var/tmp instead when
 * the checkout is somewhere the postgres user cannot enter, see reachableDataDir).
 */
export function embeddedPostgres(): PostgresOptions {
  return {
    dataDir: reachableDataDir(join(DATA_DIR, 'postgres')),
    port: EMBEDDED.postgresPort,
    logFile: join(DATA_DIR, 'postgres.log'),
    durable: true,
  };
}
