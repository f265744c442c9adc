import { Prisma } from '@prisma/client';
import { statusIn, statusValue } from './guarded-sql.js';
import type { PaymentOrigin } from '../domain/payment-origin.js';
import { INITIAL_STATUS, ORDER_TRANSITIONS, type RefundReason } from '../domain/statuses.js';
import type { PaymentAccount } from '../lib/config/third-parties.js';
import { query, type Queryable } from '../lib/sql.js';

/**
 * A payment as the provider's signature vouches for it. Its origin is what the provider states:
 * Stripe states all of it; the generic callback its currency at most. What is not stated is not
 * compared (ownMoneyRefusal).
 */
export interface VerifiedPayment extends Partial<PaymentOrigin> {
  paymentId: string;
  orderId: string;
  amountCents: number;
  /** ISO-8601, as the provider reports it. */
  paidAt: string;
}

export type RecordedPayment =
  /** No such order: nothing was recorded. */
  | { known: false }
  /** Recorded (or recorded before); `refusal`: why it is not the order's own money, so never pays it. */
  | { known: true; refusal: RefundReason | null };

/**
 * The record every settlement decides from, written by the webhook once the signature is checked,
 * and by the deadline's closing for a payment the provider had taken: RECEIVED, with the signed
 * amount, its origin, and the arrival time (`arrivedAt`, or the database's clock). A redelivery of
 * the same paymentId keeps the first record.
 *
 * A payment that is not the order's own money (ownMoneyRefusal) is recorded with its refusal: its
 * settlement refunds it, and it never pays the order. One that is, of the order's total, arriving
 * before the deadline of an UNPAID order pays it, so the same statement marks the order
 * (`payment_in_time_id`, the first such payment): the guarded cancel (activities/orders.ts) is
 * refused by that mark. The statement takes the order's row first and reads the arrival time only
 * once it holds it, so the record and the cancel are decided in one order: a cancel that took the
 * row first wins, and the payment arrived after it, late; one that came while this statement held
 * the row waits for it, then sees the mark and loses.
 */
export async function recordReceivedPayment(
  on: Queryable,
  payment: VerifiedPayment,
  arrivedAt: Date | null,
  account: PaymentAccount,
): Promise<RecordedPayment> {
  const { rows } = await query<{ known: boolean; refusal: RefundReason | null }>(
    on,
    Prisma.sql`
      WITH target AS (
        SELECT id, currency, customer_id, provider_payment_id FROM orders
        WHERE id = ${payment.orderId}::uuid FOR NO KEY UPDATE),
      judged AS (SELECT id, ${ownMoneyRefusal(payment, account)} AS refusal FROM target),
      recorded AS (
        INSERT INTO payments (payment_id, order_id, amount_cents, status, paid_at, received_at,
                              currency, livemode, connect_account, refusal)
        SELECT ${payment.paymentId}, id, ${payment.amountCents}, ${statusValue('payments', INITIAL_STATUS.payment)},
               ${new Date(payment.paidAt)}, COALESCE(${arrivedAt}::timestamptz, clock_timestamp()),
               ${payment.currency ?? null}::text, ${payment.livemode ?? null}::boolean,
               ${payment.connectAccount ?? null}::text, refusal
        FROM judged
        ON CONFLICT (payment_id) DO NOTHING
        RETURNING payment_id, order_id, amount_cents, received_at, refusal),
      in_time AS (
        UPDATE orders o SET payment_in_time_id = r.payment_id
        FROM recorded r
        WHERE o.id = r.order_id AND o.payment_in_time_id IS NULL AND ${statusIn('orders', ORDER_TRANSITIONS.pay.from)}
          AND r.refusal IS NULL AND r.received_at < o.expires_at AND r.amount_cents = o.total_cents)
      SELECT EXISTS (SELECT 1 FROM target) AS known,
             COALESCE((SELECT refusal FROM recorded),
                      (SELECT refusal FROM payments WHERE payment_id = ${payment.paymentId})) AS refusal`,
  );
  const { known, refusal } = rows[0]!;
  return known ? { known, refusal } : { known };
}

/**
 * The one rule of whose money pays an order, over the order's row (`currency`, `customer_id`,
 * `provider_payment_id`) as SQL: null when the payment may pay it, else why not.
 * - WRONG_CURRENCY: not in the order's currency (CURRENCY for an order placed before it was stored).
 * - WRONG_MODE: taken in the other mode than the configured key's (test money under a live key).
 * - FOREIGN_ACCOUNT: on a Connect account other than the configured one (none: the platform's own).
 * - NOT_THE_ORDERS_PAYMENT: the order recorded its payment at the provider and this is another; or
 *   it recorded none (a callback-only provider, or a payment made but never kept) and this one's
 *   metadata names another customer. The recorded payment is the one whose client secret reached
 *   the customer: any other that names the order (another order's, one made by hand) is not how
 *   this order was paid, even when it names the same customer.
 */
function ownMoneyRefusal(payment: VerifiedPayment, account: PaymentAccount): Prisma.Sql {
  const currency = payment.currency ?? null;
  const livemode = payment.livemode ?? null;
  const customerId = payment.customerId ?? null;
  const reason = (r: RefundReason) => Prisma.sql`${r}::"RefundReason"`;
  const foreignAccount =
    payment.connectAccount === undefined
      ? Prisma.sql`false`
      : Prisma.sql`${payment.connectAccount}::text IS DISTINCT FROM ${account.connectAccount}::text`;
  return Prisma.sql`
    CASE
      WHEN ${currency}::text IS NOT NULL AND ${currency}::text <> COALESCE(currency, ${account.currency}::text)
        THEN ${reason('WRONG_CURRENCY')}
      WHEN ${livemode}::boolean IS NOT NULL AND ${livemode}::boolean <> ${account.livemode}::boolean
        THEN ${reason('WRONG_MODE')}
      WHEN ${foreignAccount} THEN ${reason('FOREIGN_ACCOUNT')}
      WHEN provider_payment_id IS NOT NULL AND provider_payment_id <> ${payment.paymentId}::text
        THEN ${reason('NOT_THE_ORDERS_PAYMENT')}
      WHEN provider_payment_id IS NULL AND ${customerId}::text IS NOT NULL AND ${customerId}::text <> customer_id
        THEN ${reason('NOT_THE_ORDERS_PAYMENT')}
    END`;
}
