import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { orderWorkflowId, statusQuery } from '../../domain/messages.js';
import { NeedsAttentionKey } from '../../domain/search-attributes.js';
import { recordReceivedPayment } from '../../store/received-payments.js';
import {
  chargeFakePayment,
  FAKE_PAYMENT_ACCOUNT,
  fakePaymentId,
  findFakePayment,
} from '../../dev/fakes/payment-provider.js';
import { FAKE_EFFECT_INVARIANTS } from '../../dev/fakes/invariants.js';
import { BUSINESS_INVARIANTS, checkInvariants } from '../../ops/invariants.js';
import { placeOrder, seedCatalog, stockOf } from '../helpers/catalog.js';
import { eventually } from '../helpers/eventually.js';
import { startOrderHarness, type OrderHarness } from '../helpers/order-harness.js';

/**
 * Provider first, end to end on PostgreSQL and Temporal with the cancellable local provider: the
 * order's payment is created with it, closed at the provider before the order is cancelled, and a
 * provider that is down at the deadline holds orders instead of cancelling them, while customers pay.
 */
const MINUTE = 60_000;
let h: OrderHarness;

beforeAll(async () => {
  h = await startOrderHarness({ payments: 'cancellable' });
});
afterAll(async () => {
  await h?.close();
});

const handleOf = (orderId: string) => h.clockStoppedClient.workflow.getHandle(orderWorkflowId(orderId));
const statusOf = async (orderId: string) => (await h.db.order.findUniqueOrThrow({ where: { id: orderId } })).status;

/** The customer pays the order's payment at the provider; its webhook comes now, or never (`deliver: false`). */
async function customerPays(order: { id: string; totalCents: number }, { deliver = true } = {}) {
  const charge = await chargeFakePayment(h.db, { orderId: order.id, amountCents: order.totalCents });
  expect(charge.outcome).toBe('SUCCEEDED');
  if (charge.outcome !== 'SUCCEEDED') throw new Error('unreachable');
  if (deliver) {
    const { paymentId, paidAt } = charge.payment;
    const webhook = await h.pay({ paymentId, paidAt: paidAt!, orderId: order.id, amountCents: order.totalCents });
    expect(webhook.status).toBe(202);
  }
  return charge.payment;
}

