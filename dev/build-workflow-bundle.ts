import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { bundleWorkflows, prebuiltBundleName } from '../worker/workflow-bundle.js';
import { buildIdOf } from '../worker/deployment.js';
import { PROJECT_ROOT } from './paths.js';
import { runMain } from './startup-error.js';

/**
 * Part of `npm run build`: the workflow code bundled once, at build time, where the compiled worker
 * looks for it (from dist/worker/), so it never runs webpack at start. Two bundles: the plain one,
 * and one with the tracing interceptors for workers with OTEL_EXPORTER_OTLP_ENDPOINT set. Each
 * hash is the build id such workers will run as: printed for the deploy step that makes it current.
 */
runMain(async () => {
  // The plain bundle last: the bench takes its time as the build's end (bench/compiled-service.ts).
  for (const traced of [true, false]) {
    const target = join(PROJECT_ROOT, 'dist', prebuiltBundleName(traced));
    const { code } = await bundleWorkflows(traced);
    await writeFile(target, code);
    const size = `${(code.length / 1024 / 1024).toFixed(2)} MB`;
    const kind = traced ? 'with tracing' : 'without tracing';
    console.log(
      `Workflow bundle ${kind} written to ${target} (${size}); Worker Deployment build id ${buildIdOf(code)}`,
    );
  }
});
