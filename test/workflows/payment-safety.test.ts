import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Activities } from '../../activities/index.js';
import { FAKE_PAYMENT_ACCOUNT } from '../../dev/fakes/payment-provider.js';
import { recordReceivedPayment } from '../../store/received-payments.js';
import { latePaymentWorkflowId, orderWorkflowId, statusQuery } from '../../domain/messages.js';
import { NeedsAttentionKey } from '../../domain/search-attributes.js';
import { placeOrder, seedCatalog, stockOf } from '../helpers/catalog.js';
import { eventually } from '../helpers/eventually.js';
import { startOrderHarness, type OrderHarness } from '../helpers/order-harness.js';

/**
 * The webhook's 202 promises that a payment is durable. Every payment a run accepted must be
 * recorded and settled before the run ends, however it ends, and no outage may make a run give up.
 * Each test here is a way a run could end with an accepted payment still unsettled.
 */
const MINUTE = 60_000;
let h: OrderHarness;
/** Holds back a replayed placement (an order that exists already) until the test lets it go. */
let holdReplays: { until: Promise<void>; entered: () => void } | undefined;
/** While set, the first fulfillment step to run takes the worker's database away, and every step waits for that. */
let outageAtFulfillment: { down?: Promise<void> } | undefined;
const beforeFulfillment = () => outageAtFulfillment && (outageAtFulfillment.down ??= h.workerDatabase!.down());

beforeAll(async () => {
  h = await startOrderHarness({
    workerDatabaseProxy: true,
    wrapActivities: (activities): Activities => ({
      ...activities,
      async placeOrder(request) {
        const hold = holdReplays;
        if (hold && (await h.db.order.count({ where: { id: request.orderId } })) > 0) {
          hold.entered();
          await hold.until;
        }
        return activities.placeOrder(request);
      },
      async issueInvoice(orderId) {
        await beforeFulfillment();
        return activities.issueInvoice(orderId);
      },
      async sendPaymentNotification(orderId) {
        await beforeFulfillment();
        return activities.sendPaymentNotification(orderId);
      },
      async awardLoyaltyPoints(orderId) {
        await beforeFulfillment();
        return activities.awardLoyaltyPoints(orderId);
      },
    }),
  });
});
afterAll(async () => {
  await h?.close();
});

const handleOf = (orderId: string) => h.clockStoppedClient.workflow.getHandle(orderWorkflowId(orderId));
const paymentOf = (paymentId: string) => h.db.payment.findUnique({ where: { paymentId } });
async function needsAttention(workflowId: string): Promise<boolean | undefined> {
  return (await h.clockStoppedClient.workflow.getHandle(workflowId).describe()).typedSearchAttributes.get(
    NeedsAttentionKey,
  );
}

/** A late payment whose refund the provider rejected for good: REFUND_FAILED, held by its SettleLatePayment run. */
async function lateRefundRejected(paymentPrefix: string) {
  const { order, paymentId } = await expiredOrder(paymentPrefix);
  await h.admin('PUT', '/admin/faults/payments', { failAlways: true });
  try {
    expect((await h.pay({ paymentId, orderId: order.id, amountCents: order.totalCents })).status).toBe(202);
    await eventually(async () => (await paymentOf(paymentId))?.status === 'REFUND_FAILED', 30_000);
    await eventually(async () => (await needsAttention(latePaymentWorkflowId(paymentId))) === true);
  } finally {
    await h.admin('DELETE', '/admin/faults/payments');
  }
  return { order, paymentId };
}

/** An order its run has cancelled at the deadline, and the id its late payment will have. */
async function expiredOrder(paymentPrefix: string) {
  const { sku } = await seedCatalog(h);
  const order = await placeOrder(h, { sku, quantity: 1 });
  await h.env.sleep(30 * MINUTE + 1_000);
  await handleOf(order.id).result();
  return { order, paymentId: `${paymentPrefix}-${order.id}` };
}

