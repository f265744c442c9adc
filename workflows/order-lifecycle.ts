import { allHandlersFinished, CancellationScope, condition, log, workflowInfo } from '@temporalio/workflow';
import type { OrderLifecycleInput, OrderOutcome } from '../domain/messages.js';
import type { CancelReason, OrderStatus } from '../domain/statuses.js';
import { database } from './activity-proxies.js';
import { notifyCustomer } from './notices.js';
import { registerOrderHandlers } from './order-handlers.js';
import { OrderRun, type Wake } from './order-run.js';
import {
  closeAfterCancel,
  closePaymentFirst,
  createPaymentMeanwhile,
  forgetRefusedCreation,
  type PaymentCreation,
} from './payment-closing.js';

/** If the timer fired but the database clock says "not yet" (clock skew), look again this soon. */
const NOT_DUE_RECHECK_MS = 100;

/**
 * One order, from placement to a final state. It waits for payment until the deadline on a
 * durable timer; at the deadline the payment is closed at the provider first (where the provider
 * can cancel one), then the database decides whether the payment or the deadline won; the loser's
 * side is never acted on. A cancelled order tells the customer (its stock and coupon went back in
 * the cancel's own statement); a paid one is fulfilled.
 *
 * The rule that keeps accepted money safe: every `paid` signal the run accepted is settled by its
 * own handler — captured, refunded, or held as REFUND_FAILED for an operator — and the run ends,
 * on every path, only once no handler is running. Calls retry through our own outages
 * (workflows/keep-trying.ts), so an outage delays a run but cannot fail it. A run that waits long
 * continues as new (workflows/continue-as-new.ts) and the next run adopts the order from the
 * database, as a run the reconciliation sweep starts does.
 */
export async function OrderLifecycle({
  orderId,
  adopt = false,
  continued,
}: OrderLifecycleInput): Promise<OrderOutcome> {
  const run = new OrderRun(orderId, continued);
  registerOrderHandlers(run);

  if (!(await placedOrAdopted(run, adopt))) {
    run.rejected();
    return end(run);
  }
  // The previous run was closing the payment for the customer's cancel: this one goes on with it.
  if (continued?.closing?.reason === 'CUSTOMER') run.wakeUp('cancel-requested');
  // A placement retried with its Idempotency-Key after the order's run ended starts a run that
  // finds the order decided: the answer is the order as it stands. A cancelled one has nothing left
  // to do; a paid one goes on below from its recorded steps, as an adopted one.
  if (!adopt && run.status === 'CANCELLED') return end(run);
  // Paid in an earlier run, or while it had none: its fulfillment goes on from its recorded steps
  // (none runs again when all are DONE).
  const paidBefore = run.status === 'PAID';
  try {
    const { paymentLeftOpen } = await awaitPaymentOrDeadline(run);
    if (run.status === 'CANCELLED') {
      // Cancelled without the provider closing the payment: it is closed after the notice, so that
      // nobody pays it. Marked first, so a run that continues as new meanwhile hands it on.
      if (paymentLeftOpen) run.closingAfterCancel = { since: Date.now() };
      await compensate(run); // one message per order, even when a continued run asks again
      if (run.closingAfterCancel) await closeAfterCancel(run);
    } else await fulfil(run, paidBefore);
  } catch (err) {
    // Failing (a cancellation by an operator, a bug) still settles what the run accepted first.
    await CancellationScope.nonCancellable(() => condition(allHandlersFinished));
    throw err;
  }
  return end(run);
}

/**
 * The order is written by the placeOrder update that update-with-start delivers with the start,
 * in the same first task, so no timer guards against it never coming. An adopting run
 * (reconciliation found the order without a running workflow) reads it instead.
 */
async function placedOrAdopted(run: OrderRun, adopt: boolean): Promise<boolean> {
  if (adopt) {
    const existing = await run.keepTrying.mustSucceed(database, 'loadOrder', run.orderId);
    if (existing) run.takeOver(existing);
  } else {
    await condition(() => run.order !== undefined || (run.placementRejected && allHandlersFinished()));
  }
  return run.order !== undefined;
}

/**
 * Until the order is PAID or CANCELLED: wait for payment until the deadline, reminding the customer
 * on the way where reminders are on, then act on what the deadline came to (decideAtDeadline). This
 * loop is the one place the decision changes the run.
 */
async function awaitPaymentOrDeadline(run: OrderRun): Promise<{ paymentLeftOpen: boolean }> {
  // Only while the customer can still pay: an adopted order may be decided already.
  const creating =
    run.status === 'UNPAID' && run.order!.payment === 'PENDING' ? createPaymentMeanwhile(run) : undefined;
  let atLeastMs = 0;
  let paymentLeftOpen = false;
  // An adopted order may be AWAITING_FUNDS already: its deadline is past, so it goes on closing at once.
  while (run.open) {
    run.enter('awaiting-payment');
    const wake = await nextWake(run, atLeastMs);
    atLeastMs = 0;
    // A payment that arrived before the wake is decided before it.
    await condition(() => run.payments.idle);
    if (!run.open || wake === 'deadline-moved') continue;
    if (wake === 'reminder') {
      await remindOfPayment(run);
      continue;
    }
    const reason: CancelReason = wake === 'cancel-requested' ? 'CUSTOMER' : 'PAYMENT_TIMEOUT';
    const decided = await decideAtDeadline(run, reason, creating);
    switch (decided.outcome) {
      case 'PAID':
        break; // the payment's handler set the status
      case 'CANCELLED':
        run.cancelled(decided.reason, decided.customerTold);
        paymentLeftOpen = decided.paymentLeftOpen;
        break;
      case 'ALREADY_FINAL':
        run.settledElsewhere(decided.status);
        break;
      case 'NOT_DUE':
        run.deadlineMoved(decided.expiresAt);
        atLeastMs = NOT_DUE_RECHECK_MS;
        // The customer must be able to pay meanwhile.
        creating?.resume();
        break;
    }
  }
  await creating?.stop(); // decided: nothing left to create
  forgetRefusedCreation(run); // decided: whether the customer could pay no longer matters
  return { paymentLeftOpen };
}

