import { readFile } from 'node:fs/promises';
import type { Db } from '../../lib/db.js';
import { runSql } from '../databases.js';

const SCHEMA_SQL = new URL('./schema.sql', import.meta.url);

/** Creates the fakes' schema and tables in the database of `databaseUrl` unless they exist. */
export async function applyFakesSchema(databaseUrl: string): Promise<void> {
  await runSql(databaseUrl, await readFile(SCHEMA_SQL, 'utf8'));
}

/** Whether this database has the fakes' schema: a dev or demo database, not a production one. */
export async function hasFakesSchema(db: Pick<Db, '$queryRaw'>): Promise<boolean> {
  const [row] = await db.$queryRaw<[{ present: boolean }]>`SELECT to_regnamespace('fakes') IS NOT NULL AS present`;
  return row.present;
}
