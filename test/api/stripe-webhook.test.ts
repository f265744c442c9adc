import { randomUUID } from 'node:crypto';
import { WorkflowNotFoundError } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STRIPE_WEBHOOK_PATH } from '../../api/endpoint-table.js';
import { failedRefundWorkflowId, latePaymentWorkflowId, orderWorkflowId } from '../../domain/messages.js';
import { MAX_ORDER_TOTAL_CENTS } from '../../domain/order-total.js';
import { NeedsAttentionKey } from '../../domain/search-attributes.js';
import { FakeStripeAccount } from '../../dev/fakes/stripe/account.js';
import { signedIntentEvent, signedRefundFailure, type SignedEvent } from '../../dev/fakes/stripe/events.js';
import { placeOrder, seedCatalog, stockOf } from '../helpers/catalog.js';
import { eventually } from '../helpers/eventually.js';
import { startOrderHarness, type OrderHarness } from '../helpers/order-harness.js';

/**
 * Stripe's webhook through the real service (PostgreSQL, Temporal, the worker): events of the fake
 * Stripe account's intents, signed by the official client's test helper, pay orders as the
 * generic callback does, once, however often and in whatever order Stripe delivers them.
 */
const SECRET = 'whsec_integration_test_endpoint_0123456789';
let h: OrderHarness;
const stripe = new FakeStripeAccount();

beforeAll(async () => {
  h = await startOrderHarness({ taskQueue: 'orders-stripe-webhook', stripeWebhookSecret: SECRET });
});
afterAll(async () => {
  await h?.close();
});

async function post(event: SignedEvent): Promise<{ status: number; body: unknown }> {
  const { status, body } = await h.http('POST', STRIPE_WEBHOOK_PATH, event.payload, {
    'Stripe-Signature': event.signature,
  });
  return { status, body };
}

const answer = (
  event: SignedEvent,
  outcome:
    'PAYMENT_ACCEPTED' | 'UNCLAIMED_RECORDED' | 'PAYMENT_FAILURE_ACCEPTED' | 'REFUND_FAILURE_ACCEPTED' | 'IGNORED',
) => ({
  status: 200,
  body: { eventId: JSON.parse(event.payload).id, outcome },
});

/** The intent an order is paid with, as the service creates it: its total, its order in metadata. */
function intentFor(order: { id: string; totalCents: number }): string {
  return stripe.createIntent({ amount: order.totalCents, currency: 'eur', metadata: { order_id: order.id } }).id;
}

/** Stripe's clock has whole seconds: an event's time, and so the payment's, is one. */
const wholeSecond = () => new Date(Math.floor(Date.now() / 1000) * 1000);

const orderResult = (orderId: string) => h.env.client.workflow.getHandle(orderWorkflowId(orderId)).result();

const failedRefund = (paymentId: string, refundRef: string, amountCents: number): SignedEvent =>
  signedRefundFailure({ paymentId, refundRef, amountCents }, SECRET);

