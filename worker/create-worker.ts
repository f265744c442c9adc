import { fileURLToPath } from 'node:url';
import { NativeConnection, Worker, type WorkerOptions } from '@temporalio/worker';
import { createActivities, type ActivityDeps } from '../activities/index.js';

export const WORKFLOWS_PATH = fileURLToPath(new URL('../workflows/index.ts', import.meta.url));

export interface WorkerSettings {
  connection: NativeConnection;
  namespace: string;
  taskQueue: string;
  deps: ActivityDeps;
  /** Tests pass a pre-built bundle so the workflow code is compiled once per file, not per worker. */
  workflowBundle?: WorkerOptions['workflowBundle'];
}

/** The worker the service runs, and the one tests run: same workflows, same activities. */
export function createOrderWorker(settings: WorkerSettings): Promise<Worker> {
  return Worker.create({
    connection: settings.connection,
    namespace: settings.namespace,
    taskQueue: settings.taskQueue,
    activities: createActivities(settings.deps),
    ...(settings.workflowBundle ? { workflowBundle: settings.workflowBundle } : { workflowsPath: WORKFLOWS_PATH }),
  });
}
