import { randomUUID } from 'node:crypto';
import { Prisma } from '@prisma/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Activities } from '../../activities/index.js';
import { ORDER_EVENT_TYPES } from '../../domain/order-events.js';
import { extendOpenOrdersStatement } from '../../api/routes/extend-open-orders.js';
import { FAKE_PAYMENT_ACCOUNT, moveFakePayment } from '../../dev/fakes/payment-provider.js';
import { query } from '../../lib/sql.js';
import { BUSINESS_INVARIANTS, checkInvariants } from '../../ops/invariants.js';
import { recordReceivedPayment } from '../../store/received-payments.js';
import { realActivities, runActivity as run, placeWith } from '../helpers/activities.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';

/**
 * The outbox on real PostgreSQL: each guarded change writes exactly its event, in its own statement,
 * numbered by the order's counter; a change that loses its race writes none.
 */
let database: TestDatabase;
let acts: Activities;

beforeAll(async () => {
  database = await createTestDatabase();
  acts = realActivities(database.prisma);
});
afterAll(async () => {
  await database?.drop();
});

interface StoredEvent {
  seq: number;
  type: string;
  data: Record<string, unknown>;
}

/** The order's events in seq order, and its counter. */
async function eventsOf(orderId: string): Promise<{ events: StoredEvent[]; eventSeq: number }> {
  const { rows } = await query<StoredEvent>(
    database.prisma.pool,
    Prisma.sql`SELECT seq, type, data FROM order_events WHERE order_id = ${orderId}::uuid ORDER BY seq`,
  );
  const order = await database.prisma.order.findUniqueOrThrow({ where: { id: orderId } });
  return { events: rows, eventSeq: order.eventSeq };
}

async function typesOf(orderId: string): Promise<string[]> {
  return (await eventsOf(orderId)).events.map((e) => e.type);
}

async function product(priceCents = 1000) {
  const sku = `SKU-${randomUUID().slice(0, 8)}`;
  await database.prisma.product.create({ data: { sku, name: 'Widget', priceCents, available: 50, stockAdded: 50 } });
  return sku;
}

async function placed(on: Activities = acts, couponCode?: string) {
  const sku = await product();
  return placeWith(on, {
    orderId: randomUUID(),
    customerId: 'c-events',
    items: [{ sku, quantity: 2 }],
    couponCode,
    requestHash: 'h',
  });
}

/** As the webhook and then the workflow do it. */
async function pay(order: { id: string }, paymentId: string, amountCents: number) {
  await recordReceivedPayment(
    database.prisma.pool,
    { paymentId, orderId: order.id, amountCents, paidAt: new Date().toISOString() },
    null,
    FAKE_PAYMENT_ACCOUNT,
  );
  return run(acts.settlePayment, { paymentId, orderId: order.id });
}

