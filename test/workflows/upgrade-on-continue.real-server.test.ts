import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { orderWorkflowId, statusQuery } from '../../domain/messages.js';
import { placeOrder, seedCatalog } from '../helpers/catalog.js';
import { eventually } from '../helpers/eventually.js';
import { startOrderHarness, type OrderHarness } from '../helpers/order-harness.js';
import { twoBuilds, versionedWorkers } from '../helpers/versioned-workers.js';

/**
 * An order held at its deadline by a silent provider, on a real Temporal Server with Worker
 * Versioning: once a new build is made current, the held run continues as new at its next
 * question to the provider, and the next run executes on the new build.
 */
const TASK_QUEUE = 'orders-upgrade-on-continue';
const PAYMENT_WINDOW_MS = 3_000;

let h: OrderHarness;
let code: { a: string; b: string };
const workers = versionedWorkers(() => h, { taskQueue: TASK_QUEUE, paymentWindowMs: PAYMENT_WINDOW_MS });
const deploy = workers.deploy;

beforeAll(async () => {
  h = await startOrderHarness({
    temporal: 'real',
    taskQueue: TASK_QUEUE,
    paymentWindowMs: PAYMENT_WINDOW_MS,
    inProcessWorker: false,
    payments: 'cancellable',
  });
  code = await twoBuilds();
});

afterAll(async () => {
  await workers.stop();
  await h?.close();
});

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
