import { expect, it } from 'vitest';
import { createApiMetrics } from '../../api/metrics.js';
import type { Db } from '../../lib/db.js';

/** A database that refuses every read, as while PostgreSQL is down. */
const down = new Proxy(
  {},
  {
    get: () =>
      new Proxy(() => Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:5432')), {
        get: () => () => Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:5432')),
      }),
  },
) as unknown as Db;

it("serves the API's metrics while the database is down: its gauges without a value, each failed read counted", async () => {
  const metrics = createApiMetrics(down);
  metrics.httpDuration.observe({ method: 'POST', route: '/payments/callback', status: '500' }, 0.01);

  await metrics.registry.metrics();
  // A scrape serializes its counters as its gauges start reading: the failures show from the next one.
  const text = await metrics.registry.metrics();
  expect(text).toMatch(
    /^http_request_duration_seconds_count\{method="POST",route="\/payments\/callback",status="500"\} 1$/m,
  );
  for (const gauge of ['orders', 'payments', 'fulfillment_steps', 'orders_unpaid_past_deadline'])
    expect(text).toMatch(new RegExp(`^metrics_database_read_failures_total\\{gauge="${gauge}"\\} 1$`, 'm'));
  expect(text).not.toMatch(/^orders\{/m);
  // Never 0, which would read as "none stuck".
  expect(text).toMatch(/^orders_unpaid_past_deadline nan$/im);
});

it('serves them when a database read hangs (a dead host, no answer): that read is given up within seconds', async () => {
  const hanging = new Proxy(
    {},
    {
      get: () =>
        new Proxy(() => new Promise(() => {}), {
          get: () => () => new Promise(() => {}),
        }),
    },
  ) as unknown as Db;
  const metrics = createApiMetrics(hanging);
  await metrics.registry.metrics(); // without its own limit, never answered: the test times out
  expect(await metrics.registry.metrics()).toMatch(/^metrics_database_read_failures_total\{gauge="orders"\} 1$/m);
}, 15_000);
