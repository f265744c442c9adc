import { execFile } from 'node:child_process';
import { copyFile, cp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { prebuiltBundleName } from '../worker/workflow-bundle.js';
import { PROJECT_ROOT } from './paths.js';
import { runMain } from './startup-error.js';

/**
 * `npm run build:dev`, after `npm run build`: the service compiled with the local stack's entries
 * (tsconfig.dev-build.json) into dist-dev/, plus what the product's build made beside tsc's output
 * (the orders page, the workflow bundles), copied from dist/ so both run the same workflow build.
 * Afresh each time, so nothing of an older build is left.
 */
const OUT = join(PROJECT_ROOT, 'dist-dev');

runMain(async () => {
  await rm(OUT, { recursive: true, force: true });
  await promisify(execFile)(join(PROJECT_ROOT, 'node_modules', '.bin', 'tsc'), ['-p', 'tsconfig.dev-build.json'], {
    cwd: PROJECT_ROOT,
  });
  await cp(join(PROJECT_ROOT, 'dist', 'api', 'public'), join(OUT, 'api', 'public'), { recursive: true });
  // The plain bundle last: the bench takes its time as the build's end (bench/compiled-service.ts).
  for (const traced of [true, false])
    await copyFile(join(PROJECT_ROOT, 'dist', prebuiltBundleName(traced)), join(OUT, prebuiltBundleName(traced)));
  console.log(`The service with the local stack's entries compiled to ${OUT}`);
});
