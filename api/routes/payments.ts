import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import express, { Router } from 'express';
import type { Db } from '../../lib/db.js';
import type { Logger } from '../../lib/logger.js';
import type { ApiMetrics } from '../metrics.js';
import {
  LATE_PAYMENT_WORKFLOW_TYPE,
  latePaymentWorkflowId,
  orderWorkflowId,
  paidSignal,
  type PaymentNotice,
} from '../../domain/messages.js';
import type { SettleLatePayment } from '../../workflows/late-payment.js';
import { ApiError, businessError, parseInput } from '../errors.js';
import { PaymentCallbackBody } from '../schemas.js';
import { isWorkflowGone } from '../temporal-errors.js';
import { SIGNATURE_HEADER, TIMESTAMP_HEADER, verifySignature } from '../webhook-signature.js';

export interface PaymentRouteDeps {
  db: Db;
  temporal: Client;
  taskQueue: string;
  webhookSecret: string;
  logger: Logger;
  metrics: ApiMetrics;
  /** The arrival clock; unset: the database's now(), the clock every deadline guard uses (tests pass the test server's). */
  clock?: (() => Promise<Date>) | undefined;
}

export function paymentsRouter({
  db,
  temporal,
  taskQueue,
  webhookSecret,
  logger,
  metrics,
  clock,
}: PaymentRouteDeps): Router {
  const router = Router();

  // The signature covers the exact bytes sent, so the body is read raw and parsed only once verified.
  router.post('/payments/callback', express.raw({ type: () => true, limit: '16kb' }), async (req, res) => {
    const rawBody = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    const signed = verifySignature(
      webhookSecret,
      { timestamp: req.get(TIMESTAMP_HEADER), signature: req.get(SIGNATURE_HEADER) },
      rawBody,
      Date.now(),
    );
    if (!signed) throw new ApiError('INVALID_SIGNATURE');

    let json: unknown;
    try {
      json = JSON.parse(rawBody.toString('utf8'));
    } catch {
      throw new ApiError('VALIDATION_FAILED', 'the request body is not valid JSON');
    }
    const callback = parseInput(PaymentCallbackBody, json);
    const [order] = await db.$queryRaw<
      Array<{ now: Date }>
    >`SELECT now() AS now FROM orders WHERE id = ${callback.orderId}::uuid`;
    if (!order) throw businessError('UNKNOWN_ORDER');
    const receivedAt = clock ? await clock() : order.now;
    const notice: PaymentNotice = { ...callback, receivedAt: receivedAt.toISOString() };

    await handOver(notice);
    metrics.paymentsAccepted.inc();
    logger.info(
      { orderId: notice.orderId, paymentId: notice.paymentId, workflowId: orderWorkflowId(notice.orderId) },
      'payment accepted',
    );
    res.status(202).json({ accepted: true, paymentId: notice.paymentId });
  });

  /**
   * Resolves once the payment is durably with Temporal: as a signal to the order's workflow, or,
   * when that workflow has ended, as a workflow of its own that refunds it. 202 means exactly that.
   */
  async function handOver(notice: PaymentNotice): Promise<void> {
    try {
      await temporal.workflow.getHandle(orderWorkflowId(notice.orderId)).signal(paidSignal, notice);
      return;
    } catch (err) {
      if (!isWorkflowGone(err)) throw err;
    }
    try {
      await temporal.workflow.start<typeof SettleLatePayment>(LATE_PAYMENT_WORKFLOW_TYPE, {
        workflowId: latePaymentWorkflowId(notice.paymentId),
        taskQueue,
        args: [notice],
        // A redelivery of the same paymentId must not start a second settlement, ever.
        workflowIdReusePolicy: 'REJECT_DUPLICATE',
        staticSummary: `Late payment ${notice.paymentId} (${notice.amountCents} cents) for order ${notice.orderId}: to be refunded`,
      });
    } catch (err) {
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    }
  }

  return router;
}
