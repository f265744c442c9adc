import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  LATE_PAYMENT_WORKFLOW_TYPE,
  ORDER_PRIORITY,
  latePaymentWorkflowId,
  orderWorkflowId,
  RECONCILIATION_SCHEDULE_ID,
  RECONCILIATION_WORKFLOW_TYPE,
  statusQuery,
  type ReconciliationInput,
} from '../../domain/messages.js';
import { OrderExpiresAtKey } from '../../domain/search-attributes.js';
import { handOverPayment } from '../../handover/payment-handover.js';
import type { SweepResult } from '../../activities/reconciliation.js';
import { ensureReconciliationSchedule } from '../../worker/reconciliation-schedule.js';
import { placeOrder, seedCatalog, stockOf } from '../helpers/catalog.js';
import { eventually } from '../helpers/eventually.js';
import { startOrderHarness, type OrderHarness } from '../helpers/order-harness.js';

/** The same service on a real Temporal server in real time, with a 2-second payment window. */
let h: OrderHarness;
beforeAll(async () => {
  h = await startOrderHarness({ temporal: 'real', taskQueue: 'orders-real-server', paymentWindowMs: 2_000 });
});
afterAll(async () => {
  await h?.close();
});

async function listed(query: string): Promise<string[]> {
  const ids: string[] = [];
  for await (const execution of h.env.client.workflow.list({ query })) ids.push(execution.workflowId);
  return ids.sort();
}

/**
 * The first three sweeps of a schedule that starts one every 2 s, as the real one every 2 min:
 * each is handed the last completed one's result.
 */
async function scheduledSweeps(input: ReconciliationInput): Promise<SweepResult[]> {
  const handle = await h.env.client.schedule.create({
    scheduleId: `sweep-resumes-${randomUUID()}`,
    spec: { intervals: [{ every: '2s' }] },
    action: {
      type: 'startWorkflow',
      workflowType: RECONCILIATION_WORKFLOW_TYPE,
      taskQueue: 'orders-real-server',
      args: [input],
    },
  });
  try {
    await eventually(async () => (await handle.describe()).info.recentActions.length >= 3, 30_000);
    await handle.pause();
    const started = (await handle.describe()).info.recentActions.slice(0, 3);
    return await Promise.all(
      started.map(({ action: { workflow } }) =>
        h.env.client.workflow
          .getHandle<() => Promise<SweepResult>>(workflow.workflowId, undefined, {
            firstExecutionRunId: workflow.firstExecutionRunId,
          })
          .result(),
      ),
    );
  } finally {
    await handle.delete();
  }
}

/**
 * Two orders held by live runs (extended, waiting on the new deadline, as in a provider outage), then
 * one whose run is lost; all long overdue, due `hoursAgo`, `hoursAgo` - 1 and `hoursAgo` - 2 hours ago.
 */
async function heldThenStranded(hoursAgo: number) {
  const { sku } = await seedCatalog(h, { stock: 10 });
  const held = [await placeOrder(h, { sku }), await placeOrder(h, { sku })];
  for (const order of held) {
    expect((await h.admin('POST', `/orders/${order.id}/extend`, { minutes: 10 })).status).toBe(200);
  }
  const stranded = await placeOrder(h, { sku });
  await h.env.client.workflow.getHandle(orderWorkflowId(stranded.id)).terminate('simulating a lost workflow');
  for (const [i, order] of [held[0]!, held[1]!, stranded].entries()) {
    await h.db
      .$executeRaw`UPDATE orders SET expires_at = now() - ${hoursAgo - i} * interval '1 hour' WHERE id = ${order.id}::uuid`;
  }
  return { held, stranded };
}