describe('each change writes its event', () => {
  it('placement: order.placed, seq 1, with the order as written', async () => {
    const order = await placed();
    const { events, eventSeq } = await eventsOf(order.id);
    expect(eventSeq).toBe(1);
    expect(events).toEqual([
      {
        seq: 1,
        type: 'order.placed',
        data: {
          orderId: order.id,
          status: 'UNPAID',
          customerId: 'c-events',
          totalCents: 2000,
          currency: FAKE_PAYMENT_ACCOUNT.currency,
          expiresAt: order.expiresAt,
          items: order.items,
        },
      },
    ]);
  });

  it('a placement delivered twice writes its event once', async () => {
    const sku = await product();
    const request = { orderId: randomUUID(), customerId: 'c-twice', items: [{ sku, quantity: 1 }], requestHash: 'h' };
    await Promise.all([placeWith(acts, request), placeWith(acts, request)]);
    await placeWith(acts, request);
    expect(await typesOf(request.orderId)).toEqual(['order.placed']);
  });

  it('the payment: order.paid with the payment and its amount; a second payment, the loser, writes none', async () => {
    const order = await placed();
    expect(await pay(order, `p1-${order.id}`, order.totalCents)).toMatchObject({ outcome: 'PAID' });
    expect(await pay(order, `p2-${order.id}`, order.totalCents)).toMatchObject({ outcome: 'REFUND_PENDING' });
    const { events, eventSeq } = await eventsOf(order.id);
    expect(eventSeq).toBe(2);
    expect(events[1]).toEqual({
      seq: 2,
      type: 'order.paid',
      data: { orderId: order.id, status: 'PAID', paymentId: `p1-${order.id}`, amountCents: order.totalCents },
    });
  });

  it('an order of total 0: order.placed then order.paid, with no payment, in the placement', async () => {
    const code = `FREE-${randomUUID().slice(0, 8)}`;
    await database.prisma.coupon.create({ data: { code, discountCents: 5000 } });
    const order = await placed(acts, code);
    expect(order.status).toBe('PAID');
    const { events } = await eventsOf(order.id);
    expect(events.map((e) => [e.seq, e.type])).toEqual([
      [1, 'order.placed'],
      [2, 'order.paid'],
    ]);
    expect(events[0]!.data).toMatchObject({ status: 'UNPAID', totalCents: 0 });
    expect(events[1]!.data).toEqual({ orderId: order.id, status: 'PAID', paymentId: null, amountCents: 0 });
  });

  it('the cancel: order.cancelled with its reason; a second cancel and a cancel after a payment write none', async () => {
    const order = await placed();
    expect(await run(acts.cancelOrder, { orderId: order.id, reason: 'CUSTOMER' })).toMatchObject({
      outcome: 'CANCELLED',
    });
    expect(await run(acts.cancelOrder, { orderId: order.id, reason: 'CUSTOMER' })).toMatchObject({
      outcome: 'ALREADY_FINAL',
    });
    const { events, eventSeq } = await eventsOf(order.id);
    expect(eventSeq).toBe(2);
    expect(events[1]).toEqual({
      seq: 2,
      type: 'order.cancelled',
      data: { orderId: order.id, status: 'CANCELLED', reason: 'CUSTOMER' },
    });

    const paid = await placed();
    await pay(paid, `p-${paid.id}`, paid.totalCents);
    expect(await run(acts.cancelOrder, { orderId: paid.id, reason: 'CUSTOMER' })).toMatchObject({
      outcome: 'ALREADY_FINAL',
    });
    expect(await typesOf(paid.id)).toEqual(['order.placed', 'order.paid']);
  });

  it('a timeout cancel before the deadline writes none', async () => {
    const order = await placed();
    expect(await run(acts.cancelOrder, { orderId: order.id, reason: 'PAYMENT_TIMEOUT' })).toMatchObject({
      outcome: 'NOT_DUE',
    });
    expect(await typesOf(order.id)).toEqual(['order.placed']);
  });

  it('an extension: order.deadline_extended with the new deadline, once per extension id', async () => {
    const order = await placed();
    const extend = (extensionId: string) => run(acts.extendDeadline, { orderId: order.id, minutes: 15, extensionId });
    const { expiresAt } = await extend('x-1');
    await extend('x-1');
    const { events } = await eventsOf(order.id);
    expect(events.slice(1)).toEqual([
      { seq: 2, type: 'order.deadline_extended', data: { orderId: order.id, status: 'UNPAID', expiresAt } },
    ]);
  });

  it("the operators' bulk extension: one order.deadline_extended per order it moved, none for the others", async () => {
    const customerId = `bulk-${randomUUID().slice(0, 8)}`;
    const sku = await product();
    const place = () =>
      placeWith(acts, { orderId: randomUUID(), customerId, items: [{ sku, quantity: 1 }], requestHash: 'h' });
    const [open1, open2, cancelled] = [await place(), await place(), await place()];
    await run(acts.cancelOrder, { orderId: cancelled.id, reason: 'CUSTOMER' });
    const { rows } = await query<{ extended: number }>(
      database.prisma.pool,
      extendOpenOrdersStatement({ minutes: 10, customerId }, null),
    );
    expect(rows[0]!.extended).toBe(2);
    for (const order of [open1, open2]) {
      const row = await database.prisma.order.findUniqueOrThrow({ where: { id: order.id } });
      expect((await eventsOf(order.id)).events[1]).toEqual({
        seq: 2,
        type: 'order.deadline_extended',
        data: { orderId: order.id, status: 'UNPAID', expiresAt: row.expiresAt.toISOString() },
      });
    }
    expect(await typesOf(cancelled.id)).toEqual(['order.placed', 'order.cancelled']);
  });

  it('refunds: order.refunded, then order.refund_failed when it fails later; a redelivery writes none', async () => {
    const order = await placed();
    await run(acts.cancelOrder, { orderId: order.id, reason: 'CUSTOMER' });
    const paymentId = `p-late-${order.id}`;
    await pay(order, paymentId, order.totalCents);
    expect(await run(acts.refundPayment, paymentId)).toEqual({ refunded: true });
    expect(await run(acts.refundPayment, paymentId)).toEqual({ refunded: true });
    const failure = { orderId: order.id, paymentId, refundRef: `fake-refund-${paymentId}`, reason: 'card_expired' };
    expect(await run(acts.recordRefundFailedLater, failure)).toMatchObject({ failed: true });
    expect(await run(acts.recordRefundFailedLater, failure)).toMatchObject({ failed: false });
    const { events, eventSeq } = await eventsOf(order.id);
    expect(eventSeq).toBe(4);
    expect(events.slice(2)).toEqual([
      {
        seq: 3,
        type: 'order.refunded',
        data: {
          orderId: order.id,
          status: 'CANCELLED',
          paymentId,
          amountCents: order.totalCents,
          reason: 'ORDER_NOT_PAYABLE',
        },
      },
      {
        seq: 4,
        type: 'order.refund_failed',
        data: {
          orderId: order.id,
          status: 'CANCELLED',
          paymentId,
          amountCents: order.totalCents,
          reason: 'ORDER_NOT_PAYABLE',
          error: `refund fake-refund-${paymentId} failed: card_expired`,
        },
      },
    ]);
  });

  it('a refund the provider rejects: order.refund_failed with the error, once', async () => {
    const order = await placed();
    await pay(order, `p1-${order.id}`, order.totalCents);
    const paymentId = `p2-${order.id}`;
    await pay(order, paymentId, order.totalCents);
    expect(await run(acts.recordRefundFailure, { paymentId, error: 'rejected' })).toEqual({ recorded: true });
    expect(await run(acts.recordRefundFailure, { paymentId, error: 'rejected' })).toEqual({ recorded: false });
    const { events } = await eventsOf(order.id);
    expect(events.slice(2)).toEqual([
      {
        seq: 3,
        type: 'order.refund_failed',
        data: {
          orderId: order.id,
          status: 'PAID',
          paymentId,
          amountCents: order.totalCents,
          reason: 'ALREADY_PAID',
          error: 'rejected',
        },
      },
    ]);
  });

  it('fulfillment: a step done and a step dead-lettered write their events; a step done again writes none', async () => {
    const order = await placed();
    await pay(order, `p-${order.id}`, order.totalCents);
    await run(acts.issueInvoice, order.id);
    await run(acts.issueInvoice, order.id);
    expect(await run(acts.markStepFailed, { orderId: order.id, step: 'loyalty', error: 'down' })).toEqual({
      status: 'FAILED',
      changed: true,
    });
    expect(await run(acts.markStepFailed, { orderId: order.id, step: 'invoice', error: 'late' })).toEqual({
      status: 'DONE',
      changed: false,
    });
    await run(acts.reopenStep, { orderId: order.id, step: 'loyalty' });
    await run(acts.awardLoyaltyPoints, order.id);
    const { events } = await eventsOf(order.id);
    expect(events.slice(2)).toEqual([
      { seq: 3, type: 'order.fulfillment_step_done', data: { orderId: order.id, status: 'PAID', step: 'invoice' } },
      {
        seq: 4,
        type: 'order.fulfillment_step_dead_lettered',
        data: { orderId: order.id, status: 'PAID', step: 'loyalty', error: 'down' },
      },
      { seq: 5, type: 'order.fulfillment_step_done', data: { orderId: order.id, status: 'PAID', step: 'loyalty' } },
    ]);
  });

  it('money on its way at the deadline: order.awaiting_funds with the payment, once', async () => {
    const cancellable = realActivities(database.prisma, { payments: 'cancellable' });
    const order = await placed(cancellable);
    expect(order.payment).toMatchObject({ paymentId: expect.any(String) });
    expect((await moveFakePayment(database.prisma, { orderId: order.id, to: 'funds' })).outcome).toBe('SUCCEEDED');
    const close = () => run(cancellable.closePayment, { orderId: order.id, reason: 'CUSTOMER' });
    expect(await close()).toMatchObject({ outcome: 'FUNDS_IN_TRANSIT' });
    expect(await close()).toMatchObject({ outcome: 'FUNDS_IN_TRANSIT' });
    const { events } = await eventsOf(order.id);
    expect(events.slice(1)).toEqual([
      {
        seq: 2,
        type: 'order.awaiting_funds',
        data: {
          orderId: order.id,
          status: 'AWAITING_FUNDS',
          paymentId: (order.payment as { paymentId: string }).paymentId,
        },
      },
    ]);
  });
});

