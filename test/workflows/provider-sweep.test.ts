import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ProviderSweepResult } from '../../activities/provider-sweep.js';
import {
  failedRefundWorkflowId,
  orderWorkflowId,
  PROVIDER_SWEEP_WORKFLOW_TYPE,
  type ProviderSweepInput,
} from '../../domain/messages.js';
import { NeedsAttentionKey } from '../../domain/search-attributes.js';
import { chargeFakePayment, failFakeRefund } from '../../dev/fakes/payment-provider.js';
import { FAKE_EFFECT_INVARIANTS } from '../../dev/fakes/invariants.js';
import { BUSINESS_INVARIANTS, checkInvariants } from '../../ops/invariants.js';
import { placeOrder, seedCatalog, stockOf } from '../helpers/catalog.js';
import { eventually } from '../helpers/eventually.js';
import { startOrderHarness, type OrderHarness } from '../helpers/order-harness.js';

/**
 * The provider sweep on PostgreSQL and the time-skipping server, with the cancellable local
 * provider, which keeps its events as a provider does: a payment whose webhook is lost, and a
 * refund failure never delivered, reach the service through the webhook's own path anyway.
 */
const MINUTE = 60_000;
const TASK_QUEUE = 'orders-provider-sweep';
let h: OrderHarness;

beforeAll(async () => {
  h = await startOrderHarness({ taskQueue: TASK_QUEUE, payments: 'cancellable' });
});
afterAll(async () => {
  await h?.close();
});

/** One sweep, as its schedule starts it, at the test server's current time. */
function sweep(): Promise<ProviderSweepResult> {
  return h.clockStoppedClient.workflow.execute(PROVIDER_SWEEP_WORKFLOW_TYPE, {
    workflowId: `provider-sweep-${randomUUID()}`,
    taskQueue: TASK_QUEUE,
    args: [{ taskQueue: TASK_QUEUE } satisfies ProviderSweepInput],
  });
}

const handleOf = (orderId: string) => h.clockStoppedClient.workflow.getHandle(orderWorkflowId(orderId));
const orderRow = (orderId: string) => h.db.order.findUniqueOrThrow({ where: { id: orderId } });

/** The customer pays at the provider, which keeps the event; no webhook is posted. */
async function paidAtProvider(order: { id: string }, amountCents: number) {
  const charge = await chargeFakePayment(h.db, { orderId: order.id, amountCents });
  if (charge.outcome !== 'SUCCEEDED') throw new Error(`the fake provider refused: ${charge.outcome}`);
  return { paymentId: charge.payment.paymentId, paidAt: charge.payment.paidAt!, amountCents };
}

