import type { Client } from '@temporalio/client';
import { Router } from 'express';
import type { Db } from '../../lib/db.js';
import { latePaymentWorkflowId, orderWorkflowId, retryRefundUpdate } from '../../domain/messages.js';
import { requireAdmin } from '../auth.js';
import { businessError, parseInput } from '../errors.js';
import { RetryRefundParams } from '../schemas.js';
import { businessCodeOf, isWorkflowGone } from '../temporal-errors.js';

export function refundsRouter({ db, temporal, adminToken }: { db: Db; temporal: Client; adminToken: string }): Router {
  const router = Router();

  /**
   * An operator re-drives a refund the provider rejected for good (REFUND_FAILED) once the cause is
   * fixed. The run that settled the payment holds it until then: the order's own workflow, or, for
   * a payment that came after the order's lifecycle ended, its SettleLatePayment run.
   */
  router.post('/orders/:id/payments/:paymentId/refund/retry', requireAdmin(adminToken), async (req, res) => {
    const { id, paymentId } = parseInput(RetryRefundParams, req.params);
    const payment = await db.payment.findUnique({ where: { paymentId }, select: { orderId: true, status: true } });
    if (payment?.orderId !== id) throw businessError('UNKNOWN_PAYMENT');
    if (payment.status !== 'REFUND_FAILED')
      throw businessError('REFUND_NOT_FAILED', { paymentId, status: payment.status });
    for (const workflowId of [orderWorkflowId(id), latePaymentWorkflowId(paymentId)]) {
      try {
        res
          .status(202)
          .json(
            await temporal.workflow.getHandle(workflowId).executeUpdate(retryRefundUpdate, { args: [{ paymentId }] }),
          );
        return;
      } catch (err) {
        if (!isWorkflowGone(err) && businessCodeOf(err) !== 'REFUND_NOT_FAILED') throw err;
      }
    }
    // Only a run ended from outside (terminated) leaves a rejected refund without a holder.
    throw businessError('REFUND_NOT_FAILED', { paymentId, status: payment.status, heldBy: null });
  });

  return router;
}
