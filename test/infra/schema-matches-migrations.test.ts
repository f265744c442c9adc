import { randomUUID } from 'node:crypto';
import { afterAll, expect, inject, it } from 'vitest';
import { catalogSnapshot } from '../../dev/catalog-snapshot.js';
import { diffScript, migrateDeploy } from '../../dev/migrate.js';
import { SCHEMA_PATH } from '../../dev/paths.js';
import { createDatabase, dropDatabase, runSql } from '../../dev/databases.js';

/**
 * prisma/schema.prisma is the single source of truth: the database that prisma/migrations build
 * must be exactly the one the schema describes. Fails when a schema change has no migration, or a
 * migration was edited by hand into something else.
 */
const serverUrl = inject('postgresUrl');
const suffix = randomUUID().replaceAll('-', '');
const fromSchemaName = `from_schema_${suffix}`;
const fromMigrationsName = `from_migrations_${suffix}`;

afterAll(async () => {
  await dropDatabase(serverUrl, fromSchemaName);
  await dropDatabase(serverUrl, fromMigrationsName);
});

it('prisma/migrations build exactly what prisma/schema.prisma describes', async () => {
  const fromSchema = await createDatabase(serverUrl, fromSchemaName);
  await runSql(fromSchema, await diffScript(fromSchema, ['--from-empty', '--to-schema-datamodel', SCHEMA_PATH]));
  const fromMigrations = await createDatabase(serverUrl, fromMigrationsName);
  await migrateDeploy(fromMigrations);

  const described = await catalogSnapshot(fromSchema);
  expect(described.length, 'the schema describes no tables: the comparison would prove nothing').toBeGreaterThan(0);
  expect(
    await catalogSnapshot(fromMigrations),
    'prisma/migrations differ from prisma/schema.prisma: run `npm run db:migration <name>`',
  ).toEqual(described);
});
