import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Client } from '@temporalio/client';
import type { Db } from '../../lib/db.js';
import type { ChaosClient } from './client.js';
import { forEachLimited } from '../pool.js';
import { say } from './faults.js';
import { describeLatency, latencyStats, type Sample } from './latency.js';
import { emptyLedger, placeTracked, type Ledger, type PlacedOrder } from './load.js';
import type { LocalStack } from '../local-stack.js';
import { CHAOS_TASK_QUEUE } from './stack.js';
import { describeVerdict, settleAndJudge } from './verdict.js';

const STORM_ORDERS = 1_000;
/** Orders kept payable through the storm, so the webhook probes carry real payments. */
const PROBE_ORDERS = 100;
/** Probe orders must outlive the storm. */
const PROBE_WINDOW = '30m';
/** The storm's window is chosen from the measured pace of placing orders, within this bound. */
const MAX_STORM_WINDOW_S = 600;
const CREATE_CONCURRENCY = 8;
const PROBE_INTERVAL_MS = 100;
/** The stated bound: both endpoints answer within this at the 99th percentile, every probe answered. */
const P99_BOUND_MS = 1_000;
const DRAIN_BOUND_MS = 300_000;
/** Draining 1,000 cancellations through the dev server's SQLite can take minutes on a busy 2-core machine. */
const SETTLE_BOUND_MS = 600_000;

interface StormDeps {
  stack: LocalStack;
  client: ChaosClient;
  db: Db;
  temporal: Client;
}

/**
 * Load held: 1,000 orders whose deadlines fall in the same second, while /healthz and the payment
 * webhook are probed continuously. Placing 1,000 orders takes a while (the pace of the 100 probe
 * orders placed first decides a window long enough), then their deadlines are moved to one common
 * second after all of them (as an admin extension would, to the second): each workflow wakes at its
 * own deadline, finds it moved (NOT_DUE) and sleeps until the common one.
 */
export async function runStorm({
  stack,
  client,
  db,
  temporal,
}: StormDeps): Promise<{ ok: boolean; summary: string[] }> {
  console.log(`\n== Load held: ${STORM_ORDERS} orders expiring in the same second`);
  const ledger = emptyLedger();
  // Probe orders stay payable through the whole storm: a worker with a long window places them.
  await restartWorkers(stack, PROBE_WINDOW);
  const probing0 = Date.now();
  const probeOrders = await placeOrders(client, PROBE_ORDERS, 'CHAOS-MUG', ledger);
  const perSecond = (probeOrders.length * 1000) / (Date.now() - probing0);
  // Every storm order must be placed before the first of them expires: the window follows the measured pace.
  const windowS = Math.min(MAX_STORM_WINDOW_S, Math.ceil((1.3 * STORM_ORDERS) / perSecond + 20));
  say(
    `${probeOrders.length} probe orders placed at ${perSecond.toFixed(1)}/s; storm orders get PAYMENT_WINDOW ${windowS}s`,
  );
  await restartWorkers(stack, `${windowS}s`);
  const creating = Date.now();
  const stormOrders = await placeOrders(client, STORM_ORDERS, 'CHAOS-TEA', ledger);
  const createdInMs = Date.now() - creating;
  say(
    `${stormOrders.length} storm orders placed in ${(createdInMs / 1000).toFixed(1)} s (${((stormOrders.length * 1000) / createdInMs).toFixed(1)}/s)`,
  );

  const firstDeadline = Math.min(...stormOrders.map((o) => Date.parse(o.expiresAt)));
  const commonDeadline = new Date(
    Math.ceil(Math.max(...stormOrders.map((o) => Date.parse(o.expiresAt))) / 1000) * 1000 + 2_000,
  );
  const aligned = await db.$executeRaw`
    UPDATE orders SET expires_at = ${commonDeadline} WHERE id = ANY(${stormOrders.map((o) => o.id)}::uuid[]) AND status = 'UNPAID'`;
  const alignedInTime = Date.now() < firstDeadline;
  say(
    `${aligned} deadlines moved to ${commonDeadline.toISOString()}${alignedInTime ? '' : ' — TOO LATE: some had already expired, they will not all expire together'}`,
  );

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
      const a = await client.pay({
        paymentId: paymentIds[i % probeOrders.length]!,
        orderId: order.id,
        amountCents: order.totalCents,
      });
      probes.webhook.push({ ms: a.ms, ok: a.status === 202 });
      if (a.status === 202) ledger.payments.set(paymentIds[i % probeOrders.length]!, paidOnTime(order.id));
      await sleep(PROBE_INTERVAL_MS);
    }
  })();
  const drain = await waitForDrain(
    db,
    stormOrders.map((o) => o.id),
    commonDeadline.getTime(),
  );
  await sleep(2_000);
  probing = false;
  await Promise.all([healthz, webhook]);
  // Probe orders the webhook loop did not reach: pay them now, so every order can become final.
  const unpaid = probeOrders
    .map((order, i) => ({ order, paymentId: paymentIds[i]! }))
    .filter((p) => !ledger.payments.has(p.paymentId));
  await forEachLimited(unpaid, 4, async ({ order, paymentId }) => {
    if ((await client.pay({ paymentId, orderId: order.id, amountCents: order.totalCents })).status === 202) {
      ledger.payments.set(paymentId, paidOnTime(order.id));
    }
  });

  const h = latencyStats(probes.healthz);
  const w = latencyStats(probes.webhook);
  const held = alignedInTime && h.p99 < P99_BOUND_MS && w.p99 < P99_BOUND_MS && h.failed === 0 && w.failed === 0;
  const lines = [
    `   storm: ${drain.cancelled}/${stormOrders.length} cancelled, with their stock back, ` +
      `${fmt(drain.cancelledAfterMs)} after their common deadline`,
    `   /healthz: ${describeLatency(h, '200')}`,
    `   webhook:  ${describeLatency(w, '202')}`,
    `   bound: p99 < ${P99_BOUND_MS} ms and every probe answered, for both → ${held ? 'HELD' : 'NOT HELD'}`,
  ];
  console.log(lines.join('\n'));
  say('waiting for every order, payment and refund to settle');
  const verdict = await settleAndJudge(db, temporal, CHAOS_TASK_QUEUE, ledger, SETTLE_BOUND_MS);
  const judged = describeVerdict('load held', ledger, verdict);
  console.log(judged.join('\n'));
  return { ok: held && verdict.ok, summary: [lines[1]!.trim(), lines[2]!.trim(), lines[3]!.trim(), judged.at(-1)!] };
}

