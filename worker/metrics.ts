import { collectDefaultMetrics, Counter, Histogram, Registry } from 'prom-client';

/**
 * The worker's business metrics: what only the winner of a guarded update knows, observed as the
 * activity returns (worker/activity-metrics.ts). Counted per worker process; sum over replicas.
 */
export function createWorkerMetrics() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const registers = [registry];
  return {
    registry,
    ordersPaid: new Counter({
      name: 'orders_paid_total',
      help: 'Orders made PAID by the guarded payment update',
      registers,
    }),
    ordersCancelled: new Counter({
      name: 'orders_cancelled_total',
      help: 'Orders made CANCELLED by the guarded cancel, by reason',
      labelNames: ['reason'] as const,
      registers,
    }),
    cancelLag: new Histogram({
      name: 'order_cancel_lag_seconds',
      help: 'cancelled_at - expires_at of a payment timeout, observed when the guarded cancel wins',
      buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 300],
      registers,
    }),
    cancelledEarly: new Counter({
      name: 'orders_cancelled_early_total',
      help: 'Timeout cancels that landed before expires_at (negative lag): an incident, the guard should make it impossible',
      registers,
    }),
    reconciliationSweeps: new Counter({
      name: 'reconciliation_sweeps_total',
      help: 'Reconciliation sweeps completed',
      registers,
    }),
    reconciliationHits: new Counter({
      name: 'reconciliation_hits_total',
      help: 'Orders found waiting without a running workflow and adopted, and payments found unsettled and handed over again: each is a lost trigger',
      registers,
    }),
    unsettledAfterSettlement: new Counter({
      name: 'reconciliation_unsettled_after_settlement_total',
      help: 'Payments a sweep found still unsettled (RECEIVED or REFUND_PENDING) although their settlement completed, counted each time a pass of the sweeps comes round to one: nothing will settle them, a person must (alert on any increase)',
      registers,
    }),
    providerSweeps: new Counter({
      name: 'provider_sweeps_total',
      help: "Provider sweeps completed (the payment provider's undelivered events read and fed through the webhook's path)",
      registers,
    }),
    providerEventsFed: new Counter({
      name: 'provider_sweep_events_fed_total',
      help: "Provider events of orders and payments of ours a sweep fed through the webhook's path, by kind: each one an undelivered webhook (or one fed again, to no effect)",
      labelNames: ['kind'] as const,
      registers,
    }),
    unclaimedPayments: new Counter({
      name: 'unclaimed_payments_recorded_total',
      help: 'Payments the provider took for no order of ours that a provider sweep found first, recorded to be refunded after UNCLAIMED_REFUND_GRACE',
      registers,
    }),
    refundFailures: new Counter({
      name: 'refund_failures_total',
      help: 'Refunds the payment provider rejected for good, or failed after accepting them, recorded as REFUND_FAILED for an operator',
      registers,
    }),
    fulfillmentFailures: new Counter({
      name: 'fulfillment_failures_total',
      help: 'Fulfillment steps that ran out of retries and became FAILED (dead letter), by step',
      labelNames: ['step'] as const,
      registers,
    }),
    webhookDeliveriesDead: new Counter({
      name: 'webhook_deliveries_dead_total',
      help: 'Webhook deliveries that failed their last attempt and became DEAD (dead letter, GET /webhooks/deliveries?status=DEAD), by event type',
      labelNames: ['type'] as const,
      registers,
    }),
  };
}
export type WorkerMetrics = ReturnType<typeof createWorkerMetrics>;
