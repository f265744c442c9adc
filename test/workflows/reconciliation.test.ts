import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  LATE_PAYMENT_WORKFLOW_TYPE,
  latePaymentWorkflowId,
  orderWorkflowId,
  RECONCILIATION_WORKFLOW_TYPE,
  statusQuery,
  type ReconciliationInput,
} from '../../domain/messages.js';
import { FAKE_PAYMENT_ACCOUNT } from '../../dev/fakes/payment-provider.js';
import { recordReceivedPayment } from '../../store/received-payments.js';
import type { SweepResult } from '../../activities/reconciliation.js';
import { couponOf, placeOrder, seedCatalog, stockOf } from '../helpers/catalog.js';
import { eventually } from '../helpers/eventually.js';
import { startOrderHarness, type OrderHarness } from '../helpers/order-harness.js';

const MINUTE = 60_000;
const TASK_QUEUE = 'orders-reconciliation';
let h: OrderHarness;
beforeAll(async () => {
  h = await startOrderHarness({ taskQueue: TASK_QUEUE });
});
afterAll(async () => {
  await h?.close();
});

const NOTHING: SweepResult = {
  scanned: 0,
  adopted: [],
  handedOver: [],
  unsettledAfterSettlement: [],
  resumeAfter: null,
  paymentsResumeAfter: null,
  unclaimedRefunded: [],
  unclaimedRefundFailed: [],
};

/** Runs one sweep at the test server's current time (the clock-stopped client keeps it from skipping). */
function sweep(): Promise<SweepResult> {
  const input: ReconciliationInput = { graceMs: MINUTE, limit: 100, taskQueue: TASK_QUEUE };
  return h.clockStoppedClient.workflow.execute(RECONCILIATION_WORKFLOW_TYPE, {
    workflowId: `sweep-${Date.now()}-${Math.random()}`,
    taskQueue: TASK_QUEUE,
    args: [input],
  });
}