/** The ledger entry of a probe order's payment: the right amount, well before its (long) deadline. */
function paidOnTime(orderId: string) {
  return {
    orderId,
    plan: 'on-time' as const,
    sentBeforeDeadline: true,
    answeredBeforeDeadline: true,
    correctAmount: true,
  };
}

async function restartWorkers(stack: LocalStack, paymentWindow: string): Promise<void> {
  for (const worker of [...stack.workers]) await stack.stopWorker(worker);
  const worker = await stack.startWorker({ PAYMENT_WINDOW: paymentWindow });
  say(`${worker.name} started with PAYMENT_WINDOW ${paymentWindow}`);
}

async function placeOrders(client: ChaosClient, n: number, sku: string, ledger: Ledger): Promise<PlacedOrder[]> {
  const placed: PlacedOrder[] = [];
  await forEachLimited(
    Array.from({ length: n }, (_, i) => i),
    CREATE_CONCURRENCY,
    async (i) => {
      const order = await placeTracked(
        client,
        ledger,
        { customerId: `storm-${i % 50}`, items: [{ sku, quantity: 1 }] },
        'never',
      );
      if (order) placed.push(order);
    },
  );
  return placed;
}

/**
 * Until every storm order is cancelled (bounded), measured from the common deadline. The guarded
 * cancel gives the stock back in its own statement, so a cancelled order holds none.
 */
async function waitForDrain(db: Db, ids: string[], deadlineMs: number) {
  let cancelledAfterMs: number | undefined;
  let cancelled = 0;
  while (cancelledAfterMs === undefined && Date.now() < deadlineMs + DRAIN_BOUND_MS) {
    await sleep(250);
    const [row] = await db.$queryRaw<[{ cancelled: number }]>`
      SELECT count(*)::int AS cancelled FROM orders WHERE id = ANY(${ids}::uuid[]) AND status = 'CANCELLED'`.catch(
      () => [{ cancelled: 0 }] as [{ cancelled: number }],
    );
    cancelled = row.cancelled;
    if (row.cancelled === ids.length) cancelledAfterMs = Date.now() - deadlineMs;
  }
  return { cancelled, cancelledAfterMs };
}

function fmt(ms: number | undefined): string {
  return ms === undefined ? `not within ${DRAIN_BOUND_MS / 1000} s` : `${(ms / 1000).toFixed(1)} s`;
}
