import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Db } from '../lib/db.js';

/**
 * How long a gauge's database read may take: well within Prometheus's scrape timeout (10 s by
 * default), since a connection to a database host that died can hang with no answer at all.
 */
const READ_TIMEOUT_MS = 2_000;

function withinTime<T>(read: Promise<T>): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no answer within ${READ_TIMEOUT_MS} ms`)), READ_TIMEOUT_MS);
    read.then(resolve, reject).finally(() => clearTimeout(timer));
  });
}

/**
 * The API's Prometheus metrics; one registry per app so tests can build several side by side.
 * Gauges of state are read from the database at scrape time: they survive restarts and count what
 * every worker did, not what one process saw.
 */
export function createApiMetrics(db: Db) {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const readFailures = new Counter({
    name: 'metrics_database_read_failures_total',
    help: "Scrapes whose database read for a gauge failed, by gauge (shown from the next scrape): that gauge had no value, the API's other metrics were served",
    labelNames: ['gauge'] as const,
    registers: [registry],
  });
  /**
   * A gauge read from the database at each scrape. prom-client fails the whole scrape when one
   * collect throws, which would hide every API series (the webhook's 500s included) exactly while
   * the database is down: a failed or unanswered read is counted instead, and leaves the gauge without a value
   * (no series, or NaN for one without labels), never a stale or zero one.
   */
  const fromDatabase = <L extends string>(
    name: string,
    help: string,
    labelNames: readonly L[],
    read: () => Promise<Array<{ labels: Record<L, string>; n: number }>>,
  ) =>
    new Gauge({
      name,
      help,
      labelNames,
      registers: [registry],
      async collect() {
        const rows = await withinTime(read()).catch(() => {
          readFailures.inc({ gauge: name });
          return null;
        });
        this.reset();
        if (rows === null && labelNames.length === 0) this.set(NaN);
        for (const { labels, n } of rows ?? []) this.set(labels, n);
      },
    });
  fromDatabase('orders', 'Orders by status', ['status'], async () =>
    (await db.order.groupBy({ by: ['status'], _count: { _all: true } })).map((r) => ({
      labels: { status: r.status },
      n: r._count._all,
    })),
  );
  fromDatabase(
    'payments',
    'Payments by status; status="REFUND_FAILED" is money owed that waits for an operator',
    ['status'],
    async () =>
      (await db.payment.groupBy({ by: ['status'], _count: { _all: true } })).map((r) => ({
        labels: { status: r.status },
        n: r._count._all,
      })),
  );
  fromDatabase(
    'fulfillment_steps',
    'Fulfillment steps by step and status; status="FAILED" is the dead-letter backlog',
    ['step', 'status'],
    async () =>
      (await db.fulfillmentRecord.groupBy({ by: ['step', 'status'], _count: { _all: true } })).map((r) => ({
        labels: { step: r.step, status: r.status },
        n: r._count._all,
      })),
  );
  fromDatabase(
    'orders_unpaid_past_deadline',
    'UNPAID orders whose deadline passed more than 1 minute ago: their cancellation is late',
    [],
    async () => {
      const [row] = await db.$queryRaw<Array<{ n: number }>>`
        SELECT count(*)::int AS n FROM orders WHERE status = 'UNPAID' AND expires_at < now() - interval '1 minute'`;
      return [{ labels: {}, n: row!.n }];
    },
  );
  return {
    registry,
    httpDuration: new Histogram({
      name: 'http_request_duration_seconds',
      help: 'HTTP request latency by route and status',
      labelNames: ['method', 'route', 'status'] as const,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers: [registry],
    }),
    ordersPlaced: new Counter({
      name: 'orders_placed_total',
      help: '201 answers to POST /orders, idempotent replays included',
      registers: [registry],
    }),
    paymentsAccepted: new Counter({
      name: 'payment_callbacks_accepted_total',
      help: 'Signed payment callbacks durably handed to Temporal (202)',
      registers: [registry],
    }),
    unclaimedPayments: new Counter({
      name: 'unclaimed_payments_recorded_total',
      help: 'Payments the provider took for no order of ours, recorded to be refunded after UNCLAIMED_REFUND_GRACE',
      registers: [registry],
    }),
  };
}
export type ApiMetrics = ReturnType<typeof createApiMetrics>;
