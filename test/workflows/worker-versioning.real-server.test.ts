import type { WorkflowHandle } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { orderWorkflowId, statusQuery } from '../../domain/messages.js';
import { buildIdOf } from '../../worker/deployment.js';
import { placeOrder, seedCatalog } from '../helpers/catalog.js';
import { eventually } from '../helpers/eventually.js';
import { startOrderHarness, type OrderHarness } from '../helpers/order-harness.js';
import { DEPLOYMENT, twoBuilds, versionedWorkers } from '../helpers/versioned-workers.js';

/**
 * A workflow change rolled out by Worker Versioning on a real Temporal Server: orders in flight on
 * build A, build B (a changed workflow) deployed beside it and made current; every A order
 * finishes on A, new orders run on B, and every order reaches its final state.
 */
const TASK_QUEUE = 'orders-versioning';
/** Long enough for build B to become current before A's unpaid orders expire. */
const PAYMENT_WINDOW_MS = 8_000;
const { VersioningBehavior, VersionDrainageStatus } = temporal.api.enums.v1;

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
  });
  code = await twoBuilds();
});

afterAll(async () => {
  await workers.stop();
  await h?.close();
});

/** The build of every completed workflow task, and when it completed. */
async function workflowTasks(handle: WorkflowHandle): Promise<Array<{ buildId: string; at: number }>> {
  const events = (await handle.fetchHistory()).events ?? [];
  return events
    .filter((e) => e.workflowTaskCompletedEventAttributes)
    .map((e) => {
      const attributes = e.workflowTaskCompletedEventAttributes!;
      expect(attributes.versioningBehavior).toBe(VersioningBehavior.VERSIONING_BEHAVIOR_PINNED);
      return { buildId: attributes.deploymentVersion?.buildId ?? '', at: Number(e.eventTime!.seconds) * 1000 };
    });
}

async function count(query: string): Promise<number> {
  return (await h.env.client.workflow.count(query)).count;
}

describe('a workflow change, rolled out as a new Worker Deployment build', () => {
  it('finishes in-flight orders on the build that started them and new ones on the new build', async () => {
    const { sku } = await seedCatalog(h, { stock: 20 });
    const a = await deploy(code.a);
    expect(a.buildId).toBe(buildIdOf(code.a));

    // On A: two orders that will be paid after the switch, two left to expire after it.
    const aPaid = [await placeOrder(h, { sku }), await placeOrder(h, { sku })];
    for (const order of aPaid)
      expect((await h.admin('POST', `/orders/${order.id}/extend`, { minutes: 10 })).status).toBe(200);
    const aExpiring = [await placeOrder(h, { sku }), await placeOrder(h, { sku })];

    const b = await deploy(code.b);
    expect(b.buildId).not.toBe(a.buildId);
    const deployment = await h.env.client.workflowService.describeWorkerDeployment({
      namespace: 'default',
      deploymentName: DEPLOYMENT,
    });
    const routing = deployment.workerDeploymentInfo!.routingConfig!;
    expect(routing.currentDeploymentVersion?.buildId).toBe(b.buildId);
    const switchedAt = Number(routing.currentVersionChangedTime!.seconds) * 1000;
    // The A orders' expiry is still ahead: their timers fire after the switch.
    for (const order of aExpiring) expect(Date.parse(order.expiresAt)).toBeGreaterThan(switchedAt + 1000);

    // A takes no new runs now, and drains as its pinned runs close.
    const aVersion = await h.env.client.workflowService.describeWorkerDeploymentVersion({
      namespace: 'default',
      deploymentVersion: a,
    });
    expect(aVersion.workerDeploymentVersionInfo?.drainageInfo?.status).toBe(
      VersionDrainageStatus.VERSION_DRAINAGE_STATUS_DRAINING,
    );

    // A's runs still run A's code: they answer the status query, not the changed workflow's one.
    const aHandle = h.env.client.workflow.getHandle(orderWorkflowId(aPaid[0]!.id));
    expect(await aHandle.query(statusQuery)).toMatchObject({ status: 'UNPAID' });
    await expect(aHandle.query<string>('build')).rejects.toThrow();
    for (const order of aPaid)
      expect(
        (await h.pay({ paymentId: `p-${order.id}`, orderId: order.id, amountCents: order.totalCents })).status,
      ).toBe(202);

    // New orders start on B, and run B's code.
    const bPaid = await placeOrder(h, { sku });
    const bExpiring = await placeOrder(h, { sku });
    expect(await h.env.client.workflow.getHandle(orderWorkflowId(bPaid.id)).query<string>('build')).toBe('changed');
    expect((await h.pay({ paymentId: `p-${bPaid.id}`, orderId: bPaid.id, amountCents: bPaid.totalCents })).status).toBe(
      202,
    );

    // Nothing lost: every run closes, each order in its final state.
    const runs = [
      ...aPaid.map((order) => ({ order, build: a, final: 'PAID' })),
      ...aExpiring.map((order) => ({ order, build: a, final: 'CANCELLED' })),
      { order: bPaid, build: b, final: 'PAID' },
      { order: bExpiring, build: b, final: 'CANCELLED' },
    ];
    for (const { order, build, final } of runs) {
      const handle = h.env.client.workflow.getHandle(orderWorkflowId(order.id));
      await handle.result();
      expect((await h.db.order.findUniqueOrThrow({ where: { id: order.id } })).status).toBe(final);
      const versioning = (await handle.describe()).raw.workflowExecutionInfo!.versioningInfo!;
      expect(versioning.behavior).toBe(VersioningBehavior.VERSIONING_BEHAVIOR_PINNED);
      expect(versioning.deploymentVersion?.buildId).toBe(build.buildId);
      // Every workflow task of the run completed on its own build, A's also after the switch.
      const tasks = await workflowTasks(handle);
      expect(new Set(tasks.map((t) => t.buildId))).toEqual(new Set([build.buildId]));
      if (build === a) expect(Math.max(...tasks.map((t) => t.at))).toBeGreaterThanOrEqual(switchedAt);
    }

    // What an operator looks at before stopping A's workers: no run pinned to A is still open.
    const onA = `TemporalWorkerDeploymentVersion = "${DEPLOYMENT}:${a.buildId}"`;
    await eventually(
      async () => (await count(onA)) === 4 && (await count(`${onA} AND ExecutionStatus = "Running"`)) === 0,
    );
    expect(await count(`TemporalWorkerDeploymentVersion = "${DEPLOYMENT}:${b.buildId}"`)).toBe(2);
  });
});
