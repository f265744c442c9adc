import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleWorkflowCode, Runtime, type BundleOptions, type Logger } from '@temporalio/worker';

/** The workflow code every worker runs, and every bundle of it starts from. */
export const WORKFLOWS_PATH = fileURLToPath(new URL('../workflows/index.ts', import.meta.url));

/** The folder workflows/ and node_modules/ are in (the project's root; dist/ when compiled). */
const BUNDLE_ROOT = dirname(dirname(WORKFLOWS_PATH));

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

/**
 * The SDK names the bundle's modules by their path from the working directory, and the build id
 * hashes that code (worker/deployment.ts): named from the project's root instead, the same code
 * is the same build whether `npm run build` runs in CI's checkout or in the image's /app, and
 * whatever directory a worker starts in.
 */
const fromTheRoot: NonNullable<BundleOptions['webpackConfigHook']> = (config) => ({ ...config, context: BUNDLE_ROOT });

export function bundleWorkflows(
  traced: boolean,
  logger: Logger = Runtime.instance().logger,
): Promise<{ code: string }> {
  return bundleWorkflowCode({
    workflowsPath: WORKFLOWS_PATH,
    ...(traced ? { workflowInterceptorModules: [OTEL_WORKFLOW_INTERCEPTORS] } : {}),
    logger,
    webpackConfigHook: fromTheRoot,
  });
}

/** The code a worker runs: the prebuilt bundle of its kind, else the sources bundled now. */
export async function loadWorkflowBundle(traced: boolean): Promise<{ code: string; prebuilt: boolean }> {
  const path = prebuiltBundlePath(traced);
  if (existsSync(path)) return { code: await readFile(path, 'utf8'), prebuilt: true };
  return { ...(await bundleWorkflows(traced)), prebuilt: false };
}
