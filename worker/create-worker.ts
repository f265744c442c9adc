import { OpenTelemetryPlugin } from '@temporalio/interceptors-opentelemetry';
import { NativeConnection, Worker } from '@temporalio/worker';
import { createActivities, type Activities, type ActivityDeps } from '../activities/index.js';
import type { WorkerMetrics } from './metrics.js';
import type { Tracing } from '../lib/tracing.js';
import { activityMetrics } from './activity-metrics.js';
import { pinnedDeployment } from './deployment.js';
import { workerTuning } from './tuning.js';
import type { WorkerTuning } from '../lib/config/worker-tuning.js';
import { encryptedDataConverter, type PayloadKeys } from '../lib/payload-encryption.js';

export interface WorkerSettings {
  connection: NativeConnection;
  namespace: string;
  taskQueue: string;
  deps: ActivityDeps;
  /** Every payload the worker sends is sealed with the first, and opened with any (lib/payload-encryption.ts). */
  payloadKeys: PayloadKeys;
  /** Tests wrap the activities built from `deps` (e.g. to hold one back); the service never does. */
  wrapActivities?: (activities: Activities) => Activities;
  /**
   * The workflow code to run, with the tracing interceptors if `tracing` is set (worker/workflow-bundle.ts:
   * the prebuilt bundle of that kind, or the sources bundled). Tests pass one bundled once per file.
   */
  workflowBundle: { code: string };
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
  const { workflowBundle } = settings;
  return Worker.create({
    connection: settings.connection,
    namespace: settings.namespace,
    taskQueue: settings.taskQueue,
    dataConverter: encryptedDataConverter(settings.payloadKeys),
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
