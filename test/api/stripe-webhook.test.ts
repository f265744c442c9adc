import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STRIPE_WEBHOOK_PATH } from '../../api/routes/stripe-webhook.js';
import { latePaymentWorkflowId, orderWorkflowId } from '../../domain/messages.js';
import { MAX_ORDER_TOTAL_CENTS } from '../../domain/order-total.js';
import { FakeStripeAccount } from '../../dev/fakes/stripe/account.js';
import { signedIntentEvent, type SignedEvent } from '../../dev/fakes/stripe/events.js';
import { placeOrder, seedCatalog, stockOf } from '../helpers/catalog.js';
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

const answer = (event: SignedEvent, outcome: 'PAYMENT_ACCEPTED' | 'IGNORED') => ({
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

  it('acknowledges a payment naming an order that does not exist, and records nothing', async () => {
    const intentId = stripe.createIntent({ amount: 1500, currency: 'eur', metadata: { order_id: randomUUID() } }).id;
    stripe.succeed(intentId);
    const succeeded = signedIntentEvent(stripe, intentId, 'payment_intent.succeeded', SECRET);

    expect(await post(succeeded)).toEqual(answer(succeeded, 'IGNORED'));
    expect(await h.db.payment.count({ where: { paymentId: intentId } })).toBe(0);
  });
});
