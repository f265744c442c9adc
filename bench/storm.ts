import { Client, Connection } from '@temporalio/client';
import { ORDER_WORKFLOW_TYPE, orderLifecycleInput, orderWorkflowId } from '../domain/messages.js';
import { OrderExpiresAtKey, OrderStatusKey } from '../domain/search-attributes.js';
import { postOrder } from './api-client.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { forEachLimited } from '../dev/pool.js';
import type { PhaseContext } from './context.js';
import { sampleConnections } from './db-stats.js';
import { createDirectActivities } from './direct-placement.js';
import { cancelOutcome, waitUntilSettled } from './outcomes.js';
import { runPaced } from './pacer.js';
import { ResourceMeter, type ResourceUse } from './resources.js';
import { startScanCanceller } from './scan-canceller.js';
import { ROLES } from './stack.js';
import { summarize, type Summary } from './stats.js';
import { GROUPS, orderBody, placeRequest, seedCoupons } from './workload.js';

/**
 * Orders/s of the light POST /orders load that measures the API while a storm runs: open loop, so
 * every probe costs a whole order (about 0.2 s of CPU here); at 1/s they take a tenth of 2 cores.
 */
const PROBE_RATE = 1;
/** Longest the probes run: the storm's settle bound (180 s) and then some. */
const PROBE_BOUND_S = 200;
/** Lead time per storm order on the timer path: adoption ran at 20-55 orders/s on 2 cores; this allows for 17/s. */
const ADOPTION_MS_PER_ORDER = 60;

/**
 * K orders expiring in the same second. Both paths get orders written by the same placeOrder
 * transaction with one deadline T; the timer path then gets one OrderLifecycle run per order that
 * adopts it (the reconciliation path: load the order, durable timer until T, guarded cancel,
 * compensation), the scan path its canceller. Measured from T: until every order is cancelled
 * and compensated, peak connections, and POST /orders latency meanwhile.
 */
export interface StormResult {
  path: 'timer' | 'scan';
  orders: number;
  /** Seconds from the common deadline to the last cancellation notice (all compensated). */
  allCompensatedS: number | null;
  settled: boolean;
  lagMs: Summary;
  compensatedLagMs: Summary;
  lagsMs: number[];
  negative: number;
  /** Cancellations per second over the storm (orders / allCompensatedS). */
  throughput: number | null;
  peakConnections: { peakTotal: number; peakActive: number };
  probeLatencyMs: Summary;
  probeFailed: number;
  /** pg_stat_statements calls of the cancelling role in the window, per cancelled order. */
  statementsPerCancel: number | null;
  statementsNote: string;
  topStatements: Array<{ calls: number; query: string }>;
  /** Timer path: storm workflows not yet waiting on their timer 2 s before the deadline. */
  notWaitingAtDeadline: number;
  resources: ResourceUse;
}

