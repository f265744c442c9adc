import { condition, currentUpdateInfo, setHandler } from '@temporalio/workflow';
import { businessFailure } from '../domain/errors.js';
import {
  cancelSignal,
  extendDeadlineUpdate,
  forceCancelUpdate,
  paidSignal,
  paymentFailedSignal,
  placedOrderOf,
  placeOrderUpdate,
  retryFulfillmentStepUpdate,
  retryRefundUpdate,
  statusQuery,
} from '../domain/messages.js';
import { placedFrom } from '../domain/placement.js';
import { callerWaiting, database } from './activity-proxies.js';
import { businessCause, failureKind } from './failures.js';
import type { OrderRun } from './order-run.js';

/** The messages an order's run answers (domain/messages.ts), each changing the run's state only. */
export function registerOrderHandlers(run: OrderRun): void {
  setHandler(
    placeOrderUpdate,
    async (request) => {
      try {
        const placed = placedFrom(request, await callerWaiting.placeOrder(request));
        run.takeOver(placed);
        return placedOrderOf(placed);
      } catch (err) {
        // Failed on our side (a timeout, the database): an attempt may have written the order all
        // the same, its answer lost. Then the order stands, and this run is the one that keeps it.
        if (!run.order && failureKind(err) === 'ours') {
          const written = await run.keepTrying.mustSucceed(database, 'loadOrder', run.orderId);
          if (written) {
            run.takeOver(written);
            return placedOrderOf(written);
          }
        }
        if (!run.order) run.placementRejected = true;
        throw businessCause(err);
      }
    },
    {
      validator: (request) => {
        if (request.orderId !== run.orderId) {
          throw new Error(`this workflow is for order ${run.orderId}, not ${request.orderId}`);
        }
      },
    },
  );

  // Settled by the handler itself: the run cannot end while a payment it accepted is unsettled.
  setHandler(paidSignal, (notice) => run.payments.settle(notice));

  setHandler(cancelSignal, () => run.wakeUp('cancel-requested'));

  // Only a closing waits on it; before the deadline the customer may still pay another way.
  setHandler(paymentFailedSignal, () => {
    run.recheckRequested = true;
  });

  setHandler(
    extendDeadlineUpdate,
    async ({ minutes }) => {
      // The update's id names the extension, so an attempt run again applies it once.
      const extensionId = currentUpdateInfo()!.id;
      const extended = await callerWaiting
        .extendDeadline({ orderId: run.orderId, minutes, extensionId })
        .catch((err: unknown) => {
          throw businessCause(err);
        });
      run.deadlineMoved(extended.expiresAt);
      run.wakeUp('deadline-moved');
      return extended;
    },
    {
      // Whether the order is still unpaid the API asked before it called, and the guarded statement
      // decides: a payment landing in between is refused there (ORDER_NOT_UNPAID).
      validator: ({ minutes }) => {
        if (!Number.isInteger(minutes) || minutes <= 0) throw new Error('minutes must be a positive whole number');
      },
    },
  );

  setHandler(
    forceCancelUpdate,
    async () => {
      run.forceCancelRequested = true;
      // Decided, or dropped: the closing found the deadline moved, and the run waits for payment again.
      await condition(() => !run.open || !run.forceCancelRequested);
      // The deadline had moved: the order is waiting for its payment again.
      if (run.open) throw businessFailure('ORDER_NOT_CLOSING');
      // The database still decides: a payment that won meanwhile is not a cancel the operator got.
      if (run.status !== 'CANCELLED') throw businessFailure('ORDER_NOT_UNPAID', { status: run.status });
      return { orderId: run.orderId, status: run.status };
    },
    {
      validator: () => {
        if (run.phase !== 'closing-payment' && run.phase !== 'awaiting-funds')
          throw businessFailure('ORDER_NOT_CLOSING');
      },
    },
  );

  setHandler(retryFulfillmentStepUpdate, async ({ step }) => ({ step, status: await run.fulfillment.retry(step) }), {
    validator: ({ step }) => run.fulfillment.assertRetryable(step),
  });

  setHandler(retryRefundUpdate, ({ paymentId }) => run.payments.retry(paymentId), {
    validator: ({ paymentId }) => run.payments.assertRetryable(paymentId),
  });

  setHandler(statusQuery, () => run.snapshot());
}
