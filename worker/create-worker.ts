import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { OpenTelemetryPlugin } from '@temporalio/interceptors-opentelemetry';
import { NativeConnection, Worker, type WorkerOptions } from '@temporalio/worker';
import { createActivities, type Activities, type ActivityDeps } from '../activities/index.js';
import type { WorkerMetrics } from './metrics.js';
import type { Tracing } from '../lib/tracing.js';
import { activityMetrics } from './activity-metrics.js';

export const WORKFLOWS_PATH = fileURLToPath(new URL('../workflows/index.ts', import.meta.url));
/**
 * The workflow code bundled at build time: `npm run build` writes dist/workflow-bundle.js, found
 * here by the compiled worker (dist/worker/). Running from the sources (dev, tests) there is none,
 * and the worker bundles the workflows itself at start.
 */
export const PREBUILT_WORKFLOW_BUNDLE = fileURLToPath(new URL('../workflow-bundle.js', import.meta.url));

export interface WorkerSettings {
  connection: NativeConnection;
  namespace: string;
  taskQueue: string;
  deps: ActivityDeps;
  /** Tests wrap the activities built from `deps` (e.g. to hold one back); the service never does. */
  wrapActivities?: (activities: Activities) => Activities;
  /** Tests pass a pre-built bundle so the workflow code is compiled once per file, not per worker. */
  workflowBundle?: WorkerOptions['workflowBundle'];
  /** Business metrics observed as activities return (worker/activity-metrics.ts). */
  metrics?: WorkerMetrics;
  /** On shutdown, how long in-flight activities may run before they are cancelled. */
  shutdownGraceMs?: number;
  /** Spans for workflows and activities, continuing the trace of the request that signalled them. */
  tracing?: Tracing;
}

/** The worker the service runs, and the one tests run: same workflows, same activities. */
export function createOrderWorker(settings: WorkerSettings): Promise<Worker> {
  return Worker.create({
    connection: settings.connection,
    namespace: settings.namespace,
    taskQueue: settings.taskQueue,
    activities: (settings.wrapActivities ?? ((a) => a))(createActivities(settings.deps)),
    ...workflowSource(settings.workflowBundle),
    ...(settings.shutdownGraceMs === undefined ? {} : { shutdownGraceTime: settings.shutdownGraceMs }),
    interceptors: { activity: settings.metrics ? [activityMetrics(settings.metrics)] : [] },
    plugins: settings.tracing
      ? [
          new OpenTelemetryPlugin({
            resource: settings.tracing.resource,
            spanProcessor: settings.tracing.spanProcessor,
          }),
        ]
      : [],
  });
}

/** Where this worker's workflow code comes from, for its start-up log line. */
export const hasPrebuiltWorkflowBundle = (): boolean => existsSync(PREBUILT_WORKFLOW_BUNDLE);

function workflowSource(
  given: WorkerOptions['workflowBundle'],
): Pick<WorkerOptions, 'workflowBundle' | 'workflowsPath'> {
  if (given) return { workflowBundle: given };
  return hasPrebuiltWorkflowBundle()
    ? { workflowBundle: { codePath: PREBUILT_WORKFLOW_BUNDLE } }
    : { workflowsPath: WORKFLOWS_PATH };
}
