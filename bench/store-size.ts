import { stat } from 'node:fs/promises';
import { DATABASES as TEMPORAL_DATABASES } from '../dev/temporal/schema.js';
import type { DbObserver } from './db-stats.js';

/**
 * Where Temporal keeps its state in the bench stack: a SQLite file (Temporal Server 1.32 or the CLI's
 * dev server), or its two databases on the bench's PostgreSQL.
 */
export type TemporalStore = { kind: 'sqlite'; file: string } | { kind: 'postgres' };

/** Bytes on disk, to measure what each order adds to both stores. */
export interface StoreBytes {
  temporal: number;
  /** The service's tables (schema public, with their indexes and TOAST): not the local fakes' schema, which production does not have. */
  service: number;
}

export async function storeBytes(observer: DbObserver, temporal: TemporalStore): Promise<StoreBytes> {
  const service = await observer.query<{ bytes: string }>(
    `SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) AS bytes
     FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = 'public' AND c.relkind = 'r'`,
  );
  return { temporal: await temporalBytes(observer, temporal), service: Number(service.rows[0]!.bytes) };
}

async function temporalBytes(observer: DbObserver, temporal: TemporalStore): Promise<number> {
  // SQLite in WAL mode keeps recent commits in the -wal file until a checkpoint: both are the store.
  if (temporal.kind === 'sqlite') return (await fileBytes(temporal.file)) + (await fileBytes(`${temporal.file}-wal`));
  const { rows } = await observer.query<{ bytes: string }>(
    'SELECT coalesce(sum(pg_database_size(datname)), 0) AS bytes FROM pg_database WHERE datname = ANY($1)',
    [TEMPORAL_DATABASES.map((d) => d.name)],
  );
  return Number(rows[0]!.bytes);
}

async function fileBytes(path: string): Promise<number> {
  try {
    return (await stat(path)).size;
  } catch {
    return 0; // no -wal file (yet)
  }
}
