import { applyFakesSchema } from './fakes/schema.js';
import { migrateDeploy } from './migrate.js';

/**
 * The service's database as every local stack and the tests' template have it: every migration,
 * and the local fakes' schema (THIRD_PARTIES=fake, the only kind the local stacks run). Idempotent.
 */
export async function prepareServiceDatabase(url: string): Promise<void> {
  await migrateDeploy(url);
  await applyFakesSchema(url);
}
