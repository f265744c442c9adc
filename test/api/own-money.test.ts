import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STRIPE_WEBHOOK_PATH } from '../../api/endpoint-table.js';
import { refundDueUnclaimedPayments } from '../../activities/unclaimed-payments.js';
import { createFakeThirdParties } from '../../dev/fakes/index.js';
import { FAKE_PAYMENT_ACCOUNT } from '../../dev/fakes/payment-provider.js';
import { FakeStripeAccount } from '../../dev/fakes/stripe/account.js';
import { signedIntentEvent, type EventTimes, type SignedEvent } from '../../dev/fakes/stripe/events.js';
import { FAKE_EFFECT_INVARIANTS } from '../../dev/fakes/invariants.js';
import { BUSINESS_INVARIANTS, checkInvariants } from '../../ops/invariants.js';
import type { RefundReason } from '../../domain/statuses.js';
import type { PaymentAccount } from '../../lib/config/third-parties.js';
import { runActivity } from '../helpers/activities.js';
import { placeOrder, seedCatalog } from '../helpers/catalog.js';
import { eventually } from '../helpers/eventually.js';
import { startOrderHarness, type OrderHarness } from '../helpers/order-harness.js';

/**
 * Only the order's own money pays it, on Stripe's webhook through the real service: a live key's
 * account (production mode) in euros. Each payment that took money but is not the order's own is
 * refunded by the order's run and never pays it; money for no order of ours is recorded, listed,
 * and refunded once its grace has passed.
 */
const SECRET = 'whsec_own_money_test_endpoint_0123456789';
const LIVE_EUR: PaymentAccount = { currency: 'eur', livemode: true, connectAccount: null };
const GRACE_MS = 60 * 60_000;
let h: OrderHarness;
const stripe = new FakeStripeAccount();

