import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../dev/paths.js';
import { createApiMetrics } from '../../api/metrics.js';
import { createWorkerMetrics } from '../../worker/metrics.js';
import type { Db } from '../../lib/db.js';
import { createActivities, type ActivityDeps } from '../../activities/index.js';

const dashboard = JSON.parse(readFileSync(join(PROJECT_ROOT, 'ops', 'grafana-dashboard.json'), 'utf8')) as {
  panels: Array<{ title: string; targets: Array<{ expr: string }> }>;
};

it('has the panels operators need: cancel lag p50/p95/p99, fulfillment and compensation failures, open/stuck orders, webhook latency', () => {
  const titles = dashboard.panels.map((p) => p.title).join(' | ');
  for (const wanted of [
    /Cancel lag/,
    /Fulfillment failures/,
    /Compensation/,
    /Open and stuck orders/,
    /Webhook latency/,
  ])
    expect(titles).toMatch(wanted);
  const lag = dashboard.panels
    .find((p) => p.title.startsWith('Cancel lag ('))!
    .targets.map((t) => t.expr)
    .join('\n');
  for (const q of ['0.5', '0.95', '0.99'])
    expect(lag).toContain(`histogram_quantile(${q}, sum by (le) (rate(order_cancel_lag_seconds_bucket`);
});

/** The counters workflow code creates through the SDK's workflow meter (Core exports them, unprefixed). */
function workflowMetricNames(): string[] {
  const dir = join(PROJECT_ROOT, 'workflows');
  return readdirSync(dir)
    .filter((f) => f.endsWith('.ts'))
    .flatMap((f) => [...readFileSync(join(dir, f), 'utf8').matchAll(/metricMeter\.create\w+\(\s*'(\w+)'/g)])
    .map((m) => m[1]!);
}

it("queries only metrics the API, the worker or the workflows export (the SDK's by its temporal_ prefix)", async () => {
  const ours = new Set<string>();
  const unused = new Proxy(
    {},
    {
      get: () => {
        throw new Error('not scraped here');
      },
    },
  ) as Db;
  for (const registry of [createApiMetrics(unused).registry, createWorkerMetrics().registry]) {
    for (const metric of registry.getMetricsAsArray()) ours.add(metric.name);
  }
  for (const name of workflowMetricNames()) ours.add(name);
  const used = dashboard.panels.flatMap((p) => p.targets.flatMap((t) => metricNames(t.expr)));
  const unknown = used.filter(
    (name) => !name.startsWith('temporal_') && !ours.has(name.replace(/_(bucket|sum|count)$/, '')),
  );
  expect(used.length).toBeGreaterThan(10);
  expect(unknown).toEqual([]);
});

it('names only activities the worker registers, each under the metric of its kind (local or not)', () => {
  const registered = Object.keys(createActivities(new Proxy({}, { get: () => undefined }) as ActivityDeps));
  const named = dashboard.panels.flatMap((p) =>
    p.targets
      .flatMap((t) => [...t.expr.matchAll(/(\w+)\{activity_type=~"([^"]+)"/g)])
      .map((m) => ({
        metric: m[1]!,
        activities: m[2]!.split('|'),
      })),
  );
  expect(named.length).toBeGreaterThan(0);
  for (const { metric, activities } of named) {
    expect(registered).toEqual(expect.arrayContaining(activities));
    // The compensation runs as local activities (workflows/activity-proxies.ts), fulfillment as regular ones.
    const local = activities.some((a) =>
      ['cancelOrder', 'closePayment', 'refundPayment', 'notifyCustomer'].includes(a),
    );
    expect(metric.startsWith('temporal_local_activity_'), `${metric} for ${activities.join(', ')}`).toBe(local);
  }
});

/** The metric names a PromQL expression reads: identifiers left once label matchers, ranges and groupings are gone, functions excluded. */
function metricNames(expr: string): string[] {
  const bare = expr
    .replace(/\{[^}]*\}/g, '')
    .replace(/\[[^\]]*\]/g, '')
    .replace(/\b(by|without)\s*\([^)]*\)/g, '');
  return [...bare.matchAll(/\b([a-zA-Z_:][\w:]*)\b(?!\s*\()/g)].map((m) => m[1]!);
}
