import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { NeedsAttentionKey } from '../../domain/search-attributes.js';
import { orderWorkflowId, statusQuery } from '../../domain/messages.js';
import { placeOrder, seedCatalog } from '../helpers/catalog.js';
import { eventually } from '../helpers/eventually.js';
import { startOrderHarness, type OrderHarness } from '../helpers/order-harness.js';

let h: OrderHarness;
beforeAll(async () => {
  h = await startOrderHarness({ taskQueue: 'orders-fulfillment' });
});
afterEach(async () => {
  for (const service of ['invoice', 'notification', 'loyalty', 'payments']) {
    expect((await h.admin('DELETE', `/admin/faults/${service}`)).status).toBe(204);
  }
});
afterAll(async () => {
  await h?.close();
});

async function paidOrder() {
  const { sku } = await seedCatalog(h);
  const order = await placeOrder(h, { sku });
  expect((await h.pay({ paymentId: `pay-${order.id}`, orderId: order.id, amountCents: order.totalCents })).status).toBe(
    202,
  );
  return order;
}

async function steps(orderId: string) {
  const rows = await h.db.fulfillmentRecord.findMany({ where: { orderId } });
  return Object.fromEntries(rows.map((r) => [r.step, r]));
}

const workflow = (orderId: string) => h.env.client.workflow.getHandle(orderWorkflowId(orderId));

