import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { isDeepStrictEqual, promisify } from 'node:util';
import { catalogSnapshot } from './catalog-snapshot.js';
import { diffScript, migrateDeploy } from './migrate.js';
import { MIGRATIONS_DIR, PROJECT_ROOT, SCHEMA_PATH } from './paths.js';
import { createDatabase, runSql } from './databases.js';
import { startThrowawayPostgres } from './postgres.js';
import { runMain, StartupError } from './startup-error.js';

/**
 * `npm run db:migration <name>`: writes prisma/migrations/<timestamp>_<name>/migration.sql with
 * the SQL that takes the database from the last migration to the current prisma/schema.prisma.
 *
 * Prisma can diff two schema files offline, but not "all migrations" against a schema (that needs
 * the native engine or a shadow database it cannot introspect through the adapter). So the "from"
 * side is the last committed prisma/schema.prisma (git HEAD), and before trusting it we prove it
 * equals what the migrations build: both go into a throwaway PostgreSQL and their catalogs must match.
 */
runMain(async () => {
  const name = migrationName(process.argv[2]);
  const work = await mkdtemp(join(tmpdir(), 'order-lifecycle-migration-'));
  const postgres = await startThrowawayPostgres();
  try {
    const lastSchema = join(work, 'schema.prisma');
    await writeFile(lastSchema, await committedSchema());

    const migrated = await createDatabase(postgres.url, 'from_migrations');
    await migrateDeploy(migrated);
    const fromLastSchema = await createDatabase(postgres.url, 'from_last_schema');
    await runSql(fromLastSchema, await diffScript(postgres.url, ['--from-empty', '--to-schema-datamodel', lastSchema]));
    if (!isDeepStrictEqual(await catalogSnapshot(migrated), await catalogSnapshot(fromLastSchema))) {
      throw new StartupError(
        'prisma/migrations does not build the committed prisma/schema.prisma (is there an uncommitted migration? delete it and run again, or commit it first)',
      );
    }

    const sql = await diffScript(postgres.url, [
      '--from-schema-datamodel',
      lastSchema,
      '--to-schema-datamodel',
      SCHEMA_PATH,
    ]);
    if (isEmptyScript(sql)) {
      console.log('prisma/schema.prisma has not changed since the last migration: nothing to write.');
      return;
    }
    const dir = join(MIGRATIONS_DIR, `${timestamp()}_${name}`);
    await mkdir(dir);
    await writeFile(join(dir, 'migration.sql'), sql);
    console.log(`Wrote ${relative(PROJECT_ROOT, join(dir, 'migration.sql'))}:\n\n${sql}`);
  } finally {
    await postgres.stop();
    await rm(work, { recursive: true, force: true });
  }
});

function migrationName(arg: string | undefined): string {
  const name = (arg ?? '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '');
  if (!name) throw new StartupError('usage: npm run db:migration <name>   (e.g. add_refund_reason)');
  return name;
}

async function committedSchema(): Promise<string> {
  try {
    const { stdout } = await promisify(execFile)('git', ['show', `HEAD:${relative(PROJECT_ROOT, SCHEMA_PATH)}`], {
      cwd: PROJECT_ROOT,
    });
    return stdout;
  } catch (err) {
    throw new StartupError(
      `cannot read the committed prisma/schema.prisma with git (${(err as Error).message.split('\n')[0]})`,
    );
  }
}

/** Prisma's script for "no difference" holds only a comment. */
function isEmptyScript(sql: string): boolean {
  return sql.split('\n').every((line) => line.trim() === '' || line.trim().startsWith('--'));
}

/** Prisma's own folder naming: UTC YYYYMMDDHHMMSS. */
function timestamp(): string {
  return new Date().toISOString().replace(/\D/g, '').slice(0, 14);
}
