import type { Client } from '@temporalio/client';
import { startLateSettlement } from '../../handover/payment-handover.js';
import { reopenRefund } from '../../store/refund-reopening.js';
import { anyRunning } from '../../handover/workflow-runs.js';
import type { Db } from '../../lib/db.js';
import {
  failedRefundWorkflowId,
  latePaymentWorkflowId,
  orderWorkflowId,
  retryRefundUpdate,
} from '../../domain/messages.js';
import type { ApiHandler } from '../endpoint-table.js';
import { ApiError, businessError } from '../errors.js';
import { callTemporal } from '../temporal-errors.js';

/**
 * An operator re-drives a refund the provider rejected for good (REFUND_FAILED) once the cause is
 * fixed. The run that settled the payment holds it until then: the order's own workflow, or, for
 * a payment that came after the order's lifecycle ended, its SettleLatePayment run, or, for a
 * refund that failed after the provider accepted it, its SettleFailedRefund run. When none of them
 * is running (the holder was terminated, or lost with a namespace), the refund is owed again by a
 * guarded statement and handed to a new late settlement, as the sweep does with a refund owed
 * whose run was lost.
 */
export const retryRefund: ApiHandler<'retryRefund', { db: Db; temporal: Client; taskQueue: string }> = async (
  { params: { id, paymentId } },
  { db, temporal, taskQueue },
) => {
  const payment = await db.payment.findUnique({
    where: { paymentId },
    select: { orderId: true, status: true, amountCents: true },
  });
  if (payment?.orderId !== id) throw businessError('UNKNOWN_PAYMENT');
  if (payment.status !== 'REFUND_FAILED')
    throw businessError('REFUND_NOT_FAILED', { paymentId, status: payment.status });
  const mayHoldIt = [orderWorkflowId(id), latePaymentWorkflowId(paymentId), failedRefundWorkflowId(paymentId)];
  for (const workflowId of mayHoldIt) {
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
  // Only a run ended from outside (terminated) leaves a rejected refund without a holder. A run of
  // this payment's own still running may be about to take it (a failed refund's run waiting on the
  // refund in flight): left to it. An order's run that does not hold it (one that adopted the order
  // after its first was lost) never will.
  const settlers = [latePaymentWorkflowId(paymentId), failedRefundWorkflowId(paymentId)];
  if (await callTemporal(() => anyRunning(temporal, settlers)))
    throw businessError('REFUND_NOT_FAILED', { paymentId, status: payment.status, heldBy: null });
  // The guarded statement lets one retry through; it starts a settlement, whatever ran before.
  if (!(await reopenRefund(db.pool, paymentId))) throw businessError('REFUND_NOT_FAILED', { paymentId });
  // Should this fail, the sweep hands the refund owed over on its next pass.
  await callTemporal(() =>
    startLateSettlement(
      temporal,
      taskQueue,
      { paymentId, orderId: id, amountCents: payment.amountCents },
      'ALLOW_DUPLICATE',
    ),
  );
  return { paymentId, status: 'REFUND_PENDING' };
};