describe('fulfillment after payment', () => {
  it('invoice service down for its first 10 attempts: exactly one invoice, the other steps finished meanwhile', async () => {
    expect((await h.admin('PUT', '/admin/faults/invoice', { failNext: 10 })).body).toMatchObject({ failNext: 10 });
    const order = await paidOrder();

    expect((await workflow(order.id).result()).fulfillment).toEqual({
      invoice: 'DONE',
      notification: 'DONE',
      loyalty: 'DONE',
    });
    const done = await steps(order.id);
    expect(done.INVOICE).toMatchObject({ status: 'DONE', attempts: 11 });
    expect(done.NOTIFICATION!.completedAt!.getTime()).toBeLessThan(done.INVOICE!.completedAt!.getTime());
    expect(done.LOYALTY!.completedAt!.getTime()).toBeLessThan(done.INVOICE!.completedAt!.getTime());
    expect(await h.fakeCount('invoice', 'issue', `${order.id}:INVOICE`)).toEqual({ effects: 1, calls: 11 });
    expect(await h.fakeCount('notification', 'PAYMENT_RECEIVED', `${order.id}:NOTIFICATION`)).toEqual({
      effects: 1,
      calls: 1,
    });
    expect(await h.fakeCount('loyalty', 'award', `${order.id}:LOYALTY`)).toEqual({ effects: 1, calls: 1 });
  });

  it('loyalty failing non-retryably is dead-lettered, visible, and completes exactly once after an operator retry', async () => {
    await h.admin('PUT', '/admin/faults/loyalty', { failAlways: true });
    const order = await paidOrder();

    await eventually(async () => (await steps(order.id)).LOYALTY?.status === 'FAILED');
    const failed = await steps(order.id);
    expect(failed.LOYALTY).toMatchObject({
      attempts: 1,
      lastError: expect.stringContaining('loyalty rejected the call'),
    });
    // The other steps run on their own and may finish after the dead letter: they still finish.
    const fulfillmentOf = async () => (await h.admin('GET', `/orders/${order.id}`)).body.fulfillment;
    await eventually(async () => (await fulfillmentOf()).invoice === 'DONE');
    expect(await fulfillmentOf()).toEqual({ invoice: 'DONE', notification: 'DONE', loyalty: 'FAILED' });
    await eventually(
      async () => (await workflow(order.id).describe()).typedSearchAttributes.get(NeedsAttentionKey) === true,
    );
    expect(await workflow(order.id).query(statusQuery)).toMatchObject({
      status: 'PAID',
      fulfillment: { loyalty: 'FAILED' },
    });
    expect((await h.admin('GET', '/metrics')).body).toMatch(/fulfillment_steps\{step="LOYALTY",status="FAILED"\} 1/);

    // Retrying while the cause persists, or a step that has not failed, is refused.
    expect((await h.admin('POST', `/orders/${order.id}/fulfillment/invoice/retry`)).body.error.code).toBe(
      'STEP_NOT_FAILED',
    );
    expect((await h.http('POST', `/orders/${order.id}/fulfillment/loyalty/retry`)).status).toBe(401);

    await h.admin('DELETE', '/admin/faults/loyalty'); // the cause is fixed
    const retried = await h.admin('POST', `/orders/${order.id}/fulfillment/loyalty/retry`);
    expect(retried.status).toBe(202);
    expect((await workflow(order.id).result()).fulfillment).toEqual({
      invoice: 'DONE',
      notification: 'DONE',
      loyalty: 'DONE',
    });
    expect((await workflow(order.id).describe()).typedSearchAttributes.get(NeedsAttentionKey)).toBe(false);
    expect(await h.fakeCount('loyalty', 'award', `${order.id}:LOYALTY`)).toEqual({ effects: 1, calls: 2 });
    expect((await h.admin('POST', `/orders/${order.id}/fulfillment/loyalty/retry`)).body.error.code).toBe(
      'STEP_NOT_FAILED',
    );
  });

  it('duplicate paid delivery and a crash between effect and completion: one invoice, one notification, points once', async () => {
    const real = { ...h.thirdParties };
    const crashOnce = <T extends object>(service: T, method: keyof T) => {
      let crashed = false;
      return new Proxy(service, {
        get: (target, prop) =>
          prop !== method
            ? (target as any)[prop]
            : async (...args: unknown[]) => {
                await (target as any)[prop](...args); // the effect lands ...
                if (!crashed) {
                  crashed = true;
                  throw new Error('worker lost before reporting completion'); // ... the completion does not
                }
              },
      });
    };
    h.thirdParties.invoices = crashOnce(real.invoices, 'issue');
    h.thirdParties.notifier = crashOnce(real.notifier, 'send');
    h.thirdParties.loyalty = crashOnce(real.loyalty, 'award');
    try {
      const { sku } = await seedCatalog(h);
      const order = await placeOrder(h, { sku });
      const notice = { paymentId: `pay-${order.id}`, orderId: order.id, amountCents: order.totalCents };
      const deliveries = await Promise.all([h.pay(notice), h.pay(notice)]);
      expect(deliveries.map((d) => d.status)).toEqual([202, 202]);

      expect((await workflow(order.id).result()).fulfillment).toEqual({
        invoice: 'DONE',
        notification: 'DONE',
        loyalty: 'DONE',
      });
      expect(await h.fakeCount('invoice', 'issue', `${order.id}:INVOICE`)).toEqual({ effects: 1, calls: 2 });
      expect(await h.fakeCount('notification', 'PAYMENT_RECEIVED', `${order.id}:NOTIFICATION`)).toEqual({
        effects: 1,
        calls: 2,
      });
      expect(await h.fakeCount('loyalty', 'award', `${order.id}:LOYALTY`)).toEqual({ effects: 1, calls: 2 });
      expect(await h.db.payment.count({ where: { orderId: order.id } })).toBe(1);
    } finally {
      Object.assign(h.thirdParties, real);
    }
  });

  it('a step an earlier attempt completed is not run again when the service is down by then: DONE, not dead-lettered', async () => {
    const real = h.thirdParties.loyalty;
    let first = true;
    h.thirdParties.loyalty = {
      award: async (request) => {
        if (!first) return real.award(request);
        first = false;
        await real.award(request); // the points are awarded ...
        // ... the attempt records the step DONE, and its answer is lost (a worker crash, a timed-out attempt);
        await h.db.fulfillmentRecord.updateMany({
          where: { orderId: request.orderId, step: 'LOYALTY' },
          data: { status: 'DONE', completedAt: new Date() },
        });
        // by the next attempt the loyalty service refuses every call.
        await h.admin('PUT', '/admin/faults/loyalty', { failAlways: true });
        throw new Error('worker lost before reporting completion');
      },
    };
    try {
      const order = await paidOrder();
      await eventually(async () => (await workflow(order.id).query(statusQuery))?.fulfillment?.loyalty !== 'PENDING');
      expect(await workflow(order.id).query(statusQuery)).toMatchObject({ fulfillment: { loyalty: 'DONE' } });
      expect((await workflow(order.id).result()).needsAttention).toEqual([]);
      expect((await steps(order.id)).LOYALTY).toMatchObject({ status: 'DONE', attempts: 1, lastError: null });
      expect(await h.fakeCount('loyalty', 'award', `${order.id}:LOYALTY`)).toEqual({ effects: 1, calls: 1 });
    } finally {
      h.thirdParties.loyalty = real;
    }
  });

  it('a second payment for a paid order is refunded at the provider; the first is kept', async () => {
    const order = await paidOrder();
    expect(
      (await h.pay({ paymentId: `second-${order.id}`, orderId: order.id, amountCents: order.totalCents })).status,
    ).toBe(202);
    await workflow(order.id).result();
    expect(await h.db.payment.findUniqueOrThrow({ where: { paymentId: `second-${order.id}` } })).toMatchObject({
      status: 'REFUNDED',
      refundReason: 'ALREADY_PAID',
    });
    expect(await h.db.payment.findUniqueOrThrow({ where: { paymentId: `pay-${order.id}` } })).toMatchObject({
      status: 'CAPTURED',
    });
    expect(await h.fakeCount('payments', 'refund', `second-${order.id}`)).toEqual({ effects: 1, calls: 1 });
    expect(await h.fakeCount('payments', 'refund', `pay-${order.id}`)).toEqual({ effects: 0, calls: 0 });
  });
});
