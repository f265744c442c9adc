import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { bundleWorkflowCode, Runtime, type Logger } from '@temporalio/worker';

/** The workflow code every worker runs, and every bundle of it starts from. */
export const WORKFLOWS_PATH = fileURLToPath(new URL('../workflows/index.ts', import.meta.url));

/**
 * The OpenTelemetry plugin's workflow interceptors: spans for the workflow's run, its signals and
 * its activities, handed to the worker through a sink. They live inside the bundle, so a traced
 * worker needs a bundle made with them; an untraced one is spared their cost on every activation.
 */
const OTEL_WORKFLOW_INTERCEPTORS = createRequire(import.meta.url).resolve(
  '@temporalio/interceptors-opentelemetry/lib/workflow-interceptors',
);

/**
 * The bundles `npm run build` writes (dev/build-workflow-bundle.ts), found here by the compiled
 * worker (dist/worker/): one plain, one with the tracing interceptors, for a worker with
 * OTEL_EXPORTER_OTLP_ENDPOINT set. Running from the sources (dev, tests) there are none, and the
 * worker bundles the workflows at start.
 */
export const prebuiltBundleName = (traced: boolean): string =>
  traced ? 'workflow-bundle.traced.js' : 'workflow-bundle.js';
const prebuiltBundlePath = (traced: boolean): string =>
  fileURLToPath(new URL(`../${prebuiltBundleName(traced)}`, import.meta.url));

export function bundleWorkflows(
  traced: boolean,
  logger: Logger = Runtime.instance().logger,
): Promise<{ code: string }> {
  return bundleWorkflowCode({
    workflowsPath: WORKFLOWS_PATH,
    ...(traced ? { workflowInterceptorModules: [OTEL_WORKFLOW_INTERCEPTORS] } : {}),
    logger,
  });
}

/** The code a worker runs: the prebuilt bundle of its kind, else the sources bundled now. */
export async function loadWorkflowBundle(traced: boolean): Promise<{ code: string; prebuilt: boolean }> {
  const path = prebuiltBundlePath(traced);
  if (existsSync(path)) return { code: await readFile(path, 'utf8'), prebuilt: true };
  return { ...(await bundleWorkflows(traced)), prebuilt: false };
}
