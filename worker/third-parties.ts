import type { ThirdParties } from '../activities/third-party/index.js';
import { requireThirdParties, type Config } from '../lib/config.js';
import type { Db } from '../lib/db.js';

/** What the worker loads dev/fakes for (test/infra/production-imports.test.ts holds the module to it). */
export interface FakesForWorker {
  assertFakesSchema(db: Db): Promise<void>;
  createFakeThirdParties(db: Db): ThirdParties;
}

/**
 * A path held in a variable, which neither tsc nor the production build follows: the service
 * compiles and runs without dev/ as long as THIRD_PARTIES is not `fake`. tsconfig.build.json
 * compiles dev/fakes when it is there.
 */
const FAKES_MODULE = '../dev/fakes/index.js';

/**
 * The third parties the activities call, as THIRD_PARTIES says; without it the worker refuses to
 * start. Only the local fakes exist so far, loaded only when chosen.
 */
export async function loadThirdParties(config: Config, db: Db): Promise<ThirdParties> {
  requireThirdParties(config);
  const fakes = (await import(FAKES_MODULE)) as FakesForWorker;
  await fakes.assertFakesSchema(db);
  return fakes.createFakeThirdParties(db);
}
