import type { Db } from '../lib/db.js';
import { importOptionalModule } from '../lib/optional-module.js';
import type { FaultInjection } from './app.js';

/** What the API loads dev/fakes for (test/infra/production-imports.test.ts holds the module to it). */
export interface FakesForApi {
  assertFakesSchema(db: Db): Promise<void>;
  fakeFaultInjection(db: Db): FaultInjection;
}

/**
 * Held in a variable, which neither tsc nor the production build follows: the service compiles and
 * runs without dev/ as long as FAULTS_ENABLED is off. tsconfig.build.json compiles dev/fakes when
 * it is there. Lint forbids such a path in production; this one is allowed by name, and taking
 * the fakes out of production is its own issue.
 */
// eslint-disable-next-line no-restricted-syntax -- a known way in to dev/fakes (docs/architecture.md)
const FAKES_MODULE = new URL('../dev/fakes/index.js', import.meta.url);
const NO_FAKES_IN_BUILD =
  'FAULTS_ENABLED=true: this build has no local fakes to inject faults into (dev/fakes is left out with dev/); ' +
  'set FAULTS_ENABLED=false, or build from a checkout with dev/ (`npm run build` compiles dev/fakes in)';

/** FAULTS_ENABLED: the local fakes' fault-injection endpoints, from dev/fakes, loaded only now. */
export async function loadFaultInjection(db: Db): Promise<FaultInjection> {
  const fakes = await importOptionalModule<FakesForApi>(FAKES_MODULE, NO_FAKES_IN_BUILD);
  await fakes.assertFakesSchema(db);
  return fakes.fakeFaultInjection(db);
}