describe('every accepted payment is settled before the run ends', () => {
  it('a payment that arrives while compensation hangs, with refunds rejected for good, is held by the run and re-driven', async () => {
    const { sku } = await seedCatalog(h);
    const order = await placeOrder(h, { sku, quantity: 1 });
    const paymentId = `during-compensation-${order.id}`;
    // The customer's notice hangs, so the run is still compensating when the payment arrives; the
    // provider rejects every refund for good.
    await h.admin('PUT', '/admin/faults/notification', { latencyMs: 10_000 });
    await h.admin('PUT', '/admin/faults/payments', { failAlways: true });
    try {
      await h.env.sleep(30 * MINUTE + 1_000);
      await eventually(
        async () => (await h.db.order.findUniqueOrThrow({ where: { id: order.id } })).status === 'CANCELLED',
      );
      expect((await h.pay({ paymentId, orderId: order.id, amountCents: order.totalCents })).status).toBe(202);

      await eventually(async () => (await paymentOf(paymentId))?.status === 'REFUND_FAILED', 30_000);
      expect(await paymentOf(paymentId)).toMatchObject({
        refundReason: 'ORDER_NOT_PAYABLE',
        refundError: expect.stringContaining('rejected'),
      });
      const view = await h.asCustomer('cust-1', 'GET', `/orders/${order.id}`);
      expect(view.body.payments).toEqual([
        expect.objectContaining({ paymentId, status: 'REFUND_FAILED', refundError: expect.any(String) }),
      ]);
      // The flag is a command of the workflow task that recorded the failure: visible once that task completes.
      await eventually(async () => (await needsAttention(orderWorkflowId(order.id))) === true);
      const waiting = await handleOf(order.id).query(statusQuery);
      expect(waiting.needsAttention).toEqual([expect.stringContaining(`refund of ${paymentId} rejected`)]);
      expect((await handleOf(order.id).describe()).status.name).toBe('RUNNING'); // holding the owed refund
      expect(await h.workerMetrics.refundFailures.get()).toMatchObject({ values: [{ value: 1 }] });
    } finally {
      await h.admin('DELETE', '/admin/faults/payments');
      await h.admin('DELETE', '/admin/faults/notification');
    }

    const retried = await h.admin('POST', `/orders/${order.id}/payments/${paymentId}/refund/retry`);
    expect(retried.status, JSON.stringify(retried.body)).toBe(202);
    await eventually(async () => (await paymentOf(paymentId))?.status === 'REFUNDED', 30_000);
    await handleOf(order.id).result();
    expect(await h.fakeCount('payments', 'refund', paymentId)).toMatchObject({ effects: 1 });
    expect(await h.db.refund.count({ where: { paymentId } })).toBe(1);
    expect((await h.admin('POST', `/orders/${order.id}/payments/${paymentId}/refund/retry`)).body.error.code).toBe(
      'REFUND_NOT_FAILED',
    );
    expect(await needsAttention(orderWorkflowId(order.id))).toBe(false);
    expect(await stockOf(h, sku)).toMatchObject({ available: 10, reserved: 0 });
  });

  it('a late payment whose refund is rejected waits in SettleLatePayment until an operator retries it', async () => {
    const { order, paymentId } = await lateRefundRejected('late-rejected');
    const late = h.clockStoppedClient.workflow.getHandle(latePaymentWorkflowId(paymentId)); // its latest run
    const holder = await late.describe();
    expect(holder.status.name).toBe('RUNNING'); // holding the owed refund

    expect((await h.admin('POST', `/orders/${order.id}/payments/${paymentId}/refund/retry`)).status).toBe(202);
    // The run that held it refunds it: no new settlement is started beside it.
    const held = h.clockStoppedClient.workflow.getHandle(latePaymentWorkflowId(paymentId), holder.runId);
    expect(await held.result()).toEqual({ outcome: 'REFUNDED' });
    expect((await late.describe()).runId).toBe(holder.runId);
    expect(await paymentOf(paymentId)).toMatchObject({ status: 'REFUNDED' });
    expect(await h.fakeCount('payments', 'refund', paymentId)).toMatchObject({ effects: 1 });
    expect(await needsAttention(latePaymentWorkflowId(paymentId))).toBe(false);
  });

  it('a rejected refund whose holding run was terminated is handed to a new settlement by the retry', async () => {
    const { order, paymentId } = await lateRefundRejected('late-rejected-lost');
    const late = () => h.clockStoppedClient.workflow.getHandle(latePaymentWorkflowId(paymentId)); // its latest run
    await late().terminate('simulating a holder lost by hand');
    const retry = () => h.admin('POST', `/orders/${order.id}/payments/${paymentId}/refund/retry`);

    const retried = await retry();
    expect(retried).toMatchObject({ status: 202, body: { paymentId, status: 'REFUND_PENDING' } });
    expect(await late().result()).toEqual({ outcome: 'REFUNDED' });
    expect(await paymentOf(paymentId)).toMatchObject({ status: 'REFUNDED' });
    expect(await h.fakeCount('payments', 'refund', paymentId)).toMatchObject({ effects: 1 });
    // Nothing is owed any more: a second retry changes nothing.
    expect((await retry()).body.error.code).toBe('REFUND_NOT_FAILED');
  });

  it('a cancellation requested in Temporal does not let go of a held refund', async () => {
    const { order, paymentId } = await expiredOrder('held-through-cancel');
    const late = h.clockStoppedClient.workflow.getHandle(latePaymentWorkflowId(paymentId));
    await h.admin('PUT', '/admin/faults/payments', { failAlways: true });
    try {
      expect((await h.pay({ paymentId, orderId: order.id, amountCents: order.totalCents })).status).toBe(202);
      await eventually(async () => (await needsAttention(late.workflowId)) === true);
    } finally {
      await h.admin('DELETE', '/admin/faults/payments');
    }
    await late.cancel(); // someone presses "Request Cancellation" in the Web UI
    await eventually(async () => {
      const events = (await late.fetchHistory()).events ?? [];
      const requested = events.findIndex((e) => e.workflowExecutionCancelRequestedEventAttributes);
      return requested >= 0 && events.slice(requested).some((e) => e.workflowTaskCompletedEventAttributes);
    });
    expect((await late.describe()).status.name).toBe('RUNNING');
    // The money is still owed: the run still holds it, and the operator's retry still reaches it.
    expect((await h.admin('POST', `/orders/${order.id}/payments/${paymentId}/refund/retry`)).status).toBe(202);
    await eventually(async () => (await paymentOf(paymentId))?.status === 'REFUNDED');
    // Then, the money settled, the run honours the cancellation.
    await eventually(async () => (await late.describe()).status.name === 'CANCELLED');
  });

  it('a payment that arrives while an update handler still runs at the end of the run is settled', async () => {
    const { sku } = await seedCatalog(h);
    const key = { 'idempotency-key': `held-replay-${Date.now()}` };
    const order = await placeOrder(h, { sku, quantity: 1 }, key);
    const paymentId = `during-update-${order.id}`;

    let release!: () => void;
    let entered!: () => void;
    const replayEntered = new Promise<void>((resolve) => (entered = resolve));
    holdReplays = { until: new Promise<void>((resolve) => (release = resolve)), entered };
    try {
      // A client retries its POST /orders: the replayed placement update is held in its activity.
      const replay = placeOrder(h, { sku, quantity: 1 }, key);
      await replayEntered;
      expect((await h.asCustomer('cust-1', 'POST', `/orders/${order.id}/cancel`)).status).toBe(202);
      // The run has cancelled and compensated, and now only waits for the update to finish.
      await eventually(async () => (await handleOf(order.id).query(statusQuery)).phase === 'ending');
      expect((await h.pay({ paymentId, orderId: order.id, amountCents: order.totalCents })).status).toBe(202);
      release();
      expect((await replay).id).toBe(order.id);
    } finally {
      holdReplays = undefined;
      release();
    }

    const result = await handleOf(order.id).result();
    expect(result.status).toBe('CANCELLED');
    expect(result.payments).toEqual([{ paymentId, status: 'REFUNDED' }]);
    expect(await paymentOf(paymentId)).toMatchObject({ status: 'REFUNDED', refundReason: 'ORDER_NOT_PAYABLE' });
    expect(await h.fakeCount('payments', 'refund', paymentId)).toEqual({ effects: 1, calls: 1 });
  });
  it('a payment the webhook recorded before the deadline, its signal never handled, pays the order at the deadline', async () => {
    const { sku } = await seedCatalog(h, { stock: 5 });
    const order = await placeOrder(h, { sku, quantity: 1 });
    const paymentId = `signal-lost-${order.id}`;
    // What the webhook writes first; its signal to the run then failed (Temporal restarting), and
    // the provider's redelivery has not come yet.
    const arrivedAt = new Date(Date.parse(order.expiresAt) - 1_000);
    const verified = { paymentId, orderId: order.id, amountCents: order.totalCents, paidAt: arrivedAt.toISOString() };
    expect(await recordReceivedPayment(h.db.pool, verified, arrivedAt, FAKE_PAYMENT_ACCOUNT)).toMatchObject({
      known: true,
      refusal: null,
    });
    await h.env.sleep(30 * MINUTE + 1_000);
    expect(await handleOf(order.id).result()).toMatchObject({ status: 'PAID' });
    expect(await paymentOf(paymentId)).toMatchObject({ status: 'CAPTURED' });
    expect(await stockOf(h, sku)).toMatchObject({ available: 4, reserved: 0, sold: 1 });
    expect(await h.fakeCount('payments', 'refund', paymentId)).toMatchObject({ calls: 0 });
  });
});