export async function runStorm(ctx: PhaseContext, path: 'timer' | 'scan'): Promise<StormResult> {
  const { options, stack, observer } = ctx;
  const k = options.storm;
  const group = path === 'timer' ? GROUPS.timerStorm : GROUPS.scanStorm;
  await seedCoupons(stack.adminUrl, group, k);
  // The placement cost of one probe order, to take the probes out of the statement count; measured
  // first, while the service is idle.
  const perProbe = path === 'timer' ? await probePlacementCost(ctx) : 0;
  // Timer path: every workflow must be waiting on its timer before the deadline (adoption costs
  // about as much as a cancellation), or the storm would measure the adoption backlog instead.
  const leadMs = path === 'timer' ? 15_000 + k * ADOPTION_MS_PER_ORDER : 10_000 + k * 2;
  const deadline = Date.now() + leadMs;

  ctx.progress(`seeding ${k} orders expiring at ${new Date(deadline).toISOString()}`);
  const seed = createDirectActivities(stack.urlAs(ROLES.seed), { paymentWindowMs: options.windowS * 1000, maxConnections: 10 });
  const ids: string[] = [];
  await forEachLimited([...Array(k).keys()], 16, async (i) => {
    const request = placeRequest(group, i);
    await seed.placeExpiringAt(request, deadline);
    ids.push(request.orderId);
  });
  await seed.close();

  let notWaitingAtDeadline = 0;
  if (path === 'timer') {
    const connection = await Connection.connect({ address: stack.temporalAddress });
    const client = new Client({ connection });
    let started = 0;
    await forEachLimited(ids, 32, async (orderId) => {
      await client.workflow.start(ORDER_WORKFLOW_TYPE, {
        workflowId: orderWorkflowId(orderId),
        taskQueue: stack.taskQueue,
        args: [orderLifecycleInput(orderId, { adopt: true })],
        workflowIdConflictPolicy: 'USE_EXISTING',
      });
      if (++started % 200 === 0) ctx.progress(`started ${started}/${k} workflows (deadline in ${((deadline - Date.now()) / 1000).toFixed(0)} s)`);
    });
    notWaitingAtDeadline = k - (await waitUntilAdopted(client, k, deadline, ctx.progress));
    await connection.close();
  }

  await sleep(Math.max(0, deadline - 2_000 - Date.now()));
  ctx.progress(`storm: ${k} orders expire now`);
  await observer.resetStatements();
  const meter = new ResourceMeter(stack.pids);
  const connections = sampleConnections(observer);
  const scanDirect = path === 'scan' ? createDirectActivities(stack.urlAs(ROLES.scan), { paymentWindowMs: options.windowS * 1000, maxConnections: 10 }) : undefined;
  const scanner = scanDirect
    ? startScanCanceller(scanDirect, { everyMs: options.scanEveryS * 1000, batch: options.scanBatch, prefix: group, compensationConcurrency: 8 })
    : undefined;
  let probing = true;
  const probeLatencies: number[] = [];
  let probeFailed = 0;
  let probes = 0;
  // Open loop: a probe that hangs (30-s timeout) does not hold the next ones back.
  const probe = runPaced({
    rate: PROBE_RATE,
    count: PROBE_RATE * PROBE_BOUND_S,
    maxInFlight: PROBE_RATE * 40,
    until: () => !probing,
    task: async (i) => {
      probes++;
      try {
        probeLatencies.push((await postOrder(stack.apiBase, orderBody(`${GROUPS.probe}${path}-`, i, { coupon: false }))).latencyMs);
      } catch {
        probeFailed++;
      }
    },
  });
  const settled = await waitUntilSettled(observer, group, { notBefore: deadline + 500, deadline: deadline + 180_000 }, (line) => ctx.progress(`storm: ${line}`));
  probing = false;
  await probe;
  await scanner?.stop();
  await scanDirect?.close();
  const peakConnections = await connections.stop();
  const resources = meter.finish();
  const role = path === 'timer' ? ROLES.service : ROLES.scan;
  const calls = (await observer.statementsByRole())[role]?.calls ?? 0;
  const topStatements = await observer.topStatements(role);
  const outcome = await cancelOutcome(observer, group);
  const cancelledInWindow = outcome.lagsMs.length;
  const allCompensatedS = outcome.lastCompensated ? (outcome.lastCompensated.getTime() - deadline) / 1000 : null;
  const probeCalls = path === 'timer' ? probes * perProbe : 0;
  return {
    path,
    orders: k,
    allCompensatedS: settled ? allCompensatedS : null,
    settled,
    lagMs: summarize(outcome.lagsMs),
    compensatedLagMs: summarize(outcome.compensatedLagsMs),
    lagsMs: outcome.lagsMs,
    negative: outcome.negative,
    throughput: settled && allCompensatedS ? k / allCompensatedS : null,
    peakConnections,
    probeLatencyMs: summarize(probeLatencies),
    probeFailed,
    statementsPerCancel: cancelledInWindow ? (calls - probeCalls) / cancelledInWindow : null,
    statementsNote:
      path === 'timer'
        ? `role ${role} (worker + API), minus ${probes} probe placements × ${perProbe.toFixed(1)} statements measured just before`
        : `role ${role} (the scan canceller alone, its empty scans included)`,
    topStatements,
    notWaitingAtDeadline,
    resources,
  };
}

/** Statements one POST /orders costs, from 20 placements (a probe that times out is not counted). */
async function probePlacementCost(ctx: PhaseContext): Promise<number> {
  await ctx.observer.resetStatements();
  let placed = 0;
  for (let i = 0; i < 20; i++) {
    await postOrder(ctx.stack.apiBase, orderBody(`${GROUPS.probe}cal-`, i, { coupon: false })).then(() => placed++, () => undefined);
  }
  await sleep(300);
  return placed ? ((await ctx.observer.statementsByRole())[ROLES.service]?.calls ?? 0) / placed : 0;
}

/**
 * Until `k` storm workflows wait on their timer (UNPAID in visibility, with the storm's deadline:
 * they loaded their order), or until 2 s before the deadline; returns how many do.
 */
async function waitUntilAdopted(client: Client, k: number, deadline: number, progress: (line: string) => void): Promise<number> {
  const around = (ms: number) => new Date(deadline + ms).toISOString();
  const query = [
    `WorkflowType = "${ORDER_WORKFLOW_TYPE}"`,
    'ExecutionStatus = "Running"',
    `${OrderStatusKey.name} = "UNPAID"`,
    `${OrderExpiresAtKey.name} BETWEEN "${around(-1_000)}" AND "${around(1_000)}"`,
  ].join(' AND ');
  for (let round = 0; ; round++) {
    const { count } = await client.workflow.count(query);
    if (count >= k || Date.now() >= deadline - 2_000) return Math.min(count, k);
    if (round % 5 === 0) progress(`${count}/${k} workflows waiting on their timer (deadline in ${((deadline - Date.now()) / 1000).toFixed(0)} s)`);
    await sleep(1_000);
  }
}
