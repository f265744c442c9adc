import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import type { ProviderEvent, ProviderPayment } from '../adapters/ports/payment-provider.js';
import {
  FAILED_REFUND_WORKFLOW_TYPE,
  failedRefundWorkflowId,
  orderWorkflowId,
  refundFailedSignal,
  type RefundFailure,
} from '../domain/messages.js';
import { MAX_ORDER_TOTAL_CENTS } from '../domain/order-total.js';
import type { PaymentAccount } from '../lib/config/third-parties.js';
import type { Db } from '../lib/db.js';
import { recordReceivedPayment, type VerifiedPayment } from '../store/received-payments.js';
import { recordUnclaimedPayment } from '../store/unclaimed-payments.js';
import { handOverPayment, handOverPaymentFailure } from './payment-handover.js';

/**
 * What a trusted provider event needs, wherever it came from: the webhook (its signature checked)
 * or the provider sweep (listed with the secret key).
 */
export interface IntakeDeps {
  db: Db;
  temporal: Client;
  taskQueue: string;
  logger: IntakeLog;
  /** Whose money pays an order (lib/config/third-parties.ts paymentAccount): any other is refunded. */
  paymentAccount: PaymentAccount;
  /** How long money taken for no order of ours is held before it is refunded (UNCLAIMED_REFUND_GRACE). */
  unclaimedRefundGraceMs: number;
  /**
   * Counts the payments handed to Temporal (the API's callback counter) and the unclaimed payments
   * recorded (unclaimed_payments_recorded_total); none: not counted.
   */
  metrics?: { paymentsAccepted?: { inc(): void }; unclaimedPayments?: { inc(): void } };
  /** The arrival clock; unset: the database's now(), the clock every deadline guard uses (tests pass the test server's). */
  clock?: (() => Promise<Date>) | undefined;
}

/** pino's call shape, which the activities' logger is adapted to. */
export interface IntakeLog {
  info(context: object, message: string): void;
  warn(context: object, message: string): void;
}

export type EventOutcome =
  'PAYMENT_ACCEPTED' | 'UNCLAIMED_RECORDED' | 'REFUND_FAILURE_ACCEPTED' | 'PAYMENT_FAILURE_ACCEPTED' | 'IGNORED';

/**
 * The webhook's own path for a provider event: a succeeded payment is recorded and handed over
 * (acceptSucceededPayment), its order's run paying it only if it is the order's own money; money
 * for no order of ours is recorded as unclaimed. A failed refund goes to a run that holds the
 * refund owed again (acceptRefundFailure); a failed payment (a debit that bounced) tells the
 * order's run, which asks the provider at once (handOverPaymentFailure). Anything else is IGNORED,
 * logged: an event of another type; no delivery of it again could change that. Feeding the same
 * event twice has one effect: the first record stays, and Temporal's side drops the second
 * notice. Throws only when the hand-over failed, for the caller to try again.
 */
export async function acceptProviderEvent(deps: IntakeDeps, event: ProviderEvent): Promise<EventOutcome> {
  const ignored = (level: 'info' | 'warn', why: string, context: object = {}) => {
    deps.logger[level]({ eventId: event.eventId, eventType: event.type, ...context }, `provider event ignored: ${why}`);
    return 'IGNORED' as const;
  };
  if (event.type === 'refund.failed') {
    const { refund } = event;
    const context = { paymentId: refund.paymentId, refundRef: refund.refundRef };
    if (!(await acceptRefundFailure(deps, refund))) return ignored('warn', 'a refund of no payment of ours', context);
    return 'REFUND_FAILURE_ACCEPTED';
  }
  if (event.type === 'payment_intent.payment_failed' && event.payment.orderId !== undefined) {
    const notice = { paymentId: event.payment.paymentId, orderId: event.payment.orderId };
    if (!(await handOverPaymentFailure(deps.temporal, notice))) return ignored('info', 'no run waits on the order');
    return 'PAYMENT_FAILURE_ACCEPTED';
  }
  if (event.type !== 'payment_intent.succeeded') return ignored('info', 'no payment to hand over');

  const { paidAt } = event.payment;
  if (paidAt === undefined) return ignored('warn', 'a succeeded payment without its time of payment');
  return acceptSucceededPayment(deps, { ...event.payment, paidAt });
}

/**
 * A succeeded payment as the provider reports it: the order it names takes it
 * (acceptVerifiedPayment), and the order's run pays or refunds it. Money that names no order of
 * ours (no order, an id that is not one, or an order we do not have) is recorded as unclaimed,
 * counted, and refunded once its grace has passed (store/unclaimed-payments.ts). Fed again, either
 * has one effect.
 */
