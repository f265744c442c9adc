import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { orderWorkflowId, statusQuery } from '../../domain/messages.js';
import { NeedsAttentionKey, OrderStatusKey } from '../../domain/search-attributes.js';
import { chargeFakePayment, findFakePayment, moveFakePayment } from '../../dev/fakes/payment-provider.js';
import { handOverPaymentFailure } from '../../handover/payment-handover.js';
import { BUSINESS_INVARIANTS, checkInvariants } from '../../ops/invariants.js';
import { placeOrder, seedCatalog, stockOf } from '../helpers/catalog.js';
import { eventually } from '../helpers/eventually.js';
import { startOrderHarness, type OrderHarness } from '../helpers/order-harness.js';

/**
 * Past the deadline, the state of the order's payment at the provider decides, end to end on
 * PostgreSQL and Temporal's time-skipping server with the cancellable local provider, which the
 * test moves as a customer and a bank would (moveFakePayment, chargeFakePayment): a customer's
 * action has a grace, money on its way holds the order AWAITING_FUNDS until its event, a debit that
 * bounced cancels it, and a payment left open by a forced cancel is still closed, or refunded.
 */
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
let h: OrderHarness;

beforeAll(async () => {
  h = await startOrderHarness({ payments: 'cancellable' });
});
afterAll(async () => {
  await h?.close();
});

const handleOf = (orderId: string) => h.clockStoppedClient.workflow.getHandle(orderWorkflowId(orderId));
const orderOf = (orderId: string) => h.db.order.findUniqueOrThrow({ where: { id: orderId } });

/** The customer's payment succeeds at the provider; its webhook comes now, or never (`deliver: false`). */
async function paymentSucceeds(order: { id: string; totalCents: number }, { deliver = true } = {}) {
  const charge = await chargeFakePayment(h.db, { orderId: order.id, amountCents: order.totalCents });
  if (charge.outcome !== 'SUCCEEDED') throw new Error(`the provider refused the payment: ${JSON.stringify(charge)}`);
  if (deliver) {
    const { paymentId, paidAt } = charge.payment;
    const webhook = await h.pay({ paymentId, paidAt: paidAt!, orderId: order.id, amountCents: order.totalCents });
    expect(webhook.status).toBe(202);
  }
  return charge.payment;
}

async function placed(customerId: string) {
  const { sku } = await seedCatalog(h, { stock: 10 });
  const order = await placeOrder(h, { sku, quantity: 1, customerId });
  return { sku, order };
}

describe('a customer action under way at the deadline (3-D Secure, a redirect)', () => {
  it('is given its grace: a success within it pays the order', async () => {
    const { sku, order } = await placed('c-action-paid');
    expect((await moveFakePayment(h.db, { orderId: order.id, to: 'action' })).outcome).toBe('SUCCEEDED');
    await h.env.sleep(30 * MINUTE + 5 * MINUTE);
    expect((await orderOf(order.id)).status).toBe('UNPAID');
    expect((await handleOf(order.id).query(statusQuery)).needsAttention).toEqual([]);
    await paymentSucceeds(order); // 3-D Secure passed
    expect(await handleOf(order.id).result()).toMatchObject({ status: 'PAID', needsAttention: [] });
    expect(await stockOf(h, sku)).toMatchObject({ reserved: 0, sold: 1 });
  });

  it('is cancelled at the provider once its grace is over, and the order with it', async () => {
    const { sku, order } = await placed('c-action-abandoned');
    await moveFakePayment(h.db, { orderId: order.id, to: 'action' });
    await h.env.sleep(30 * MINUTE + 11 * MINUTE);
    expect(await handleOf(order.id).result()).toMatchObject({
      status: 'CANCELLED',
      cancelReason: 'PAYMENT_TIMEOUT',
      needsAttention: [],
    });
    expect(await findFakePayment(h.db.pool, { orderId: order.id })).toMatchObject({ status: 'CANCELLED' });
    expect(await stockOf(h, sku)).toMatchObject({ available: 10, reserved: 0 });
    const cancelledAt = (await orderOf(order.id)).cancelledAt!.getTime();
    expect(cancelledAt - Date.parse(order.expiresAt)).toBeGreaterThanOrEqual(10 * MINUTE); // not before its grace
  });
});

