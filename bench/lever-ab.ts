import { setTimeout as sleep } from 'node:timers/promises';
import type { PhaseContext } from './context.js';
import { ms, num, x } from './format.js';
import { SERVICE_COMPONENTS, serviceCpuS } from './resources.js';
import { ratio } from './stats.js';
import { runStorm } from './storm.js';
import { runSustained } from './sustained.js';

/**
 * A lever's before and after, interleaved in one run (`--ab`): short sustained segments of the
 * timer path, alternately without the lever (A) and with it (B), in the order ABBA BAAB, so that a
 * machine whose speed drifts over minutes weighs on both sides alike. (Sequential runs could not
 * tell levers apart: this VM ran the same baseline at 105, 119, 144 and 165 ms per order within 40
 * minutes, docs/benchmark.md.) The lever: `--lever-env KEY=VALUE` for the workers, restarted
 * before every segment on either side so both pay the same restart; `--lever-dynamic
 * KEY=VALUE` for the server, its dynamic config file rewritten in place and read again within the
 * server's 10-s poll; `--lever-server-env KEY=VALUE` for the server's process (Go's GOGC, the
 * server's metrics), the server restarted before every segment on either side; `--lever-build
 * DIR` for a change of the workflow, the activities or the API, the B side's workers and API run
 * from another checkout's dist/ (the bench makes the restarted workers' build current before the segment
 * starts, and a segment's runs have all closed before the next begins, so no run changes build). `--ab-storm`: each segment is a timer-path storm of `--storm` orders
 * instead (storm.ts), for a lever that acts only when a backlog builds, such as the sticky queue's
 * timeout; its drain is compared too.
 */
export interface LeverSegment {
  side: 'A' | 'B';
  orders: number;
  /**
   * By service process: per order created over a sustained segment and its settling, or per
   * cancellation with its compensation in a storm (its probes taken out, storm.ts).
   */
  cpuMsPerOrder: Record<string, number>;
  /** Null: a storm with no cancellation to divide by. */
  totalMs: number | null;
  lagP99Ms: number | null;
  /** A storm segment: seconds from the deadline until all were cancelled and compensated (null: not settled). */
  drainS?: number | null;
  /** A storm segment: its customers' answers meanwhile (storm-probes.ts), p99 of those answered, and how many failed. */
  probes?: { placeP99Ms: number | null; webhookP99Ms: number | null; failed: number };
}

export interface LeverComparison {
  lever: string;
  /** What was restarted before every segment on either side, as the report says it. */
  restarted: string;
  /** `storm` (`--ab-storm`): each segment a timer-path storm of `orders` same-second expiries. */
  segmentKind: 'sustained' | 'storm';
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
export function pairRatios<S>(segments: readonly S[], isB: (s: S) => boolean, value: (s: S) => number | null) {
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
    // Its caches start empty after a restart: both sides restart, so both pay alike.
    if (Object.keys(options.leverServerEnv).length)
      await stack.restartTemporal(side === 'B' ? options.leverServerEnv : {});
    await stack.restartWorkers(
      options.workerCache,
      side === 'B' ? options.leverEnv : {},
      side === 'B' ? options.leverBuild : undefined,
    );
    // Another build is the API's too (a change of checkout, say): both sides restart it alike.
    if (options.leverBuild !== undefined) await stack.restartApi(side === 'B' ? options.leverBuild : undefined);
    ctx.progress(`segment ${i + 1}/${ABBA_BAAB.length}: ${side === 'A' ? 'without' : 'with'} the lever`);
    segments.push({
      side,
      ...(options.abStorm ? await stormSegment(ctx, i) : await sustainedSegment(ctx, i, segmentS)),
    });
  }
  return {
    lever: leverText(options),
    restarted: [
      ...(Object.keys(options.leverServerEnv).length ? ['Temporal Server'] : []),
      'the workers',
      ...(options.leverBuild === undefined ? [] : ['the API']),
    ]
      .join(', ')
      .replace(/, ([^,]*)$/, ' and $1'),
    segmentKind: options.abStorm ? 'storm' : 'sustained',
    rate: options.rate,
    segmentS,
    segments,
  };
}

async function sustainedSegment(ctx: PhaseContext, i: number, segmentS: number): Promise<Omit<LeverSegment, 'side'>> {
  const run = await runSustained(ctx, 'timer', {
    rate: ctx.options.rate,
    durationS: segmentS,
    group: `bench-ab-${i}-`,
    warmUp: false,
  });
  const orders = Math.max(1, run.creation.completed);
  return {
    orders: run.creation.completed,
    cpuMsPerOrder: Object.fromEntries(
      SERVICE_COMPONENTS.map((c) => [c, (1000 * (run.resources.cpuS[c] ?? 0)) / orders]),
    ),
    totalMs: (1000 * serviceCpuS(run.resources)) / orders,
    lagP99Ms: run.cancel.lagMs.p99,
  };
}