export async function acceptSucceededPayment(
  deps: IntakeDeps,
  payment: ProviderPayment & { paidAt: string },
): Promise<'PAYMENT_ACCEPTED' | 'UNCLAIMED_RECORDED'> {
  const named = verifiedPayment(payment);
  if (named && (await acceptVerifiedPayment(deps, named))) return 'PAYMENT_ACCEPTED';
  const { paymentId, orderId, amountCents, currency, livemode, connectAccount } = payment;
  const arrivedAt = deps.clock ? await deps.clock() : null;
  const unclaimed = { paymentId, namedOrder: orderId, amountCents, currency, livemode, connectAccount };
  if (await recordUnclaimedPayment(deps.db.pool, unclaimed, deps.unclaimedRefundGraceMs, arrivedAt)) {
    deps.metrics?.unclaimedPayments?.inc();
    deps.logger.warn(
      { paymentId, namedOrder: orderId ?? null, amountCents, currency },
      'money taken for no order of ours: recorded, refunded after its grace (GET /payments/unclaimed)',
    );
  }
  return 'UNCLAIMED_RECORDED';
}

/**
 * What every webhook does with a payment its signature vouches for, once: it is recorded first
 * (store/received-payments.ts), since what settles it is that record, so the hand-over to Temporal
 * names the payment and carries nothing to trust. Resolves true once the payment is durably with
 * Temporal; false, having changed nothing, when no such order exists. A redelivery does it again
 * with one effect: the first record stays, and Temporal's side drops the second notice.
 */
export async function acceptVerifiedPayment(deps: IntakeDeps, payment: VerifiedPayment): Promise<boolean> {
  const arrivedAt = deps.clock ? await deps.clock() : null;
  const recorded = await recordReceivedPayment(deps.db.pool, payment, arrivedAt, deps.paymentAccount);
  if (!recorded.known) return false;
  if (recorded.refusal !== null)
    deps.logger.warn(
      { orderId: payment.orderId, paymentId: payment.paymentId, refusal: recorded.refusal },
      "payment refused: not the order's own money, it will be refunded",
    );

  // Once durably with Temporal the webhook succeeds; any other failure is a 500, and the provider redelivers.
  await handOverPayment(deps.temporal, deps.taskQueue, payment);
  deps.metrics?.paymentsAccepted?.inc();
  deps.logger.info(
    { orderId: payment.orderId, paymentId: payment.paymentId, workflowId: orderWorkflowId(payment.orderId) },
    'payment accepted',
  );
  return true;
}

/**
 * A refund the provider failed after accepting it (Stripe's `refund.failed`), handed to the
 * payment's SettleFailedRefund run, which lets the database decide whether it still applies and
 * holds the money owed for an operator. Resolves true once Temporal has it (a redelivery hands it
 * over again, to no new effect); false, having changed nothing, for a payment that is none of ours.
 */
export async function acceptRefundFailure(
  { db, temporal, taskQueue, logger }: Pick<IntakeDeps, 'db' | 'temporal' | 'taskQueue' | 'logger'>,
  refund: Omit<RefundFailure, 'orderId'>,
): Promise<boolean> {
  const payment = await db.payment.findUnique({ where: { paymentId: refund.paymentId }, select: { orderId: true } });
  if (!payment) return false;
  const failure: RefundFailure = { orderId: payment.orderId, ...refund };
  const workflowId = failedRefundWorkflowId(refund.paymentId);
  try {
    await temporal.workflow.signalWithStart(FAILED_REFUND_WORKFLOW_TYPE, {
      workflowId,
      taskQueue,
      args: [{ orderId: failure.orderId, paymentId: failure.paymentId }],
      signal: refundFailedSignal,
      signalArgs: [failure],
      staticSummary: `Refund ${refund.refundRef} of payment ${refund.paymentId} for order ${failure.orderId} failed: owed again`,
    });
  } catch (err) {
    // Two deliveries raced to start the run, and a server may answer the loser so (the time-skipping
    // test server does): the run is there now, so the signal goes to it.
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    await temporal.workflow.getHandle(workflowId).signal(refundFailedSignal, failure);
  }
  logger.warn({ ...failure }, 'a refund failed after the provider accepted it: handed over to be held for an operator');
  return true;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** The longest payment id the generic callback takes (api/schemas.ts). */
const MAX_PAYMENT_ID_LENGTH = 128;

/**
 * The generic callback's limits on a provider's payment: an order's id, an id the payments table
 * takes, and at most the largest total an order may have. undefined: no order of ours can take it.
 */
function verifiedPayment(payment: ProviderPayment): VerifiedPayment | undefined {
  const { paymentId, orderId, amountCents, paidAt, currency, livemode, connectAccount, customerId } = payment;
  if (orderId === undefined || !UUID.test(orderId) || paidAt === undefined) return undefined;
  if (paymentId.length === 0 || paymentId.length > MAX_PAYMENT_ID_LENGTH) return undefined;
  if (!Number.isInteger(amountCents) || amountCents < 0 || amountCents > MAX_ORDER_TOTAL_CENTS) return undefined;
  return {
    paymentId,
    orderId: orderId.toLowerCase(),
    amountCents,
    paidAt,
    currency,
    livemode,
    connectAccount,
    customerId,
  };
}
