import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import { WORKFLOWS_PATH } from '../worker/create-worker.js';
import { buildIdOf } from '../worker/deployment.js';
import { PROJECT_ROOT } from './paths.js';
import { runMain } from './startup-error.js';

/**
 * Part of `npm run build`: the workflow code bundled once, at build time, where the compiled worker
 * looks for it (PREBUILT_WORKFLOW_BUNDLE, from dist/worker/), so it never runs webpack at start.
 * Its hash is the build id the workers will run as: printed for the deploy step that makes it current.
 */
runMain(async () => {
  const target = join(PROJECT_ROOT, 'dist', 'workflow-bundle.js');
  const { code } = await bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH });
  await writeFile(target, code);
  const size = `${(code.length / 1024 / 1024).toFixed(2)} MB`;
  console.log(`Workflow bundle written to ${target} (${size}); Worker Deployment build id ${buildIdOf(code)}`);
});