describe('OrderLifecycle on a real Temporal Server', () => {
  it('answers payment webhooks at once while a fulfillment downstream hangs', async () => {
    const HANG_MS = 5_000;
    const { sku } = await seedCatalog(h, { stock: 10 });
    // Each extended as soon as it is placed: payable for the whole test, even on a machine so busy that
    // placing six takes longer than the file's 2-s window.
    const orders: Awaited<ReturnType<typeof placeOrder>>[] = [];
    for (let i = 0; i < 6; i++) {
      const order = await placeOrder(h, { sku, quantity: 1 });
      expect((await h.admin('POST', `/orders/${order.id}/extend`, { minutes: 10 })).status).toBe(200);
      orders.push(order);
    }
    expect((await h.admin('PUT', '/admin/faults/invoice', { latencyMs: HANG_MS })).status).toBe(200);
    try {
      const latencies: number[] = [];
      for (const order of orders) {
        const started = performance.now();
        expect(
          (await h.pay({ paymentId: `p-${order.id}`, orderId: order.id, amountCents: order.totalCents })).status,
        ).toBe(202);
        latencies.push(performance.now() - started);
      }
      // The payment path ends at "PAID"; the hanging invoice service is not on it.
      await eventually(
        async () => (await h.db.order.count({ where: { id: { in: orders.map((o) => o.id) }, status: 'PAID' } })) === 6,
      );
      const firstSteps = await h.db.fulfillmentRecord.findMany({ where: { orderId: orders[0]!.id } });
      expect(Math.max(...latencies)).toBeLessThan(HANG_MS / 5);
      await eventually(async () => {
        const rows = await h.db.fulfillmentRecord.findMany({
          where: { orderId: orders[0]!.id, step: { in: ['NOTIFICATION', 'LOYALTY'] } },
        });
        return rows.every((r) => r.status === 'DONE');
      });
      expect(firstSteps.find((r) => r.step === 'INVOICE')?.status).toBe('PENDING');
    } finally {
      await h.admin('DELETE', '/admin/faults/invoice');
    }
  });

  it('starts with OrderStatus and OrderExpiresAt, keeps them current and answers the status query', async () => {
    const customerId = `cust-${randomUUID()}`;
    const { sku } = await seedCatalog(h, { stock: 10 });
    const unpaid = await placeOrder(h, { sku, customerId });
    const paid = await placeOrder(h, { sku, customerId });
    // The two orders' runs: the customer id is no search attribute (docs/temporal.md, "Search attributes").
    const both = `WorkflowId IN ("${orderWorkflowId(unpaid.id)}", "${orderWorkflowId(paid.id)}")`;

    const status = await h.env.client.workflow.getHandle(orderWorkflowId(unpaid.id)).query(statusQuery);
    expect(status).toMatchObject({ orderId: unpaid.id, status: 'UNPAID', expiresAt: unpaid.expiresAt });
    expect(status.waitingFor).toContain('payment until');
    await eventually(async () => (await listed(`${both} AND OrderStatus = "UNPAID"`)).length === 2);
    // Given at start, the deadline as the API expected it: within a second of the one placed.
    const unpaidRun = h.env.client.workflow.getHandle(orderWorkflowId(unpaid.id));
    const shownDeadline = (await unpaidRun.describe()).typedSearchAttributes.get(OrderExpiresAtKey);
    expect(Math.abs(shownDeadline!.getTime() - Date.parse(unpaid.expiresAt))).toBeLessThan(1000);

    expect((await h.pay({ paymentId: `p-${paid.id}`, orderId: paid.id, amountCents: paid.totalCents })).status).toBe(
      202,
    );
    await eventually(async () => (await listed(`${both} AND OrderStatus = "PAID"`)).length === 1);

    // The unpaid one is cancelled by its timer, never before its deadline.
    await h.env.client.workflow.getHandle(orderWorkflowId(unpaid.id)).result();
    const row = await h.db.order.findUniqueOrThrow({ where: { id: unpaid.id } });
    expect(row.status).toBe('CANCELLED');
    expect(row.cancelledAt!.getTime()).toBeGreaterThanOrEqual(row.expiresAt.getTime());
    // Each upsert is a billable action: the placement wrote none, the cancel only the status.
    const upserts = ((await unpaidRun.fetchHistory()).events ?? []).flatMap((e) => {
      const fields = e.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields;
      return fields ? [Object.keys(fields)] : [];
    });
    expect(upserts).toEqual([['OrderStatus']]);
    await eventually(async () => {
      const stuck = `${both} AND OrderStatus = "CANCELLED" AND OrderExpiresAt < "${new Date().toISOString()}"`;
      return (await listed(stuck)).join() === orderWorkflowId(unpaid.id);
    });
    expect(await stockOf(h, sku)).toMatchObject({ available: 8, reserved: 0, sold: 2 });
    expect((await h.asCustomer(customerId, 'GET', `/orders/${unpaid.id}`)).body).toMatchObject({
      status: 'CANCELLED',
      payable: false,
      cancelReason: 'PAYMENT_TIMEOUT',
    });
  });

  it('starts a new order at checkout priority and lowers it once the order is placed', async () => {
    const { sku } = await seedCatalog(h, { stock: 10 });
    const order = await placeOrder(h, { sku });
    const handle = h.env.client.workflow.getHandle(orderWorkflowId(order.id));
    await eventually(async () => (await handle.describe()).priority?.priorityKey === ORDER_PRIORITY.placed);
    const events = (await handle.fetchHistory()).events ?? [];
    expect(events[0]?.workflowExecutionStartedEventAttributes?.priority?.priorityKey).toBe(ORDER_PRIORITY.checkout);
    const lowered = events.filter((e) => e.workflowExecutionOptionsUpdatedEventAttributes);
    expect(lowered).toHaveLength(1);
    // The placement ran at checkout priority: the options changed after the update completed.
    const updateCompleted = events.findIndex((e) => e.workflowExecutionUpdateCompletedEventAttributes);
    expect(updateCompleted).toBeGreaterThan(0);
    expect(events.indexOf(lowered[0]!)).toBeGreaterThan(updateCompleted);
  });

  it('each worker start ensures the one reconciliation schedule, with the configured interval', async () => {
    const settings = { taskQueue: 'orders-real-server', everyMs: 120_000, graceMs: 60_000 };
    expect(await ensureReconciliationSchedule(h.env.client, settings)).toBe('created');
    expect(await ensureReconciliationSchedule(h.env.client, { ...settings, everyMs: 300_000 })).toBe('updated');
    const handle = h.env.client.schedule.getHandle(RECONCILIATION_SCHEDULE_ID);
    try {
      const schedule = await handle.describe();
      expect(schedule.spec.intervals).toMatchObject([{ every: 300_000 }]);
      expect(schedule.action).toMatchObject({
        type: 'startWorkflow',
        workflowType: RECONCILIATION_WORKFLOW_TYPE,
        taskQueue: 'orders-real-server',
      });
      expect(schedule.action.type === 'startWorkflow' && schedule.action.args).toEqual([
        { graceMs: 60_000, limit: 500, paymentLimit: 50, taskQueue: 'orders-real-server' },
      ]);
    } finally {
      await handle.delete();
    }
  });

  it('each scheduled sweep goes on where the last stopped: orders held by live runs hide no stranded one', async () => {
    // All long overdue, the held ones oldest: a sweep of two examines only them.
    const { held, stranded } = await heldThenStranded(3);
    const sweeps = await scheduledSweeps({ graceMs: 30 * 60_000, limit: 2, taskQueue: 'orders-real-server' });
    expect(sweeps[0]).toMatchObject({ scanned: 2, adopted: [], resumeAfter: { orderId: held[1]!.id } });
    expect(sweeps[1]).toMatchObject({ scanned: 1, adopted: [stranded.id], handedOver: [], resumeAfter: null });
    expect(sweeps[2]).toMatchObject({ scanned: 2, adopted: [] }); // from the oldest again
    await eventually(
      async () => (await h.db.order.findUniqueOrThrow({ where: { id: stranded.id } })).status === 'CANCELLED',
    );
  });

  it('each scheduled sweep goes on among unsettled payments too: ones nothing will settle hide no newer one', async () => {
    const { sku } = await seedCatalog(h, { stock: 10 });
    const order = await placeOrder(h, { sku });
    expect(await h.env.client.workflow.getHandle(orderWorkflowId(order.id)).result()).toMatchObject({
      status: 'CANCELLED',
    });
    // Two payments whose settlements completed before they were recorded: nothing will settle them.
    const stuck = [`p-stuck-a-${randomUUID()}`, `p-stuck-b-${randomUUID()}`];
    for (const paymentId of stuck) {
      const settlement = await h.env.client.workflow.start(LATE_PAYMENT_WORKFLOW_TYPE, {
        workflowId: latePaymentWorkflowId(paymentId),
        taskQueue: 'orders-real-server',
        args: [{ paymentId, orderId: order.id }],
      });
      expect(await settlement.result()).toEqual({ outcome: 'NOT_RECEIVED' });
    }
    // A newer one whose webhook's hand-over was lost: the sweep must get to it.
    const lost = `p-lost-${randomUUID()}`;
    for (const [paymentId, hoursAgo] of [
      [stuck[0]!, 3],
      [stuck[1]!, 2],
      [lost, 1],
    ] as const) {
      const receivedAt = new Date(Date.now() - hoursAgo * 3_600_000);
      await h.db.payment.create({
        data: {
          paymentId,
          orderId: order.id,
          amountCents: order.totalCents,
          status: 'RECEIVED',
          paidAt: receivedAt,
          receivedAt,
        },
      });
    }

    const sweeps = await scheduledSweeps({
      graceMs: 30 * 60_000,
      limit: 500,
      paymentLimit: 2,
      taskQueue: 'orders-real-server',
    });
    expect(sweeps[0]).toMatchObject({
      handedOver: [],
      unsettledAfterSettlement: stuck,
      paymentsResumeAfter: { paymentId: stuck[1] },
    });
    expect(sweeps[1]).toMatchObject({ handedOver: [lost], unsettledAfterSettlement: [], paymentsResumeAfter: null });
    expect(sweeps[2]).toMatchObject({ handedOver: [], unsettledAfterSettlement: stuck }); // from the oldest again
    await h.env.client.workflow.getHandle(latePaymentWorkflowId(lost)).result();
    expect((await h.db.payment.findUniqueOrThrow({ where: { paymentId: lost } })).status).toBe('REFUNDED');
  });

  it('a sweep out of time stops where it got to, and the next goes on from there', async () => {
    // Older than any other test's: these three come first.
    const { held, stranded } = await heldThenStranded(30);
    // No time at all: each sweep examines one order (at least one, so that each gets further).
    const sweeps = await scheduledSweeps({
      graceMs: 30 * 60_000,
      limit: 500,
      timeBudgetMs: 0,
      taskQueue: 'orders-real-server',
    });
    expect(sweeps[0]).toMatchObject({ scanned: 1, adopted: [], resumeAfter: { orderId: held[0]!.id } });
    expect(sweeps[1]).toMatchObject({ scanned: 1, adopted: [], resumeAfter: { orderId: held[1]!.id } });
    expect(sweeps[2]).toMatchObject({ scanned: 1, adopted: [stranded.id] });
    await eventually(
      async () => (await h.db.order.findUniqueOrThrow({ where: { id: stranded.id } })).status === 'CANCELLED',
    );
  });

  it('hands a late payment over again after its settlement was terminated, and not after it completed', async () => {
    const { sku } = await seedCatalog(h, { stock: 10 });
    const order = await placeOrder(h, { sku });
    // Its run cancels it at the deadline and ends: a payment signal can no longer reach it.
    const run = await h.env.client.workflow.getHandle(orderWorkflowId(order.id)).result();
    expect(run).toMatchObject({ status: 'CANCELLED' });
    // What the webhook writes before its hand-over.
    const payment = { paymentId: `p-late-${randomUUID()}`, orderId: order.id, amountCents: order.totalCents };
    await h.db.payment.create({ data: { ...payment, status: 'RECEIVED', paidAt: new Date() } });
    const settlement = h.env.client.workflow.getHandle(latePaymentWorkflowId(payment.paymentId));

    // A settlement no worker takes, terminated by an operator: the payment is still RECEIVED.
    expect(await handOverPayment(h.env.client, `nobody-polls-${randomUUID()}`, payment)).toBe('started');
    expect(await handOverPayment(h.env.client, 'orders-real-server', payment)).toBe('settlement-exists');
    await settlement.terminate('simulating an operator who stopped the settlement');

    // The next hand-over (the sweep's) starts it again, and this one settles: the late payment is refunded.
    expect(await handOverPayment(h.env.client, 'orders-real-server', payment)).toBe('started');
    await settlement.result();
    expect((await h.db.payment.findUniqueOrThrow({ where: { paymentId: payment.paymentId } })).status).toBe('REFUNDED');
    expect(await handOverPayment(h.env.client, 'orders-real-server', payment)).toBe('settlement-exists');
  });
});
