import { loadDatabaseUrl } from '../lib/config/database.js';
import { migrateDeploy } from './migrate.js';
import { runMain, StartupError } from './startup-error.js';

/** `npm run db:deploy`: applies prisma/migrations to DATABASE_URL (docker-compose's one-shot `migrate` service). */
runMain(async () => {
  const databaseUrl = loadDatabaseUrl();
  if (databaseUrl === undefined) throw new StartupError('DATABASE_URL is required');
  await migrateDeploy(databaseUrl);
  console.log('Migrations applied.');
});
