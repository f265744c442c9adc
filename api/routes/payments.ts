import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
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
import type { Handler } from '../endpoint.js';
import { businessError } from '../errors.js';
import type { PaymentAccepted } from '../responses.js';
import type { PaymentCallbackBody } from '../schemas.js';
import { isWorkflowGone } from '../temporal-errors.js';

export interface PaymentDeps {
  db: Db;
  temporal: Client;
  taskQueue: string;
  logger: Logger;
  metrics: ApiMetrics;
  /** The arrival clock; unset: the database's now(), the clock every deadline guard uses (tests pass the test server's). */
  clock?: (() => Promise<Date>) | undefined;
}

/** The payment provider's webhook; its signature was checked on the raw body before it was parsed. */
export const acceptPayment: Handler<
  { body: typeof PaymentCallbackBody },
  'paymentProvider',
  PaymentDeps,
  typeof PaymentAccepted
> = async ({ body: callback }, deps) => {
  const [order] = await deps.db.$queryRaw<
    Array<{ now: Date }>
  >`SELECT now() AS now FROM orders WHERE id = ${callback.orderId}::uuid`;
  if (!order) throw businessError('UNKNOWN_ORDER');
  const receivedAt = deps.clock ? await deps.clock() : order.now;
  const notice: PaymentNotice = { ...callback, receivedAt: receivedAt.toISOString() };

  await handOver(deps, notice);
  deps.metrics.paymentsAccepted.inc();
  deps.logger.info(
    { orderId: notice.orderId, paymentId: notice.paymentId, workflowId: orderWorkflowId(notice.orderId) },
    'payment accepted',
  );
  return { accepted: true, paymentId: notice.paymentId };
};

/**
 * Resolves once the payment is durably with Temporal: as a signal to the order's workflow, or,
 * when that workflow has ended, as a workflow of its own that refunds it. 202 means exactly that.
 * Every other failure of Temporal's is a 500, and the provider redelivers.
 */
async function handOver({ temporal, taskQueue }: PaymentDeps, notice: PaymentNotice): Promise<void> {
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
