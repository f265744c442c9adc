import { Client } from '@temporalio/client';
import { bundleWorkflowCode, NativeConnection, Runtime, Worker, type WorkerOptions } from '@temporalio/worker';
import { loadWorkerTuning } from '../settings.js';
import { pinnedDeployment, setCurrentVersion } from '../../worker/deployment.js';
import { applyStackTraceLimit, workerTuning } from '../../worker/tuning.js';
import { FLOOR_DEPLOYMENT, FLOOR_TASK_QUEUE } from './messages.js';

/**
 * The floor's worker, a process of its own (bench/floor/floor.ts starts it compiled, bench/compile-entry.ts).
 * `project`: the service's worker settings (worker/main.ts, worker/create-worker.ts): the Runtime's
 * logging and Prometheus exporter, a build of a Worker Deployment with its runs PINNED and made
 * current, and the WORKER_* tuning of its environment (worker/tuning.ts; floor.ts passes the service
 * workers' own). `stock`: the SDK's defaults, nothing set but the task queue and the workflow cache's
 * size, which the bench sets for both. Runs until SIGTERM.
 */
export interface FloorWorkerArgs {
  address: string;
  namespace: string;
  workflowsPath: string;
  settings: 'project' | 'stock';
  /** `project` only: where the SDK's Prometheus exporter binds, as the service's worker has one. */
  sdkMetricsAddress: string;
}

async function main(): Promise<void> {
  const args = JSON.parse(process.argv[2]!) as FloorWorkerArgs;
  const project = args.settings === 'project';
  const tuning = loadWorkerTuning();
  // The cache's size is the bench's condition (production's ratio of open runs to cache), not a
  // setting of the project's: the stock worker gets it too, or the two would compare cold with warm.
  const stockCache = tuning.maxCachedWorkflows === undefined ? {} : { maxCachedWorkflows: tuning.maxCachedWorkflows };
  // As the service's worker does, before any workflow context exists.
  applyStackTraceLimit(project ? tuning.stackTraceLimit : undefined);
  if (project)
    Runtime.install({
      telemetryOptions: {
        logging: { filter: { core: 'WARN', other: 'ERROR' }, forward: {} },
        metrics: { prometheus: { bindAddress: args.sdkMetricsAddress } },
      },
    });
  const connection = await NativeConnection.connect({ address: args.address });
  const workflowBundle = await bundleWorkflowCode({ workflowsPath: args.workflowsPath });
  const deployment = project ? pinnedDeployment(FLOOR_DEPLOYMENT, workflowBundle.code) : undefined;
  const options: WorkerOptions = {
    connection,
    namespace: args.namespace,
    taskQueue: FLOOR_TASK_QUEUE,
    workflowBundle,
    ...(deployment ? { workerDeploymentOptions: deployment } : {}),
    ...(project ? workerTuning(tuning) : stockCache),
  };
  const worker = await Worker.create(options);
  const running = worker.run();
  if (deployment) await setCurrentVersion(new Client({ connection, namespace: args.namespace }), deployment.version);
  console.log(`floor worker polling ${FLOOR_TASK_QUEUE} (${args.settings} settings)`);
  await running;
  await connection.close();
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
