import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client, Connection } from '@temporalio/client';
import { forEachLimited } from '../../dev/pool.js';
import { benchChild } from '../child-process.js';
import type { PhaseContext } from '../context.js';
import { runPaced, type PacedRun } from '../pacer.js';
import { ResourceMeter, type ResourceUse } from '../resources.js';
import { summarize, type Summary } from '../stats.js';
import { workerTuningEnv } from '../worker-env.js';
import { closeTimes, startMinimalTimer, waitUntilClosed } from './runs.js';
import type { DynamicConfig } from '../../dev/temporal/server.js';
import type { FloorWorkerArgs } from './worker-main.js';

/**
 * Temporal's floor on the bench's own server: the minimal workflow (bench/floor/workflows.ts) with a
 * worker of its own, open loop at `rate` for `durationS` (each run's timer `windowS` after its
 * start). CPU is every process's (Temporal, the floor's worker, the bench as the client, and the idle
 * service) per run.
 */
export interface FloorResult {
  /** The floor's worker options. */
  settings: FloorWorkerArgs['settings'];
  /** The server's dynamic config. */
  server: DynamicConfig;
  sustained: {
    creation: PacedRun & { offeredRate: number; latencyMs: Summary };
    allClosed: boolean;
    resources: ResourceUse;
    cpuMsPerRun: Record<string, number>;
  };
}

/**
 * The floor's storm: `runs` minimal runs whose timers fire in the same second, on the project's
 * settings; its drain is the last run's close after the common fire time.
 */
export interface FloorStorm {
  runs: number;
  /** Runs whose update-with-start had answered before the fire time. */
  startedBeforeFire: number;
  allClosed: boolean;
  /** Seconds from the fire time to the last close, and the median close. */
  drainS: number | null;
  medianCloseS: number | null;
  resources: ResourceUse;
  cpuMsPerRun: Record<string, number>;
}

/**
 * The floor's own processes: Temporal (and PostgreSQL, its store with `--temporal postgres`), the
 * floor's worker, and the bench as its client; the service's idle processes are left out.
 */
export const FLOOR_COMPONENTS = ['postgres', 'temporal', 'floor worker', 'bench'];
export const floorCpuMs = (perRun: Record<string, number>) =>
  FLOOR_COMPONENTS.reduce((sum, c) => sum + (perRun[c] ?? 0), 0);

const WORKFLOWS_PATH = fileURLToPath(new URL('./workflows.ts', import.meta.url));
/** Lead time per storm run before the fire time: starts ran at about 100/s here; this allows for 50/s. */
const START_MS_PER_RUN = 20;

/** The server the floor runs on: the stack's by default (a stock one for the stock settings, stock-temporal.ts). */
export interface FloorServer {
  address: string;
  pids: Array<number | undefined>;
  dynamicConfig: DynamicConfig;
}

const stackServer = (ctx: PhaseContext): FloorServer => ({
  address: ctx.stack.temporalAddress,
  pids: ctx.stack.pids.temporal ?? [],
  dynamicConfig: ctx.options.stockTemporal ? 'stock' : 'project',
});

export async function runFloor(
  ctx: PhaseContext,
  settings: FloorWorkerArgs['settings'],
  load: { rate: number; durationS: number; windowS: number },
  temporal: FloorServer = stackServer(ctx),
): Promise<FloorResult> {
  return withFloorWorker(ctx, settings, temporal, async ({ client, tag, roots }) => {
    // Open loop at the rate, each run's timer a window after its start.
    ctx.progress(`floor (${settings}): ${load.rate}/s for ${load.durationS} s, timers ${load.windowS} s later`);
    const sustainedFrom = Date.now() - 1_000; // visibility's StartTime is the server's clock
    const meter = new ResourceMeter(roots);
    const latencies: number[] = [];
    const creation = await runPaced({
      rate: load.rate,
      count: Math.round(load.rate * load.durationS),
      maxInFlight: 256,
      progress: (line) => ctx.progress(`floor: starting ${line}`),
      task: async (i) => {
        const t0 = performance.now();
        await startMinimalTimer(client, `${tag}-s-${i}`, Date.now() + load.windowS * 1000);
        latencies.push(performance.now() - t0);
      },
    });
    const sustainedClosed = await waitUntilClosed(
      client,
      sustainedFrom,
      Date.now() + load.windowS * 1000 + 120_000,
      ctx.progress,
    );
    const sustainedUse = meter.finish();

    return {
      settings,
      server: temporal.dynamicConfig,
      sustained: {
        creation: { ...creation, offeredRate: load.rate, latencyMs: summarize(latencies) },
        allClosed: sustainedClosed,
        resources: sustainedUse,
        cpuMsPerRun: perRun(sustainedUse, creation.completed),
      },
    };
  });
}

