import type { Db } from '../lib/db.js';
import type { DevRoutes } from './app.js';

/** What the API loads dev/fakes for (test/infra/production-imports.test.ts holds the module to it). */
export interface FakesForApi {
  assertFakesSchema(db: Db): Promise<void>;
  fakeFaultInjection(db: Db, adminToken: string): DevRoutes;
}

/**
 * A path held in a variable, which neither tsc nor the production build follows: the service
 * compiles and runs without dev/ as long as FAULTS_ENABLED is off. tsconfig.build.json compiles
 * dev/fakes when it is there.
 */
const FAKES_MODULE = '../dev/fakes/index.js';

/** FAULTS_ENABLED: the local fakes' fault-injection routes, from dev/fakes, loaded only now. */
export async function loadFaultInjection(db: Db, adminToken: string): Promise<DevRoutes> {
  const fakes = (await import(FAKES_MODULE)) as FakesForApi;
  await fakes.assertFakesSchema(db);
  return fakes.fakeFaultInjection(db, adminToken);
}
