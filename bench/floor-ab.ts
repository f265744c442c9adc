import type { PhaseContext } from './context.js';
import { floorCpuMs, runFloor } from './floor/floor.js';
import { num, x } from './format.js';
import { ABBA_BAAB, pairRatios } from './lever-ab.js';
import { serviceCpuS } from './resources.js';
import { ratio } from './stats.js';
import { runSustained } from './sustained.js';

/**
 * An order against Temporal's floor, interleaved (`--floor-ab`): segments of the timer path (A:
 * the service's CPU per order) and of the minimal workflow on the project's settings (B: the floor's
 * processes per run, bench/floor/floor.ts), at `--rate` for `--duration` s each, in the order ABBA
 * BAAB. The full run divides its sustained phase by its floor phase, minutes apart on a machine
 * whose speed drifts by more than the levers it judges (docs/benchmark.md); here the drift weighs
 * on both sides alike. Each side starts its worker afresh before its segment, on the same cache size.
 */
export interface FloorInterleaved {
  rate: number;
  segmentS: number;
  segments: Array<{ side: 'order' | 'floor'; runs: number; cpuMs: number }>;
}

export async function runFloorAb(ctx: PhaseContext, segmentS: number): Promise<FloorInterleaved> {
  const { options, stack } = ctx;
  const segments: FloorInterleaved['segments'] = [];
  for (const [i, letter] of ABBA_BAAB.entries()) {
    const side = letter === 'A' ? 'order' : 'floor';
    ctx.progress(`segment ${i + 1}/${ABBA_BAAB.length}: ${side === 'order' ? 'orders' : 'the minimal workflow'}`);
    if (side === 'order') {
      await stack.restartWorkers(options.workerCache);
      const run = await runSustained(ctx, 'timer', {
        rate: options.rate,
        durationS: segmentS,
        group: `bench-fab-${i}-`,
        warmUp: false,
      });
      const runs = run.creation.completed;
      segments.push({ side, runs, cpuMs: (1000 * serviceCpuS(run.resources)) / Math.max(1, runs) });
    } else {
      const floor = await runFloor(ctx, 'project', {
        rate: options.rate,
        durationS: segmentS,
        windowS: options.windowS,
        storm: 0,
      });
      segments.push({
        side,
        runs: floor.sustained.creation.completed,
        cpuMs: floorCpuMs(floor.sustained.cpuMsPerRun),
      });
    }
  }
  return { rate: options.rate, segmentS, segments };
}

/** The report's section: every segment, then the order ÷ the floor over all of them and pair by pair. */
export function floorAbSection(c: FloorInterleaved): string[] {
  const mean = (side: 'order' | 'floor') => {
    const of = c.segments.filter((s) => s.side === side);
    return of.reduce((a, s) => a + s.cpuMs, 0) / Math.max(1, of.length);
  };
  // Order ÷ floor: the order is the numerator, pairRatios' B, though it runs in ABBA BAAB's A places.
  const pairs = pairRatios(
    c.segments,
    (s) => s.side === 'order',
    (s) => s.cpuMs,
  );
  return [
    "## An order against Temporal's floor, interleaved",
    '',
    `Segments of ${c.segmentS} s at ${c.rate}/s, in the order ABBA BAAB (A: orders through the service, B: the minimal workflow on the project's settings).`,
    '',
    '| segment | side | runs | CPU ms per run |',
    '|---|---|---|---|',
    ...c.segments.map((s, i) => `| ${i + 1} | ${s.side} | ${s.runs} | ${num(s.cpuMs, 1)} |`),
    '',
    `Order ÷ floor over all segments: ${x(ratio(mean('order'), mean('floor')))} (order ${num(mean('order'), 1)} ms, floor ${num(mean('floor'), 1)} ms); pair by pair: ${pairs.map((p) => x(p)).join(', ')}.`,
    '',
  ];
}
