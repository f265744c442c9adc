import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { HEALTH_MAX_AGE_MS } from '../../api/health-check.js';
import { placeOrder, seedCatalog } from '../helpers/catalog.js';
import { startHttpFlood } from '../helpers/http-flood.js';
import { startOrderHarness, type OrderHarness } from '../helpers/order-harness.js';

/**
 * Issue 22's shield, shown on loopback against the real app and PostgreSQL: while a bounded crowd of
 * anonymous callers floods GET /healthz and GET /products/:sku far past what the database can
 * answer, the payment webhook's p99 stays under a second, and /healthz costs PostgreSQL and Temporal
 * about one probe a second each however many ask.
 *
 * The API reaches PostgreSQL through a proxy that holds each packet DB_DELAY_MS each way: a
 * database a network hop away, where the pools' connections, not this machine's CPU, bound what the
 * API can ask of it (10 connections at an 80-ms round trip: about 125 statements a second). On the
 * old code (one shared pool, a probe per /healthz) the flood's 160 reads a second queue there in
 * front of the webhook's statement, for seconds; on the new one they queue on the public pool. The
 * flood arrives at fixed rates (open loop) with a cap on what is unanswered, so it neither waits
 * for the service nor grows without bound, and it stops by itself.
 */
const DB_DELAY_MS = 40;
/** Requests per second of each kind, and how many of each may be unanswered at once. */
const FLOOD = { healthz: { perSecond: 80, maxInFlight: 150 }, product: { perSecond: 80, maxInFlight: 350 } };
/** The webhook calls, each paying an order of its own, while the flood lasts. */
const WEBHOOK_CALLS = 200;
const WEBHOOK_EVERY_MS = 100;
/** Bounds whatever happens: the webhook calls stop being sent after this, and the flood with them. */
const MAX_WEBHOOK_PHASE_MS = 30_000;
const MAX_FLOOD_MS = MAX_WEBHOOK_PHASE_MS + 10_000;

let h: OrderHarness;
beforeAll(async () => {
  h = await startOrderHarness({ taskQueue: 'orders-anonymous-flood', apiDatabaseDelayMs: DB_DELAY_MS });
});
afterAll(async () => {
  await h?.close();
});

it('under a flood of anonymous /healthz and product reads, the webhook p99 stays under 1 s and /healthz probes about once a second', async () => {
  const { sku } = await seedCatalog(h, { stock: WEBHOOK_CALLS });
  const orders = [];
  for (let i = 0; i < WEBHOOK_CALLS; i += 10)
    orders.push(
      ...(await Promise.all(
        Array.from({ length: Math.min(10, WEBHOOK_CALLS - i) }, (_, j) =>
          placeOrder(h, { sku, quantity: 1, customerId: `flooded-${i + j}` }),
        ),
      )),
    );

  // Warm, as a running service is: each pool's first query also starts its Prisma client.
  expect((await h.http('GET', `/products/${sku}`)).status).toBe(200);
  expect((await h.http('GET', '/healthz')).status).toBe(200);

  const probes = countProbes(h);
  const flood = startHttpFlood(
    {
      healthz: { url: `${h.baseUrl}/healthz`, ...FLOOD.healthz },
      product: { url: `${h.baseUrl}/products/${sku}`, ...FLOOD.product },
    },
    { maxMs: MAX_FLOOD_MS },
  );
  // One call at a time, at most one every WEBHOOK_EVERY_MS: the latency each call meets under the
  // flood, not a queue of our own calls (the test server settles a few payments a second at most).
  const webhookMs: number[] = [];
  const webhooksStarted = performance.now();
  for (const [i, order] of orders.entries()) {
    if (performance.now() - webhooksStarted > MAX_WEBHOOK_PHASE_MS) break;
    await sleep(Math.max(0, webhooksStarted + i * WEBHOOK_EVERY_MS - performance.now()));
    const sent = performance.now();
    const res = await h.pay({ paymentId: `pay-${order.id}`, orderId: order.id, amountCents: order.totalCents });
    webhookMs.push(performance.now() - sent);
    expect(res.status).toBe(202);
  }
  const probesDuringFlood = { database: probes.database, temporal: probes.temporal };
  const { seconds: floodSeconds, kinds: answered } = await flood.stop();
  probes.stop();

  const sorted = [...webhookMs].sort((a, b) => a - b);
  const percentile = (p: number) => sorted[Math.ceil((p / 100) * sorted.length) - 1]!;
  console.log(
    `anonymous flood for ${floodSeconds.toFixed(1)} s: ${JSON.stringify(answered)}; ` +
      `webhook ${sorted.length} calls p50 ${percentile(50).toFixed(0)} ms, p99 ${percentile(99).toFixed(0)} ms, ` +
      `max ${sorted.at(-1)!.toFixed(0)} ms; /healthz probes ${JSON.stringify(probesDuringFlood)}`,
  );

  // It was a flood: offered at about its rates (sent, or skipped while its cap was unanswered).
  for (const kind of ['healthz', 'product'] as const)
    expect(answered[kind]!.sent + answered[kind]!.skipped).toBeGreaterThan(FLOOD[kind].perSecond * floodSeconds * 0.8);
  expect(percentile(99)).toBeLessThan(1_000);
  // One probe per HEALTH_MAX_AGE_MS after the last one came back: at most one a second, and one
  // more for the probe already running when the flood began or ended.
  const probesAllowed = Math.ceil((floodSeconds * 1000) / HEALTH_MAX_AGE_MS) + 1;
  expect(probesDuringFlood.database).toBeLessThanOrEqual(probesAllowed);
  expect(probesDuringFlood.temporal).toBeLessThanOrEqual(probesAllowed);
  expect(answered.healthz!.byStatus['200']).toBeGreaterThan(0);
  // A product read that found no connection in time is shed with 503 BUSY, never a 500.
  expect(Object.keys(answered.product!.byStatus).filter((status) => !['200', '503'].includes(status))).toEqual([]);
});

/**
 * Counts the probes' calls from now until stop(): `SELECT 1` on the API's main pool, and Temporal's
 * getSystemInfo through the API's client (the harness's), by wrapping both.
 */
function countProbes(h: OrderHarness) {
  const pool = h.apiDb.pool;
  const query = pool.query;
  const workflowService = h.env.client.workflowService;
  const getSystemInfo = workflowService.getSystemInfo;
  const counter = {
    database: 0,
    temporal: 0,
    stop: () => {
      pool.query = query;
      workflowService.getSystemInfo = getSystemInfo;
    },
  };
  pool.query = ((...args: Parameters<typeof query>) => {
    const text: unknown = typeof args[0] === 'string' ? args[0] : (args[0] as { text?: unknown }).text;
    if (typeof text === 'string' && /^\s*SELECT 1\s*$/i.test(text)) counter.database++;
    return (query as (...a: unknown[]) => unknown).apply(pool, args);
  }) as typeof query;
  workflowService.getSystemInfo = ((...args: Parameters<typeof getSystemInfo>) => {
    counter.temporal++;
    return getSystemInfo.apply(workflowService, args);
  }) as typeof getSystemInfo;
  return counter;
}
