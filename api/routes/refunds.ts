import type { Client } from '@temporalio/client';
import type { Db } from '../../lib/db.js';
import { latePaymentWorkflowId, orderWorkflowId, retryRefundUpdate } from '../../domain/messages.js';
import type { Handler } from '../endpoint.js';
import { ApiError, businessError } from '../errors.js';
import type { RefundRetried } from '../responses.js';
import type { RetryRefundParams } from '../schemas.js';
import { callTemporal } from '../temporal-errors.js';

/**
 * An operator re-drives a refund the provider rejected for good (REFUND_FAILED) once the cause is
 * fixed. The run that settled the payment holds it until then: the order's own workflow, or, for
 * a payment that came after the order's lifecycle ended, its SettleLatePayment run.
 */
export const retryRefund: Handler<
  { params: typeof RetryRefundParams },
  'operator',
  { db: Db; temporal: Client },
  typeof RefundRetried
> = async ({ params: { id, paymentId } }, { db, temporal }) => {
  const payment = await db.payment.findUnique({ where: { paymentId }, select: { orderId: true, status: true } });
  if (payment?.orderId !== id) throw businessError('UNKNOWN_PAYMENT');
  if (payment.status !== 'REFUND_FAILED')
    throw businessError('REFUND_NOT_FAILED', { paymentId, status: payment.status });
  for (const workflowId of [orderWorkflowId(id), latePaymentWorkflowId(paymentId)]) {
    try {
      return await callTemporal(
        () => temporal.workflow.getHandle(workflowId).executeUpdate(retryRefundUpdate, { args: [{ paymentId }] }),
        { whenGone: 'REFUND_NOT_FAILED' },
      );
    } catch (err) {
      // Not held by this run: ask the other one.
      if (!(err instanceof ApiError && err.code === 'REFUND_NOT_FAILED')) throw err;
    }
  }
  // Only a run ended from outside (terminated) leaves a rejected refund without a holder.
  throw businessError('REFUND_NOT_FAILED', { paymentId, status: payment.status, heldBy: null });
};
