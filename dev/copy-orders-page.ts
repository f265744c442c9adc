import { cp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { PROJECT_ROOT } from './paths.js';
import { runMain } from './startup-error.js';

/**
 * Part of `npm run build`: the orders page's static files, which tsc does not copy, in dist/ where
 * the compiled API looks for them (api/routes/orders-page.ts, `../public` from dist/api/routes/).
 * Copied afresh, so a file deleted from api/public is not served from an older build.
 */
runMain(async () => {
  const target = join(PROJECT_ROOT, 'dist', 'api', 'public');
  await rm(target, { recursive: true, force: true });
  await cp(join(PROJECT_ROOT, 'api', 'public'), target, { recursive: true });
  console.log(`Orders page copied to ${target}`);
});
