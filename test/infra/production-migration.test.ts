import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, expect, inject, it } from 'vitest';
import { createDatabase, dropDatabase } from '../../dev/databases.js';
import { applyFakesSchema } from '../../dev/fakes/schema.js';
import { migrateDeploy } from '../../dev/migrate.js';

/** The production migrations (`npm run db:deploy`) leave the local fakes out: their schema is dev/fakes' own. */
const serverUrl = inject('postgresUrl');
const name = `production_${randomUUID().replaceAll('-', '')}`;

afterAll(async () => {
  await dropDatabase(serverUrl, name);
});

/** Schemas and tables whose name says "fake", in any schema but the system's. */
async function fakeThings(url: string): Promise<{ schemas: string[]; tables: string[] }> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const schemas = await client.query<{ name: string }>(
      `SELECT nspname AS name FROM pg_namespace WHERE nspname ILIKE '%fake%' ORDER BY 1`,
    );
    const tables = await client.query<{ name: string }>(
      `SELECT n.nspname || '.' || c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE c.relkind IN ('r', 'p') AND (c.relname ILIKE '%fake%' OR n.nspname ILIKE '%fake%') ORDER BY 1`,
    );
    return { schemas: schemas.rows.map((r) => r.name), tables: tables.rows.map((r) => r.name) };
  } finally {
    await client.end();
  }
}

it("creates no fake table and no `fakes` schema on an empty database; only the fakes' own SQL does, idempotently", async () => {
  const url = await createDatabase(serverUrl, name);
  await migrateDeploy(url);
  expect(await fakeThings(url)).toEqual({ schemas: [], tables: [] });

  await applyFakesSchema(url);
  await applyFakesSchema(url); // every dev start applies it again
  expect(await fakeThings(url)).toEqual({
    schemas: ['fakes'],
    tables: ['fakes.calls', 'fakes.effects', 'fakes.faults', 'fakes.payment_intents', 'fakes.provider_events'],
  });
});
