import type { TestProject } from 'vitest/node';
import { ensurePrismaClient } from '../../dev/migrate.js';
import { resolveTestServer, TEST_SERVER_MISSING } from '../../dev/temporal-binaries.js';

/**
 * Once per `npm run test:unit`: only what the fast tier needs — the Prisma client (its enums are
 * the domain's mirror) and the time-skipping test server. No PostgreSQL, no Temporal Server.
 */
export default async function setup(project: TestProject): Promise<void> {
  const [testServerPath] = await Promise.all([resolveTestServer(), ensurePrismaClient()]);
  if (testServerPath === undefined) console.warn(`${TEST_SERVER_MISSING}; the Temporal SDK will try to download one`);
  project.provide('testServerPath', testServerPath ?? null);
}
