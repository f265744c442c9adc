import type { PhaseContext } from './context.js';
import { floorCpuMs, runFloor, runFloorStorm } from './floor/floor.js';
import { num, x } from './format.js';
import { ABBA_BAAB, pairRatios } from './lever-ab.js';
import { serviceCpuS } from './resources.js';
import { ratio } from './stats.js';
import { runStorm } from './storm.js';
import { runSustained } from './sustained.js';

/**
 * An order against Temporal's floor, interleaved (`--floor-ab`): segments of the timer path (A:
 * the service's CPU per order) and of the minimal workflow on the project's settings (B: the floor's
 * processes per run, bench/floor/floor.ts), at `--rate` for `--duration` s each, in the order ABBA
 * BAAB, so that the machine's drift weighs on both sides alike. The full run does the same with one
 * order phase between two floor segments (bench/floor/around.ts); this gives four pairs where it has
 * two, for a lever's finer differences. Each side starts its worker afresh before its segment, on
 * the same cache size. With `--ab-storm` each segment is a storm of `--storm` instead, the order's
 * (storm.ts) against the floor's, and their drains are divided too.
 */
export interface FloorInterleaved {
  segmentKind: 'sustained' | 'storm';
  rate: number;
  segmentS: number;
  /** CPU per run created (sustained) or per run closed, for the order per cancellation with its compensation, probes out (storm). */
  segments: Array<{ side: 'order' | 'floor'; runs: number; cpuMs: number | null; drainS?: number | null }>;
}

export async function runFloorAb(ctx: PhaseContext, segmentS: number): Promise<FloorInterleaved> {
  const { options, stack } = ctx;
  const segments: FloorInterleaved['segments'] = [];
  for (const [i, letter] of ABBA_BAAB.entries()) {
    const side = letter === 'A' ? 'order' : 'floor';
    ctx.progress(`segment ${i + 1}/${ABBA_BAAB.length}: ${side === 'order' ? 'orders' : 'the minimal workflow'}`);
    if (side === 'order') await stack.restartWorkers(options.workerCache);
    segments.push({
      side,
      ...(options.abStorm ? await stormSegment(ctx, side, i) : await sustainedSegment(ctx, side, i, segmentS)),
    });
  }
  return { segmentKind: options.abStorm ? 'storm' : 'sustained', rate: options.rate, segmentS, segments };
}

type Segment = Omit<FloorInterleaved['segments'][number], 'side'>;

async function sustainedSegment(
  ctx: PhaseContext,
  side: 'order' | 'floor',
  i: number,
  segmentS: number,
): Promise<Segment> {
  const { options } = ctx;
  if (side === 'order') {
    const run = await runSustained(ctx, 'timer', {
      rate: options.rate,
      durationS: segmentS,
      group: `bench-fab-${i}-`,
      warmUp: false,
    });
    const runs = run.creation.completed;
    return { runs, cpuMs: (1000 * serviceCpuS(run.resources)) / Math.max(1, runs) };
  }
  const floor = await runFloor(ctx, 'project', {
    rate: options.rate,
    durationS: segmentS,
    windowS: options.windowS,
  });
  return { runs: floor.sustained.creation.completed, cpuMs: floorCpuMs(floor.sustained.cpuMsPerRun) };
}

async function stormSegment(ctx: PhaseContext, side: 'order' | 'floor', i: number): Promise<Segment> {
  if (side === 'order') {
    // A group per segment: the storm's coupons and its settling are found by the group's prefix.
    const run = await runStorm(ctx, 'timer', { group: `bench-fab-storm-${i}-` });
    const cpu = run.cpuMsPerCancel;
    return {
      runs: run.orders,
      cpuMs: cpu ? Object.values(cpu).reduce((a, b) => a + b, 0) : null,
      drainS: run.allCompensatedS,
    };
  }
  const storm = await runFloorStorm(ctx, ctx.options.storm);
  return { runs: storm.runs, cpuMs: floorCpuMs(storm.cpuMsPerRun), drainS: storm.drainS };
}

/** The report's section: every segment, then the order ÷ the floor over all of them and pair by pair. */
export function floorAbSection(c: FloorInterleaved): string[] {
  const storm = c.segmentKind === 'storm';
  type S = FloorInterleaved['segments'][number];
  // A side's mean is unknown when one of its segments is (a storm that did not settle): no guess.
  const mean = (side: S['side'], value: (s: S) => number | null) => {
    const values = c.segments.filter((s) => s.side === side).map(value);
    return values.some((v) => v == null)
      ? null
      : values.reduce<number>((a, v) => a + v!, 0) / Math.max(1, values.length);
  };
  // Order ÷ floor: the order is the numerator, pairRatios' B, though it runs in ABBA BAAB's A places.
  const divided = (value: (s: S) => number | null, unit: string) => {
    const [order, floor] = [mean('order', value), mean('floor', value)];
    const pairs = pairRatios(c.segments, (s) => s.side === 'order', value);
    return `${x(ratio(order, floor))} (order ${num(order, 1)}${order == null ? '' : unit}, floor ${num(floor, 1)}${floor == null ? '' : unit}); pair by pair: ${pairs.map((p) => x(p)).join(', ')}`;
  };
  const drain = (s: S) => s.drainS ?? null;
  return [
    "## An order against Temporal's floor, interleaved",
    '',
    storm
      ? "Segments of one storm each (runs whose deadlines fall in the same second), in the order ABBA BAAB (A: orders through the service, adopted and cancelled with their compensation; B: the minimal workflow on the project's settings)."
      : `Segments of ${c.segmentS} s at ${c.rate}/s, in the order ABBA BAAB (A: orders through the service, B: the minimal workflow on the project's settings).`,
    '',
    `| segment | side | runs | CPU ms per ${storm ? 'run closed' : 'run'} |${storm ? ' all closed after |' : ''}`,
    `|---|---|---|---|${storm ? '---|' : ''}`,
    ...c.segments.map(
      (s, i) =>
        `| ${i + 1} | ${s.side} | ${s.runs} | ${num(s.cpuMs, 1)} |${storm ? ` ${s.drainS == null ? 'not settled' : `${num(s.drainS, 1)} s`} |` : ''}`,
    ),
    '',
    `CPU per run, order ÷ floor over all segments: ${divided((s) => s.cpuMs, ' ms')}.`,
    ...(storm ? ['', `The storm's drain, order ÷ floor: ${divided(drain, ' s')}.`] : []),
    '',
  ];
}
