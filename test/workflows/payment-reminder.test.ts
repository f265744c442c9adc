import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { orderWorkflowId } from '../../domain/messages.js';
import { chargeFakePayment, moveFakePayment } from '../../dev/fakes/payment-provider.js';
import { placeOrder, seedCatalog } from '../helpers/catalog.js';
import { startOrderHarness, type OrderHarness } from '../helpers/order-harness.js';

/**
 * The payment reminder (PAYMENT_REMINDER_BEFORE) end to end on PostgreSQL and Temporal's
 * time-skipping server, with the cancellable local provider: the order's run writes one
 * `order.payment_reminder` event at the lead before the deadline, and none where a payment, a cancel
 * or money on its way came first; a moved deadline moves it. Every sleep ends well away from the
 * reminder's and the deadline's timers, so no assertion races one.
 */
const SECOND = 1_000;
const MINUTE = 60 * SECOND;
const LEAD = 10 * MINUTE; // the window is the harness's 30 minutes: reminded at 20:00

/** The order's reminder events, and its reminded_at, as the database holds them. */
async function remindersOf(h: OrderHarness, orderId: string) {
  const events = await h.db.orderEvent.findMany({ where: { orderId, type: 'order.payment_reminder' } });
  const { remindedAt, eventSeq } = await h.db.order.findUniqueOrThrow({ where: { id: orderId } });
  return { events, remindedAt, eventSeq };
}

/** How long each timer the order's run started was set for, in ms, in order. */
async function timersOf(h: OrderHarness, orderId: string): Promise<number[]> {
  const history = await h.env.client.workflow.getHandle(orderWorkflowId(orderId)).fetchHistory();
  return (history.events ?? []).flatMap((e) => {
    const timeout = e.timerStartedEventAttributes?.startToFireTimeout;
    return timeout ? [Number(timeout.seconds ?? 0) * SECOND + Math.round((timeout.nanos ?? 0) / 1e6)] : [];
  });
}

/** A timer's length, give or take the few milliseconds between placement and the run's next task. */
const about = (ms: number) => expect.closeTo(ms, -4); // within 5 s

/** Advances the server's clock to `at` (ms since the epoch). */
async function sleepUntil(h: OrderHarness, at: number): Promise<void> {
  await h.env.sleep(at - (await h.env.currentTimeMs()));
}

