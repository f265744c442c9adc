import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createActivities, type Activities } from '../../activities/index.js';
import { createFakeThirdParties } from '../../dev/fakes/index.js';
import { FAKE_PAYMENT_ACCOUNT } from '../../dev/fakes/payment-provider.js';
import { realActivities, runActivity as run, placeWith } from '../helpers/activities.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';

/** The reminder's guarded statement on real PostgreSQL: who may be reminded, once, and what a loser learns. */
let database: TestDatabase;
let acts: Activities;

beforeAll(async () => {
  database = await createTestDatabase();
  acts = realActivities(database.prisma);
});
afterAll(async () => {
  await database?.drop();
});

async function placedOrder(activities = acts) {
  const sku = `SKU-${randomUUID().slice(0, 8)}`;
  await database.prisma.product.create({
    data: { sku, name: 'Widget', priceCents: 1000, available: 5, stockAdded: 5 },
  });
  return placeWith(activities, {
    orderId: randomUUID(),
    customerId: 'c1',
    items: [{ sku, quantity: 1 }],
    requestHash: 'h',
  });
}

const remind = (order: { id: string; expiresAt: string }) =>
  run(acts.remindOfPayment, { orderId: order.id, expiresAt: order.expiresAt });
const remindersOf = (orderId: string) =>
  database.prisma.orderEvent.findMany({ where: { orderId, type: 'order.payment_reminder' } });
const setOrder = (id: string, sql: string) =>
  database.prisma.pool.query(`UPDATE orders SET ${sql} WHERE id = $1::uuid`, [id]);

describe('remindOfPayment', () => {
  it('reminds an unpaid order once, however many calls race, its event numbered by the order’s counter', async () => {
    const order = await placedOrder();
    const answers = await Promise.all(Array.from({ length: 5 }, () => remind(order)));
    expect(answers.filter((a) => a.outcome === 'REMINDED')).toHaveLength(1);
    expect(answers.filter((a) => a.outcome === 'NOT_REMINDED')).toHaveLength(4);
    const events = await remindersOf(order.id);
    expect(events.map((e) => ({ seq: e.seq, data: e.data }))).toEqual([
      { seq: 2, data: { orderId: order.id, status: 'UNPAID', expiresAt: order.expiresAt } },
    ]); // after its order.placed
    const row = await database.prisma.order.findUniqueOrThrow({ where: { id: order.id } });
    expect(row.eventSeq).toBe(2);
    expect(row.remindedAt).toEqual(events[0]!.occurredAt);
  });

  it.each([
    ['cancelled', "status = 'CANCELLED', cancelled_at = now(), cancel_reason = 'CUSTOMER'"],
    ['paid', "status = 'PAID', paid_at = now()"],
    ['awaiting funds', "status = 'AWAITING_FUNDS'"],
    ['being closed at the provider', 'closing_since = now()'],
    ['past its deadline', "expires_at = now() - interval '1 second'"],
  ])('does not remind an order %s, and writes nothing', async (_state, change) => {
    const order = await placedOrder();
    await setOrder(order.id, change);
    const before = await database.prisma.order.findUniqueOrThrow({ where: { id: order.id } });
    expect(await remind({ id: order.id, expiresAt: before.expiresAt.toISOString() })).toEqual({
      outcome: 'NOT_REMINDED',
    });
    expect(await remindersOf(order.id)).toEqual([]);
    const row = await database.prisma.order.findUniqueOrThrow({ where: { id: order.id } });
    expect(row).toMatchObject({ remindedAt: null, eventSeq: before.eventSeq });
  });

  it('answers the moved deadline of an order still to be reminded, and reminds it for that one', async () => {
    const order = await placedOrder();
    await setOrder(order.id, "expires_at = expires_at + interval '5 minutes'");
    const moved = new Date(Date.parse(order.expiresAt) + 5 * 60_000).toISOString();
    expect(await remind(order)).toEqual({ outcome: 'DEADLINE_MOVED', expiresAt: moved });
    expect(await remindersOf(order.id)).toEqual([]);
    expect(await remind({ id: order.id, expiresAt: moved })).toEqual({ outcome: 'REMINDED' });
    expect((await remindersOf(order.id)).map((e) => e.data)).toEqual([
      { orderId: order.id, status: 'UNPAID', expiresAt: moved },
    ]);
  });
});

describe('the order as its run takes it', () => {
  it('carries the reminder only while PAYMENT_REMINDER_BEFORE is set, and whether it was sent', async () => {
    const reminding = createActivities({
      db: database.prisma,
      paymentWindowMs: 30 * 60_000,
      paymentAccount: FAKE_PAYMENT_ACCOUNT,
      unclaimedRefundGraceMs: 24 * 3_600_000,
      maxOpenOrdersPerCustomer: 0,
      maxUnpaidUnitsPerProduct: 0,
      paymentReminderBeforeMs: 10 * 60_000,
      ...createFakeThirdParties(database.prisma, 'callback-only'),
    });
    const order = await placedOrder(reminding);
    expect(order.reminder).toEqual({ beforeMs: 10 * 60_000, sent: false });
    expect((await run(acts.loadOrder, order.id))!.reminder).toBeUndefined();
    await remind(order);
    expect((await run(reminding.loadOrder, order.id))!.reminder).toEqual({ beforeMs: 10 * 60_000, sent: true });
  });
});
