import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  LATE_PAYMENT_WORKFLOW_TYPE,
  latePaymentWorkflowId,
  orderWorkflowId,
  paidSignal,
  statusQuery,
} from '../../domain/messages.js';
import type { SettleLatePayment } from '../../workflows/late-payment.js';
import { couponOf, placeOrder, seedCatalog, stockOf } from '../helpers/catalog.js';
import { eventually } from '../helpers/eventually.js';
import { ADMIN_TOKEN, startOrderHarness, type OrderHarness } from '../helpers/order-harness.js';

const MINUTE = 60_000;
/** The harness's default task queue. */
const TASK_QUEUE = 'orders-test';
let h: OrderHarness;

beforeAll(async () => {
  h = await startOrderHarness();
});
afterAll(async () => {
  await h?.close();
});

async function statusOf(id: string) {
  return (await h.db.order.findUniqueOrThrow({ where: { id } })).status;
}

async function finished(id: string) {
  // Awaiting the result lets the test server skip time up to the workflow's next timer.
  return h.env.client.workflow.getHandle(orderWorkflowId(id)).result();
}

describe('OrderLifecycle on the time-skipping server', () => {
  it('paid at 29:50 becomes PAID and releases nothing', async () => {
    const { sku, couponCode } = await seedCatalog(h, { stock: 10 });
    const order = await placeOrder(h, { sku, quantity: 2, couponCode });
    expect(order.totalCents).toBe(2 * 1500 - 500);

    // 10 s before the deadline: the test server's clock also runs in real time while the callback
    // travels, which on a loaded machine took more than the single second that 29:59 left.
    await h.env.sleep(29 * MINUTE + 50_000);
    expect(
      (await h.pay({ paymentId: `pay-${order.id}`, orderId: order.id, amountCents: order.totalCents })).status,
    ).toBe(202);
    expect((await finished(order.id)).status).toBe('PAID');

    expect(await statusOf(order.id)).toBe('PAID');
    expect(await stockOf(h, sku)).toMatchObject({ available: 8, reserved: 0, sold: 2 });
    expect(await couponOf(h, couponCode)).toMatchObject({ status: 'REDEEMED', orderId: order.id });
    expect(await h.fakeCount('payments', 'refund', `pay-${order.id}`)).toEqual({ effects: 0, calls: 0 });
    expect(await h.fakeCount('notification', 'ORDER_CANCELLED', `${order.id}:ORDER_CANCELLED`)).toEqual({
      effects: 0,
      calls: 0,
    });
  });

  it('unpaid: still UNPAID at 29:59, CANCELLED after 30:00 with stock and coupon released and the notice sent once', async () => {
    const { sku, couponCode } = await seedCatalog(h, { stock: 10 });
    const order = await placeOrder(h, { sku, quantity: 3, couponCode });
    expect(await stockOf(h, sku)).toMatchObject({ available: 7, reserved: 3 });
    expect(await couponOf(h, couponCode)).toMatchObject({ status: 'LOCKED', orderId: order.id });

    await h.env.sleep(29 * MINUTE + 59_000);
    expect(await statusOf(order.id)).toBe('UNPAID');

    const result = await finished(order.id);
    expect(result).toMatchObject({ status: 'CANCELLED', cancelReason: 'PAYMENT_TIMEOUT' });
    const row = await h.db.order.findUniqueOrThrow({ where: { id: order.id } });
    expect(row.cancelledAt!.getTime()).toBeGreaterThanOrEqual(row.expiresAt.getTime()); // never early
    expect(await stockOf(h, sku)).toMatchObject({ available: 10, reserved: 0, sold: 0 });
    expect(await couponOf(h, couponCode)).toMatchObject({ status: 'AVAILABLE', orderId: null });
    expect(await h.fakeCount('notification', 'ORDER_CANCELLED', `${order.id}:ORDER_CANCELLED`)).toEqual({
      effects: 1,
      calls: 1,
    });
  });

  it('paid at 30:01 stays CANCELLED and is refunded exactly once', async () => {
    const { sku } = await seedCatalog(h);
    const order = await placeOrder(h, { sku });
    const paymentId = `late-${order.id}`;

    await h.env.sleep(30 * MINUTE + 1_000);
    expect((await h.pay({ paymentId, orderId: order.id, amountCents: order.totalCents })).status).toBe(202);
    await finished(order.id);
    await eventually(async () => (await h.db.payment.findUnique({ where: { paymentId } }))?.status === 'REFUNDED');

    expect(await statusOf(order.id)).toBe('CANCELLED');
    expect(await h.fakeCount('payments', 'refund', paymentId)).toEqual({ effects: 1, calls: 1 });
    expect(await h.db.refund.count({ where: { paymentId } })).toBe(1);
    const refundNotice = `${order.id}:PAYMENT_REFUNDED:${paymentId}`;
    await eventually(async () => (await h.fakeCount('notification', 'PAYMENT_REFUNDED', refundNotice)).effects > 0);
    expect(await h.fakeCount('notification', 'PAYMENT_REFUNDED', refundNotice)).toEqual({ effects: 1, calls: 1 });
    expect(await stockOf(h, sku)).toMatchObject({ available: 10, reserved: 0, sold: 0 });
  });

  it('a payment of the wrong amount is refunded and never makes the order PAID', async () => {
    const { sku } = await seedCatalog(h);
    const order = await placeOrder(h, { sku });
    const paymentId = `short-${order.id}`;

    await h.env.sleep(10 * MINUTE);
    expect((await h.pay({ paymentId, orderId: order.id, amountCents: order.totalCents - 1 })).status).toBe(202);
    await eventually(async () => (await h.db.payment.findUnique({ where: { paymentId } }))?.status === 'REFUNDED');
    expect(await statusOf(order.id)).toBe('UNPAID');
    expect(await h.db.payment.findUniqueOrThrow({ where: { paymentId } })).toMatchObject({
      refundReason: 'AMOUNT_MISMATCH',
    });

    expect((await finished(order.id)).status).toBe('CANCELLED');
    expect(await h.fakeCount('payments', 'refund', paymentId)).toEqual({ effects: 1, calls: 1 });
    expect(await h.fakeCount('notification', 'PAYMENT_REFUNDED', `${order.id}:PAYMENT_REFUNDED:${paymentId}`)).toEqual({
      effects: 1,
      calls: 1,
    });
  });

  it('duplicate paid signals and duplicate webhook deliveries have one effect', async () => {
    const { sku, couponCode } = await seedCatalog(h, { stock: 5 });
    const order = await placeOrder(h, { sku, quantity: 1, couponCode });
    const notice = {
      paymentId: `dup-${order.id}`,
      orderId: order.id,
      amountCents: order.totalCents,
      paidAt: new Date().toISOString(),
    };

    const deliveries = await Promise.all([h.pay(notice), h.pay(notice), h.pay(notice)]);
    expect(deliveries.map((d) => d.status)).toEqual([202, 202, 202]);
    const handle = h.env.client.workflow.getHandle(orderWorkflowId(order.id));
    await Promise.all([handle.signal(paidSignal, notice), handle.signal(paidSignal, notice)]);

    expect((await finished(order.id)).status).toBe('PAID');
    // Delivered again after the workflow ended: the late-payment path finds the same paymentId.
    expect((await h.pay(notice)).status).toBe(202);
    await h.env.client.workflow.getHandle(`late-payment-${notice.paymentId}`).result();

    expect(await h.db.payment.count({ where: { orderId: order.id } })).toBe(1);
    expect(await h.db.payment.findUniqueOrThrow({ where: { paymentId: notice.paymentId } })).toMatchObject({
      status: 'CAPTURED',
    });
    expect(await stockOf(h, sku)).toMatchObject({ available: 4, reserved: 0, sold: 1 });
    expect(await h.fakeCount('payments', 'refund', notice.paymentId)).toEqual({ effects: 0, calls: 0 });
  });

  it('a forged paid signal sent straight to Temporal leaves the order as it was', async () => {
    const { sku } = await seedCatalog(h, { stock: 5 });
    const order = await placeOrder(h, { sku, quantity: 1 });
    const handle = h.env.client.workflow.getHandle(orderWorkflowId(order.id));
    // What anyone who reaches Temporal's frontend could send: the right amount, an arrival in time.
    const now = new Date().toISOString();
    const forged = { paymentId: `forged-${order.id}`, orderId: order.id, amountCents: order.totalCents };
    await handle.signal('paid', { ...forged, paidAt: now, receivedAt: now });
    await eventually(async () => {
      const events = (await handle.fetchHistory()).events ?? [];
      const signalled = events.findIndex((e) => e.workflowExecutionSignaledEventAttributes);
      return signalled >= 0 && events.slice(signalled).some((e) => e.markerRecordedEventAttributes); // settlePayment ran
    });
    expect(await handle.query(statusQuery)).toMatchObject({ status: 'UNPAID', payments: [] });
    expect(await statusOf(order.id)).toBe('UNPAID');

    expect((await finished(order.id)).status).toBe('CANCELLED');
    // Nor does a late-payment settlement started by hand for it.
    const late = await h.env.client.workflow.execute<typeof SettleLatePayment>(LATE_PAYMENT_WORKFLOW_TYPE, {
      workflowId: latePaymentWorkflowId(forged.paymentId),
      taskQueue: TASK_QUEUE,
      args: [forged],
    });
    expect(late).toEqual({ outcome: 'NOT_RECEIVED' });
    expect(await h.db.payment.count({ where: { orderId: order.id } })).toBe(0);
    expect(await h.fakeCount('payments', 'refund', forged.paymentId)).toEqual({ effects: 0, calls: 0 });
    expect(await stockOf(h, sku)).toMatchObject({ available: 5, reserved: 0, sold: 0 });
  });

  it('extended at 29:00 by 10 minutes: still UNPAID at 31:00, cancelled after 40:00', async () => {
    const { sku } = await seedCatalog(h);
    const order = await placeOrder(h, { sku });

    await h.env.sleep(29 * MINUTE);
    const extended = await h.admin('POST', `/orders/${order.id}/extend`, { minutes: 10 });
    expect(extended.status).toBe(200);
    expect(Date.parse(extended.body.expiresAt) - Date.parse(order.expiresAt)).toBe(10 * MINUTE);

    await h.env.sleep(2 * MINUTE);
    expect(await statusOf(order.id)).toBe('UNPAID');
    await h.env.sleep(8 * MINUTE - 2_000); // 39:58
    expect(await statusOf(order.id)).toBe('UNPAID');

    const result = await finished(order.id);
    expect(result.status).toBe('CANCELLED');
    const row = await h.db.order.findUniqueOrThrow({ where: { id: order.id } });
    expect(row.cancelledAt!.getTime()).toBeGreaterThanOrEqual(Date.parse(extended.body.expiresAt));
  });

  it('an extension sent again with its Idempotency-Key (its answer lost) answers the same deadline and adds the minutes once', async () => {
    const { sku } = await seedCatalog(h);
    const order = await placeOrder(h, { sku });
    const extend = (minutes: number, key?: string) =>
      h.http(
        'POST',
        `/orders/${order.id}/extend`,
        { minutes },
        { authorization: `Bearer ${ADMIN_TOKEN}`, ...(key && { 'Idempotency-Key': key }) },
      );
    const first = await extend(10, 'incident-42');
    expect(first.status).toBe(200);
    expect(Date.parse(first.body.expiresAt) - Date.parse(order.expiresAt)).toBe(10 * MINUTE);
    expect(await extend(10, 'incident-42')).toMatchObject({ status: 200, body: first.body });
    const expiresAt = async () => (await h.db.order.findUniqueOrThrow({ where: { id: order.id } })).expiresAt.getTime();
    expect(await expiresAt()).toBe(Date.parse(first.body.expiresAt));
    // Without a key, or with other minutes, it is another extension.
    expect((await extend(10)).status).toBe(200);
    expect((await extend(5, 'incident-42')).status).toBe(200);
    expect(await expiresAt()).toBe(Date.parse(order.expiresAt) + 25 * MINUTE);
  });

  it('the customer cancels an unpaid order through the same guarded path', async () => {
    const { sku, couponCode } = await seedCatalog(h);
    const order = await placeOrder(h, { sku, couponCode });

    expect((await h.asCustomer('cust-1', 'POST', `/orders/${order.id}/cancel`)).status).toBe(202);
    expect(await finished(order.id)).toMatchObject({ status: 'CANCELLED', cancelReason: 'CUSTOMER' });
    expect(await stockOf(h, sku)).toMatchObject({ available: 10, reserved: 0 });
    expect(await couponOf(h, couponCode)).toMatchObject({ status: 'AVAILABLE' });
    expect((await h.asCustomer('cust-1', 'POST', `/orders/${order.id}/cancel`)).body.error.code).toBe(
      'ORDER_NOT_UNPAID',
    );
  });

  it('the same Idempotency-Key after its run ended answers the order as it stands and does nothing again', async () => {
    const { sku } = await seedCatalog(h);
    const [paidKey, expiredKey] = [`paid-${sku}`, `expired-${sku}`];
    const paid = await placeOrder(h, { sku, quantity: 1 }, { 'idempotency-key': paidKey });
    const expired = await placeOrder(h, { sku, quantity: 1 }, { 'idempotency-key': expiredKey });
    expect((await h.pay({ paymentId: `pay-${paid.id}`, orderId: paid.id, amountCents: paid.totalCents })).status).toBe(
      202,
    );
    expect((await finished(paid.id)).status).toBe('PAID');
    expect((await finished(expired.id)).status).toBe('CANCELLED');

    const paidAgain = await placeOrder(h, { sku, quantity: 1 }, { 'idempotency-key': paidKey });
    const expiredAgain = await placeOrder(h, { sku, quantity: 1 }, { 'idempotency-key': expiredKey });
    expect(paidAgain).toMatchObject({ id: paid.id, status: 'PAID' });
    expect(expiredAgain).toMatchObject({ id: expired.id, status: 'CANCELLED' });
    // The retry's run, the latest, shows the paid order's fulfillment as the first run recorded it.
    expect(await finished(paid.id)).toMatchObject({
      status: 'PAID',
      fulfillment: { invoice: 'DONE', notification: 'DONE', loyalty: 'DONE' },
    });
    expect((await finished(expired.id)).status).toBe('CANCELLED');
    // Each effect was asked for once: by the run that ended, not again by the retry's.
    expect(await h.fakeCount('invoice', 'issue', `${paid.id}:INVOICE`)).toEqual({ effects: 1, calls: 1 });
    expect(await h.fakeCount('notification', 'ORDER_CANCELLED', `${expired.id}:ORDER_CANCELLED`)).toEqual({
      effects: 1,
      calls: 1,
    });
    expect(await stockOf(h, sku)).toMatchObject({ available: 9, reserved: 0, sold: 1 });
  });

  it("the same Idempotency-Key after a paid order's run was lost mid-fulfillment finishes what that run left", async () => {
    const { sku } = await seedCatalog(h);
    const key = `lost-mid-fulfillment-${sku}`;
    const order = await placeOrder(h, { sku, quantity: 1 }, { 'idempotency-key': key });
    const handle = h.env.client.workflow.getHandle(orderWorkflowId(order.id));
    await h.admin('PUT', '/admin/faults/loyalty', { failAlways: true });
    try {
      expect(
        (await h.pay({ paymentId: `pay-${order.id}`, orderId: order.id, amountCents: order.totalCents })).status,
      ).toBe(202);
      // Lost once the other two steps are done: a run lost mid-call is the adoption test's (reconciliation.test.ts).
      await eventually(async () => {
        const { fulfillment } = await handle.query(statusQuery);
        return (
          fulfillment?.invoice === 'DONE' && fulfillment.notification === 'DONE' && fulfillment.loyalty === 'FAILED'
        );
      });
      await handle.terminate('simulating a run lost while a step waits for an operator');

      // The retry's run takes the order over from its recorded steps: the dead letter is held again.
      expect(await placeOrder(h, { sku, quantity: 1 }, { 'idempotency-key': key })).toMatchObject({
        id: order.id,
        status: 'PAID',
      });
      await eventually(async () => (await handle.query(statusQuery)).fulfillment?.loyalty === 'FAILED');
      expect((await handle.query(statusQuery)).fulfillment).toEqual({
        invoice: 'DONE',
        notification: 'DONE',
        loyalty: 'FAILED',
      });
    } finally {
      await h.admin('DELETE', '/admin/faults/loyalty');
    }
    expect((await h.admin('POST', `/orders/${order.id}/fulfillment/loyalty/retry`)).status).toBe(202);
    expect((await finished(order.id)).fulfillment).toEqual({ invoice: 'DONE', notification: 'DONE', loyalty: 'DONE' });
    expect(await h.fakeCount('invoice', 'issue', `${order.id}:INVOICE`)).toEqual({ effects: 1, calls: 1 });
    expect(await h.fakeCount('notification', 'PAYMENT_RECEIVED', `${order.id}:NOTIFICATION`)).toEqual({
      effects: 1,
      calls: 1,
    });
    expect(await h.fakeCount('loyalty', 'award', `${order.id}:LOYALTY`)).toMatchObject({ effects: 1 });
  });

  it('a notifier that fails twice after acting still notifies once', async () => {
    const { sku } = await seedCatalog(h);
    const real = h.thirdParties.notifier;
    let failures = 0;
    h.thirdParties.notifier = {
      async send(message) {
        await real.send(message); // the effect happens, then the worker "crashes" before reporting it
        if (failures++ < 2) throw new Error('connection reset after send');
      },
    };
    try {
      const order = await placeOrder(h, { sku });
      expect((await finished(order.id)).status).toBe('CANCELLED');
      expect(await h.fakeCount('notification', 'ORDER_CANCELLED', `${order.id}:ORDER_CANCELLED`)).toEqual({
        effects: 1,
        calls: 3,
      });
    } finally {
      h.thirdParties.notifier = real;
    }
  });
});