async function stormSegment(ctx: PhaseContext, i: number): Promise<Omit<LeverSegment, 'side'>> {
  // A group per segment: the storm's coupons and its settling are found by the group's prefix.
  const run = await runStorm(ctx, 'timer', { group: `bench-ab-storm-${i}-` });
  const cpu: Record<string, number> = run.cpuMsPerCancel ?? {};
  return {
    orders: run.orders,
    cpuMsPerOrder: cpu,
    // No cancellation to divide by: unknown, never 0.
    totalMs: run.cpuMsPerCancel ? Object.values(cpu).reduce((a, b) => a + b, 0) : null,
    lagP99Ms: run.lagMs.p99,
    drainS: run.allCompensatedS,
    probes: {
      placeP99Ms: run.probes.placeMs.p99,
      webhookP99Ms: run.probes.webhookMs.p99,
      failed: run.probes.placeFailed + run.probes.webhookFailed,
    },
  };
}

function leverText({ leverEnv, leverDynamic, leverServerEnv, leverBuild }: PhaseContext['options']): string {
  return [
    ...Object.entries(leverEnv).map(([k, v]) => `${k}=${v}`),
    ...Object.entries(leverDynamic).map(([k, v]) => `dynamic config ${k}: ${v}`),
    ...Object.entries(leverServerEnv).map(([k, v]) => `Temporal Server's ${k}=${v}`),
    ...(leverBuild === undefined ? [] : [`the workers and API of ${leverBuild}`]),
  ].join(', ');
}

const seconds = (n: number | null) => (n == null ? '–' : `${num(n, 1)} s`);

/** The report's section: every segment, then B against A over all of them and pair by pair. */
export function leverAbSection(c: LeverComparison): string[] {
  const storm = c.segmentKind === 'storm';
  // A side's mean is unknown when one of its segments is (a storm that did not settle): no guess.
  const mean = (side: 'A' | 'B', f: (s: LeverSegment) => number | null) => {
    const values = c.segments.filter((s) => s.side === side).map(f);
    return values.some((v) => v == null)
      ? null
      : values.reduce<number>((a, v) => a + v!, 0) / Math.max(1, values.length);
  };
  const isB = (s: LeverSegment) => s.side === 'B';
  const bOverA = (f: (s: LeverSegment) => number | null) => ratio(mean('B', f), mean('A', f));
  const total = (s: LeverSegment) => s.totalMs;
  const drain = (s: LeverSegment) => s.drainS ?? null;
  const row = (s: LeverSegment, i: number) =>
    `| ${i + 1} | ${s.side} | ${s.orders} | ${SERVICE_COMPONENTS.map((k) => num(s.cpuMsPerOrder[k], 1)).join(' / ')} = ${num(s.totalMs, 1)} |${storm ? ` ${s.drainS == null ? 'not settled' : seconds(s.drainS)} |` : ''} ${ms(s.lagP99Ms)} |${storm ? ` ${ms(s.probes?.placeP99Ms)} / ${ms(s.probes?.webhookP99Ms)}, ${s.probes?.failed ?? '–'} |` : ''}`;
  const per = storm ? 'cancellation' : 'order';
  return [
    `## A lever, before (A) and after (B), interleaved: ${c.lever}`,
    '',
    storm
      ? `Segments of one timer-path storm each (orders expiring in the same second, its probes), in the order ABBA BAAB, ${c.restarted} restarted before each.`
      : `Segments of ${c.segmentS} s at ${c.rate}/s, in the order ABBA BAAB, ${c.restarted} restarted before each.`,
    '',
    `| segment | side | orders | CPU ms per ${per}: postgres / temporal / worker / API = total |${storm ? ' all compensated after |' : ''} cancel lag p99 |${storm ? ' probes: POST /orders p99 / webhook 202 p99, failed |' : ''}`,
    `|---|---|---|---|${storm ? '---|' : ''}---|${storm ? '---|' : ''}`,
    ...c.segments.map(row),
    '',
    `B ÷ A over all segments: ${x(bOverA(total))} per ${per} (A ${num(mean('A', total), 1)} ms, B ${num(
      mean('B', total),
      1,
    )} ms; worker ${x(bOverA((s) => s.cpuMsPerOrder.worker ?? 0))}, Temporal ${x(
      bOverA((s) => s.cpuMsPerOrder.temporal ?? 0),
    )}); pair by pair: ${pairRatios(c.segments, isB, total)
      .map((p) => x(p))
      .join(', ')}.`,
    ...(storm
      ? [
          '',
          `The storm's drain, B ÷ A: ${x(bOverA(drain))} (A ${seconds(mean('A', drain))}, B ${seconds(
            mean('B', drain),
          )}); pair by pair: ${pairRatios(c.segments, isB, drain)
            .map((p) => x(p))
            .join(', ')}.`,
        ]
      : []),
    '',
  ];
}