describe('under real concurrency', () => {
  it('parallel cancels and payments of one order: the winner writes its one event, the losers none', async () => {
    for (let round = 0; round < 3; round++) {
      const order = await placed();
      const results = await Promise.all([
        ...Array.from({ length: 6 }, () => run(acts.cancelOrder, { orderId: order.id, reason: 'CUSTOMER' })),
        ...Array.from({ length: 6 }, (_, i) => pay(order, `p-${i}-${order.id}`, order.totalCents)),
      ]);
      const paid = results.some((r) => r.outcome === 'PAID');
      expect(await typesOf(order.id)).toEqual(['order.placed', paid ? 'order.paid' : 'order.cancelled']);
    }
  });

  it('concurrent events of one order are numbered 1..n without gaps, whatever commits first', async () => {
    const order = await placed();
    await pay(order, `p-${order.id}`, order.totalCents);
    const losers = Array.from({ length: 6 }, (_, i) => `p-lost-${i}-${order.id}`);
    for (const paymentId of losers) await pay(order, paymentId, order.totalCents);
    // Three steps and six refunds, all at once: each bumps the order's counter in its own statement.
    await Promise.all([
      run(acts.issueInvoice, order.id),
      run(acts.sendPaymentNotification, order.id),
      run(acts.awardLoyaltyPoints, order.id),
      ...losers.map((paymentId) => run(acts.refundPayment, paymentId)),
    ]);
    const { events, eventSeq } = await eventsOf(order.id);
    expect(eventSeq).toBe(11);
    expect(events.map((e) => e.seq)).toEqual(Array.from({ length: 11 }, (_, i) => i + 1));
    expect(events.filter((e) => e.type === 'order.refunded')).toHaveLength(6);
    expect(events.filter((e) => e.type === 'order.fulfillment_step_done')).toHaveLength(3);
  });
});

describe('the outbox invariants', () => {
  it('pass on every history above: refunds failed and retried, steps dead-lettered and retried, funds awaited', async () => {
    const outbox = BUSINESS_INVARIANTS.filter((i) => i.name.includes('event'));
    expect(outbox.map((i) => i.name)).toHaveLength(3);
    const report = await checkInvariants(database.prisma, outbox, { graceMs: 0 });
    expect(report.violations).toEqual([]);
    // The histories the tests above wrote, with every kind of event but the reminder (its timer's).
    const timers: readonly string[] = ['order.payment_reminder'];
    const types = await database.prisma.orderEvent.findMany({ distinct: ['type'], select: { type: true } });
    expect(types.map((t) => t.type).sort()).toEqual(ORDER_EVENT_TYPES.filter((t) => !timers.includes(t)).sort());
  });
});
