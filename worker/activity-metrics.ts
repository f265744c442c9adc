import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import type { Activities } from '../activities/index.js';
import { storedStep } from '../store/fulfillment-steps.js';
import type { WorkerMetrics } from './metrics.js';

type Result<K extends keyof Activities> = Awaited<ReturnType<Activities[K]>>;
type Input<K extends keyof Activities> = Parameters<Activities[K]>[0];

/**
 * Business metrics at the activity boundary, so activities stay free of them: each observer sees
 * an activity's input and result once it has succeeded, i.e. once its guarded update has decided.
 */
const OBSERVERS: { [K in keyof Activities]?: (metrics: WorkerMetrics, input: Input<K>, result: Result<K>) => void } = {
  cancelOrder(metrics, input, result) {
    if (result.outcome !== 'CANCELLED') return;
    metrics.ordersCancelled.inc({ reason: input.reason });
    if (input.reason === 'PAYMENT_TIMEOUT') {
      const lagSeconds = result.lagMs / 1000;
      metrics.cancelLag.observe(lagSeconds);
      if (lagSeconds < 0) metrics.cancelledEarly.inc();
    }
  },
  settlePayment(metrics, _input, result) {
    if (result.outcome === 'PAID' && !result.duplicate) metrics.ordersPaid.inc();
  },
  sweepStrandedOrders(metrics, _input, result) {
    metrics.reconciliationSweeps.inc();
    metrics.reconciliationHits.inc(result.adopted.length + result.handedOver.length);
    metrics.unsettledAfterSettlement.inc(result.unsettledAfterSettlement.length);
  },
  sweepProviderEvents(metrics, _input, result) {
    metrics.providerSweeps.inc();
    metrics.providerEventsFed.inc({ kind: 'payment' }, result.paymentsFed.length);
    metrics.providerEventsFed.inc({ kind: 'refund_failure' }, result.refundFailuresFed.length);
    metrics.unclaimedPayments.inc(result.unclaimedRecorded.length);
  },
  // Counted once: a local activity run again (its workflow task lost) finds the row already moved.
  recordRefundFailure(metrics, _input, result) {
    if (result.recorded) metrics.refundFailures.inc();
  },
  recordRefundFailedLater(metrics, _input, result) {
    if (result.failed) metrics.refundFailures.inc();
  },
  // A step given up on that completed after all is no dead letter (activities/fulfillment.ts).
  markStepFailed(metrics, input, result) {
    if (result.status === 'FAILED' && result.changed) metrics.fulfillmentFailures.inc({ step: storedStep(input.step) });
  },
};

export function activityMetrics(metrics: WorkerMetrics): ActivityInterceptorsFactory {
  return (ctx) => ({
    inbound: {
      async execute(input, next) {
        const result = await next(input);
        const observe = OBSERVERS[ctx.info.activityType as keyof Activities] as
          ((m: WorkerMetrics, i: unknown, r: unknown) => void) | undefined;
        observe?.(metrics, input.args[0], result);
        return result;
      },
    },
  });
}