describe('money on its way at the deadline (a debit processing, a voucher, a transfer)', () => {
  it('holds the order AWAITING_FUNDS, with its stock, unflagged, and its event pays it', async () => {
    const { sku, order } = await placed('c-funds-paid');
    await moveFakePayment(h.db, { orderId: order.id, to: 'funds' });
    // Past the deadline (0:30) and the first recheck (1:30), well before the second (3:30): a
    // sleep that ends on a recheck would race it.
    await h.env.sleep(30 * MINUTE + 2 * HOUR + 20 * MINUTE);
    expect((await orderOf(order.id)).status).toBe('AWAITING_FUNDS');
    expect((await h.admin('GET', `/orders/${order.id}`)).body).toMatchObject({
      status: 'AWAITING_FUNDS',
      payable: false,
    });
    expect(await stockOf(h, sku)).toMatchObject({ available: 9, reserved: 1 });
    const described = await handleOf(order.id).describe();
    expect(described.typedSearchAttributes.get(OrderStatusKey)).toBe('AWAITING_FUNDS');
    expect(described.typedSearchAttributes.get(NeedsAttentionKey)).toBeUndefined();
    // Stock held while awaiting funds is no leak.
    const report = await checkInvariants(h.db, BUSINESS_INVARIANTS, { graceMs: 0 });
    expect(report.violations.filter((v) => v.invariant === 'reserved-matches-unpaid-orders')).toEqual([]);
    // Asked at the deadline and an hour later; every minute, or every hour, would be more by now.
    expect((await h.fakeCount('payments', 'cancelPayment', `pi_fake_${order.id.replaceAll('-', '')}`)).calls).toBe(2);

    await paymentSucceeds(order); // the bank settled the debit: the provider's event
    expect(await handleOf(order.id).result()).toMatchObject({ status: 'PAID', needsAttention: [] });
    expect(await stockOf(h, sku)).toMatchObject({ reserved: 0, sold: 1 });
  });

  it('a debit that bounced cancels the order as PAYMENT_FAILED, stock back, the customer told', async () => {
    const { sku, order } = await placed('c-funds-failed');
    await moveFakePayment(h.db, { orderId: order.id, to: 'funds' });
    await h.env.sleep(30 * MINUTE + 10 * MINUTE);
    expect((await orderOf(order.id)).status).toBe('AWAITING_FUNDS');
    await moveFakePayment(h.db, { orderId: order.id, to: 'bounce' });
    const payment = (await findFakePayment(h.db.pool, { orderId: order.id }))!;
    expect(
      await handOverPaymentFailure(h.clockStoppedClient, { orderId: order.id, paymentId: payment.paymentId }),
    ).toBe(true);
    expect(await handleOf(order.id).result()).toMatchObject({ status: 'CANCELLED', cancelReason: 'PAYMENT_FAILED' });
    expect((await orderOf(order.id)).cancelReason).toBe('PAYMENT_FAILED');
    expect(await stockOf(h, sku)).toMatchObject({ available: 10, reserved: 0 });
    expect(await h.fakeCount('notification', 'ORDER_CANCELLED', `${order.id}:ORDER_CANCELLED`)).toMatchObject({
      effects: 1,
    });
    expect(await findFakePayment(h.db.pool, { orderId: order.id })).toMatchObject({ status: 'CANCELLED' });
  });
});

describe('a forced cancel', () => {
  it('keeps closing the payment at the provider: one the customer paid meanwhile, its webhook lost, is refunded', async () => {
    const { sku, order } = await placed('c-forced-late');
    await h.admin('PUT', '/admin/faults/payments', { failNext: 1_000_000 });
    try {
      await h.env.sleep(30 * MINUTE + 6 * MINUTE);
      const forced = await h.admin('POST', `/orders/${order.id}/force-cancel`);
      expect(forced.status, JSON.stringify(forced.body)).toBe(200);
      const paid = await paymentSucceeds(order, { deliver: false });
      expect(await stockOf(h, sku)).toMatchObject({ available: 10, reserved: 0 });
      await h.admin('DELETE', '/admin/faults/payments');
      await h.env.sleep(2 * MINUTE);
      expect(await handleOf(order.id).result()).toMatchObject({
        status: 'CANCELLED',
        payments: [{ paymentId: paid.paymentId, status: 'REFUNDED' }],
      });
      expect(await h.fakeCount('payments', 'refund', paid.paymentId)).toMatchObject({ effects: 1 });
    } finally {
      await h.admin('DELETE', '/admin/faults/payments');
    }
  }, 60_000);

  it('keeps closing the payment at the provider: once it answers, nobody can pay the cancelled order', async () => {
    const { order } = await placed('c-forced-closed');
    await h.admin('PUT', '/admin/faults/payments', { failNext: 1_000_000 });
    try {
      await h.env.sleep(30 * MINUTE + 6 * MINUTE);
      expect((await h.admin('POST', `/orders/${order.id}/force-cancel`)).status).toBe(200);
    } finally {
      await h.admin('DELETE', '/admin/faults/payments');
    }
    await h.env.sleep(2 * MINUTE);
    await eventually(async () => (await findFakePayment(h.db.pool, { orderId: order.id }))?.status === 'CANCELLED');
    expect(await chargeFakePayment(h.db, { orderId: order.id, amountCents: order.totalCents })).toMatchObject({
      outcome: 'REFUSED',
      status: 'CANCELLED',
    });
    expect(await handleOf(order.id).result()).toMatchObject({ status: 'CANCELLED', needsAttention: [] });
  }, 60_000);
});
