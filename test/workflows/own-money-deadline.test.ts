import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chargeFakePayment, fakePaymentId } from '../../dev/fakes/payment-provider.js';
import { FAKE_EFFECT_INVARIANTS } from '../../dev/fakes/invariants.js';
import { orderWorkflowId } from '../../domain/messages.js';
import { BUSINESS_INVARIANTS, checkInvariants } from '../../ops/invariants.js';
import { placeOrder, seedCatalog, stockOf } from '../helpers/catalog.js';
import { startOrderHarness, type OrderHarness } from '../helpers/order-harness.js';

/**
 * The deadline's path judges a payment the provider had taken (its cancel answers that it already
 * succeeded) by the same rule as the webhook: only the order's own money pays it. Here the webhook
 * is lost, so the closing at the deadline is the only one to see the payment.
 */
const MINUTE = 60_000;
let h: OrderHarness;

beforeAll(async () => {
  h = await startOrderHarness({ taskQueue: 'orders-own-money-deadline', payments: 'cancellable' });
});
afterAll(async () => {
  await h?.close();
});

describe('at the deadline, a payment the provider already took', () => {
  it('in its order’s currency, pays the order', async () => {
    const { sku } = await seedCatalog(h, { stock: 5 });
    const order = await placeOrder(h, { sku, quantity: 1, customerId: 'c-own-eur' });
    expect((await chargeFakePayment(h.db, { orderId: order.id, amountCents: order.totalCents })).outcome).toBe(
      'SUCCEEDED',
    );
    await h.env.sleep(30 * MINUTE + 1_000);
    const result = await h.env.client.workflow.getHandle(orderWorkflowId(order.id)).result();
    expect(result.status).toBe('PAID');
  }, 60_000);

  it('in USD for the total of a EUR order: refused as payment, refunded, and the order cancelled', async () => {
    const { sku } = await seedCatalog(h, { stock: 5 });
    const order = await placeOrder(h, { sku, quantity: 1, customerId: 'c-own-usd' });
    const charge = await chargeFakePayment(h.db, {
      orderId: order.id,
      amountCents: order.totalCents,
      currency: 'usd',
    });
    expect(charge).toMatchObject({ outcome: 'SUCCEEDED', payment: { currency: 'usd' } });
    await h.env.sleep(30 * MINUTE + 1_000);
    const result = await h.env.client.workflow.getHandle(orderWorkflowId(order.id)).result();
    expect(result.status).toBe('CANCELLED');

    const paymentId = fakePaymentId(order.id);
    expect(await h.db.payment.findUniqueOrThrow({ where: { paymentId } })).toMatchObject({
      status: 'REFUNDED',
      currency: 'usd',
      refusal: 'WRONG_CURRENCY',
      refundReason: 'WRONG_CURRENCY',
    });
    expect(await h.fakeCount('payments', 'refund', paymentId)).toEqual({ effects: 1, calls: 1 });
    expect(await stockOf(h, sku)).toMatchObject({ available: 5, reserved: 0, sold: 0 });
    const report = await checkInvariants(h.db, [...BUSINESS_INVARIANTS, ...FAKE_EFFECT_INVARIANTS], { graceMs: 0 });
    expect(report.violations).toEqual([]);
  }, 60_000);
});
