import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Client } from '@temporalio/client';
import type { Db } from '../../lib/db.js';
import type { ChaosClient } from './client.js';
import { say } from './faults.js';
import { count, type Ledger } from './load.js';
import type { ChaosStack } from './stack.js';
import { describeVerdict, settleAndJudge } from './verdict.js';

const STORM_ORDERS = 1_000;
/** Orders kept payable through the storm, so the webhook probes carry real payments. */
const PROBE_ORDERS = 100;
/** Long enough to create all storm orders before the first of them expires. */
const STORM_WINDOW_MS = 60_000;
const CREATE_CONCURRENCY = 16;
const PROBE_INTERVAL_MS = 100;
/** The stated bound: both endpoints answer within this at the 99th percentile, every probe answered. */
const P99_BOUND_MS = 1_000;
const DRAIN_BOUND_MS = 180_000;

interface StormDeps {
  stack: ChaosStack;
  client: ChaosClient;
  db: Db;
  temporal: Client;
  settleBoundMs: number;
}

type PlacedOrder = { id: string; totalCents: number; expiresAt: string };

/**
 * Load held: 1,000 orders whose deadlines fall in the same second, while /healthz and the payment
 * webhook are probed continuously. Orders are placed over several seconds with a 60 s window, then
 * their deadlines are moved to one common second (as an admin extension would, to the second): each
 * workflow wakes at its own deadline, finds it moved (NOT_DUE) and sleeps until the common one.
 */
export async function runStorm({ stack, client, db, temporal, settleBoundMs }: StormDeps): Promise<{ ok: boolean; summary: string[] }> {
  console.log(`\n== Load held: ${STORM_ORDERS} orders expiring in the same second`);
  for (const worker of [...stack.workers]) await stack.stopWorker(worker);
  const worker = await stack.startWorker(`${STORM_WINDOW_MS / 1000}s`);
  say(`${worker.name} started with PAYMENT_WINDOW ${STORM_WINDOW_MS / 1000}s`);
  const ledger: Ledger = { orders: new Map(), payments: new Map(), refused: new Map(), unanswered: new Map() };

  const probeOrders = await placeOrders(client, PROBE_ORDERS, 'CHAOS-MUG', ledger);
  await inPool(probeOrders, CREATE_CONCURRENCY, (o) => client.admin('POST', `/orders/${o.id}/extend`, { minutes: 10 }));
  const creating = Date.now();
  const stormOrders = await placeOrders(client, STORM_ORDERS, 'CHAOS-TEA', ledger);
  const createdInMs = Date.now() - creating;
  say(`${stormOrders.length} storm orders created in ${(createdInMs / 1000).toFixed(1)} s (${((stormOrders.length * 1000) / createdInMs).toFixed(0)}/s)`);

  const firstDeadline = Math.min(...stormOrders.map((o) => Date.parse(o.expiresAt)));
  const commonDeadline = new Date(Math.ceil(Math.max(...stormOrders.map((o) => Date.parse(o.expiresAt))) / 1000) * 1000 + 2_000);
  const aligned = await db.$executeRaw`
    UPDATE orders SET expires_at = ${commonDeadline} WHERE id = ANY(${stormOrders.map((o) => o.id)}::uuid[]) AND status = 'UNPAID'`;
  const alignedInTime = Date.now() < firstDeadline;
  say(`${aligned} deadlines moved to ${commonDeadline.toISOString()}${alignedInTime ? '' : ' — TOO LATE: some had already expired, they will not all expire together'}`);

  await sleep(Math.max(0, commonDeadline.getTime() - Date.now() - 3_000));
  say('probing /healthz and the webhook every 100 ms each');
  const probes = { healthz: [] as Sample[], webhook: [] as Sample[] };
  let probing = true;
  const healthz = (async () => {
    while (probing) {
      const a = await client.request('GET', '/healthz');
      probes.healthz.push({ ms: a.ms, ok: a.status === 200 });
      await sleep(PROBE_INTERVAL_MS);
    }
  })();
  const paymentIds = probeOrders.map(() => `storm-pay-${randomUUID()}`);
  const webhook = (async () => {
    // Each probe order is paid once; after that the same callbacks are redelivered (202, no new effect).
    for (let i = 0; probing; i++) {
      const order = probeOrders[i % probeOrders.length]!;
      const a = await client.pay({ paymentId: paymentIds[i % probeOrders.length]!, orderId: order.id, amountCents: order.totalCents });
      probes.webhook.push({ ms: a.ms, ok: a.status === 202 });
      if (a.status === 202) ledger.payments.set(paymentIds[i % probeOrders.length]!, { orderId: order.id, plan: 'on-time', onTime: true, correctAmount: true });
      await sleep(PROBE_INTERVAL_MS);
    }
  })();
  const drain = await waitForDrain(db, stormOrders.map((o) => o.id), commonDeadline.getTime());
  await sleep(2_000);
  probing = false;
  await Promise.all([healthz, webhook]);
  // Probe orders the webhook loop did not reach: pay them now, so every order can become final.
  const unpaid = probeOrders.map((order, i) => ({ order, paymentId: paymentIds[i]! })).filter((p) => !ledger.payments.has(p.paymentId));
  await inPool(unpaid, 4, async ({ order, paymentId }) => {
    if ((await client.pay({ paymentId, orderId: order.id, amountCents: order.totalCents })).status === 202) {
      ledger.payments.set(paymentId, { orderId: order.id, plan: 'on-time', onTime: true, correctAmount: true });
    }
  });

  const h = stats(probes.healthz);
  const w = stats(probes.webhook);
  const held = alignedInTime && h.p99 < P99_BOUND_MS && w.p99 < P99_BOUND_MS && h.failed === 0 && w.failed === 0;
  const lines = [
    `   storm: ${drain.cancelled}/${stormOrders.length} cancelled ${fmt(drain.cancelledAfterMs)} after their common deadline, ` +
      `stock of all released after ${fmt(drain.releasedAfterMs)}`,
    `   /healthz: ${describeStats(h, '200')}`,
    `   webhook:  ${describeStats(w, '202')}`,
    `   bound: p99 < ${P99_BOUND_MS} ms and every probe answered, for both → ${held ? 'HELD' : 'NOT HELD'}`,
  ];
  console.log(lines.join('\n'));
  say('waiting for every order, payment and refund to settle');
  const verdict = await settleAndJudge(db, temporal, stack.taskQueue, ledger, settleBoundMs);
  const judged = describeVerdict('load held', ledger, verdict);
  console.log(judged.join('\n'));
  return { ok: held && verdict.ok, summary: [lines[1]!.trim(), lines[2]!.trim(), lines[3]!.trim(), judged.at(-1)!] };
}

