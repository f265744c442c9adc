import { randomUUID } from 'node:crypto';
import type { Prisma } from '@prisma/client';
import { FAKE_PAYMENT_ACCOUNT } from '../../dev/fakes/payment-provider.js';
import { recordReceivedPayment, type VerifiedPayment } from '../../store/received-payments.js';
import { checkInvariants, type Invariant, type InvariantReport } from '../../ops/invariants.js';
import { realActivities, runActivity as run, placeWith } from './activities.js';
import { createTestDatabase, type TestDatabase } from './database.js';

/**
 * A small history written by the real activities on the local fakes, for the invariant checkers:
 * `paid` was paid with a coupon bound to its customer and fulfilled; `cancelled` was cancelled with a coupon, then paid
 * late (refunded); `unpaid` is waiting, with a coupon. Both halves of the checker pass on it.
 */
export interface CheckedHistory {
  database: TestDatabase;
  sku: string;
  coupons: { paid: string; cancelled: string; unpaid: string };
  orders: { paid: string; cancelled: string; unpaid: string };
  payments: { captured: string; refunded: string };
  /** Runs `invariants` on the data as `corrupt` leaves it, then rolls the corruption back. */
  checkCorrupted(invariants: readonly Invariant[], corrupt: Prisma.Sql, graceMs?: number): Promise<InvariantReport>;
}

export async function writeCheckedHistory(): Promise<CheckedHistory> {
  const database = await createTestDatabase();
  const db = database.prisma;
  const acts = realActivities(db);
  const sku = `SKU-${randomUUID().slice(0, 8)}`;
  const coupons = { paid: `PAID-${sku}`, cancelled: `CANC-${sku}`, unpaid: `UNPD-${sku}` };
  const orders = { paid: randomUUID(), cancelled: randomUUID(), unpaid: randomUUID() };
  const payments = { captured: `pay-${orders.paid}`, refunded: `pay-late-${orders.cancelled}` };

  await db.product.create({ data: { sku, name: 'Widget', priceCents: 1000, available: 10, stockAdded: 10 } });
  await db.coupon.createMany({
    data: Object.values(coupons).map((code) => ({
      code,
      discountCents: 100,
      customerId: code === coupons.paid ? 'c1' : null,
    })),
  });
  /** As the webhook and then the workflow do it. */
  const receiveAndSettle = async (payment: VerifiedPayment) => {
    await recordReceivedPayment(db.pool, payment, null, FAKE_PAYMENT_ACCOUNT);
    await run(acts.settlePayment, { paymentId: payment.paymentId, orderId: payment.orderId });
  };
  const place = (orderId: string, couponCode?: string) =>
    placeWith(acts, {
      orderId,
      customerId: 'c1',
      items: [{ sku, quantity: 2 }],
      couponCode,
      requestHash: orderId,
    });

  const paid = await place(orders.paid, coupons.paid);
  await receiveAndSettle({
    paymentId: payments.captured,
    orderId: paid.id,
    amountCents: paid.totalCents,
    paidAt: new Date().toISOString(),
  });
  await run(acts.issueInvoice, paid.id);
  await run(acts.sendPaymentNotification, paid.id);
  await run(acts.awardLoyaltyPoints, paid.id);

  const cancelled = await place(orders.cancelled, coupons.cancelled);
  // As the workflow does: the winning cancel tells the customer; only a notice it could not send is sent again.
  const cancel = await run(acts.cancelOrder, { orderId: cancelled.id, reason: 'CUSTOMER' });
  if (cancel.outcome !== 'CANCELLED' || !cancel.customerTold)
    await run(acts.notifyCustomer, { orderId: cancelled.id, template: 'ORDER_CANCELLED' });
  await receiveAndSettle({
    paymentId: payments.refunded,
    orderId: cancelled.id,
    amountCents: cancelled.totalCents,
    paidAt: new Date().toISOString(),
  });
  await run(acts.refundPayment, payments.refunded);

  await place(orders.unpaid, coupons.unpaid);

  async function checkCorrupted(
    invariants: readonly Invariant[],
    corrupt: Prisma.Sql,
    graceMs = 0,
  ): Promise<InvariantReport> {
    let report: InvariantReport | undefined;
    await db
      .$transaction(
        async (tx) => {
          await tx.$executeRaw(corrupt);
          report = await checkInvariants(tx, invariants, { graceMs });
          throw new RolledBack();
        },
        { timeout: 20_000 },
      )
      .catch((err: unknown) => {
        if (!(err instanceof RolledBack)) throw err;
      });
    return report!;
  }

  return { database, sku, coupons, orders, payments, checkCorrupted };
}

class RolledBack extends Error {}
