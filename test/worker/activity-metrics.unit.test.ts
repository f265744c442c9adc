import type { Context } from '@temporalio/activity';
import type { ActivityExecuteInput } from '@temporalio/worker';
import type { Counter } from 'prom-client';
import { describe, expect, it } from 'vitest';
import type { SweepResult } from '../../activities/reconciliation.js';
import { activityMetrics } from '../../worker/activity-metrics.js';
import { createWorkerMetrics, type WorkerMetrics } from '../../worker/metrics.js';

/** Runs one activity's result through the interceptor, as the worker does once the activity succeeded. */
async function observe(metrics: WorkerMetrics, activityType: string, input: unknown, result: unknown): Promise<void> {
  const interceptors = activityMetrics(metrics)({ info: { activityType } } as Context);
  await interceptors.inbound!.execute!({ args: [input] } as unknown as ActivityExecuteInput, () =>
    Promise.resolve(result),
  );
}

async function total(counter: Counter): Promise<number> {
  return (await counter.get()).values.reduce((sum, v) => sum + v.value, 0);
}

describe('activity metrics', () => {
  it("counts a sweep's lost triggers, and separately the payments nothing will settle", async () => {
    const metrics = createWorkerMetrics();
    const result: SweepResult = {
      scanned: 3,
      adopted: ['order-1'],
      handedOver: ['payment-1', 'payment-2'],
      unsettledAfterSettlement: ['payment-3'],
      resumeAfter: null,
      paymentsResumeAfter: null,
      unclaimedRefunded: [],
      unclaimedRefundFailed: [],
    };
    await observe(metrics, 'sweepStrandedOrders', {}, result);
    await observe(metrics, 'sweepStrandedOrders', {}, { ...result, adopted: [], handedOver: [] });
    expect(await total(metrics.reconciliationSweeps)).toBe(2);
    expect(await total(metrics.reconciliationHits)).toBe(3);
    expect(await total(metrics.unsettledAfterSettlement)).toBe(2);
  });

  it('counts a dead-lettered step once, not one given up on that completed after all', async () => {
    const metrics = createWorkerMetrics();
    await observe(metrics, 'markStepFailed', { step: 'loyalty' }, { status: 'FAILED', changed: true });
    // The same local activity run again (its workflow task lost): the step was FAILED already.
    await observe(metrics, 'markStepFailed', { step: 'loyalty' }, { status: 'FAILED', changed: false });
    await observe(metrics, 'markStepFailed', { step: 'invoice' }, { status: 'DONE', changed: false });
    // Labelled as the API's fulfillment_steps gauge labels it (from the rows), so the two series agree.
    expect((await metrics.fulfillmentFailures.get()).values).toEqual([
      expect.objectContaining({ labels: { step: 'LOYALTY' }, value: 1 }),
    ]);
  });

  it('counts a refund rejected for good once, however often its recording runs', async () => {
    const metrics = createWorkerMetrics();
    await observe(metrics, 'recordRefundFailure', { paymentId: 'p-1' }, { recorded: true });
    await observe(metrics, 'recordRefundFailure', { paymentId: 'p-1' }, { recorded: false });
    expect(await total(metrics.refundFailures)).toBe(1);
  });

  it('counts a timeout cancel that landed before its deadline as early', async () => {
    const metrics = createWorkerMetrics();
    const won = (lagMs: number) => ({ outcome: 'CANCELLED', customerTold: true, lagMs });
    await observe(metrics, 'cancelOrder', { reason: 'PAYMENT_TIMEOUT' }, won(120));
    await observe(metrics, 'cancelOrder', { reason: 'PAYMENT_TIMEOUT' }, won(-10));
    expect(await total(metrics.cancelledEarly)).toBe(1);
    const lag = (await metrics.cancelLag.get()).values;
    expect(lag.find((v) => v.metricName === 'order_cancel_lag_seconds_count')?.value).toBe(2);
  });
});
