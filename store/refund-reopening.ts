import { Prisma } from '@prisma/client';
import { PAYMENT_TRANSITIONS } from '../domain/statuses.js';
import { query, type Queryable } from '../lib/sql.js';
import { statusMove } from './guarded-sql.js';

/**
 * A refund the provider rejected, owed again (REFUND_FAILED → REFUND_PENDING): the guarded
 * statement an operator's retry runs, in the run that holds it or, when none does, before it is
 * handed to a new settlement. True only for the call that moved it.
 */
export async function reopenRefund(db: Queryable, paymentId: string): Promise<boolean> {
  const retry = statusMove('payments', PAYMENT_TRANSITIONS.retryRefund);
  const { rowCount } = await query(
    db,
    Prisma.sql`UPDATE payments SET ${retry.set} WHERE payment_id = ${paymentId} AND ${retry.guard}`,
  );
  return rowCount === 1;
}