describe('provider sweep', () => {
  it('pays an order whose webhook was lost at the next sweep, long before its deadline; the webhook redelivered later changes nothing', async () => {
    const { sku } = await seedCatalog(h, { stock: 5 });
    const order = await placeOrder(h, { sku, quantity: 1 });
    await h.env.sleep(2 * MINUTE);
    const payment = await paidAtProvider(order, order.totalCents);
    await h.env.sleep(5 * MINUTE);
    expect((await orderRow(order.id)).status).toBe('UNPAID'); // the webhook never came

    expect((await sweep()).paymentsFed).toContain(payment.paymentId);
    expect(await handleOf(order.id).result()).toMatchObject({ status: 'PAID' });
    const paid = await orderRow(order.id);
    expect(paid.paidAt!.getTime()).toBeLessThan(paid.expiresAt.getTime() - 20 * MINUTE); // at 7 minutes, of 30
    expect(await h.db.payment.findMany({ where: { orderId: order.id } })).toEqual([
      expect.objectContaining({ paymentId: payment.paymentId, status: 'CAPTURED' }),
    ]);

    // The same event again, by the webhook and by the next sweep: one payment, one sale, no refund.
    expect((await h.pay({ ...payment, orderId: order.id })).status).toBe(202);
    expect((await sweep()).paymentsFed).toContain(payment.paymentId);
    await h.env.sleep(MINUTE);
    expect(await h.db.payment.count({ where: { orderId: order.id } })).toBe(1);
    expect(await stockOf(h, sku)).toMatchObject({ available: 4, reserved: 0, sold: 1 });
    expect(await h.fakeCount('payments', 'refund', payment.paymentId)).toEqual({ effects: 0, calls: 0 });
    expect(await h.fakeCount('invoice', 'issue', `${order.id}:INVOICE`)).toEqual({ effects: 1, calls: 1 });
  });

  it('refunds, and never pays with, a payment in another currency whose webhook was lost', async () => {
    const { sku } = await seedCatalog(h, { stock: 5 });
    const order = await placeOrder(h, { sku, quantity: 1 });
    const charge = await chargeFakePayment(h.db, { orderId: order.id, amountCents: order.totalCents, currency: 'usd' });
    if (charge.outcome !== 'SUCCEEDED') throw new Error(`the fake provider refused: ${charge.outcome}`);
    const { paymentId } = charge.payment;

    // Found by the sweep, judged as the webhook judges it: not the EUR order's own money.
    expect((await sweep()).paymentsFed).toContain(paymentId);
    await eventually(async () => (await h.db.payment.findUnique({ where: { paymentId } }))?.status === 'REFUNDED');
    expect(await h.db.payment.findUniqueOrThrow({ where: { paymentId } })).toMatchObject({
      currency: 'usd',
      refusal: 'WRONG_CURRENCY',
      refundReason: 'WRONG_CURRENCY',
    });
    expect((await orderRow(order.id)).status).toBe('UNPAID');

    // Fed again by the next sweep, then the deadline: the order is cancelled, the money refunded once.
    await sweep();
    await h.env.sleep(30 * MINUTE + 1_000);
    expect(await handleOf(order.id).result()).toMatchObject({ status: 'CANCELLED' });
    expect(await h.fakeCount('payments', 'refund', paymentId)).toEqual({ effects: 1, calls: 1 });
    expect(await stockOf(h, sku)).toMatchObject({ available: 5, reserved: 0, sold: 0 });
    const report = await checkInvariants(h.db, [...BUSINESS_INVARIANTS, ...FAKE_EFFECT_INVARIANTS], { graceMs: 0 });
    expect(report.violations).toEqual([]);
  });

  it('an event the webhook delivered first, fed again by the sweep, has no second effect', async () => {
    const { sku } = await seedCatalog(h, { stock: 5 });
    const order = await placeOrder(h, { sku, quantity: 1 });
    const payment = await paidAtProvider(order, order.totalCents);
    expect((await h.pay({ ...payment, orderId: order.id })).status).toBe(202);
    expect(await handleOf(order.id).result()).toMatchObject({ status: 'PAID' });

    expect((await sweep()).paymentsFed).toContain(payment.paymentId);
    await h.env.sleep(MINUTE);
    expect(await h.db.payment.findMany({ where: { orderId: order.id } })).toEqual([
      expect.objectContaining({ paymentId: payment.paymentId, status: 'CAPTURED' }),
    ]);
    expect(await stockOf(h, sku)).toMatchObject({ available: 4, reserved: 0, sold: 1 });
    expect(await h.fakeCount('payments', 'refund', payment.paymentId)).toEqual({ effects: 0, calls: 0 });
    expect(await h.fakeCount('invoice', 'issue', `${order.id}:INVOICE`)).toEqual({ effects: 1, calls: 1 });

    const report = await checkInvariants(h.db, [...BUSINESS_INVARIANTS, ...FAKE_EFFECT_INVARIANTS], { graceMs: 0 });
    expect(report.violations).toEqual([]);
  });

  it('holds for an operator a refund that failed at the provider and whose event was never delivered', async () => {
    const { sku } = await seedCatalog(h, { stock: 5 });
    const order = await placeOrder(h, { sku, quantity: 1 });
    // A wrong amount is taken, its webhook delivered: the order's run refunds it.
    const payment = await paidAtProvider(order, order.totalCents + 100);
    expect((await h.pay({ ...payment, orderId: order.id })).status).toBe(202);
    await eventually(
      async () => (await h.db.payment.findUnique({ where: { paymentId: payment.paymentId } }))?.status === 'REFUNDED',
    );
    // Days later the card issuer turns the refund down; the provider's event is never posted.
    await failFakeRefund(h.db, { paymentId: payment.paymentId, reason: 'expired_or_canceled_card' });
    expect((await sweep()).refundFailuresFed).toContain(payment.paymentId);

    const holder = h.env.client.workflow.getHandle(failedRefundWorkflowId(payment.paymentId));
    await h.env.sleep(5 * MINUTE);
    await eventually(async () => (await holder.describe()).typedSearchAttributes.get(NeedsAttentionKey) === true);
    expect(await h.db.payment.findUniqueOrThrow({ where: { paymentId: payment.paymentId } })).toMatchObject({
      status: 'REFUND_FAILED',
    });
    // Fed again by the next sweep: the same run, still holding it.
    expect((await sweep()).refundFailuresFed).toContain(payment.paymentId);
    expect((await holder.describe()).status.name).toBe('RUNNING');
    expect(await h.db.payment.findUniqueOrThrow({ where: { paymentId: payment.paymentId } })).toMatchObject({
      status: 'REFUND_FAILED',
    });
  });

  it('reads a window of several pages in one pass, every event once, events of one instant included', async () => {
    // 250 failed refunds of payments none of ours, all created in the same instant: three pages.
    await h.db.$executeRaw`
      INSERT INTO fakes.provider_events (event_id, type, payment_id, refund_ref, reason)
      SELECT 'evt_bulk_' || n, 'refund.failed', 'pi_not_ours_' || n, 're_bulk_' || n, 'expired_or_canceled_card'
      FROM generate_series(1, 250) AS n`;
    const { createdSince } = await h.db.providerEventCursor.findUniqueOrThrow({ where: { id: 'provider-events' } });
    const inWindow = await h.db.$queryRaw<Array<{ count: bigint }>>`
      SELECT count(*) AS count FROM fakes.provider_events WHERE created_at >= ${createdSince}`;

    const result = await sweep();
    expect(result.passEnded).toBe(true);
    expect(result.refundFailuresFed.filter((id) => id.startsWith('pi_not_ours_'))).toEqual([]); // ignored
    expect(result.listed).toBe(Number(inWindow[0]!.count));
    expect(result.listed).toBeGreaterThan(250);
    expect(await h.db.providerEventCursor.findUniqueOrThrow({ where: { id: 'provider-events' } })).toMatchObject({
      startingAfter: null,
      passStartedAt: null,
    });
  });
});