/** The floor's storm, on the project's settings and the stack's server. */
export async function runFloorStorm(ctx: PhaseContext, runs: number): Promise<FloorStorm> {
  return withFloorWorker(ctx, 'project', stackServer(ctx), ({ client, tag, roots }) =>
    floorStorm(ctx, client, tag, runs, roots),
  );
}

const perRun = (r: ResourceUse, runs: number) =>
  Object.fromEntries(Object.entries(r.cpuS).map(([k, s]) => [k, (1000 * s) / Math.max(1, runs)]));

/** Starts the floor's worker on `temporal`, warms it with 10 runs, lends `work` a client, and stops it all after. */
async function withFloorWorker<T>(
  ctx: PhaseContext,
  settings: FloorWorkerArgs['settings'],
  temporal: FloorServer,
  work: (on: { client: Client; tag: string; roots: Record<string, Array<number | undefined>> }) => Promise<T>,
): Promise<T> {
  const { stack, options } = ctx;
  const worker = benchChild(
    `floor-worker-${settings}`,
    'bench/floor/worker-main.ts',
    {
      address: temporal.address,
      namespace: 'default',
      workflowsPath: WORKFLOWS_PATH,
      settings,
      sdkMetricsAddress: `127.0.0.1:${options.ports.floorSdkMetrics}`,
    } satisfies FloorWorkerArgs,
    join(options.outDir, 'logs'),
    // The service's workers' tuning, which the `project` worker applies; the `stock` one takes the cache's size only.
    workerTuningEnv(options.serviceEnv, options.workerCache),
  );
  const proc = await worker.start();
  const connection = await Connection.connect({ address: temporal.address });
  const client = new Client({ connection });
  const tag = `floor-${settings}-${Date.now()}`;
  try {
    ctx.progress(`floor (${settings} settings): warm-up, 10 runs`);
    const warmFire = Date.now() + 2_000;
    await forEachLimited([...Array(10).keys()], 10, (i) => startMinimalTimer(client, `${tag}-warm-${i}`, warmFire));
    await waitUntilClosed(client, warmFire - 60_000, Date.now() + 60_000, ctx.progress);
    return await work({ client, tag, roots: { ...stack.pids, temporal: temporal.pids, 'floor worker': [proc.pid] } });
  } finally {
    await connection.close();
    await proc.stop();
  }
}

/** The storm: `runs` minimal runs whose timers fire at one instant, once all of them have started. */
async function floorStorm(
  ctx: PhaseContext,
  client: Client,
  tag: string,
  runs: number,
  roots: Record<string, Array<number | undefined>>,
): Promise<FloorStorm> {
  const fireAt = Date.now() + 10_000 + runs * START_MS_PER_RUN;
  ctx.progress(`floor: storm of ${runs}, firing at ${new Date(fireAt).toISOString()}`);
  const stormFrom = Date.now() - 1_000;
  let startedBeforeFire = 0;
  await forEachLimited([...Array(runs).keys()], 32, async (i) => {
    await startMinimalTimer(client, `${tag}-storm-${i}`, fireAt);
    if (Date.now() < fireAt) startedBeforeFire++;
  });
  await sleep(Math.max(0, fireAt - 2_000 - Date.now()));
  const stormMeter = new ResourceMeter(roots);
  const stormClosed = await waitUntilClosed(client, stormFrom, fireAt + 180_000, ctx.progress);
  const stormUse = stormMeter.finish();
  const closes = (await closeTimes(client, stormFrom)).map((t) => (t - fireAt) / 1000);
  const closed = summarize(closes);
  return {
    runs,
    startedBeforeFire,
    allClosed: stormClosed,
    drainS: stormClosed ? closed.max : null,
    medianCloseS: closed.p50,
    resources: stormUse,
    cpuMsPerRun: perRun(stormUse, closes.length),
  };
}