describe('no step gives up because something is down', () => {
  it('a payment provider down for longer than a step may take: the refund stays owed, flagged, and goes through once it is back', async () => {
    const { order, paymentId } = await expiredOrder('provider-down');
    // Unavailable, not rejected: every call fails with a retryable error, far past STEP_STUCK_AFTER.
    await h.admin('PUT', '/admin/faults/payments', { failNext: 1_000_000 });
    try {
      expect((await h.pay({ paymentId, orderId: order.id, amountCents: order.totalCents })).status).toBe(202);
      const late = h.clockStoppedClient.workflow.getHandle(latePaymentWorkflowId(paymentId));
      await eventually(async () => (await paymentOf(paymentId))?.status === 'REFUND_PENDING');
      await h.env.sleep(12 * MINUTE);
      expect(await paymentOf(paymentId)).toMatchObject({ status: 'REFUND_PENDING' }); // never REFUND_FAILED
      await eventually(async () => (await needsAttention(late.workflowId)) === true);
    } finally {
      await h.admin('DELETE', '/admin/faults/payments');
    }
    await h.env.sleep(3 * MINUTE); // the next round, at most the backoff's cap away (workflows/backoff.ts)
    await eventually(async () => (await paymentOf(paymentId))?.status === 'REFUNDED', 60_000);
    expect(await h.clockStoppedClient.workflow.getHandle(latePaymentWorkflowId(paymentId)).result()).toEqual({
      outcome: 'REFUNDED',
    });
    expect(await needsAttention(latePaymentWorkflowId(paymentId))).toBe(false);
  });

  it('a refund stuck while the provider is down, then rejected, then retried: no flag outlives it', async () => {
    const { order, paymentId } = await expiredOrder('stuck-then-rejected');
    const late = latePaymentWorkflowId(paymentId);
    await h.admin('PUT', '/admin/faults/payments', { failNext: 1_000_000 });
    try {
      expect((await h.pay({ paymentId, orderId: order.id, amountCents: order.totalCents })).status).toBe(202);
      await eventually(async () => (await paymentOf(paymentId))?.status === 'REFUND_PENDING');
      await h.env.sleep(6 * MINUTE); // past STUCK_AFTER: the stuck refund is flagged
      await eventually(async () => (await needsAttention(late)) === true);
      await h.admin('PUT', '/admin/faults/payments', { failAlways: true }); // then refused for good
      await h.env.sleep(3 * MINUTE); // the next round, at most the backoff's cap away
      await eventually(async () => (await paymentOf(paymentId))?.status === 'REFUND_FAILED', 30_000);
    } finally {
      await h.admin('DELETE', '/admin/faults/payments');
    }
    expect((await h.admin('POST', `/orders/${order.id}/payments/${paymentId}/refund/retry`)).status).toBe(202);
    expect(await h.clockStoppedClient.workflow.getHandle(late).result()).toEqual({ outcome: 'REFUNDED' });
    expect(await needsAttention(late)).toBe(false);
  });

  it('a 15-minute database outage across the deadline: the payment accepted before it pays, the other order cancels, nothing is lost', async () => {
    const { sku } = await seedCatalog(h, { stock: 10 });
    const paid = await placeOrder(h, { sku, quantity: 1 });
    const unpaid = await placeOrder(h, { sku, quantity: 2 });
    const paymentId = `before-outage-${paid.id}`;

    await h.env.sleep(25 * MINUTE);
    await h.workerDatabase!.down();
    try {
      // The webhook still reaches the database; the worker's activities do not.
      expect((await h.pay({ paymentId, orderId: paid.id, amountCents: paid.totalCents })).status).toBe(202);
      await h.env.sleep(15 * MINUTE); // to 40:00, ten minutes past both deadlines
      // Recorded by the webhook, not decided yet: the worker cannot reach the database.
      expect(await paymentOf(paymentId)).toMatchObject({ status: 'RECEIVED', amountCents: paid.totalCents });
      expect(await needsAttention(orderWorkflowId(paid.id))).toBe(true);
      expect((await handleOf(paid.id).query(statusQuery)).needsAttention).toEqual([
        expect.stringContaining('settlePayment keeps failing'),
      ]);
      expect((await handleOf(unpaid.id).query(statusQuery)).needsAttention).toEqual([
        expect.stringContaining('cancelOrder keeps failing'),
      ]);
    } finally {
      await h.workerDatabase!.up();
    }
    await h.env.sleep(2 * MINUTE); // past the next retry of each stuck step (backoff capped at a minute)

    // Received before the deadline (by the database's clock at the webhook): it pays, late as the settling is.
    expect((await handleOf(paid.id).result()).status).toBe('PAID');
    expect(await paymentOf(paymentId)).toMatchObject({ status: 'CAPTURED' });
    const cancelled = await handleOf(unpaid.id).result();
    expect(cancelled).toMatchObject({ status: 'CANCELLED', cancelReason: 'PAYMENT_TIMEOUT', needsAttention: [] });
    expect(await stockOf(h, sku)).toMatchObject({ available: 9, reserved: 0, sold: 1 });
    expect(await needsAttention(orderWorkflowId(paid.id))).toBe(false);
    expect(await needsAttention(orderWorkflowId(unpaid.id))).toBe(false);
  });

  it('a 15-minute database outage during fulfillment dead-letters nothing: the invoice is issued once it is back', async () => {
    const { sku } = await seedCatalog(h);
    const order = await placeOrder(h, { sku, quantity: 1 });
    // The outage begins before any of the three steps runs, whatever the machine's speed.
    outageAtFulfillment = {};
    try {
      expect(
        (await h.pay({ paymentId: `pay-${order.id}`, orderId: order.id, amountCents: order.totalCents })).status,
      ).toBe(202);
      // Past the steps' 15 attempts (about 10 minutes), after which a downstream's failure would dead-letter them.
      await h.env.sleep(15 * MINUTE);
      const steps = ['issueInvoice', 'sendPaymentNotification', 'awardLoyaltyPoints'];
      await eventually(async () => {
        const { needsAttention } = await handleOf(order.id).query(statusQuery);
        return steps.every((step) => needsAttention.some((item) => item.includes(`${step} keeps failing`)));
      });
    } finally {
      outageAtFulfillment = undefined;
      await h.workerDatabase!.up();
    }
    await h.env.sleep(4 * MINUTE); // past each step's next attempt, at most the outage backoff's cap away
    const result = await handleOf(order.id).result();
    expect(result).toMatchObject({
      status: 'PAID',
      fulfillment: { invoice: 'DONE', notification: 'DONE', loyalty: 'DONE' },
      needsAttention: [],
    });
    expect(await h.db.fulfillmentRecord.count({ where: { orderId: order.id, status: 'FAILED' } })).toBe(0);
    expect(await h.fakeCount('invoice', 'issue', `${order.id}:INVOICE`)).toMatchObject({ effects: 1 });
  });
});
