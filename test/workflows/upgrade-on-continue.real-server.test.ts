import { fileURLToPath } from 'node:url';
import type { WorkerDeploymentVersion } from '@temporalio/common';
import { bundleWorkflowCode, type Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ActivityDeps } from '../../activities/index.js';
import { orderWorkflowId, statusQuery } from '../../domain/messages.js';
import { createOrderWorker } from '../../worker/create-worker.js';
import { WORKFLOWS_PATH } from '../../worker/workflow-bundle.js';
import { setCurrentVersion } from '../../worker/deployment.js';
import { placeOrder, seedCatalog } from '../helpers/catalog.js';
import { eventually } from '../helpers/eventually.js';
import { quietBundlerLogger } from '../helpers/quiet-bundler-logger.js';
import { PAYLOAD_KEYS, startOrderHarness, type OrderHarness } from '../helpers/order-harness.js';
import { FAKE_PAYMENT_ACCOUNT } from '../../dev/fakes/payment-provider.js';

/**
 * An order held at its deadline by a silent provider, on a real Temporal Server with Worker
 * Versioning: once a new build is made current, the held run continues as new at its next
 * question to the provider, and the next run executes on the new build.
 */
const TASK_QUEUE = 'orders-upgrade-on-continue';
const DEPLOYMENT = 'order-lifecycle';
const PAYMENT_WINDOW_MS = 3_000;
const CHANGED_WORKFLOWS = fileURLToPath(new URL('./fixtures/changed-workflows.ts', import.meta.url));

let h: OrderHarness;
let code: { a: string; b: string };
const workers: Array<{ worker: Worker; running: Promise<void> }> = [];

beforeAll(async () => {
  h = await startOrderHarness({
    temporal: 'real',
    taskQueue: TASK_QUEUE,
    paymentWindowMs: PAYMENT_WINDOW_MS,
    inProcessWorker: false,
    payments: 'cancellable',
  });
  const bundle = async (workflowsPath: string) =>
    (await bundleWorkflowCode({ workflowsPath, logger: quietBundlerLogger })).code;
  code = { a: await bundle(WORKFLOWS_PATH), b: await bundle(CHANGED_WORKFLOWS) };
});

afterAll(async () => {
  for (const { worker } of workers) if (worker.getState() === 'RUNNING') worker.shutdown();
  await Promise.all(workers.map((w) => w.running));
  await h?.close();
});

/** Starts a versioned worker of this workflow code, as worker/main.ts does, and makes its build current. */
async function deploy(workflowCode: string): Promise<WorkerDeploymentVersion> {
  const deps: ActivityDeps = {
    db: h.db,
    paymentWindowMs: PAYMENT_WINDOW_MS,
    paymentAccount: FAKE_PAYMENT_ACCOUNT,
    unclaimedRefundGraceMs: 24 * 3_600_000,
    maxOpenOrdersPerCustomer: 0,
    maxUnpaidUnitsPerProduct: 0,
    ...h.thirdParties,
  };
  const worker = await createOrderWorker({
    connection: h.env.nativeConnection,
    namespace: 'default',
    taskQueue: TASK_QUEUE,
    deps,
    payloadKeys: PAYLOAD_KEYS,
    workflowBundle: { code: workflowCode },
    deploymentName: DEPLOYMENT,
  });
  workers.push({ worker, running: worker.run() });
  const version = worker.options.workerDeploymentOptions!.version;
  await setCurrentVersion(h.env.client, version, { timeoutMs: 30_000 });
  return version;
}

describe('upgrade on continue-as-new', () => {
  it('moves an order held for a silent provider onto the current build at its next question', async () => {
    const { sku } = await seedCatalog(h, { stock: 5 });
    const a = await deploy(code.a);
    const order = await placeOrder(h, { sku });
    const handle = h.env.client.workflow.getHandle(orderWorkflowId(order.id));
    await h.admin('PUT', '/admin/faults/payments', { failNext: 1_000_000 }); // the provider's API is down
    try {
      await eventually(async () => (await handle.query(statusQuery)).phase === 'closing-payment', 30_000);
      const held = await handle.describe();
      expect(held.raw.workflowExecutionInfo?.versioningInfo?.deploymentVersion?.buildId).toBe(a.buildId);

      const b = await deploy(code.b);
      await eventually(async () => (await handle.describe()).runId !== held.runId, 60_000);
      // Only build B's code answers this query: the held order now runs the new code.
      await eventually(
        async () => (await handle.query<string>('build').catch(() => 'unchanged')) === 'changed',
        30_000,
      );
      const moved = await handle.describe();
      expect(moved.raw.workflowExecutionInfo?.versioningInfo?.deploymentVersion?.buildId).toBe(b.buildId);
      expect(await handle.query(statusQuery)).toMatchObject({ status: 'UNPAID', phase: 'closing-payment' });
    } finally {
      await h.admin('DELETE', '/admin/faults/payments');
    }
    expect(await handle.result()).toMatchObject({ status: 'CANCELLED' });
  }, 120_000);
});
