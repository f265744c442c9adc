import { Prisma } from '@prisma/client';
import { log } from '@temporalio/activity';
import { THIRD_PARTY_FAILURES } from '../domain/errors.js';
import { INITIAL_STATUS, UNCLAIMED_TRANSITIONS } from '../domain/statuses.js';
import { query } from '../lib/sql.js';
import type { ActivityDeps } from './deps.js';
import { nowOr, statusIn, statusMove } from '../store/guarded-sql.js';

/** Unclaimed payments refunded per sweep: each is one call to the provider, inside the sweep's 10 s. */
export const UNCLAIMED_REFUND_LIMIT = 10;

export interface UnclaimedRefunds {
  /** Refunded by this sweep. */
  unclaimedRefunded: string[];
  /** Refused by the provider for good: REFUND_FAILED, listed for an operator. */
  unclaimedRefundFailed: string[];
}

/**
 * Refunds the unclaimed payments (store/unclaimed-payments.ts) whose grace has passed, oldest due
 * first. The provider refunds a paymentId at most once, so a sweep that ran out of time and is
 * retried refunds none twice. An unavailable provider leaves the payment HELD for the next sweep;
 * one that refuses makes it REFUND_FAILED, listed for an operator (GET /admin/unclaimed-payments).
 */
export async function refundDueUnclaimedPayments(
  { db, paymentProvider }: ActivityDeps,
  now: Date | null,
  inTime: () => boolean,
): Promise<UnclaimedRefunds> {
  const { rows } = await query<{ payment_id: string; amount_cents: number }>(
    db.pool,
    Prisma.sql`
      SELECT payment_id, amount_cents FROM unclaimed_payments
      WHERE ${statusIn('unclaimed_payments', [INITIAL_STATUS.unclaimed])} AND refund_due_at <= ${nowOr(now)}
      ORDER BY refund_due_at, payment_id
      LIMIT ${UNCLAIMED_REFUND_LIMIT}`,
  );
  const result: UnclaimedRefunds = { unclaimedRefunded: [], unclaimedRefundFailed: [] };
  const refund = statusMove('unclaimed_payments', UNCLAIMED_TRANSITIONS.refund);
  const fail = statusMove('unclaimed_payments', UNCLAIMED_TRANSITIONS.failRefund);
  for (const { payment_id: paymentId, amount_cents: amountCents } of rows) {
    if (!inTime()) break;
    try {
      const { refundRef } = await paymentProvider.refund({ paymentId, amountCents });
      await query(
        db.pool,
        Prisma.sql`
          UPDATE unclaimed_payments SET ${refund.set}, refund_ref = ${refundRef}, refunded_at = now()
          WHERE payment_id = ${paymentId} AND ${refund.guard}`,
      );
      result.unclaimedRefunded.push(paymentId);
    } catch (err) {
      const type = (err as { type?: unknown } | null)?.type;
      if (type === THIRD_PARTY_FAILURES.unavailable) {
        log.warn('unclaimed payment not refunded: the provider is unavailable; the next sweep tries again', {
          paymentId,
        });
        break;
      }
      if (type !== THIRD_PARTY_FAILURES.rejected) throw err;
      await query(
        db.pool,
        Prisma.sql`
          UPDATE unclaimed_payments SET ${fail.set}, refund_error = ${(err as Error).message}
          WHERE payment_id = ${paymentId} AND ${fail.guard}`,
      );
      result.unclaimedRefundFailed.push(paymentId);
    }
  }
  if (result.unclaimedRefunded.length > 0)
    log.info('unclaimed payments refunded after their grace', { paymentIds: result.unclaimedRefunded });
  if (result.unclaimedRefundFailed.length > 0)
    log.error('the provider refused to refund unclaimed payments: an operator must', {
      paymentIds: result.unclaimedRefundFailed,
    });
  return result;
}
