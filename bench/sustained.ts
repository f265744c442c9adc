import { postOrder } from './api-client.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { forEachLimited } from '../dev/pool.js';
import type { PhaseContext } from './context.js';
import { createDirectActivities } from './direct-placement.js';
import { cancelOutcome, paidLatencies, waitUntilSettled, type CancelOutcome } from './outcomes.js';
import { runPaced, type PacedRun } from './pacer.js';
import { ResourceMeter, type ResourceUse } from './resources.js';
import { startScanCanceller, type ScanCancellerStats } from './peers/scan.js';
import { ROLES } from './stack.js';
import { summarize, type Summary } from './stats.js';
import { storeBytes, type StoreBytes } from './store-size.js';
import { GROUPS, orderBody, placeRequest, seedCoupons } from './workload.js';

/**
 * The same workload offered to each path for the same time: `rate` orders/s for `durationS`,
 * each expiring `windowS` later, so creation and cancellation overlap in a steady state.
 * timer: through the API (update-with-start, the durable timer cancels); a `payShare` of them is
 * paid through the signed webhook. scan: the same placement transaction run directly, cancelled by
 * the scan-based canceller every `scanEveryS`.
 */
export interface SustainedResult {
  path: 'timer' | 'scan';
  creation: PacedRun & { offeredRate: number; latencyMs: Summary };
  cancel: Omit<CancelOutcome, 'lagsMs' | 'compensatedLagsMs'> & {
    lagMs: Summary;
    compensatedLagMs: Summary;
    settled: boolean;
  };
  lagsMs: number[];
  payment?: { webhookResponseMs: Summary; webhookToPaidMs: Summary; notPaid: number };
  statements: Record<string, { calls: number; rows: number }>;
  /** What the phase's orders added to Temporal's store and to the service's tables, in all and per order created (bytes). */
  storeGrowth: { before: StoreBytes; after: StoreBytes; temporalPerOrder: number; servicePerOrder: number };
  scanner?: ScanCancellerStats;
  /** Over the whole phase, settling included. */
  resources: ResourceUse;
  /** While the orders were being offered only: how many cores each process took at this rate. */
  underLoad: ResourceUse;
}

/** A ramp step runs the timer path at its own rate, for its own time, on its own group of orders. */
export interface SustainedOverrides {
  rate?: number;
  durationS?: number;
  group?: string;
  warmUp?: boolean;
  giveUpBehindMs?: number;
}

export async function runSustained(
  ctx: PhaseContext,
  path: 'timer' | 'scan',
  overrides: SustainedOverrides = {},
): Promise<SustainedResult> {
  const { stack, observer } = ctx;
  const options = {
    ...ctx.options,
    ...(overrides.rate ? { rate: overrides.rate } : {}),
    ...(overrides.durationS ? { durationS: overrides.durationS } : {}),
  };
  const group = overrides.group ?? (path === 'timer' ? GROUPS.timer : GROUPS.scan);
  const count = Math.round(options.rate * options.durationS);
  await seedCoupons(stack.adminUrl, group, count);
  if (path === 'timer' && overrides.warmUp !== false) await warmUp(ctx);

  const seed =
    path === 'scan'
      ? createDirectActivities(stack.urlAs(ROLES.seed), { paymentWindowMs: options.windowS * 1000, maxConnections: 10 })
      : undefined;
  const scanDirect =
    path === 'scan'
      ? createDirectActivities(stack.urlAs(ROLES.scan), { paymentWindowMs: options.windowS * 1000, maxConnections: 10 })
      : undefined;
  const storesBefore = await storeBytes(observer, stack.temporalStore);
  await observer.resetStatements();
  const meter = new ResourceMeter(stack.pids);
  const scanner = scanDirect
    ? startScanCanceller(scanDirect, {
        everyMs: options.scanEveryS * 1000,
        batch: options.scanBatch,
        prefix: group,
        compensationConcurrency: 8,
      })
    : undefined;
  const latencies: number[] = [];
  const webhookMs: number[] = [];
  const paidSentAt = new Map<string, number>();
  const payEvery = Math.max(1, Math.round(1 / options.payShare));
  const started = Date.now();
  const creation = await runPaced({
    rate: options.rate,
    count,
    maxInFlight: 256,
    ...(overrides.giveUpBehindMs === undefined ? {} : { giveUpBehindMs: overrides.giveUpBehindMs }),
    progress: (line) => ctx.progress(`creating ${line}`),
    task: async (i) => {
      if (seed) {
        const t0 = performance.now();
        await seed.run(seed.activities.placeOrder, placeRequest(group, i));
        latencies.push(performance.now() - t0);
        return;
      }
      const placed = await postOrder(stack.apiBase, orderBody(group, i));
      latencies.push(placed.latencyMs);
      if (i % payEvery === payEvery - 1) {
        paidSentAt.set(placed.id, Date.now());
        webhookMs.push(await stack.pay(placed));
      }
    },
  });
  const underLoad = meter.soFar();
  const settled = await waitUntilSettled(
    observer,
    group,
    {
      notBefore: started + creation.elapsedS * 1000 + options.windowS * 1000,
      deadline: Date.now() + options.windowS * 1000 + 180_000,
    },
    (line) => ctx.progress(`settling: ${line}`),
  );
  await sleep(200);
  const scannerStats = await scanner?.stop();
  const resources = meter.finish();
  const statements = await observer.statementsByRole();
  const storesAfter = await storeBytes(observer, stack.temporalStore);
  const outcome = await cancelOutcome(observer, group);
  const paid = await paidLatencies(observer, paidSentAt);
  await Promise.all([seed?.close(), scanDirect?.close()]);
  const { lagsMs, compensatedLagsMs, ...rest } = outcome;
  return {
    path,
    creation: { ...creation, offeredRate: options.rate, latencyMs: summarize(latencies) },
    cancel: { ...rest, lagMs: summarize(lagsMs), compensatedLagMs: summarize(compensatedLagsMs), settled },
    lagsMs,
    ...(path === 'timer'
      ? {
          payment: {
            webhookResponseMs: summarize(webhookMs),
            webhookToPaidMs: summarize(paid.latenciesMs),
            notPaid: paid.notPaid,
          },
        }
      : {}),
    statements,
    storeGrowth: {
      before: storesBefore,
      after: storesAfter,
      temporalPerOrder: (storesAfter.temporal - storesBefore.temporal) / Math.max(1, creation.completed),
      servicePerOrder: (storesAfter.service - storesBefore.service) / Math.max(1, creation.completed),
    },
    ...(scannerStats ? { scanner: scannerStats } : {}),
    resources,
    underLoad,
  };
}

/**
 * A few orders through the whole service first: code paths compiled, workflow bundle loaded. They
 * are left to expire and settle before the measurement starts, so that their cancellations do not
 * land in the first step measured.
 */
async function warmUp(ctx: PhaseContext): Promise<void> {
  ctx.progress('warm-up: 40 orders');
  await seedCoupons(ctx.stack.adminUrl, GROUPS.warmup, 40);
  const placedBy = Date.now();
  await forEachLimited([...Array(40).keys()], 8, async (i) => {
    await postOrder(ctx.stack.apiBase, orderBody(GROUPS.warmup, i));
  });
  const windowMs = ctx.options.windowS * 1000;
  await waitUntilSettled(
    ctx.observer,
    GROUPS.warmup,
    { notBefore: Date.now() + windowMs, deadline: placedBy + windowMs + 120_000 },
    (line) => ctx.progress(`warm-up: ${line}`),
  );
}