describe('POST /webhooks/stripe', () => {
  it('pays the order once, whatever the redeliveries and however late a processing event comes', async () => {
    const { sku } = await seedCatalog(h, { stock: 5 });
    const order = await placeOrder(h, { sku, quantity: 2, customerId: `stripe-${randomUUID()}` });
    const intentId = intentFor(order);
    stripe.startProcessing(intentId);
    const processing = signedIntentEvent(stripe, intentId, 'payment_intent.processing', SECRET);
    const paidAt = wholeSecond();
    stripe.succeed(intentId, paidAt);
    const succeeded = signedIntentEvent(stripe, intentId, 'payment_intent.succeeded', SECRET, { at: paidAt });

    // The event and a redelivery race each other while the order's run waits for its payment.
    expect(await Promise.all([post(succeeded), post(succeeded)])).toEqual([
      answer(succeeded, 'PAYMENT_ACCEPTED'),
      answer(succeeded, 'PAYMENT_ACCEPTED'),
    ]);
    expect((await orderResult(order.id)).status).toBe('PAID');

    // Once the run has ended: the processing event, out of order, then two more redeliveries.
    expect(await post(processing)).toEqual(answer(processing, 'IGNORED'));
    expect(await post(succeeded)).toEqual(answer(succeeded, 'PAYMENT_ACCEPTED'));
    expect(await post(succeeded)).toEqual(answer(succeeded, 'PAYMENT_ACCEPTED'));
    // With the order's run gone, the redelivery went to a settlement of its own: it found the payment captured.
    const late = h.env.client.workflow.getHandle(latePaymentWorkflowId(intentId));
    expect(await late.result()).toEqual({ outcome: 'PAID' });

    expect(await h.db.payment.findMany({ where: { orderId: order.id } })).toEqual([
      expect.objectContaining({ paymentId: intentId, amountCents: order.totalCents, status: 'CAPTURED', paidAt }),
    ]);
    expect(await h.db.order.findUniqueOrThrow({ where: { id: order.id } })).toMatchObject({ status: 'PAID' });
    expect(await stockOf(h, sku)).toMatchObject({ available: 3, reserved: 0, sold: 2 });
    expect(await h.fakeCount('payments', 'refund', intentId)).toEqual({ effects: 0, calls: 0 });
  });

  it('pays an order of the largest total the service accepts', async () => {
    expect(MAX_ORDER_TOTAL_CENTS % 3).toBe(0);
    const { sku } = await seedCatalog(h, { priceCents: MAX_ORDER_TOTAL_CENTS / 3, stock: 3 });
    const order = await placeOrder(h, { sku, quantity: 3, customerId: `stripe-big-${randomUUID()}` });
    expect(order.totalCents).toBe(MAX_ORDER_TOTAL_CENTS);
    const intentId = intentFor(order);
    stripe.succeed(intentId);
    const succeeded = signedIntentEvent(stripe, intentId, 'payment_intent.succeeded', SECRET);

    expect(await post(succeeded)).toEqual(answer(succeeded, 'PAYMENT_ACCEPTED'));
    expect((await orderResult(order.id)).status).toBe('PAID');
    expect(await h.db.payment.findUniqueOrThrow({ where: { paymentId: intentId } })).toMatchObject({
      amountCents: MAX_ORDER_TOTAL_CENTS,
      status: 'CAPTURED',
    });
  });

  it("hands a payment_failed to the order's run, which asks the provider; one of no running order is ignored", async () => {
    const { sku } = await seedCatalog(h, { stock: 5 });
    const order = await placeOrder(h, { sku, quantity: 1, customerId: `stripe-failed-${randomUUID()}` });
    const intentId = intentFor(order);
    stripe.startProcessing(intentId);
    stripe.failPayment(intentId);
    const failed = signedIntentEvent(stripe, intentId, 'payment_intent.payment_failed', SECRET);
    expect(await post(failed)).toEqual(answer(failed, 'PAYMENT_FAILURE_ACCEPTED'));
    // Before the deadline it changes nothing: the customer may pay another way.
    expect(await h.db.order.findUniqueOrThrow({ where: { id: order.id } })).toMatchObject({ status: 'UNPAID' });

    const unknown = stripe.createIntent({ amount: 1500, currency: 'eur', metadata: { order_id: randomUUID() } }).id;
    const noRun = signedIntentEvent(stripe, unknown, 'payment_intent.payment_failed', SECRET);
    expect(await post(noRun)).toEqual(answer(noRun, 'IGNORED'));
  });

  it.each([
    ['names an order that does not exist', () => ({ order_id: randomUUID() }), 1500],
    ['names no order (not made by this service)', () => ({}), 1500],
    ['names an order id that is not one', () => ({ order_id: 'order-1' }), 1500],
    ['is above the largest order total', () => ({ order_id: randomUUID() }), MAX_ORDER_TOTAL_CENTS + 1],
  ])('records a payment that %s as unclaimed money, not as any order’s payment', async (_, metadata, amount) => {
    const intentId = stripe.createIntent({ amount, currency: 'eur', metadata: metadata() }).id;
    stripe.succeed(intentId);
    const succeeded = signedIntentEvent(stripe, intentId, 'payment_intent.succeeded', SECRET);

    expect(await post(succeeded)).toEqual(answer(succeeded, 'UNCLAIMED_RECORDED'));
    expect(await h.db.payment.count({ where: { paymentId: intentId } })).toBe(0);
    expect(await h.db.unclaimedPayment.findUniqueOrThrow({ where: { paymentId: intentId } })).toMatchObject({
      amountCents: amount,
      status: 'HELD',
    });
  });

  it('holds a refund that fails after the provider accepted it for an operator, and refunds it again on retry', async () => {
    const { sku } = await seedCatalog(h, { stock: 5 });
    const order = await placeOrder(h, { sku, quantity: 1, customerId: `stripe-refund-${randomUUID()}` });
    await h.env.sleep(30 * 60_000 + 1_000);
    expect((await orderResult(order.id)).status).toBe('CANCELLED');
    // A payment after the deadline: refunded by a settlement of its own.
    const paymentId = intentFor(order);
    stripe.succeed(paymentId);
    expect((await post(signedIntentEvent(stripe, paymentId, 'payment_intent.succeeded', SECRET))).status).toBe(200);
    const late = h.env.client.workflow.getHandle(latePaymentWorkflowId(paymentId));
    expect(await late.result()).toEqual({ outcome: 'REFUNDED' });
    const { providerRef } = await h.db.refund.findUniqueOrThrow({ where: { paymentId } });

    // The card issuer turns the refund down days later; Stripe delivers the event twice at once.
    const refundFailures = async () => (await h.workerMetrics.refundFailures.get()).values[0]?.value ?? 0;
    const failuresBefore = await refundFailures();
    const failed = failedRefund(paymentId, providerRef, order.totalCents);
    expect(await Promise.all([post(failed), post(failed)])).toEqual([
      answer(failed, 'REFUND_FAILURE_ACCEPTED'),
      answer(failed, 'REFUND_FAILURE_ACCEPTED'),
    ]);
    const holder = h.env.client.workflow.getHandle(failedRefundWorkflowId(paymentId));
    const needsAttention = async () => (await holder.describe()).typedSearchAttributes.get(NeedsAttentionKey);
    await eventually(async () => (await needsAttention()) === true);
    expect(await h.db.payment.findUniqueOrThrow({ where: { paymentId } })).toMatchObject({
      status: 'REFUND_FAILED',
      refundError: `refund ${providerRef} failed: expired_or_canceled_card`,
    });
    expect(await h.db.refund.count({ where: { paymentId } })).toBe(0);
    expect(await h.fakeCount('payments', 'refund', paymentId)).toMatchObject({ calls: 1 });
    expect(await refundFailures()).toBe(failuresBefore + 1);

    // The operator retries once the cause is fixed: a new refund, and the run ends.
    expect((await h.admin('POST', `/orders/${order.id}/payments/${paymentId}/refund/retry`)).status).toBe(202);
    expect(await holder.result()).toEqual({ outcome: 'REFUNDED' });
    expect(await h.db.payment.findUniqueOrThrow({ where: { paymentId } })).toMatchObject({ status: 'REFUNDED' });
    expect(await h.db.refund.count({ where: { paymentId } })).toBe(1);
    expect(await h.fakeCount('payments', 'refund', paymentId)).toMatchObject({ calls: 2 });
    expect(await needsAttention()).toBe(false);

    // The failure of a refund that is not the recorded one (an older attempt) starts a run that changes nothing.
    const older = failedRefund(paymentId, `re_older_${randomUUID()}`, order.totalCents);
    expect(await post(older)).toEqual(answer(older, 'REFUND_FAILURE_ACCEPTED'));
    expect(await holder.result()).toEqual({ outcome: 'NOT_APPLICABLE' });
    expect(await h.db.payment.findUniqueOrThrow({ where: { paymentId } })).toMatchObject({ status: 'REFUNDED' });
    expect(await h.fakeCount('payments', 'refund', paymentId)).toMatchObject({ calls: 2 });
    expect(await stockOf(h, sku)).toMatchObject({ available: 5, reserved: 0, sold: 0 });
  });

  it('refunds again on retry a failed refund whose holding run was terminated, after its settlement completed', async () => {
    const { sku } = await seedCatalog(h, { stock: 5 });
    const order = await placeOrder(h, { sku, quantity: 1, customerId: `stripe-lost-holder-${randomUUID()}` });
    await h.env.sleep(30 * 60_000 + 1_000);
    expect((await orderResult(order.id)).status).toBe('CANCELLED');
    const paymentId = intentFor(order);
    stripe.succeed(paymentId);
    expect((await post(signedIntentEvent(stripe, paymentId, 'payment_intent.succeeded', SECRET))).status).toBe(200);
    const late = () => h.env.client.workflow.getHandle(latePaymentWorkflowId(paymentId)); // its latest run
    expect(await late().result()).toEqual({ outcome: 'REFUNDED' });
    const { providerRef } = await h.db.refund.findUniqueOrThrow({ where: { paymentId } });
    expect(await post(failedRefund(paymentId, providerRef, order.totalCents))).toMatchObject({ status: 200 });
    const holder = h.env.client.workflow.getHandle(failedRefundWorkflowId(paymentId));
    await eventually(
      async () => (await h.db.payment.findUniqueOrThrow({ where: { paymentId } })).status === 'REFUND_FAILED',
    );
    await holder.terminate('simulating a holder lost by hand');

    // No run holds it, and its late settlement completed: the retry starts a new one, which refunds.
    const retried = await h.admin('POST', `/orders/${order.id}/payments/${paymentId}/refund/retry`);
    expect(retried).toMatchObject({ status: 202, body: { paymentId, status: 'REFUND_PENDING' } });
    expect(await late().result()).toEqual({ outcome: 'REFUNDED' });
    expect(await h.db.payment.findUniqueOrThrow({ where: { paymentId } })).toMatchObject({ status: 'REFUNDED' });
    expect(await h.fakeCount('payments', 'refund', paymentId)).toMatchObject({ calls: 2 });
  });

  it('judges a refund failure that comes before its refund is recorded once it is, and holds it', async () => {
    const { sku } = await seedCatalog(h, { stock: 5 });
    const order = await placeOrder(h, { sku, quantity: 1, customerId: `stripe-early-${randomUUID()}` });
    await h.env.sleep(30 * 60_000 + 1_000);
    expect((await orderResult(order.id)).status).toBe('CANCELLED');
    // The provider is down, so the late payment's refund stays REFUND_PENDING, being made.
    await h.admin('PUT', '/admin/faults/payments', { failNext: 1_000_000 });
    const paymentId = intentFor(order);
    const late = h.env.client.workflow.getHandle(latePaymentWorkflowId(paymentId));
    const holder = h.env.client.workflow.getHandle(failedRefundWorkflowId(paymentId));
    try {
      stripe.succeed(paymentId);
      expect((await post(signedIntentEvent(stripe, paymentId, 'payment_intent.succeeded', SECRET))).status).toBe(200);
      await eventually(
        async () => (await h.db.payment.findUnique({ where: { paymentId } }))?.status === 'REFUND_PENDING',
      );
      // The failure of the refund the provider answered (the local one names it after the payment)
      // arrives before that answer is recorded: nothing to judge yet, and nothing is dropped.
      const failed = failedRefund(paymentId, `fake-refund-${paymentId}`, order.totalCents);
      expect(await post(failed)).toEqual(answer(failed, 'REFUND_FAILURE_ACCEPTED'));
      await h.env.sleep(60_000);
      expect((await holder.describe()).status.name).toBe('RUNNING');
      expect(await h.db.payment.findUniqueOrThrow({ where: { paymentId } })).toMatchObject({
        status: 'REFUND_PENDING',
      });
    } finally {
      await h.admin('DELETE', '/admin/faults/payments');
    }
    // The refund is recorded, and then the failure applies to it: owed again, held for an operator.
    expect(await late.result()).toEqual({ outcome: 'REFUNDED' });
    await h.env.sleep(5 * 60_000);
    await eventually(async () => (await holder.describe()).typedSearchAttributes.get(NeedsAttentionKey) === true);
    expect(await h.db.payment.findUniqueOrThrow({ where: { paymentId } })).toMatchObject({ status: 'REFUND_FAILED' });
    expect(await h.db.refund.count({ where: { paymentId } })).toBe(0);
  });

  it('acknowledges a failed refund of a payment that is none of ours, and starts nothing', async () => {
    const paymentId = `pi_unknown_${randomUUID()}`;
    const failed = failedRefund(paymentId, `re_${randomUUID()}`, 1500);
    expect(await post(failed)).toEqual(answer(failed, 'IGNORED'));
    await expect(h.env.client.workflow.getHandle(failedRefundWorkflowId(paymentId)).describe()).rejects.toBeInstanceOf(
      WorkflowNotFoundError,
    );
  });
});
