import { setTimeout as sleep } from 'node:timers/promises';
import type { PhaseContext } from './context.js';
import { ms, num, x } from './format.js';
import { SERVICE_COMPONENTS, serviceCpuS } from './resources.js';
import { ratio } from './stats.js';
import { runSustained } from './sustained.js';

/**
 * A lever's before and after, interleaved in one run (`--ab`): short sustained segments of the
 * timer path, alternately without the lever (A) and with it (B), in the order ABBA BAAB, so that a
 * machine whose speed drifts over minutes weighs on both sides alike. (Sequential runs could not
 * tell levers apart: this VM ran the same baseline at 105, 119, 144 and 165 ms per order within 40
 * minutes, docs/benchmark.md.) The lever: `--lever-env KEY=VALUE` for the workers, restarted
 * before every segment on either side so both pay the same restart; `--lever-dynamic
 * KEY=VALUE` for the server, its dynamic config file rewritten in place and read again within the
 * server's 10-s poll; `--lever-build DIR` for a change of the workflow or the activities, the B
 * side's workers run from another checkout's dist/ (the bench makes the restarted workers' build
 * current before the segment starts, and a segment's runs have all closed before the next begins,
 * so no run changes build).
 */
export interface LeverSegment {
  side: 'A' | 'B';
  orders: number;
  /** Per order created, over the segment and its settling, by service process. */
  cpuMsPerOrder: Record<string, number>;
  totalMs: number;
  lagP99Ms: number | null;
}

export interface LeverComparison {
  lever: string;
  rate: number;
  segmentS: number;
  segments: LeverSegment[];
}

/** Eight segments, each side first in two of the four adjacent pairs: a linear drift weighs on both alike. */
export const ABBA_BAAB: ReadonlyArray<'A' | 'B'> = ['A', 'B', 'B', 'A', 'B', 'A', 'A', 'B'];

/**
 * B ÷ A within each of ABBA BAAB's four adjacent pairs, (A,B), (B,A), (B,A), (A,B): `isB` says
 * which side a segment is, `value` what is divided.
 */
export function pairRatios<S>(segments: readonly S[], isB: (s: S) => boolean, value: (s: S) => number) {
  return [0, 2, 4, 6].map((i) => {
    const [p, q] = [segments[i]!, segments[i + 1]!];
    const [a, b] = isB(p) ? [q, p] : [p, q];
    return ratio(value(b), value(a));
  });
}
/** The server reads its dynamic config file every 10 s (dev/temporal/config/server.yaml). */
const DYNAMIC_CONFIG_POLL_MS = 12_000;

export async function runLeverAb(ctx: PhaseContext, segmentS: number): Promise<LeverComparison> {
  const { options, stack } = ctx;
  const segments: LeverSegment[] = [];
  let current: 'A' | 'B' | undefined;
  for (const [i, side] of ABBA_BAAB.entries()) {
    if (side !== current && Object.keys(options.leverDynamic).length) {
      await stack.setDynamicConfig(side === 'B' ? options.leverDynamic : {});
      await sleep(DYNAMIC_CONFIG_POLL_MS);
    }
    current = side;
    await stack.restartWorkers(
      options.workerCache,
      side === 'B' ? options.leverEnv : {},
      side === 'B' ? options.leverBuild : undefined,
    );
    ctx.progress(`segment ${i + 1}/${ABBA_BAAB.length}: ${side === 'A' ? 'without' : 'with'} the lever`);
    const run = await runSustained(ctx, 'timer', {
      rate: options.rate,
      durationS: segmentS,
      group: `bench-ab-${i}-`,
      warmUp: false,
    });
    const orders = Math.max(1, run.creation.completed);
    const cpuMsPerOrder = Object.fromEntries(
      SERVICE_COMPONENTS.map((c) => [c, (1000 * (run.resources.cpuS[c] ?? 0)) / orders]),
    );
    segments.push({
      side,
      orders: run.creation.completed,
      cpuMsPerOrder,
      totalMs: (1000 * serviceCpuS(run.resources)) / orders,
      lagP99Ms: run.cancel.lagMs.p99,
    });
  }
  return { lever: leverText(options), rate: options.rate, segmentS, segments };
}

function leverText({ leverEnv, leverDynamic, leverBuild }: PhaseContext['options']): string {
  return [
    ...Object.entries(leverEnv).map(([k, v]) => `${k}=${v}`),
    ...Object.entries(leverDynamic).map(([k, v]) => `dynamic config ${k}: ${v}`),
    ...(leverBuild === undefined ? [] : [`the workers of ${leverBuild}`]),
  ].join(', ');
}

/** The report's section: every segment, then B against A over all of them and pair by pair. */
export function leverAbSection(c: LeverComparison): string[] {
  const mean = (side: 'A' | 'B', f: (s: LeverSegment) => number) => {
    const of = c.segments.filter((s) => s.side === side);
    return of.reduce((a, s) => a + f(s), 0) / Math.max(1, of.length);
  };
  const pairs = pairRatios(
    c.segments,
    (s) => s.side === 'B',
    (s) => s.totalMs,
  );
  const row = (s: LeverSegment, i: number) =>
    `| ${i + 1} | ${s.side} | ${s.orders} | ${SERVICE_COMPONENTS.map((k) => num(s.cpuMsPerOrder[k], 1)).join(' / ')} = ${num(s.totalMs, 1)} | ${ms(s.lagP99Ms)} |`;
  return [
    `## A lever, before (A) and after (B), interleaved: ${c.lever}`,
    '',
    `Segments of ${c.segmentS} s at ${c.rate}/s, in the order ABBA BAAB, the workers restarted before each.`,
    '',
    '| segment | side | orders | CPU ms per order: postgres / temporal / worker / API = total | cancel lag p99 |',
    '|---|---|---|---|---|',
    ...c.segments.map(row),
    '',
    `B ÷ A over all segments: ${x(
      ratio(
        mean('B', (s) => s.totalMs),
        mean('A', (s) => s.totalMs),
      ),
    )} (A ${num(
      mean('A', (s) => s.totalMs),
      1,
    )} ms, B ${num(
      mean('B', (s) => s.totalMs),
      1,
    )} ms; worker ${x(
      ratio(
        mean('B', (s) => s.cpuMsPerOrder.worker ?? 0),
        mean('A', (s) => s.cpuMsPerOrder.worker ?? 0),
      ),
    )}, Temporal ${x(
      ratio(
        mean('B', (s) => s.cpuMsPerOrder.temporal ?? 0),
        mean('A', (s) => s.cpuMsPerOrder.temporal ?? 0),
      ),
    )}); pair by pair: ${pairs.map((p) => x(p)).join(', ')}.`,
    '',
  ];
}
