import type { TestProject } from 'vitest/node';
import { ensurePrismaClient, migrateDeploy } from '../../dev/migrate.js';
import { createDatabase } from '../../dev/databases.js';
import { applyFakesSchema } from '../../dev/fakes/schema.js';
import { startThrowawayPostgres } from '../../dev/postgres.js';
import { ensureChromium } from './browser.js';
import { resolveTemporalServer, resolveTestServer, TEMPORAL_SERVER_MISSING, TEST_SERVER_MISSING, type TemporalServerBinaries } from '../../dev/temporal-binaries.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Superuser URL of the run's PostgreSQL (database `postgres`). */
    postgresUrl: string;
    /** A database with every migration and the fakes' schema applied, which createTestDatabase() copies. */
    migratedTemplate: string;
    /** Temporal Server for createLocalEnv(); null: it could not be built (no Go). */
    temporalServer: TemporalServerBinaries | null;
    /** Java test server for createTimeSkippingEnv(); null lets the SDK download one (online only). */
    testServerPath: string | null;
    /** Debian's chromium for the browser tests; null when it cannot be installed (see chromiumSkipReason). */
    chromiumPath: string | null;
    chromiumSkipReason: string;
  }
}

const MIGRATED_TEMPLATE = 'migrated_template';

/**
 * Once per `vitest run`: the Temporal servers (built into the cache on a cold machine, which takes
 * minutes and prints progress), the Prisma client, and one throwaway PostgreSQL for all test files.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const [temporalServer, testServerPath] = await Promise.all([resolveTemporalServer(), resolveTestServer()]);
  if (temporalServer === undefined) console.warn(`${TEMPORAL_SERVER_MISSING}; the tests on a real server will fail`);
  if (testServerPath === undefined) console.warn(`${TEST_SERVER_MISSING}; the Temporal SDK will try to download one`);
  await ensurePrismaClient();
  const browser = ensureChromium();
  if ('skip' in browser) console.warn(`browser tests will be skipped: ${browser.skip}`);

  const postgres = await startThrowawayPostgres();
  try {
    const template = await createDatabase(postgres.url, MIGRATED_TEMPLATE);
    await migrateDeploy(template);
    await applyFakesSchema(template); // the tests run on the local fakes, as the dev stack does
  } catch (err) {
    await postgres.stop();
    throw err;
  }
  project.provide('postgresUrl', postgres.url);
  project.provide('migratedTemplate', MIGRATED_TEMPLATE);
  project.provide('temporalServer', temporalServer ?? null);
  project.provide('testServerPath', testServerPath ?? null);
  project.provide('chromiumPath', 'path' in browser ? browser.path : null);
  project.provide('chromiumSkipReason', 'skip' in browser ? browser.skip : '');
  return () => postgres.stop();
}