describe('provider first', () => {
  it('creates the payment with the order, shows it to its customer only, and closes it before the order', async () => {
    const { sku } = await seedCatalog(h);
    const placed = await h.asCustomer('cust-1', 'POST', '/orders', { items: [{ sku, quantity: 1 }] });
    expect(placed.status).toBe(201);
    const payment = placed.body.payment;
    expect(payment).toEqual({ paymentId: expect.stringMatching(/^pi_fake_/), clientSecret: expect.any(String) });
    expect((await h.asCustomer('cust-1', 'GET', `/orders/${placed.body.id}`)).body).toMatchObject({
      payable: true,
      payment,
    });
    expect((await h.admin('GET', `/orders/${placed.body.id}`)).body.payment).toBeNull();

    await h.env.sleep(30 * MINUTE + 1_000);
    expect(await handleOf(placed.body.id).result()).toMatchObject({ status: 'CANCELLED' });
    const order = await h.db.order.findUniqueOrThrow({ where: { id: placed.body.id } });
    expect(await findFakePayment(h.db.pool, { paymentId: payment.paymentId })).toMatchObject({ status: 'CANCELLED' });
    expect(order.closingSince!.getTime()).toBeGreaterThanOrEqual(order.expiresAt.getTime()); // never early
    // The customer who tries now is refused by the provider, as `npm run pay` shows.
    expect(await chargeFakePayment(h.db, { orderId: order.id, amountCents: order.totalCents })).toMatchObject({
      outcome: 'REFUSED',
      status: 'CANCELLED',
    });
  });

  it('shows the payment to its customer only while the order is payable: never once it is paid or cancelled', async () => {
    const { sku } = await seedCatalog(h, { stock: 2 });
    const [paid, cancelled] = [
      await placeOrder(h, { sku, quantity: 1, customerId: 'secret-paid' }),
      await placeOrder(h, { sku, quantity: 1, customerId: 'secret-cancelled' }),
    ];
    const view = async (order: { id: string }, customerId: string) =>
      (await h.asCustomer(customerId, 'GET', `/orders/${order.id}`)).body;
    const offered = { payable: true, payment: { paymentId: expect.any(String), clientSecret: expect.any(String) } };
    expect(await view(paid, 'secret-paid')).toMatchObject({ status: 'UNPAID', ...offered });
    expect(await view(cancelled, 'secret-cancelled')).toMatchObject({ status: 'UNPAID', ...offered });

    await customerPays(paid);
    expect(await handleOf(paid.id).result()).toMatchObject({ status: 'PAID' });
    expect(await view(paid, 'secret-paid')).toMatchObject({ status: 'PAID', payable: false, payment: null });

    expect((await h.asCustomer('secret-cancelled', 'POST', `/orders/${cancelled.id}/cancel`)).status).toBe(202);
    expect(await handleOf(cancelled.id).result()).toMatchObject({ status: 'CANCELLED' });
    expect(await view(cancelled, 'secret-cancelled')).toMatchObject({
      status: 'CANCELLED',
      payable: false,
      payment: null,
    });
  });

  it('the provider down at the deadline for minutes while customers pay: no paid order cancelled, nothing refunded, all settled when it returns', async () => {
    const { sku } = await seedCatalog(h, { stock: 10 });
    const place = (customerId: string) => placeOrder(h, { sku, quantity: 1, customerId });
    const onTime = await place('c-on-time'); // paid before the deadline, as usual
    const duringOutage = await place('c-during'); // paid at the provider during the outage, webhook on time
    const webhookLost = await place('c-lost'); // paid during the outage, its webhook never comes
    const neverPaid = await place('c-never');
    await customerPays(onTime);

    await h.admin('PUT', '/admin/faults/payments', { failNext: 1_000_000 }); // the provider's API is down
    try {
      await h.env.sleep(30 * MINUTE + 1_000);
      await eventually(async () => (await handleOf(neverPaid.id).query(statusQuery)).phase === 'closing-payment');
      expect(await statusOf(neverPaid.id)).toBe('UNPAID'); // held, not cancelled
      expect((await h.asCustomer('c-never', 'GET', `/orders/${neverPaid.id}`)).body.payable).toBe(false);

      await h.env.sleep(MINUTE);
      await customerPays(duringOutage);
      await eventually(async () => (await statusOf(duringOutage.id)) === 'PAID');
      await customerPays(webhookLost, { deliver: false });

      await h.env.sleep(6 * MINUTE); // past the 5 minutes after which a held order is flagged
      const held = await handleOf(neverPaid.id).query(statusQuery);
      expect(held).toMatchObject({ status: 'UNPAID', phase: 'closing-payment' });
      expect(held.needsAttention).toEqual([expect.stringContaining('the payment provider has not answered since')]);
      expect(await statusOf(webhookLost.id)).toBe('UNPAID');
    } finally {
      await h.admin('DELETE', '/admin/faults/payments');
    }

    await h.env.sleep(4 * MINUTE); // the next question, 10:35 after the deadline on PROVIDER_BACKOFF, reaches the provider
    const ends = await Promise.all([onTime, duringOutage, webhookLost, neverPaid].map((o) => handleOf(o.id).result()));
    expect(ends.map((e) => e.status)).toEqual(['PAID', 'PAID', 'PAID', 'CANCELLED']);
    expect(ends.map((e) => e.needsAttention)).toEqual([[], [], [], []]);
    expect(await stockOf(h, sku)).toMatchObject({ available: 7, reserved: 0, sold: 3 });
    expect(await h.db.payment.findMany({ where: { orderId: webhookLost.id } })).toEqual([
      expect.objectContaining({ paymentId: expect.stringMatching(/^pi_fake_/), status: 'CAPTURED' }),
    ]);
    for (const order of [onTime, duringOutage, webhookLost]) {
      expect(
        await h.fakeCount('payments', 'refund', (await findFakePayment(h.db.pool, { orderId: order.id }))!.paymentId),
      ).toEqual({
        effects: 0,
        calls: 0,
      });
    }
    // The lost webhook, redelivered at last, changes nothing.
    const late = (await findFakePayment(h.db.pool, { orderId: webhookLost.id }))!;
    const redelivery = { paymentId: late.paymentId, paidAt: late.paidAt!, amountCents: late.amountCents };
    expect((await h.pay({ ...redelivery, orderId: webhookLost.id })).status).toBe(202);
    expect(await h.db.payment.count({ where: { orderId: webhookLost.id } })).toBe(1);

    const report = await checkInvariants(h.db, [...BUSINESS_INVARIANTS, ...FAKE_EFFECT_INVARIANTS], { graceMs: 0 });
    expect(report.violations).toEqual([]);
  }, 60_000);

  it('an order placed while the provider was down, its deadline then moved by the incident extension, gets its payment once the provider is back', async () => {
    const { sku } = await seedCatalog(h);
    await h.admin('PUT', '/admin/faults/payments', { failNext: 1_000_000 }); // the provider's API is down
    let order: { id: string; totalCents: number };
    try {
      const placed = await h.asCustomer('c-incident', 'POST', '/orders', { items: [{ sku, quantity: 1 }] });
      expect(placed.body).toMatchObject({ status: 'UNPAID', payment: null }); // the payment is still to be created
      order = placed.body;
      // The incident runbook: every open order's deadline moved, while the workflows sleep.
      expect((await h.admin('POST', '/orders/extend', { minutes: 30, customerId: 'c-incident' })).status).toBe(200);
      await h.env.sleep(30 * MINUTE + 1_000); // the old deadline: not due by the database
      await eventually(async () => (await handleOf(order.id).query(statusQuery)).phase === 'awaiting-payment');
    } finally {
      await h.admin('DELETE', '/admin/faults/payments');
    }
    await h.env.sleep(2 * MINUTE); // the creation's next try reaches the provider
    await eventually(
      async () => (await h.asCustomer('c-incident', 'GET', `/orders/${order.id}`)).body.payment !== null,
    );
    await customerPays(order);
    expect(await handleOf(order.id).result()).toMatchObject({ status: 'PAID' });
  });

  it('a payment the provider refuses to create is flagged while the order waits, and the flag goes with the order', async () => {
    const { sku } = await seedCatalog(h);
    await h.admin('PUT', '/admin/faults/payments', { failAlways: true });
    let order: { id: string };
    try {
      const placed = await h.asCustomer('c-refused', 'POST', '/orders', { items: [{ sku, quantity: 1 }] });
      expect(placed.body).toMatchObject({ status: 'UNPAID', payment: null });
      order = placed.body;
      await eventually(
        async () => (await handleOf(order.id).describe()).typedSearchAttributes.get(NeedsAttentionKey) === true,
      );
    } finally {
      await h.admin('DELETE', '/admin/faults/payments');
    }
    expect(await handleOf(order.id).query(statusQuery)).toMatchObject({
      needsAttention: [expect.stringContaining('refused to create the payment')],
    });
    await h.env.sleep(30 * MINUTE + 1_000);
    expect(await h.env.client.workflow.getHandle(orderWorkflowId(order.id)).result()).toMatchObject({
      status: 'CANCELLED',
    });
    expect((await handleOf(order.id).describe()).typedSearchAttributes.get(NeedsAttentionKey)).toBe(false);
  });

  it('a placement whose every attempt failed after the order was written keeps the order with its run, which creates its payment and closes it first', async () => {
    const { sku } = await seedCatalog(h, { stock: 10 });
    const real = h.thirdParties.paymentProvider;
    // Each attempt writes the order (the first) or finds it (the others), then fails on our side.
    h.thirdParties.paymentProvider = new Proxy(real, {
      get: (target, prop) =>
        prop === 'createPayment'
          ? () => Promise.reject(new Error('the answer was lost'))
          : (Reflect.get(target, prop, target) as unknown),
    });
    let placed: { status: number; body: { id: string } };
    try {
      placed = await h.asCustomer('c-lost-answer', 'POST', '/orders', { items: [{ sku, quantity: 1 }] });
    } finally {
      h.thirdParties.paymentProvider = real;
    }
    expect(placed.status).toBe(201);
    expect(await handleOf(placed.body.id).query(statusQuery)).toMatchObject({ status: 'UNPAID' });
    // The order read back has no payment yet: its run creates it, so the customer can pay ...
    await eventually(
      async () => (await h.db.order.findUniqueOrThrow({ where: { id: placed.body.id } })).providerPaymentId !== null,
    );
    const { providerPaymentId } = await h.db.order.findUniqueOrThrow({ where: { id: placed.body.id } });
    await h.env.sleep(30 * MINUTE + 1_000);
    expect(await h.env.client.workflow.getHandle(orderWorkflowId(placed.body.id)).result()).toMatchObject({
      status: 'CANCELLED',
    });
    // ... and closes it at the provider before the order lets go.
    expect(await findFakePayment(h.db.pool, { paymentId: providerPaymentId! })).toMatchObject({ status: 'CANCELLED' });
    expect((await h.db.order.findUniqueOrThrow({ where: { id: placed.body.id } })).closingSince).not.toBeNull();
    expect(await stockOf(h, sku)).toMatchObject({ available: 10, reserved: 0 });
  });

  it('an operator may force the cancel of an order held for a silent provider; a payment that still comes is refunded', async () => {
    const { sku } = await seedCatalog(h);
    const order = await placeOrder(h, { sku, quantity: 1, customerId: 'c-forced' });
    expect((await h.admin('POST', `/orders/${order.id}/force-cancel`)).body.error.code).toBe('ORDER_NOT_CLOSING');

    await h.admin('PUT', '/admin/faults/payments', { failNext: 1_000_000 });
    try {
      await h.env.sleep(30 * MINUTE + 6 * MINUTE);
      const forced = await h.admin('POST', `/orders/${order.id}/force-cancel`);
      expect(forced.status, JSON.stringify(forced.body)).toBe(200);
      expect(forced.body).toEqual({ orderId: order.id, status: 'CANCELLED' });
    } finally {
      await h.admin('DELETE', '/admin/faults/payments');
    }
    expect(await stockOf(h, sku)).toMatchObject({ available: 10, reserved: 0 });

    // The provider never closed it: the customer can still pay, and that payment goes back.
    const paid = await customerPays(order);
    await eventually(
      async () => (await h.db.payment.findUnique({ where: { paymentId: paid.paymentId } }))?.status === 'REFUNDED',
      30_000,
    );
    expect(await h.fakeCount('payments', 'refund', paid.paymentId)).toMatchObject({ effects: 1 });
    expect(await statusOf(order.id)).toBe('CANCELLED');
  }, 60_000);

  it('a force-cancel that a payment recorded in time beats answers 409 ORDER_NOT_UNPAID', async () => {
    const { sku } = await seedCatalog(h);
    const order = await placeOrder(h, { sku, quantity: 1, customerId: 'c-forced-paid' });
    // Recorded by the webhook before the deadline; its signal never came (Temporal restarting).
    const arrivedAt = new Date(Date.parse(order.expiresAt) - 1_000);
    // The order's own payment at the provider: only that one may pay it.
    const paid = { paymentId: fakePaymentId(order.id), orderId: order.id, amountCents: order.totalCents };
    expect(
      await recordReceivedPayment(
        h.db.pool,
        { ...paid, paidAt: arrivedAt.toISOString() },
        arrivedAt,
        FAKE_PAYMENT_ACCOUNT,
      ),
    ).toMatchObject({ known: true, refusal: null });
    await h.admin('PUT', '/admin/faults/payments', { failNext: 1_000_000 });
    try {
      await h.env.sleep(30 * MINUTE + 6 * MINUTE); // held: the provider does not answer the close
      const forced = await h.admin('POST', `/orders/${order.id}/force-cancel`);
      expect(forced.status, JSON.stringify(forced.body)).toBe(409);
      expect(forced.body.error.code).toBe('ORDER_NOT_UNPAID');
    } finally {
      await h.admin('DELETE', '/admin/faults/payments');
    }
    expect(await statusOf(order.id)).toBe('PAID');
  }, 60_000);
});