/** What the deadline (or the customer's cancel) came to, in the order's words. */
type DeadlineDecision =
  /** A payment paid the order meanwhile, settled by the run's own handler. */
  | { outcome: 'PAID' }
  /**
   * The guarded cancel won, for `reason`: stock and coupon went back in its statement; `customerTold`
   * in its call. `paymentLeftOpen`: the provider has not closed the payment yet (closeAfterCancel).
   */
  | { outcome: 'CANCELLED'; reason: CancelReason; customerTold: boolean; paymentLeftOpen: boolean }
  /** Not due by the database's clock: the deadline moved (an extension), or our clock ran ahead. */
  | { outcome: 'NOT_DUE'; expiresAt: string }
  /** Decided elsewhere: the database holds the order PAID or CANCELLED already. */
  | { outcome: 'ALREADY_FINAL'; status: OrderStatus };

/**
 * Provider first: where the provider can cancel the order's payment, it is closed there
 * (closePaymentFirst, which waits as long as the provider cannot say), and only once nothing can
 * pay the order any more does the guarded cancel decide between the deadline and a payment.
 */
async function decideAtDeadline(
  run: OrderRun,
  reason: CancelReason,
  creating: PaymentCreation | undefined,
): Promise<DeadlineDecision> {
  let paymentLeftOpen = false;
  if (run.closesAtProvider) {
    // The closing must see every payment the customer can pay: none is being created meanwhile.
    await creating?.stop();
    const closing = await closePaymentFirst(run, reason);
    if (closing.outcome !== 'CLOSED') return closing;
    creating?.abandon();
    // The payment itself decided the order (its funds failed): the cancel says so.
    reason = closing.reason ?? reason;
    paymentLeftOpen = closing.leftOpen ?? false;
  }
  const cancel = await run.keepTrying.mustSucceed(database, 'cancelOrder', { orderId: run.orderId, reason });
  if (cancel.outcome === 'CANCELLED') return { ...cancel, reason, paymentLeftOpen };
  if (cancel.outcome !== 'PAYMENT_RECEIVED') return cancel;
  // The webhook recorded a payment of the order's total before the deadline, whose signal this run
  // has not handled (late, or lost while Temporal restarted): it is settled from that record as the
  // signal would have had it, and pays the order.
  await run.payments.settle({ paymentId: cancel.paymentId, orderId: run.orderId });
  // Its signal may be settling it in another handler meanwhile: that one too.
  await condition(() => run.payments.idle);
  return { outcome: 'PAID' };
}

/**
 * What ends the wait: a message, or the timer of the reminder or, once there is none to send, of
 * the deadline. One timer at a time: an order paid before its reminder never starts the deadline's.
 */
async function nextWake(run: OrderRun, minimumWaitMs: number): Promise<Wake | 'reminder' | 'deadline'> {
  const remindAt = run.remindAt;
  const waitMs = Math.max((remindAt ?? Date.parse(run.expiresAt!)) - Date.now(), minimumWaitMs);
  // condition() with a timeout of 0 would wait forever: a deadline already past is checked at once.
  if (waitMs > 0) await condition(() => run.wake !== undefined, waitMs);
  const wake = run.wake ?? (remindAt === undefined ? 'deadline' : 'reminder');
  run.wake = undefined;
  return wake;
}

/**
 * The customer is reminded that the order is still unpaid: its `order.payment_reminder` event is
 * written, and the email goes out from it. The statement is guarded by the deadline the run timed
 * the reminder for, so a payment, a cancel, the closing or an extension that got there first wins,
 * and nothing is written. A deadline moved without the run's knowing (`POST /orders/extend`) is
 * taken over, and reminded of at its own time if that still lies ahead.
 */
async function remindOfPayment(run: OrderRun): Promise<void> {
  const reminder = { orderId: run.orderId, expiresAt: run.expiresAt! };
  const answer = await run.keepTrying.mustSucceed(database, 'remindOfPayment', reminder);
  if (answer.outcome === 'REMINDED') run.reminded();
  else if (answer.outcome === 'DEADLINE_MOVED') run.deadlineMoved(answer.expiresAt);
}

/**
 * Only the winner of the guarded cancel gets here (or a run that found its own cancel done): the
 * customer is told, unless the cancel did so in the same call. The notice is idempotent, so a
 * re-run repairs, never repeats.
 */
async function compensate(run: OrderRun): Promise<void> {
  if (run.customerToldOfCancel) return;
  run.enter('compensating');
  await notifyCustomer({ orderId: run.orderId, template: 'ORDER_CANCELLED' }, run.keepTrying, run.attention);
}

/** Invoice, notification and loyalty points, each on its own; further payments (a double payment) are refunded meanwhile by their handlers. */
async function fulfil(run: OrderRun, fromRecord: boolean): Promise<void> {
  run.enter('fulfilling');
  if (fromRecord) {
    const recorded = await run.keepTrying.mustSucceed(database, 'loadFulfillment', run.orderId);
    run.fulfillment.resume(recorded);
  }
  await run.fulfillment.run();
}

/** The only way out: once no handler runs, every payment the run accepted is settled. */
async function end(run: OrderRun): Promise<OrderOutcome> {
  run.enter('ending');
  await condition(allHandlersFinished);
  log.info('order lifecycle finished', {
    orderId: run.orderId,
    status: run.status,
    workflowId: workflowInfo().workflowId,
  });
  return run.outcome();
}
