import { loadDatabaseUrl } from '../../lib/config/database.js';
import { runMain, StartupError } from '../startup-error.js';
import { applyFakesSchema } from './schema.js';

/**
 * `npm run db:fakes`: creates the local fakes' schema in DATABASE_URL, for a stack that runs with
 * THIRD_PARTIES=fake and migrates with `npm run db:deploy` (docker-compose's one-shot `migrate`).
 */
runMain(async () => {
  const databaseUrl = loadDatabaseUrl();
  if (databaseUrl === undefined) throw new StartupError('DATABASE_URL is required');
  await applyFakesSchema(databaseUrl);
  console.log("The fakes' schema is in place.");
});