async function placeOrders(client: ChaosClient, n: number, sku: string, ledger: Ledger): Promise<PlacedOrder[]> {
  const placed: PlacedOrder[] = [];
  await inPool(Array.from({ length: n }, (_, i) => i), CREATE_CONCURRENCY, async (i) => {
    const a = await client.request('POST', '/orders', { json: { customerId: `storm-${i % 50}`, items: [{ sku, quantity: 1 }] } });
    if (a.status !== 201) return count(ledger.unanswered, `POST /orders ${a.status}`);
    placed.push(a.body as PlacedOrder);
    ledger.orders.set(a.body.id, { plan: 'never', totalCents: a.body.totalCents, expiresAt: a.body.expiresAt });
  });
  return placed;
}

/** Until every storm order is cancelled with its stock back (bounded), measured from the common deadline. */
async function waitForDrain(db: Db, ids: string[], deadlineMs: number) {
  let cancelledAfterMs: number | undefined;
  let releasedAfterMs: number | undefined;
  let cancelled = 0;
  while (releasedAfterMs === undefined && Date.now() < deadlineMs + DRAIN_BOUND_MS) {
    await sleep(250);
    const [row] = await db.$queryRaw<[{ cancelled: number; released: number }]>`
      SELECT count(*) FILTER (WHERE status = 'CANCELLED')::int AS cancelled, count(stock_released_at)::int AS released
        FROM orders WHERE id = ANY(${ids}::uuid[])`.catch(() => [{ cancelled: 0, released: 0 }] as [{ cancelled: number; released: number }]);
    cancelled = row.cancelled;
    if (cancelledAfterMs === undefined && row.cancelled === ids.length) cancelledAfterMs = Date.now() - deadlineMs;
    if (row.released === ids.length) releasedAfterMs = Date.now() - deadlineMs;
  }
  return { cancelled, cancelledAfterMs, releasedAfterMs };
}

interface Sample {
  ms: number;
  ok: boolean;
}

function stats(samples: Sample[]) {
  const sorted = samples.map((s) => s.ms).sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)] ?? NaN;
  return { n: samples.length, p50: at(0.5), p99: at(0.99), max: sorted.at(-1) ?? NaN, failed: samples.filter((s) => !s.ok).length };
}

function describeStats(s: ReturnType<typeof stats>, okStatus: string): string {
  return `${s.n} probes, p50 ${s.p50.toFixed(0)} ms, p99 ${s.p99.toFixed(0)} ms, max ${s.max.toFixed(0)} ms, not ${okStatus}: ${s.failed}`;
}

function fmt(ms: number | undefined): string {
  return ms === undefined ? `not within ${DRAIN_BOUND_MS / 1000} s` : `${(ms / 1000).toFixed(1)} s`;
}

/** Runs `work` over `items`, at most `concurrency` at a time. */
async function inPool<T>(items: readonly T[], concurrency: number, work: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, items.length) }, async () => {
      while (next < items.length) await work(items[next++]!);
    }),
  );
}
