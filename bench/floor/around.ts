import type { PhaseContext } from '../context.js';
import { ratio } from '../stats.js';
import { floorCpuMs, runFloor, runFloorStorm, type FloorResult, type FloorStorm } from './floor.js';
import { startStockTemporal } from './stock-temporal.js';

/**
 * Temporal's floor measured around what it is compared with, so that the full run's ratios do not
 * depend on when each side ran. This VM's speed drifts by more within minutes than the ratios'
 * margins (docs/benchmark.md, "The levers, before and after"); with each side's segments in mirror
 * order around the middle, a steady drift weighs on every side alike, as in the interleaved
 * `--floor-ab`.
 *
 * - Open loop: stock, project, the middle (the order's sustained phase), project, stock. Each floor
 *   segment lasts as long as the sustained phase: a shorter one would spread the processes' fixed
 *   cost per second (and its timers' tail) over fewer runs, and the floor would look dearer. Each
 *   stock segment gets a server of its own, started empty and stopped after it, so that no idle
 *   server runs beside the segments it is not in.
 * - Storm: the floor's storm, the middle (the order's storm), the floor's storm again.
 */
export interface FloorAround {
  /** The minimal workflow's open loop on the project's settings, before and after the middle. */
  project: [FloorResult, FloorResult];
  /** The same on Temporal's and the SDK's stock settings (a server of their own), first and last. */
  stock: [FloorResult, FloorResult];
  /** Its storms on the project's settings, before and after the middle storm. */
  storms: [FloorStorm, FloorStorm];
}

/** What the floor divides: the order's figures from the middles (none when the service did not run). */
export interface OrderFigures {
  cpuMsPerOrder: number | null;
  stormDrainS: number | null;
}

export async function floorLoopsAround<T>(
  ctx: PhaseContext,
  load: { rate: number; durationS: number; windowS: number },
  middle: () => Promise<T>,
  setPhase: (name: string) => void,
): Promise<{ project: FloorAround['project']; stock: FloorAround['stock']; middle: T }> {
  setPhase("Temporal's floor, stock settings (1 of 2)");
  const stock1 = await onStockServer(ctx, load);
  setPhase("Temporal's floor (1 of 2)");
  const project1 = await runFloor(ctx, 'project', load);
  const inTheMiddle = await middle();
  setPhase("Temporal's floor (2 of 2)");
  const project2 = await runFloor(ctx, 'project', load);
  setPhase("Temporal's floor, stock settings (2 of 2)");
  const stock2 = await onStockServer(ctx, load);
  return { project: [project1, project2], stock: [stock1, stock2], middle: inTheMiddle };
}

async function onStockServer(ctx: PhaseContext, load: Parameters<typeof runFloor>[2]): Promise<FloorResult> {
  const server = await startStockTemporal(`${ctx.options.outDir}/logs`);
  try {
    return await runFloor(ctx, 'stock', load, server);
  } finally {
    await server.stop();
  }
}

export async function floorStormsAround<T>(
  ctx: PhaseContext,
  middle: () => Promise<T>,
  setPhase: (name: string) => void,
): Promise<{ storms: FloorAround['storms']; middle: T }> {
  setPhase("Temporal's floor, storm (1 of 2)");
  const first = await runFloorStorm(ctx, ctx.options.storm);
  const inTheMiddle = await middle();
  setPhase("Temporal's floor, storm (2 of 2)");
  const second = await runFloorStorm(ctx, ctx.options.storm);
  return { storms: [first, second], middle: inTheMiddle };
}

/** A ratio over both segments of each side, and the same for each of the two pairs. */
export interface AroundRatio {
  value: number | null;
  numerator: number | null;
  denominator: number | null;
  pairs: [number | null, number | null];
}

const loopCpu = (loop: FloorResult) => floorCpuMs(loop.sustained.cpuMsPerRun);
const mean = (values: Array<number | null>) =>
  values.some((v) => v == null) ? null : values.reduce<number>((a, v) => a + v!, 0) / values.length;
const divided = (a: [number | null, number | null], b: [number | null, number | null]): AroundRatio => {
  const [numerator, denominator] = [mean(a), mean(b)];
  return {
    value: ratio(numerator, denominator),
    numerator,
    denominator,
    pairs: [ratio(a[0], b[0]), ratio(a[1], b[1])],
  };
};

/**
 * The three floor ratios the targets judge (targets.ts), each stated once: the order's CPU and
 * storm drain over the floor's on the project's settings, and the floor on the project's settings
 * over the stock ones. The middle is one phase, so it stands on both sides of its pairs.
 */
export function aroundRatios(floor: FloorAround, order: OrderFigures | undefined) {
  const project: [number, number] = [loopCpu(floor.project[0]), loopCpu(floor.project[1])];
  const drains: [number | null, number | null] = [floor.storms[0].drainS, floor.storms[1].drainS];
  return {
    orderOverFloor: order && divided([order.cpuMsPerOrder, order.cpuMsPerOrder], project),
    stormOverFloor: order && divided([order.stormDrainS, order.stormDrainS], drains),
    projectOverStock: divided(project, [loopCpu(floor.stock[0]), loopCpu(floor.stock[1])]),
  };
}

/** Each process's CPU per run, averaged over a side's segments (what the bottleneck analysis compares). */
export function meanPerRun(perRuns: Array<Record<string, number>>): Record<string, number> {
  const keys = [...new Set(perRuns.flatMap((p) => Object.keys(p)))];
  return Object.fromEntries(keys.map((k) => [k, perRuns.reduce((a, p) => a + (p[k] ?? 0), 0) / perRuns.length]));
}
