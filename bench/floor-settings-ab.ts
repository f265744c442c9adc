import type { PhaseContext } from './context.js';
import { floorCpuMs, runFloor } from './floor/floor.js';
import { startStockTemporal } from './floor/stock-temporal.js';
import { num, x } from './format.js';
import { ABBA_BAAB, pairRatios } from './lever-ab.js';
import { ratio } from './stats.js';

/**
 * What the project's tuning buys Temporal's floor, interleaved (`--floor-settings-ab`): segments of
 * the minimal workflow on the project's settings (A: the stack's server, the `project` worker) and
 * on the stock ones (B: a stock server of its own, started once beside it, the `stock` worker), at
 * `--rate` for `--duration` s each, ABBA BAAB, so that the machine's drift weighs on both sides
 * alike, and each server grows by the same segments. The full run has two pairs of this around the
 * order's open loop (bench/floor/around.ts), its stack's server holding the ramp's history.
 */
export interface FloorSettingsInterleaved {
  rate: number;
  segmentS: number;
  segments: Array<{ side: 'project' | 'stock'; runs: number; cpuMs: number; temporalMs: number }>;
}

export async function runFloorSettingsAb(ctx: PhaseContext, segmentS: number): Promise<FloorSettingsInterleaved> {
  const { options } = ctx;
  const stockServer = await startStockTemporal(`${options.outDir}/logs`);
  try {
    const segments: FloorSettingsInterleaved['segments'] = [];
    for (const [i, letter] of ABBA_BAAB.entries()) {
      const side = letter === 'A' ? 'project' : 'stock';
      ctx.progress(`segment ${i + 1}/${ABBA_BAAB.length}: the minimal workflow on the ${side} settings`);
      const load = { rate: options.rate, durationS: segmentS, windowS: options.windowS };
      const floor = side === 'project' ? await runFloor(ctx, side, load) : await runFloor(ctx, side, load, stockServer);
      const perRun = floor.sustained.cpuMsPerRun;
      segments.push({
        side,
        runs: floor.sustained.creation.completed,
        cpuMs: floorCpuMs(perRun),
        temporalMs: perRun.temporal ?? 0,
      });
    }
    return { rate: options.rate, segmentS, segments };
  } finally {
    await stockServer.stop();
  }
}

/** The report's section: every segment, then project ÷ stock over all of them and pair by pair. */
export function floorSettingsAbSection(c: FloorSettingsInterleaved): string[] {
  const mean = (side: 'project' | 'stock', value: (s: FloorSettingsInterleaved['segments'][number]) => number) => {
    const of = c.segments.filter((s) => s.side === side);
    return of.reduce((a, s) => a + value(s), 0) / Math.max(1, of.length);
  };
  // Project ÷ stock: the project's settings are the numerator, pairRatios' B, though they run in A's places.
  const pairs = pairRatios(
    c.segments,
    (s) => s.side === 'project',
    (s) => s.cpuMs,
  );
  const [project, stock] = [mean('project', (s) => s.cpuMs), mean('stock', (s) => s.cpuMs)];
  const [projectTemporal, stockTemporal] = [mean('project', (s) => s.temporalMs), mean('stock', (s) => s.temporalMs)];
  return [
    "## Temporal's floor on the project's settings against the stock ones, interleaved",
    '',
    `Segments of ${c.segmentS} s at ${c.rate}/s, in the order ABBA BAAB (A: the project's server dynamic config and worker options, B: Temporal's and the SDK's stock ones, a server of their own).`,
    '',
    '| segment | side | runs | CPU ms per run | of which Temporal |',
    '|---|---|---|---|---|',
    ...c.segments.map((s, i) => `| ${i + 1} | ${s.side} | ${s.runs} | ${num(s.cpuMs, 1)} | ${num(s.temporalMs, 1)} |`),
    '',
    `Project ÷ stock over all segments: ${x(ratio(project, stock))} (project ${num(project, 1)} ms, stock ${num(stock, 1)} ms; Temporal ${x(ratio(projectTemporal, stockTemporal))}); pair by pair: ${pairs.map((p) => x(p)).join(', ')}.`,
    '',
  ];
}