beforeAll(async () => {
  h = await startOrderHarness({
    taskQueue: 'orders-own-money',
    stripeWebhookSecret: SECRET,
    paymentAccount: LIVE_EUR,
    unclaimedRefundGraceMs: GRACE_MS,
  });
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

const answer = (event: SignedEvent, outcome: 'PAYMENT_ACCEPTED' | 'UNCLAIMED_RECORDED') => ({
  status: 200,
  body: { eventId: JSON.parse(event.payload).id, outcome },
});

/** An order placed, with its intent at Stripe recorded on it, as placement with Stripe does. */
async function orderWithIntent(currency = 'eur') {
  const { sku } = await seedCatalog(h, { stock: 5 });
  const customerId = `own-${randomUUID()}`;
  const order = await placeOrder(h, { sku, quantity: 1, customerId });
  const intent = stripe.createIntent({
    amount: order.totalCents,
    currency,
    metadata: { order_id: order.id, customer_id: customerId },
  });
  await h.db.order.update({ where: { id: order.id }, data: { providerPaymentId: intent.id } });
  return { order, intentId: intent.id };
}

/** The intent paid, and its `payment_intent.succeeded` as Stripe would post it. */
function succeeded(intentId: string, options: EventTimes = { livemode: true }): SignedEvent {
  stripe.succeed(intentId);
  return signedIntentEvent(stripe, intentId, 'payment_intent.succeeded', SECRET, options);
}

/** One pass of the reconciliation sweep's refunds of unclaimed payments, as of `now`. */
function sweepUnclaimed(now: Date) {
  const deps = {
    ...createFakeThirdParties(h.db, 'callback-only'),
    db: h.db,
    paymentWindowMs: 0,
    paymentAccount: FAKE_PAYMENT_ACCOUNT,
    unclaimedRefundGraceMs: 24 * 3_600_000,
    maxOpenOrdersPerCustomer: 0,
    maxUnpaidUnitsPerProduct: 0,
  };
  return runActivity(() => refundDueUnclaimedPayments(deps, now, () => true));
}

/** Refunded by the order's run, for the reason given, and the order still waits for its own money. */
async function expectRefusedAndRefunded(orderId: string, paymentId: string, reason: RefundReason) {
  await eventually(async () => (await h.db.payment.findUnique({ where: { paymentId } }))?.status === 'REFUNDED');
  expect(await h.db.payment.findUniqueOrThrow({ where: { paymentId } })).toMatchObject({
    orderId,
    status: 'REFUNDED',
    refusal: reason,
    refundReason: reason,
  });
  expect(await h.fakeCount('payments', 'refund', paymentId)).toEqual({ effects: 1, calls: 1 });
  expect(await h.db.order.findUniqueOrThrow({ where: { id: orderId } })).toMatchObject({
    status: 'UNPAID',
    paymentInTimeId: null,
  });
}

describe("only the order's own money pays it", () => {
  it('the intent the order recorded, in its currency and the key’s mode, pays it', async () => {
    const { order, intentId } = await orderWithIntent();
    const event = succeeded(intentId);
    expect(await post(event)).toEqual(answer(event, 'PAYMENT_ACCEPTED'));
    await eventually(async () => (await h.db.order.findUnique({ where: { id: order.id } }))?.status === 'PAID');
    expect(await h.db.payment.findUniqueOrThrow({ where: { paymentId: intentId } })).toMatchObject({
      status: 'CAPTURED',
      currency: 'eur',
      livemode: true,
      refusal: null,
    });
  });

  it('a USD intent for the total of a EUR order: refused as payment, refunded', async () => {
    const { order, intentId } = await orderWithIntent('usd');
    const event = succeeded(intentId);
    expect(await post(event)).toEqual(answer(event, 'PAYMENT_ACCEPTED'));
    await expectRefusedAndRefunded(order.id, intentId, 'WRONG_CURRENCY');
  });

  it('a test-mode payment under a live key (production mode): refused as payment, refunded', async () => {
    const { order, intentId } = await orderWithIntent();
    const event = succeeded(intentId, { livemode: false });
    expect(await post(event)).toEqual(answer(event, 'PAYMENT_ACCEPTED'));
    await expectRefusedAndRefunded(order.id, intentId, 'WRONG_MODE');
  });

  it('a payment on a Connect account when none is configured: refused as payment, refunded', async () => {
    const { order, intentId } = await orderWithIntent();
    const event = succeeded(intentId, { livemode: true, account: 'acct_1SomeoneElse' });
    expect(await post(event)).toEqual(answer(event, 'PAYMENT_ACCEPTED'));
    await expectRefusedAndRefunded(order.id, intentId, 'FOREIGN_ACCOUNT');
  });

  it("another order's intent naming this order, even of the same customer: refused as payment, refunded", async () => {
    const { order } = await orderWithIntent();
    // An intent made for another order that names this one (a hand-made intent, a metadata mix-up).
    const customerId = (await h.db.order.findUniqueOrThrow({ where: { id: order.id } })).customerId;
    const other = stripe.createIntent({
      amount: order.totalCents,
      currency: 'eur',
      metadata: { order_id: order.id, customer_id: customerId },
    });
    const event = succeeded(other.id);
    expect(await post(event)).toEqual(answer(event, 'PAYMENT_ACCEPTED'));
    await expectRefusedAndRefunded(order.id, other.id, 'NOT_THE_ORDERS_PAYMENT');

    // The order's own intent still pays it.
    const own = (await h.db.order.findUniqueOrThrow({ where: { id: order.id } })).providerPaymentId!;
    expect((await post(succeeded(own))).status).toBe(200);
    await eventually(async () => (await h.db.order.findUnique({ where: { id: order.id } }))?.status === 'PAID');
  });
});

describe("the local provider's callback", () => {
  it('a payment it states in USD for a EUR order: refused as payment, refunded', async () => {
    const { sku } = await seedCatalog(h, { stock: 5 });
    const order = await placeOrder(h, { sku, quantity: 1, customerId: `own-callback-${randomUUID()}` });
    const paymentId = `usd-${order.id}`;
    const res = await h.pay({ paymentId, orderId: order.id, amountCents: order.totalCents, currency: 'usd' });
    expect(res.status).toBe(202);
    await expectRefusedAndRefunded(order.id, paymentId, 'WRONG_CURRENCY');
  });
});

describe('money for no order of ours', () => {
  it('is recorded, counted and listed, then refunded once its grace has passed', async () => {
    const counted = async () => {
      const text = (await h.admin('GET', '/metrics')).body as string;
      return Number(/^unclaimed_payments_recorded_total (\d+)/m.exec(text)?.[1] ?? 'NaN');
    };
    const before = await counted();
    const noOrder = stripe.createIntent({ amount: 1500, currency: 'eur', metadata: {} });
    const unknownOrder = stripe.createIntent({ amount: 2500, currency: 'usd', metadata: { order_id: randomUUID() } });
    const events = [succeeded(noOrder.id), succeeded(unknownOrder.id)];
    for (const event of events) expect(await post(event)).toEqual(answer(event, 'UNCLAIMED_RECORDED'));
    // A redelivery keeps the first record and is counted once.
    expect(await post(events[0]!)).toEqual(answer(events[0]!, 'UNCLAIMED_RECORDED'));
    expect(await counted()).toBe(before + 2);
    expect(await h.db.payment.count({ where: { paymentId: { in: [noOrder.id, unknownOrder.id] } } })).toBe(0);

    const listed = await h.admin('GET', '/payments/unclaimed?status=HELD');
    expect(listed.status).toBe(200);
    expect(listed.body.payments).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ paymentId: noOrder.id, namedOrder: null, amountCents: 1500, currency: 'eur' }),
        expect.objectContaining({
          paymentId: unknownOrder.id,
          namedOrder: unknownOrder.metadata.order_id,
          amountCents: 2500,
          currency: 'usd',
          livemode: true,
          status: 'HELD',
        }),
      ]),
    );
    expect((await h.http('GET', '/payments/unclaimed')).status).toBe(401);

    // The sweep's refunds: none within the grace, each once after it.
    const arrived = (await h.db.unclaimedPayment.findUniqueOrThrow({ where: { paymentId: noOrder.id } })).receivedAt;
    const sweepAt = (ms: number) => sweepUnclaimed(new Date(arrived.getTime() + ms));
    expect((await sweepAt(GRACE_MS / 2)).unclaimedRefunded).not.toContain(noOrder.id);
    expect(await h.fakeCount('payments', 'refund', noOrder.id)).toEqual({ effects: 0, calls: 0 });
    expect((await sweepAt(GRACE_MS + 60_000)).unclaimedRefunded).toEqual(
      expect.arrayContaining([noOrder.id, unknownOrder.id]),
    );
    await sweepAt(GRACE_MS + 120_000);
    for (const paymentId of [noOrder.id, unknownOrder.id]) {
      expect(await h.fakeCount('payments', 'refund', paymentId)).toEqual({ effects: 1, calls: 1 });
      expect(await h.db.unclaimedPayment.findUniqueOrThrow({ where: { paymentId } })).toMatchObject({
        status: 'REFUNDED',
        refundRef: `fake-refund-${paymentId}`,
      });
    }

    const report = await checkInvariants(h.db, [...BUSINESS_INVARIANTS, ...FAKE_EFFECT_INVARIANTS], { graceMs: 0 });
    expect(report.violations).toEqual([]);
  });

  it('is held for an operator when the provider refuses its refund, and kept for the next sweep while it is down', async () => {
    const intent = stripe.createIntent({ amount: 1800, currency: 'eur', metadata: { order_id: randomUUID() } });
    const event = succeeded(intent.id);
    expect(await post(event)).toEqual(answer(event, 'UNCLAIMED_RECORDED'));
    const { refundDueAt } = await h.db.unclaimedPayment.findUniqueOrThrow({ where: { paymentId: intent.id } });
    const afterGrace = new Date(refundDueAt.getTime() + 1_000);
    try {
      await h.admin('PUT', '/admin/faults/payments', { failNext: 1 });
      expect(await sweepUnclaimed(afterGrace)).toEqual({ unclaimedRefunded: [], unclaimedRefundFailed: [] });
      expect(await h.db.unclaimedPayment.findUniqueOrThrow({ where: { paymentId: intent.id } })).toMatchObject({
        status: 'HELD',
      });
      await h.admin('PUT', '/admin/faults/payments', { failAlways: true });
      expect(await sweepUnclaimed(afterGrace)).toEqual({ unclaimedRefunded: [], unclaimedRefundFailed: [intent.id] });
    } finally {
      await h.admin('DELETE', '/admin/faults/payments');
    }
    const listed = await h.admin('GET', '/payments/unclaimed?status=REFUND_FAILED');
    expect(listed.body.payments).toEqual([
      expect.objectContaining({
        paymentId: intent.id,
        status: 'REFUND_FAILED',
        refundError: expect.stringContaining('rejected'),
      }),
    ]);
    // Held, not lost: a later sweep does not try it again, and the checker counts it as accounted for.
    expect((await sweepUnclaimed(new Date(afterGrace.getTime() + GRACE_MS))).unclaimedRefundFailed).toEqual([]);
    const report = await checkInvariants(h.db, [...BUSINESS_INVARIANTS, ...FAKE_EFFECT_INVARIANTS], { graceMs: 0 });
    expect(report.violations).toEqual([]);
  });
});
