import { fileURLToPath } from 'node:url';
import type { WorkerDeploymentVersion } from '@temporalio/common';
import { bundleWorkflowCode, type Worker } from '@temporalio/worker';
import type { ActivityDeps } from '../../activities/index.js';
import { FAKE_PAYMENT_ACCOUNT } from '../../dev/fakes/payment-provider.js';
import { setCurrentVersion } from '../../worker/deployment.js';
import { createOrderWorker } from '../../worker/create-worker.js';
import { WORKFLOWS_PATH } from '../../worker/workflow-bundle.js';
import { PAYLOAD_KEYS, type OrderHarness } from './order-harness.js';
import { quietBundlerLogger } from './quiet-bundler-logger.js';

export const DEPLOYMENT = 'order-lifecycle';
const CHANGED_WORKFLOWS = fileURLToPath(new URL('../workflows/fixtures/changed-workflows.ts', import.meta.url));

/** Build A (today's workflow code) and build B (a changed workflow), bundled once. */
export async function twoBuilds(): Promise<{ a: string; b: string }> {
  const bundle = async (workflowsPath: string) =>
    (await bundleWorkflowCode({ workflowsPath, logger: quietBundlerLogger })).code;
  return { a: await bundle(WORKFLOWS_PATH), b: await bundle(CHANGED_WORKFLOWS) };
}

/**
 * Versioned workers on a real Temporal Server, started as worker/main.ts starts one: `deploy` runs a
 * worker of the given workflow code and makes its build current; `stop` shuts every one down, and
 * a worker that failed during the test says why there.
 */
export function versionedWorkers(h: () => OrderHarness, settings: { taskQueue: string; paymentWindowMs: number }) {
  const workers: Array<{ worker: Worker; running: Promise<void> }> = [];
  return {
    async deploy(workflowCode: string): Promise<WorkerDeploymentVersion> {
      const harness = h();
      const deps: ActivityDeps = {
        db: harness.db,
        paymentWindowMs: settings.paymentWindowMs,
        paymentAccount: FAKE_PAYMENT_ACCOUNT,
        unclaimedRefundGraceMs: 24 * 3_600_000,
        maxOpenOrdersPerCustomer: 0,
        maxUnpaidUnitsPerProduct: 0,
        ...harness.thirdParties,
      };
      const worker = await createOrderWorker({
        connection: harness.env.nativeConnection,
        namespace: 'default',
        taskQueue: settings.taskQueue,
        deps,
        payloadKeys: PAYLOAD_KEYS,
        workflowBundle: { code: workflowCode },
        deploymentName: DEPLOYMENT,
      });
      workers.push({ worker, running: worker.run() });
      const version = worker.options.workerDeploymentOptions!.version;
      await setCurrentVersion(harness.env.client, version, { timeoutMs: 30_000 });
      return version;
    },
    async stop(): Promise<void> {
      for (const { worker } of workers) if (worker.getState() === 'RUNNING') worker.shutdown();
      await Promise.all(workers.map((w) => w.running));
    },
  };
}
