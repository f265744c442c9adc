import { Client, Connection } from '@temporalio/client';
import { ORDER_WORKFLOW_TYPE, orderLifecycleInput, orderWorkflowId } from '../domain/messages.js';
import { OrderExpiresAtKey, OrderStatusKey } from '../domain/search-attributes.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { forEachLimited } from '../dev/pool.js';
import type { PhaseContext } from './context.js';
import { sampleConnections } from './db-stats.js';
import { createDirectActivities } from './direct-placement.js';
import { cancelOutcome, unsettledCount, waitUntilSettled } from './outcomes.js';
import { crashOutcome, type CrashOutcome } from './peers/peer-outcomes.js';
import { ResourceMeter, SERVICE_COMPONENTS, type ResourceUse, type ServiceComponent } from './resources.js';
import { startScanCanceller } from './peers/scan.js';
import { ROLES } from './stack.js';
import { invariantViolations } from './invariants.js';
import { summarize, type Summary } from './stats.js';
import { measureProbeCost, probeGroup, startProbes, type ProbeCost, type ProbeResult } from './storm-probes.js';
import { GROUPS, placeRequest, seedCoupons } from './workload.js';

/** Work the checker leaves alone after a crash storm: the ramp's and probes' orders may still be within their window. */
const INVARIANT_GRACE_MS = 60_000;
/**
 * Lead time per storm order on the timer path: adoption ran at 20-55 orders/s on 2 cores before
 * the storm levers (docs/benchmark.md, "The levers, before and after"), 55-65/s since (2,000 in
 * 31-37 s on a cold cache, the same on 2026-12-04's fast and slow machines), 50/s on 2026-12-07's
 * slower one, where 22 ms left 74 of 2,000 short of their timers; this allows for 40/s.
 * A storm whose runs were not all on their timers at the deadline says so, and its ratio to the
 * floor's is not judged. (30 ms, for 33/s, left each storm of 2,000 idle for 40 s, and the full
 * bench past its 25 minutes.)
 */
const ADOPTION_MS_PER_ORDER = 25;

/**
 * K orders expiring in the same second. Both paths get orders written by the same placeOrder
 * transaction with one deadline T; the timer path then gets one OrderLifecycle run per order that
 * adopts it (the reconciliation path: load the order, durable timer until T, guarded cancel,
 * compensation), the scan path its canceller. Measured from T: until every order is cancelled
 * and compensated, peak connections, and the answers of POST /orders and the webhook meanwhile
 * (storm-probes.ts).
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
  probes: ProbeResult;
  /** Timer path: what one probe costs, measured before the storm (taken out of the per-cancellation figures). */
  probeCost: ProbeCost | null;
  /** pg_stat_statements calls of the cancelling role in the window, per cancelled order. */
  statementsPerCancel: number | null;
  /** Timer path: CPU of each service process per cancellation with its compensation, the probes taken out (ms). */
  cpuMsPerCancel: Record<ServiceComponent, number> | null;
  statementsNote: string;
  topStatements: Array<{ calls: number; query: string }>;
  /**
   * `crash`: when the worker was SIGKILLed (and started again), what that lost or ran twice, and
   * the invariant checker's violations over the database once the storm settled.
   */
  crash?: { killedAtS: number; cancelledAtKill: number; outcome: CrashOutcome; invariantViolations: string[] };
  /** Timer path: storm workflows not yet waiting on their timer 2 s before the deadline. */
  notWaitingAtDeadline: number;
  resources: ResourceUse;
}

