import type { TestProject } from 'vitest/node';
import { ensurePrismaClient } from '../../dev/migrate.js';
import { createDatabase } from '../../dev/databases.js';
import { startThrowawayPostgres } from '../../dev/postgres.js';
import { prepareServiceDatabase } from '../../dev/service-database.js';
import { CHROMIUM, DOCKER_COMPOSE, ensureDebianTool, type DebianToolState } from './debian-tools.js';
import {
  resolveTemporalServer,
  resolveTestServer,
  TEMPORAL_SERVER_MISSING,
  TEST_SERVER_MISSING,
  type TemporalServerBinaries,
} from '../../dev/temporal-binaries.js';

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
    /** Debian's tools by package name (chromium, docker-compose): the executable, or why their tests skip. */
    debianTools: Record<string, DebianToolState>;
  }
}

const MIGRATED_TEMPLATE = 'migrated_template';

/**
 * Once per `vitest run`: the Temporal servers (built into the cache on a cold machine, which takes
 * minutes and prints progress), the Prisma client, Debian's tools some tests need, and one throwaway
 * PostgreSQL for all test files.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const [temporalServer, testServerPath] = await Promise.all([resolveTemporalServer(), resolveTestServer()]);
  if (temporalServer === undefined) console.warn(`${TEMPORAL_SERVER_MISSING}; the tests on a real server will fail`);
  if (testServerPath === undefined) console.warn(`${TEST_SERVER_MISSING}; the Temporal SDK will try to download one`);
  await ensurePrismaClient();
  // CI services set CI (read as most tools do: set, and neither empty nor "false"); a tool missing there fails the run.
  const ci = process.env.CI !== undefined && !['', 'false'].includes(process.env.CI);
  const debianTools = Object.fromEntries(
    [CHROMIUM, DOCKER_COMPOSE].map((tool) => [tool.package, ensureDebianTool(tool, ci)]),
  );

  const postgres = await startThrowawayPostgres();
  try {
    const template = await createDatabase(postgres.url, MIGRATED_TEMPLATE);
    await prepareServiceDatabase(template); // what the local stacks' databases get: the tests run on the fakes too
  } catch (err) {
    await postgres.stop();
    throw err;
  }
  project.provide('postgresUrl', postgres.url);
  project.provide('migratedTemplate', MIGRATED_TEMPLATE);
  project.provide('temporalServer', temporalServer ?? null);
  project.provide('testServerPath', testServerPath ?? null);
  project.provide('debianTools', debianTools);
  return () => postgres.stop();
}
