import { DATA_DIR } from './paths.js';
import { durablePostgres, type PostgresOptions } from './postgres.js';
import type { WorkerPorts } from './local-stack.js';
import type { ServerPorts } from './temporal/server.js';

/** Where `npm start` runs what the environment does not provide; `npm run check` finds its database here too. */
export const EMBEDDED = {
  postgresPort: 5433, // not 5432, where a system PostgreSQL often runs
  databaseName: 'order_lifecycle',
  temporalUiPort: 8233,
  /** Mailpit's own defaults: SMTP on 1025, its web UI on 8025. */
  mailpit: { smtp: 1025, http: 8025 },
} as const;

/**
 * Temporal Server's ports: the frontend on the SDKs' default 7233, the other services on upstream's
 * defaults. Fixed, so a restarted server comes back at the addresses its store's membership table
 * remembers.
 */
export const EMBEDDED_TEMPORAL_PORTS: ServerPorts = {
  frontend: { grpc: 7233, membership: 6933 },
  history: { grpc: 7234, membership: 6934 },
  matching: { grpc: 7235, membership: 6935 },
  worker: { grpc: 7239, membership: 6939 },
};

/**
 * Where `npm start`'s Temporal Server keeps its store, chosen by measurement (docs/provisioning.md,
 * "Temporal's store"): a SQLite file, or databases of its own on the embedded PostgreSQL.
 * `--cluster` always uses PostgreSQL: a SQLite file cannot be shared by processes.
 */
export const EMBEDDED_TEMPORAL_STORE: 'sqlite' | 'postgres' = 'sqlite';

/** The cluster mode's second worker replica: its /metrics and SDK metrics ports (the first has the defaults). */
export const SECOND_WORKER_METRICS: WorkerPorts = { metricsPort: 9466, sdkMetricsAddress: '127.0.0.1:9467' };

/** Where `npm start`'s embedded PostgreSQL answers while it runs. */
export const embeddedDatabaseUrl = (): string =>
  `postgresql://postgres@127.0.0.1:${EMBEDDED.postgresPort}/${EMBEDDED.databaseName}`;

/** The embedded PostgreSQL of `npm start`, in .data/ (what `npm run check` starts when it is not running). */
export function embeddedPostgres(): PostgresOptions {
  return durablePostgres(DATA_DIR, EMBEDDED.postgresPort);
}