describe('reconciliation sweep', () => {
  it('adopts an UNPAID order whose workflow is gone and cancels it through the same guarded path', async () => {
    const { sku, couponCode } = await seedCatalog(h, { stock: 10 });
    const lost = await placeOrder(h, { sku, quantity: 2, couponCode });
    const alive = await placeOrder(h, { sku, quantity: 1 });
    // A lost trigger: the order's workflow is gone while the order is still UNPAID.
    await h.env.client.workflow.getHandle(orderWorkflowId(lost.id)).terminate('simulating a lost workflow');

    expect(await sweep()).toEqual(NOTHING); // not past deadline + grace yet
    await h.env.sleep(29 * MINUTE);
    expect(await sweep()).toEqual(NOTHING);
    await h.env.sleep(MINUTE + 30_000); // 30:30: past the deadline, within the grace
    expect(await sweep()).toEqual(NOTHING);
    await h.env.sleep(31_000); // 31:01: past deadline + 1 minute grace

    const result = await sweep();
    expect(result.adopted).toEqual([lost.id]); // the alive order's own workflow cancelled it at 30:00
    const adopted = await h.env.client.workflow.getHandle(orderWorkflowId(lost.id)).result();
    expect(adopted).toMatchObject({ status: 'CANCELLED', cancelReason: 'PAYMENT_TIMEOUT' });
    expect((await h.db.order.findUniqueOrThrow({ where: { id: alive.id } })).status).toBe('CANCELLED');

    expect(await stockOf(h, sku)).toMatchObject({ available: 10, reserved: 0 });
    expect(await couponOf(h, couponCode)).toMatchObject({ status: 'AVAILABLE', orderId: null });
    expect(await h.fakeCount('notification', 'ORDER_CANCELLED', `${lost.id}:ORDER_CANCELLED`)).toEqual({
      effects: 1,
      calls: 1,
    });
    expect(await sweep()).toEqual(NOTHING); // nothing left: the next sweep hits nothing
  });

  it("hands over a payment its webhook recorded but never got to Temporal: a late one is refunded, once; an open order's is left to its run", async () => {
    const { sku } = await seedCatalog(h);
    const order = await placeOrder(h, { sku });
    await h.env.sleep(30 * MINUTE + 1_000);
    expect(await h.env.client.workflow.getHandle(orderWorkflowId(order.id)).result()).toMatchObject({
      status: 'CANCELLED',
    });
    // Recorded by the webhook, then every hand-over failed: Temporal was down for longer than the provider retried.
    const paymentId = `lost-hand-over-${order.id}`;
    const arrivedAt = new Date(await h.env.currentTimeMs());
    const payment = { paymentId, orderId: order.id, amountCents: order.totalCents, paidAt: arrivedAt.toISOString() };
    expect(await recordReceivedPayment(h.db.pool, payment, arrivedAt, FAKE_PAYMENT_ACCOUNT)).toMatchObject({
      known: true,
      refusal: null,
    });
    // An open order's payment, recorded in time the same way: its run decides it from the record at the deadline.
    const open = await placeOrder(h, { sku });
    const inTime = { ...payment, paymentId: `in-time-${open.id}`, orderId: open.id, amountCents: open.totalCents };
    expect(await recordReceivedPayment(h.db.pool, inTime, arrivedAt, FAKE_PAYMENT_ACCOUNT)).toMatchObject({
      known: true,
      refusal: null,
    });

    expect((await sweep()).handedOver).toEqual([]); // within the grace: its webhook may still be at it
    await h.env.sleep(MINUTE + 1_000);
    expect((await sweep()).handedOver).toEqual([paymentId]);
    expect(await h.clockStoppedClient.workflow.getHandle(latePaymentWorkflowId(paymentId)).result()).toEqual({
      outcome: 'REFUNDED',
    });
    expect(await h.db.payment.findUniqueOrThrow({ where: { paymentId } })).toMatchObject({
      status: 'REFUNDED',
      refundReason: 'ORDER_NOT_PAYABLE',
    });
    expect(await h.fakeCount('payments', 'refund', paymentId)).toEqual({ effects: 1, calls: 1 });
    expect((await sweep()).handedOver).toEqual([]); // settled: nothing left for the sweep
    expect(await h.db.payment.findUniqueOrThrow({ where: { paymentId: inTime.paymentId } })).toMatchObject({
      status: 'RECEIVED',
    });
  });

  it('does not count a payment as handed over when its settlement already completed: it stays for a person', async () => {
    const { sku } = await seedCatalog(h);
    const order = await placeOrder(h, { sku });
    await h.env.sleep(30 * MINUTE + 1_000);
    await h.env.client.workflow.getHandle(orderWorkflowId(order.id)).result();
    // Its settlement ran, and completed, before the payment was recorded: it found nothing to settle.
    const paymentId = `settled-before-recorded-${order.id}`;
    const settlement = await h.env.client.workflow.start(LATE_PAYMENT_WORKFLOW_TYPE, {
      workflowId: latePaymentWorkflowId(paymentId),
      taskQueue: TASK_QUEUE,
      args: [{ paymentId, orderId: order.id }],
    });
    expect(await settlement.result()).toEqual({ outcome: 'NOT_RECEIVED' });
    const arrivedAt = new Date(await h.env.currentTimeMs());
    const payment = { paymentId, orderId: order.id, amountCents: order.totalCents, paidAt: arrivedAt.toISOString() };
    expect(await recordReceivedPayment(h.db.pool, payment, arrivedAt, FAKE_PAYMENT_ACCOUNT)).toMatchObject({
      known: true,
      refusal: null,
    });

    await h.env.sleep(MINUTE + 1_000);
    // Not started again, so not handed over: logged as an error and counted, on every sweep.
    expect(await sweep()).toMatchObject({ handedOver: [], unsettledAfterSettlement: [paymentId] });
    expect(await h.db.payment.findUniqueOrThrow({ where: { paymentId } })).toMatchObject({ status: 'RECEIVED' });
  });

  it('hands over a refund owed whose run was lost before it refunded: refunded once, then nothing left', async () => {
    const { sku } = await seedCatalog(h);
    const order = await placeOrder(h, { sku });
    await h.env.sleep(30 * MINUTE + 1_000);
    await h.env.client.workflow.getHandle(orderWorkflowId(order.id)).result();
    // A late payment its settlement decided owed back; then the run refunding it was lost (terminated
    // while the provider was down, or a namespace restored from backup), leaving it REFUND_PENDING.
    const paymentId = `owed-run-lost-${order.id}`;
    const arrivedAt = new Date(await h.env.currentTimeMs());
    const payment = { paymentId, orderId: order.id, amountCents: order.totalCents, paidAt: arrivedAt.toISOString() };
    expect(await recordReceivedPayment(h.db.pool, payment, arrivedAt, FAKE_PAYMENT_ACCOUNT)).toMatchObject({
      known: true,
      refusal: null,
    });
    await h.db.payment.update({
      where: { paymentId },
      data: { status: 'REFUND_PENDING', refundReason: 'ORDER_NOT_PAYABLE' },
    });

    expect((await sweep()).handedOver).toEqual([]); // within the grace
    await h.env.sleep(MINUTE + 1_000);
    expect((await sweep()).handedOver).toEqual([paymentId]);
    expect(await h.clockStoppedClient.workflow.getHandle(latePaymentWorkflowId(paymentId)).result()).toEqual({
      outcome: 'REFUNDED',
    });
    expect(await h.db.payment.findUniqueOrThrow({ where: { paymentId } })).toMatchObject({ status: 'REFUNDED' });
    expect(await h.fakeCount('payments', 'refund', paymentId)).toEqual({ effects: 1, calls: 1 });
    expect((await sweep()).handedOver).toEqual([]); // refunded: nothing left for the sweep
  });

  it('leaves a refund owed to the run still making it: no second refunder, no false hit', async () => {
    const { sku } = await seedCatalog(h);
    const order = await placeOrder(h, { sku });
    const payment = (paymentId: string) => ({ paymentId, orderId: order.id, amountCents: order.totalCents });
    const run = h.env.client.workflow.getHandle(orderWorkflowId(order.id));
    // Its loyalty step dead-lettered keeps the order's run open after the payment.
    await h.admin('PUT', '/admin/faults/loyalty', { failAlways: true });
    expect((await h.pay(payment(`first-${order.id}`))).status).toBe(202);
    await eventually(async () => (await run.query(statusQuery))?.fulfillment?.loyalty === 'FAILED');
    // A second payment for the paid order, owed back while the provider is down: that run keeps refunding it.
    const second = `second-${order.id}`;
    await h.admin('PUT', '/admin/faults/payments', { failNext: 1_000_000 });
    try {
      expect((await h.pay(payment(second))).status).toBe(202);
      await eventually(
        async () => (await h.db.payment.findUnique({ where: { paymentId: second } }))?.status === 'REFUND_PENDING',
      );
      await h.env.sleep(MINUTE + 1_000);
      const swept = await sweep();
      expect(swept.handedOver).not.toContain(second);
      expect(swept.unsettledAfterSettlement).not.toContain(second);
    } finally {
      await h.admin('DELETE', '/admin/faults/payments');
      await h.admin('DELETE', '/admin/faults/loyalty');
    }
    await eventually(
      async () => (await h.db.payment.findUnique({ where: { paymentId: second } }))?.status === 'REFUNDED',
      60_000,
    );
    expect(await h.fakeCount('payments', 'refund', second)).toMatchObject({ effects: 1 });
    expect((await h.admin('POST', `/orders/${order.id}/fulfillment/loyalty/retry`)).status).toBe(202);
    expect(await run.result()).toMatchObject({ status: 'PAID' });
  });

  it('leaves an overdue order alone while its workflow is still running', async () => {
    const { sku } = await seedCatalog(h);
    const order = await placeOrder(h, { sku });
    // Beside it, one overdue the same way whose workflow was lost: the sweep looks at both.
    const lost = await placeOrder(h, { sku });
    await h.env.client.workflow.getHandle(orderWorkflowId(lost.id)).terminate('simulating a lost workflow');
    // The workflow is alive but its cancel has not landed (e.g. the database was down): not the sweep's job.
    await h.db
      .$executeRaw`UPDATE orders SET expires_at = expires_at - interval '1 hour' WHERE id IN (${order.id}::uuid, ${lost.id}::uuid)`;
    const result = await sweep();
    expect(result.adopted).toContain(lost.id);
    expect(result.adopted).not.toContain(order.id);
  });

  it('adopts a PAID order whose run was lost before its fulfillment finished, and fulfils it once', async () => {
    const { sku } = await seedCatalog(h);
    const order = await placeOrder(h, { sku });
    await h.env.client.workflow.getHandle(orderWorkflowId(order.id)).terminate('simulating a lost workflow');
    // Paid in time with no run to tell: the webhook's settlement pays the order, and fulfils nothing.
    const paymentId = `p-${order.id}`;
    expect((await h.pay({ paymentId, orderId: order.id, amountCents: order.totalCents })).status).toBe(202);
    expect(await h.clockStoppedClient.workflow.getHandle(latePaymentWorkflowId(paymentId)).result()).toEqual({
      outcome: 'PAID',
    });
    const steps = () => h.db.fulfillmentRecord.findMany({ where: { orderId: order.id }, select: { status: true } });
    expect(await steps()).toEqual([{ status: 'PENDING' }, { status: 'PENDING' }, { status: 'PENDING' }]);

    expect((await sweep()).adopted).not.toContain(order.id); // paid within the grace: its run may still be at it
    await h.env.sleep(MINUTE + 1_000);
    expect((await sweep()).adopted).toEqual([order.id]);

    expect(await h.env.client.workflow.getHandle(orderWorkflowId(order.id)).result()).toMatchObject({ status: 'PAID' });
    expect(await steps()).toEqual([{ status: 'DONE' }, { status: 'DONE' }, { status: 'DONE' }]);
    expect(await h.fakeCount('invoice', 'issue', `${order.id}:INVOICE`)).toMatchObject({ effects: 1 });
    expect((await sweep()).adopted).toEqual([]); // fulfilled: nothing left for the sweep
  });

  it('an adopted paid order goes on from its recorded steps: done ones are not redone, a dead letter waits for its retry', async () => {
    const { sku } = await seedCatalog(h);
    const order = await placeOrder(h, { sku });
    await h.admin('PUT', '/admin/faults/loyalty', { failAlways: true });
    try {
      expect(
        (await h.pay({ paymentId: `p-${order.id}`, orderId: order.id, amountCents: order.totalCents })).status,
      ).toBe(202);
      const handle = h.env.client.workflow.getHandle(orderWorkflowId(order.id));
      await eventually(async () => (await handle.query(statusQuery)).fulfillment?.loyalty === 'FAILED');
      // The run shows the dead letter before its local activity records it: lost once it is recorded.
      await eventually(
        async () =>
          (await h.db.fulfillmentRecord.findFirst({ where: { orderId: order.id, step: 'LOYALTY' } }))?.status ===
          'FAILED',
      );
      await handle.terminate('simulating a lost workflow while a step waits for an operator');
      await h.env.sleep(MINUTE + 1_000);
      expect((await sweep()).adopted).toEqual([order.id]);
      await eventually(async () => (await handle.query(statusQuery)).fulfillment?.loyalty === 'FAILED');
      expect((await handle.query(statusQuery)).fulfillment).toEqual({
        invoice: 'DONE',
        notification: 'DONE',
        loyalty: 'FAILED',
      });
      expect(await h.fakeCount('invoice', 'issue', `${order.id}:INVOICE`)).toEqual({ effects: 1, calls: 1 });
      expect(await h.fakeCount('loyalty', 'award', `${order.id}:LOYALTY`)).toMatchObject({ effects: 0, calls: 1 });
      expect((await sweep()).adopted).toEqual([]); // held by the adopted run, as by the lost one
    } finally {
      await h.admin('DELETE', '/admin/faults/loyalty');
    }
    expect((await h.admin('POST', `/orders/${order.id}/fulfillment/loyalty/retry`)).status).toBe(202);
    expect((await h.env.client.workflow.getHandle(orderWorkflowId(order.id)).result()).fulfillment).toEqual({
      invoice: 'DONE',
      notification: 'DONE',
      loyalty: 'DONE',
    });
    expect(await h.fakeCount('loyalty', 'award', `${order.id}:LOYALTY`)).toEqual({ effects: 1, calls: 2 });
  });
});
