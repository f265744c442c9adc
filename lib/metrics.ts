import { collectDefaultMetrics, Counter, Histogram, Registry } from 'prom-client';

/** The API's Prometheus metrics; one registry per app so tests can build several side by side. */
export function createApiMetrics() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  return {
    registry,
    httpDuration: new Histogram({
      name: 'http_request_duration_seconds',
      help: 'HTTP request latency by route and status',
      labelNames: ['method', 'route', 'status'] as const,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers: [registry],
    }),
    ordersPlaced: new Counter({ name: 'orders_placed_total', help: '201 answers to POST /orders, idempotent replays included', registers: [registry] }),
    paymentsAccepted: new Counter({
      name: 'payment_callbacks_accepted_total',
      help: 'Signed payment callbacks durably handed to Temporal (202)',
      registers: [registry],
    }),
  };
}
export type ApiMetrics = ReturnType<typeof createApiMetrics>;
