import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { OpenTelemetryPlugin } from '@temporalio/interceptors-opentelemetry';
import { bundleWorkflowCode, NativeConnection, Runtime, Worker, type BundlerPlugin } from '@temporalio/worker';
import { createActivities, type Activities, type ActivityDeps } from '../activities/index.js';
import type { WorkerMetrics } from './metrics.js';
import type { Tracing } from '../lib/tracing.js';
import { activityMetrics } from './activity-metrics.js';
import { pinnedDeployment } from './deployment.js';
import { workerTuning } from './tuning.js';
import type { WorkerTuning } from '../lib/config.js';

export const WORKFLOWS_PATH = fileURLToPath(new URL('../workflows/index.ts', import.meta.url));
/**
 * The workflow code bundled at build time: `npm run build` writes dist/workflow-bundle.js, found
 * here by the compiled worker (dist/worker/). Running from the sources (dev, tests) there is none,
 * and the worker bundles the workflows at start.
 */
export const PREBUILT_WORKFLOW_BUNDLE = fileURLToPath(new URL('../workflow-bundle.js', import.meta.url));

export interface WorkerSettings {
  connection: NativeConnection;
  namespace: string;
  taskQueue: string;
  deps: ActivityDeps;
  /** Tests wrap the activities built from `deps` (e.g. to hold one back); the service never does. */
  wrapActivities?: (activities: Activities) => Activities;
  /**
   * The workflow code to run. Unset: the prebuilt bundle, else the sources bundled now. Tests pass
   * one so the workflow code is compiled once per file, not per worker.
   */
  workflowBundle?: { code: string };
  /**
   * Worker Versioning: the Worker Deployment this worker is a build of, the build id derived from
   * its workflow code, its workflows PINNED to the build that started them. Unset: unversioned
   * (the time-skipping test server has no Worker Deployments).
   */
  deploymentName?: string;
  /** Business metrics observed as activities return (worker/activity-metrics.ts). */
  metrics?: WorkerMetrics;
  /** On shutdown, how long in-flight activities may run before they are cancelled. */
  shutdownGraceMs?: number;
  /** Spans for workflows and activities, continuing the trace of the request that signalled them. */
  tracing?: Tracing;
  /** The WORKER_* tuning (worker/tuning.ts). Unset: the SDK's defaults, as tests run. */
  tuning?: WorkerTuning;
}

/** The worker the service runs, and the one tests run: same workflows, same activities. */
export async function createOrderWorker(settings: WorkerSettings): Promise<Worker> {
  const plugins = settings.tracing
    ? [
        new OpenTelemetryPlugin({
          resource: settings.tracing.resource,
          spanProcessor: settings.tracing.spanProcessor,
        }),
      ]
    : [];
  // The code in hand, not a path: the build id is the hash of exactly the code this worker runs.
  const workflowBundle = settings.workflowBundle ?? (await loadWorkflowBundle(plugins));
  return Worker.create({
    connection: settings.connection,
    namespace: settings.namespace,
    taskQueue: settings.taskQueue,
    activities: (settings.wrapActivities ?? ((a) => a))(createActivities(settings.deps)),
    workflowBundle,
    ...(settings.deploymentName === undefined
      ? {}
      : { workerDeploymentOptions: pinnedDeployment(settings.deploymentName, workflowBundle.code) }),
    ...(settings.shutdownGraceMs === undefined ? {} : { shutdownGraceTime: settings.shutdownGraceMs }),
    ...workerTuning(settings.tuning),
    interceptors: { activity: settings.metrics ? [activityMetrics(settings.metrics)] : [] },
    plugins,
  });
}

/** Where this worker's workflow code comes from, for its start-up log line. */
export const hasPrebuiltWorkflowBundle = (): boolean => existsSync(PREBUILT_WORKFLOW_BUNDLE);

/** The plugins add their workflow interceptors to a bundle made here, as to one the worker makes. */
async function loadWorkflowBundle(plugins: BundlerPlugin[]): Promise<{ code: string }> {
  if (hasPrebuiltWorkflowBundle()) return { code: await readFile(PREBUILT_WORKFLOW_BUNDLE, 'utf8') };
  return bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, plugins, logger: Runtime.instance().logger });
}
