import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError, type Client } from '@temporalio/client';
import {
  LATE_PAYMENT_WORKFLOW_TYPE,
  latePaymentWorkflowId,
  orderWorkflowId,
  paidSignal,
  paymentFailedSignal,
  type PaymentNotice,
} from '../domain/messages.js';

/**
 * Hands a recorded payment to Temporal; resolves once it is durably there: as a signal to the
 * order's workflow, or, when that workflow has ended, as a workflow of its own that settles it (a
 * refund, unless it is the order's payment already captured). The webhooks call it after recording
 * the payment, and the reconciliation sweep for a payment recorded whose hand-over never succeeded.
 * Done twice, it has one effect: the order's run drops a notice it has had, and the settlement's
 * id is the payment's (`settlement-exists`: one is running, or has run). Any other failure of
 * Temporal's is thrown, for the caller to try again.
 */
export async function handOverPayment(
  temporal: Client,
  taskQueue: string,
  payment: PaymentNotice & { amountCents: number },
): Promise<'signalled' | 'started' | 'settlement-exists'> {
  const notice: PaymentNotice = { paymentId: payment.paymentId, orderId: payment.orderId };
  try {
    await temporal.workflow.getHandle(orderWorkflowId(notice.orderId)).signal(paidSignal, notice);
    return 'signalled';
  } catch (err) {
    // Signalling a workflow that has already completed raises WorkflowNotFoundError.
    if (!(err instanceof WorkflowNotFoundError)) throw err;
  }
  // A redelivery of the same paymentId never starts a second settlement beside or after one that
  // completed; after one that failed or was terminated it may, since a settlement decides only a
  // payment still RECEIVED, and a refund owed (REFUND_PENDING) is made once at the provider.
  return startLateSettlement(temporal, taskQueue, payment, 'ALLOW_DUPLICATE_FAILED_ONLY');
}

/**
 * Starts the payment's SettleLatePayment run (`late-payment-<paymentId>`), unless one is running;
 * `reuse` says whether one that completed before lets another start.
 */
export async function startLateSettlement(
  temporal: Client,
  taskQueue: string,
  payment: PaymentNotice & { amountCents: number },
  reuse: 'ALLOW_DUPLICATE_FAILED_ONLY' | 'ALLOW_DUPLICATE',
): Promise<'started' | 'settlement-exists'> {
  const notice: PaymentNotice = { paymentId: payment.paymentId, orderId: payment.orderId };
  try {
    await temporal.workflow.start(LATE_PAYMENT_WORKFLOW_TYPE, {
      workflowId: latePaymentWorkflowId(notice.paymentId),
      taskQueue,
      args: [notice] satisfies [PaymentNotice],
      workflowIdReusePolicy: reuse,
      staticSummary: `Late payment ${notice.paymentId} (${payment.amountCents} cents) for order ${notice.orderId}: to be refunded`,
    });
    return 'started';
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    return 'settlement-exists';
  }
}

/**
 * The provider's word that an order's payment failed (a debit that bounced), passed to the order's
 * run, which then asks the provider at once. False when the order has no running run: nothing waits
 * on it, and a run that starts later asks the provider itself.
 */
export async function handOverPaymentFailure(temporal: Client, notice: PaymentNotice): Promise<boolean> {
  try {
    await temporal.workflow.getHandle(orderWorkflowId(notice.orderId)).signal(paymentFailedSignal, notice);
    return true;
  } catch (err) {
    if (!(err instanceof WorkflowNotFoundError)) throw err;
    return false;
  }
}