export async function runStorm(
  ctx: PhaseContext,
  path: 'timer' | 'scan',
  /**
   * `crash`: the worker SIGKILLed a third of the way; `warm`: the warm pair's storm, on orders of its
   * own; `group`: orders of that group instead (`--ab --ab-storm`: a storm per segment).
   */
  { crash = false, warm = false, group: ownGroup }: { crash?: boolean; warm?: boolean; group?: string } = {},
): Promise<StormResult> {
  const { options, stack, observer } = ctx;
  const k = crash ? options.crashStorm : options.storm;
  const group =
    ownGroup ??
    (crash
      ? GROUPS.timerCrashStorm
      : warm
        ? GROUPS.timerWarmStorm
        : path === 'timer'
          ? GROUPS.timerStorm
          : GROUPS.scanStorm);
  await seedCoupons(stack.adminUrl, group, k);
  // What one probe costs, to take the probes out of the timer storm's figures; measured first, while
  // the service is idle. (The scan storm's figures are the canceller's own role: no probe in them.)
  const probeCost = path === 'timer' ? await measureProbeCost(ctx, probeGroup(path, 'cost')) : null;
  // Timer path: every workflow must be waiting on its timer before the deadline (adoption costs
  // about as much as a cancellation), or the storm would measure the adoption backlog instead.
  const leadMs = path === 'timer' ? 15_000 + k * ADOPTION_MS_PER_ORDER : 10_000 + k * 2;
  const deadline = Date.now() + leadMs;

  ctx.progress(`seeding ${k} orders expiring at ${new Date(deadline).toISOString()}`);
  const seed = createDirectActivities(stack.urlAs(ROLES.seed), {
    paymentWindowMs: options.windowS * 1000,
    maxConnections: 10,
  });
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
      if (++started % 200 === 0)
        ctx.progress(
          `started ${started}/${k} workflows (deadline in ${((deadline - Date.now()) / 1000).toFixed(0)} s)`,
        );
    });
    notWaitingAtDeadline = k - (await waitUntilAdopted(client, k, deadline, ctx.progress));
    await connection.close();
  }

  await sleep(Math.max(0, deadline - 2_000 - Date.now()));
  ctx.progress(`storm: ${k} orders expire now`);
  await observer.resetStatements();
  const meter = new ResourceMeter(stack.pids);
  const connections = sampleConnections(observer);
  const scanDirect =
    path === 'scan'
      ? createDirectActivities(stack.urlAs(ROLES.scan), { paymentWindowMs: options.windowS * 1000, maxConnections: 10 })
      : undefined;
  const scanner = scanDirect
    ? startScanCanceller(scanDirect, {
        everyMs: options.scanEveryS * 1000,
        batch: options.scanBatch,
        prefix: group,
        compensationConcurrency: 8,
      })
    : undefined;
  const probing = startProbes(stack, probeGroup(path, 'storm'));
  const killed = crash ? await killWorkerMidStorm(ctx, group, deadline) : undefined;
  const settled = await waitUntilSettled(
    observer,
    group,
    { notBefore: deadline + 500, deadline: deadline + 180_000 },
    (line) => ctx.progress(`storm: ${line}`),
  );
  const probes = await probing.stop();
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
  const probeCalls = probeCost ? probes.sent * probeCost.statements : 0;
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
    probes,
    probeCost,
    statementsPerCancel: cancelledInWindow ? (calls - probeCalls) / cancelledInWindow : null,
    cpuMsPerCancel:
      probeCost && cancelledInWindow ? perCancel(resources, probes.sent, probeCost, cancelledInWindow) : null,
    statementsNote: probeCost
      ? `role ${role} (worker + API), minus ${probes.sent} probes (placed and paid) × ${probeCost.statements.toFixed(1)} statements measured just before`
      : `role ${role} (the scan canceller alone, its empty scans included)`,
    topStatements,
    notWaitingAtDeadline,
    resources,
    ...(killed
      ? {
          crash: {
            ...killed,
            outcome: await crashOutcome(observer, group, []),
            invariantViolations: await invariantViolations(stack.adminUrl, INVARIANT_GRACE_MS),
          },
        }
      : {}),
  };
}

/**
 * The crash column of the timer path: once a third of the storm is cancelled, the worker is
 * SIGKILLed and started again at once; what it held is Temporal's to hand out again.
 */
async function killWorkerMidStorm(
  ctx: PhaseContext,
  group: string,
  deadline: number,
): Promise<{ killedAtS: number; cancelledAtKill: number }> {
  for (;;) {
    const { cancelled } = await unsettledCount(ctx.observer, group);
    if (cancelled >= ctx.options.crashStorm / 3 || Date.now() > deadline + 120_000) break;
    await sleep(100);
  }
  const { cancelled: cancelledAtKill } = await unsettledCount(ctx.observer, group);
  const killedAtS = (Date.now() - deadline) / 1000;
  await ctx.stack.restartWorker();
  ctx.progress(
    `storm: worker SIGKILLed at +${killedAtS.toFixed(1)} s (${cancelledAtKill} cancelled), polling again at +${((Date.now() - deadline) / 1000).toFixed(1)} s`,
  );
  return { killedAtS, cancelledAtKill };
}

/**
 * Each service process's CPU per cancellation, less what the probes placed and paid meanwhile cost
 * (never below 0: the API does little but the probes, so noise could tip its remainder under).
 */
function perCancel(
  resources: ResourceUse,
  probes: number,
  cost: ProbeCost,
  cancelled: number,
): Record<ServiceComponent, number> {
  return Object.fromEntries(
    SERVICE_COMPONENTS.map((c) => [
      c,
      Math.max(0, 1000 * (resources.cpuS[c] ?? 0) - probes * (cost.cpuMs[c] ?? 0)) / cancelled,
    ]),
  ) as Record<ServiceComponent, number>;
}

/**
 * Until `k` storm workflows wait on their timer (UNPAID in visibility, with the storm's deadline:
 * they loaded their order), or until 2 s before the deadline; returns how many do.
 */
async function waitUntilAdopted(
  client: Client,
  k: number,
  deadline: number,
  progress: (line: string) => void,
): Promise<number> {
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
    if (round % 5 === 0)
      progress(
        `${count}/${k} workflows waiting on their timer (deadline in ${((deadline - Date.now()) / 1000).toFixed(0)} s)`,
      );
    await sleep(1_000);
  }
}