describe('with PAYMENT_REMINDER_BEFORE set', () => {
  let h: OrderHarness;
  beforeAll(async () => {
    h = await startOrderHarness({ payments: 'cancellable', paymentReminderBeforeMs: LEAD });
  });
  afterAll(async () => {
    await h?.close();
  });

  async function placed(customerId: string) {
    const { sku } = await seedCatalog(h, { stock: 10 });
    const order = await placeOrder(h, { sku, quantity: 1, customerId });
    return { order, remindAt: Date.parse(order.expiresAt) - LEAD };
  }

  /** The customer pays at the provider, and its webhook comes. */
  async function paymentSucceeds(order: { id: string; totalCents: number }) {
    const charge = await chargeFakePayment(h.db, { orderId: order.id, amountCents: order.totalCents });
    if (charge.outcome !== 'SUCCEEDED') throw new Error(`the provider refused the payment: ${JSON.stringify(charge)}`);
    const { paymentId, paidAt } = charge.payment;
    expect((await h.pay({ paymentId, paidAt: paidAt!, orderId: order.id, amountCents: order.totalCents })).status).toBe(
      202,
    );
  }

  const resultOf = (orderId: string) => h.env.client.workflow.getHandle(orderWorkflowId(orderId)).result();

  it('writes one reminder event at the lead before the deadline, with the bumped sequence number', async () => {
    const { order, remindAt } = await placed('c-reminded');
    expect(order).not.toHaveProperty('reminder'); // the run's own, never in the customer's answer
    await sleepUntil(h, remindAt - MINUTE);
    expect((await remindersOf(h, order.id)).events).toEqual([]);

    await sleepUntil(h, remindAt + MINUTE);
    const { events, remindedAt, eventSeq } = await remindersOf(h, order.id);
    expect(events).toHaveLength(1);
    const [event] = events;
    expect(event!.data).toEqual({ orderId: order.id, status: 'UNPAID', expiresAt: order.expiresAt });
    expect(event!.seq).toBe(eventSeq);
    expect(remindedAt!.getTime()).toBeGreaterThanOrEqual(remindAt);
    expect(remindedAt!.getTime()).toBeLessThan(remindAt + 5 * SECOND);

    // Once: the deadline still comes, and nothing reminds the customer again.
    expect(await resultOf(order.id)).toMatchObject({ status: 'CANCELLED', cancelReason: 'PAYMENT_TIMEOUT' });
    expect((await remindersOf(h, order.id)).events).toHaveLength(1);
    // The reminder's timer, then the deadline's: one timer more than an order without reminders.
    expect(await timersOf(h, order.id)).toEqual([about(20 * MINUTE), about(LEAD)]);
  });

  it('paid one second before the reminder: no reminder, and no timer but the reminder’s', async () => {
    const { order, remindAt } = await placed('c-paid-before-reminder');
    await sleepUntil(h, remindAt - SECOND);
    await paymentSucceeds(order);
    expect(await resultOf(order.id)).toMatchObject({ status: 'PAID' });
    await sleepUntil(h, remindAt + MINUTE);
    expect(await remindersOf(h, order.id)).toMatchObject({ events: [], remindedAt: null });
    expect(await timersOf(h, order.id)).toEqual([about(20 * MINUTE)]);
  });

  it('the deadline extended before the reminder: reminded at the lead before the new deadline, not the old', async () => {
    const { order, remindAt } = await placed('c-extended-before-reminder');
    await sleepUntil(h, remindAt - 5 * MINUTE);
    const extended = await h.admin('POST', `/orders/${order.id}/extend`, { minutes: 10 });
    expect(extended.status).toBe(200);
    const newRemindAt = Date.parse(extended.body.expiresAt) - LEAD;
    expect(newRemindAt - remindAt).toBe(10 * MINUTE);

    await sleepUntil(h, remindAt + MINUTE);
    expect((await remindersOf(h, order.id)).events).toEqual([]);

    await sleepUntil(h, newRemindAt + MINUTE);
    const { events, remindedAt } = await remindersOf(h, order.id);
    expect(events.map((e) => e.data)).toEqual([
      { orderId: order.id, status: 'UNPAID', expiresAt: extended.body.expiresAt },
    ]);
    expect(remindedAt!.getTime()).toBeGreaterThanOrEqual(newRemindAt);
    expect(remindedAt!.getTime()).toBeLessThan(newRemindAt + 5 * SECOND);
  });

  it('every open order given more time (POST /orders/extend, no run told): reminded before the new deadline', async () => {
    const { order, remindAt } = await placed('c-bulk-extended-before-reminder');
    await sleepUntil(h, remindAt - 5 * MINUTE);
    const extended = await h.admin('POST', '/orders/extend', {
      minutes: 5,
      customerId: 'c-bulk-extended-before-reminder',
    });
    expect(extended.body).toEqual({ extended: 1, minutes: 5 });
    const newDeadline = new Date(Date.parse(order.expiresAt) + 5 * MINUTE).toISOString();

    // The run's timer still fires at the old reminder time: it learns the new deadline there.
    await sleepUntil(h, remindAt + MINUTE);
    expect((await remindersOf(h, order.id)).events).toEqual([]);

    await sleepUntil(h, remindAt + 5 * MINUTE + MINUTE);
    const { events, remindedAt } = await remindersOf(h, order.id);
    expect(events.map((e) => e.data)).toEqual([{ orderId: order.id, status: 'UNPAID', expiresAt: newDeadline }]);
    expect(remindedAt!.getTime()).toBeGreaterThanOrEqual(remindAt + 5 * MINUTE);
    expect(remindedAt!.getTime()).toBeLessThan(remindAt + 5 * MINUTE + 5 * SECOND);
  });

  it('cancelled by the customer before the reminder: none', async () => {
    const { order, remindAt } = await placed('c-cancelled-before-reminder');
    await sleepUntil(h, remindAt - 5 * MINUTE);
    expect((await h.asCustomer('c-cancelled-before-reminder', 'POST', `/orders/${order.id}/cancel`)).status).toBe(202);
    expect(await resultOf(order.id)).toMatchObject({ status: 'CANCELLED', cancelReason: 'CUSTOMER' });
    await sleepUntil(h, remindAt + MINUTE);
    expect(await remindersOf(h, order.id)).toMatchObject({ events: [], remindedAt: null });
  });

  it('awaiting funds (a debit on its way when the customer cancelled): none', async () => {
    const { order, remindAt } = await placed('c-funds-before-reminder');
    await moveFakePayment(h.db, { orderId: order.id, to: 'funds' });
    await sleepUntil(h, remindAt - 5 * MINUTE);
    expect((await h.asCustomer('c-funds-before-reminder', 'POST', `/orders/${order.id}/cancel`)).status).toBe(202);
    await sleepUntil(h, remindAt + MINUTE);
    expect((await h.db.order.findUniqueOrThrow({ where: { id: order.id } })).status).toBe('AWAITING_FUNDS');
    expect(await remindersOf(h, order.id)).toMatchObject({ events: [], remindedAt: null });

    await paymentSucceeds(order); // the debit settled
    expect(await resultOf(order.id)).toMatchObject({ status: 'PAID' });
    expect((await remindersOf(h, order.id)).events).toEqual([]);
  });
});

describe('without PAYMENT_REMINDER_BEFORE', () => {
  let h: OrderHarness;
  beforeAll(async () => {
    h = await startOrderHarness();
  });
  afterAll(async () => {
    await h?.close();
  });

  it('the run sets no reminder timer and writes no reminder', async () => {
    const { sku } = await seedCatalog(h, { stock: 10 });
    const order = await placeOrder(h, { sku, quantity: 1, customerId: 'c-no-reminders' });
    const result = await h.env.client.workflow.getHandle(orderWorkflowId(order.id)).result();
    expect(result).toMatchObject({ status: 'CANCELLED', cancelReason: 'PAYMENT_TIMEOUT' });
    expect(await remindersOf(h, order.id)).toMatchObject({ events: [], remindedAt: null });
    expect(await timersOf(h, order.id)).toEqual([about(30 * MINUTE)]);
  });
});
