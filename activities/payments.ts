import { log } from '@temporalio/activity';
import type { PaymentNotice } from '../domain/messages.js';
import {
  canTransition,
  COUPON_TRANSITIONS,
  FULFILLMENT_STEPS,
  INITIAL_STATUS,
  ORDER_TRANSITIONS,
  PAYMENT_TRANSITIONS,
  type PaymentStatus,
  type RefundReason,
} from '../domain/statuses.js';
import { asOf, type ActivityDeps } from './deps.js';
import { nowOr, statusMove, statusValue } from './guarded-sql.js';

export interface Settlement {
  /** PAID: this payment paid the order. REFUND_PENDING: it must be given back. */
  outcome: 'PAID' | 'REFUND_PENDING';
  paymentStatus: PaymentStatus;
  /** True when this paymentId had been recorded before: a redelivery, with no new effect. */
  duplicate: boolean;
}

export function createPaymentActivities(deps: ActivityDeps) {
  const { db, paymentProvider } = deps;

  return {
    /**
     * Records a payment and, if it pays an unpaid, unexpired order the exact amount, marks the
     * order PAID, redeems the coupon and turns reserved units into sold ones — one transaction.
     * Otherwise the payment is recorded as REFUND_PENDING with the reason. A redelivered paymentId
     * finds its row and changes nothing.
     */
    async settlePayment(notice: PaymentNotice): Promise<Settlement> {
      const now = await asOf(deps);
      // Judged at arrival: a payment accepted before the deadline pays, however busy the worker was.
      const arrived = notice.receivedAt ? new Date(notice.receivedAt) : now;
      return db.$transaction(async (tx) => {
        const claimed = await tx.$executeRaw`
          INSERT INTO payments (payment_id, order_id, amount_cents, status, paid_at, received_at)
          VALUES (${notice.paymentId}, ${notice.orderId}::uuid, ${notice.amountCents}, ${statusValue('payments', INITIAL_STATUS.payment)},
                  ${new Date(notice.paidAt)}, ${nowOr(arrived)})
          ON CONFLICT (payment_id) DO NOTHING`;
        if (claimed === 0) {
          const seen = await tx.payment.findUniqueOrThrow({ where: { paymentId: notice.paymentId } });
          return { outcome: seen.status === 'CAPTURED' ? 'PAID' : 'REFUND_PENDING', paymentStatus: seen.status, duplicate: true };
        }
        const pay = statusMove('orders', ORDER_TRANSITIONS.pay);
        const paid = await tx.$queryRaw<Array<{ coupon_code: string | null }>>`
          UPDATE orders SET ${pay.set}, paid_at = ${nowOr(now)}
          WHERE id = ${notice.orderId}::uuid AND ${pay.guard}
            AND total_cents = ${notice.amountCents} AND expires_at > ${nowOr(arrived)}
          RETURNING coupon_code`;
        if (paid.length === 1) {
          await tx.$executeRaw`
            UPDATE products p SET reserved = p.reserved - i.quantity, sold = p.sold + i.quantity
            FROM order_items i WHERE i.order_id = ${notice.orderId}::uuid AND p.sku = i.sku`;
          const redeem = statusMove('coupons', COUPON_TRANSITIONS.redeem);
          await tx.$executeRaw`
            UPDATE coupons SET ${redeem.set}, updated_at = now()
            WHERE order_id = ${notice.orderId}::uuid AND ${redeem.guard}`;
          const capture = statusMove('payments', PAYMENT_TRANSITIONS.capture);
          await tx.$executeRaw`UPDATE payments SET ${capture.set} WHERE payment_id = ${notice.paymentId} AND ${capture.guard}`;
          // Fulfillment is owed from this moment: the steps exist, PENDING, with the PAID order.
          await tx.fulfillmentRecord.createMany({
            data: Object.values(FULFILLMENT_STEPS).map((step) => ({ orderId: notice.orderId, step })),
            skipDuplicates: true,
          });
          return { outcome: 'PAID', paymentStatus: 'CAPTURED', duplicate: false };
        }
        const order = await tx.order.findUniqueOrThrow({ where: { id: notice.orderId } });
        const reason: RefundReason =
          order.status === 'PAID' ? 'ALREADY_PAID' : order.totalCents !== notice.amountCents ? 'AMOUNT_MISMATCH' : 'ORDER_NOT_PAYABLE';
        await tx.payment.update({ where: { paymentId: notice.paymentId }, data: { refundReason: reason } });
        log.warn('payment will be refunded', { orderId: notice.orderId, paymentId: notice.paymentId, reason, orderStatus: order.status });
        return { outcome: 'REFUND_PENDING', paymentStatus: 'REFUND_PENDING', duplicate: false };
      });
    },

    /**
     * Refunds a REFUND_PENDING payment. The provider refunds a paymentId at most once, and the
     * refund row and status change are written together, so running this again is harmless.
     */
    async refundPayment(paymentId: string): Promise<{ refunded: boolean }> {
      const payment = await db.payment.findUnique({ where: { paymentId } });
      if (!payment || !canTransition<PaymentStatus>(PAYMENT_TRANSITIONS.refund, payment.status)) {
        // Out of order or not ours to refund (unknown, or a payment that paid its order): refused, never applied.
        if (payment?.status !== 'REFUNDED') log.warn('refund refused by the transition table', { paymentId, status: payment?.status ?? null });
        return { refunded: payment?.status === 'REFUNDED' };
      }
      const { refundRef } = await paymentProvider.refund({ paymentId, amountCents: payment.amountCents });
      const refund = statusMove('payments', PAYMENT_TRANSITIONS.refund);
      await db.$transaction([
        db.$executeRaw`
          INSERT INTO refunds (payment_id, amount_cents, provider_ref) VALUES (${paymentId}, ${payment.amountCents}, ${refundRef})
          ON CONFLICT (payment_id) DO NOTHING`,
        db.$executeRaw`UPDATE payments SET ${refund.set} WHERE payment_id = ${paymentId} AND ${refund.guard}`,
      ]);
      log.info('payment refunded', { orderId: payment.orderId, paymentId, amountCents: payment.amountCents });
      return { refunded: true };
    },

    /** The provider rejected the refund for good: it stays owed, visible, until an operator retries it. */
    async recordRefundFailure(input: { paymentId: string; error: string }): Promise<void> {
      const fail = statusMove('payments', PAYMENT_TRANSITIONS.failRefund);
      await db.$executeRaw`
        UPDATE payments SET ${fail.set}, refund_error = ${input.error}, refund_failed_at = now()
        WHERE payment_id = ${input.paymentId} AND ${fail.guard}`;
    },

    /** An operator's retry: REFUND_FAILED → REFUND_PENDING, so that refundPayment may run again. */
    async reopenRefund(paymentId: string): Promise<{ reopened: boolean }> {
      const retry = statusMove('payments', PAYMENT_TRANSITIONS.retryRefund);
      const reopened = await db.$executeRaw`UPDATE payments SET ${retry.set} WHERE payment_id = ${paymentId} AND ${retry.guard}`;
      log.info('refund retried by an operator', { paymentId });
      return { reopened: reopened === 1 };
    },

    /** After a cancellation: the provider must not accept a payment for this order any more. */
    async closePaymentIntent(orderId: string): Promise<void> {
      await paymentProvider.closeIntent({ orderId });
    },
  };
}
