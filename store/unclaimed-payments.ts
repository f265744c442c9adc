import { Prisma } from '@prisma/client';
import { statusValue } from './guarded-sql.js';
import type { PaymentOrigin } from '../domain/payment-origin.js';
import { INITIAL_STATUS } from '../domain/statuses.js';
import { query, type Queryable } from '../lib/sql.js';

/** Money the provider took, as its signature vouches for it, for no order of ours. */
export interface UnclaimedPayment extends Omit<PaymentOrigin, 'customerId'> {
  paymentId: string;
  /** The order its metadata names, as it is (not a valid id, or none we have); undefined: it names none. */
  namedOrder: string | undefined;
  amountCents: number;
}

/**
 * Records money taken for no order of ours: HELD until `graceMs` after it arrived (an operator may
 * look meanwhile: GET /admin/unclaimed-payments), then the reconciliation sweep refunds it
 * (activities/unclaimed-payments.ts). True when this call recorded it; false for a redelivery,
 * which keeps the first record.
 */
export async function recordUnclaimedPayment(
  on: Queryable,
  payment: UnclaimedPayment,
  graceMs: number,
  arrivedAt: Date | null,
): Promise<boolean> {
  const { rowCount } = await query(
    on,
    Prisma.sql`
      INSERT INTO unclaimed_payments (payment_id, named_order, amount_cents, currency, livemode, connect_account,
                                      status, received_at, refund_due_at)
      SELECT ${payment.paymentId}, ${payment.namedOrder ?? null}, ${payment.amountCents}, ${payment.currency},
             ${payment.livemode}, ${payment.connectAccount}, ${statusValue('unclaimed_payments', INITIAL_STATUS.unclaimed)},
             arrived, arrived + ${graceMs} * interval '1 millisecond'
      FROM (SELECT COALESCE(${arrivedAt}::timestamptz, now()) AS arrived) AS a
      ON CONFLICT (payment_id) DO NOTHING`,
  );
  return rowCount === 1;
}
