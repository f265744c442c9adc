import { aroundRatios, type AroundRatio, type FloorAround, type OrderFigures } from './floor/around.js';
import { FLOOR_COMPONENTS, floorCpuMs, type FloorResult, type FloorStorm } from './floor/floor.js';
import { floorAbSection, type FloorInterleaved } from './floor-ab.js';
import { floorSettingsAbSection, type FloorSettingsInterleaved } from './floor-settings-ab.js';
import { ms, num, x } from './format.js';
import { PEER_TITLES } from './peers/kinds.js';
import type { PeersResult } from './peers/peers.js';
import type { StormResult } from './storm.js';
import type { SustainedResult } from './sustained.js';
import { leverAbSection, type LeverComparison } from './lever-ab.js';
import { SERVICE_COMPONENTS } from './resources.js';
import type { CacheCheck } from './worker-cache.js';

/** The phases beside the service's: Temporal's floor, the peers, the cache check. */
export interface ExtraPhases {
  /** The floor on the project's settings (the stack's server) and on Temporal's and the SDK's stock ones (a server of its own), around the timer path. */
  floor?: FloorAround;
  peers?: PeersResult;
  cacheCheck?: CacheCheck;
  /** The timer path's storm with its worker SIGKILLed a third of the way (storm.ts). */
  timerCrash?: StormResult;
  /** `--order`: the timer path's sustained phase at --rate and its storm, alone (a lever's before or after). */
  orderAlone?: { sustained: SustainedResult; storm: StormResult };
  /** `--ab`: a lever's before and after, interleaved. */
  leverAb?: LeverComparison;
  floorAb?: FloorInterleaved;
  floorSettingsAb?: FloorSettingsInterleaved;
  /** The service's figures of the same run that the floor divides (when the service's phases ran). */
  order?: OrderFigures;
}

const cpu = (byProcess: Record<string, number> | null) =>
  byProcess === null
    ? '–'
    : `${num(Object.values(byProcess).reduce((a, b) => a + b, 0))} ms (${Object.entries(byProcess)
        .filter(([, v]) => v >= 0.05)
        .map(([k, v]) => `${k} ${num(v)}`)
        .join(', ')})`;

function floorSection(floor: FloorAround, order: OrderFigures | undefined): string[] {
  const loop = (l: FloorResult, i: number) => {
    const s = l.sustained;
    return `| ${i} | ${l.settings} worker, ${l.server} server | ${s.creation.offeredRate}/s; ${s.creation.completed}, ${s.creation.failed} | ${ms(s.creation.latencyMs.p50)} / ${ms(s.creation.latencyMs.p99)} | ${num(floorCpuMs(s.cpuMsPerRun))} ms | ${cpu(s.cpuMsPerRun)}${s.allClosed ? '' : ' (not all closed)'} |`;
  };
  const storm = (st: FloorStorm, when: string) =>
    `| ${when} | ${st.runs} | ${st.startedBeforeFire} | ${num(st.drainS)} s / ${num(st.medianCloseS)} s${st.allClosed ? '' : ' (not all closed)'} | ${num(floorCpuMs(st.cpuMsPerRun))} ms | ${cpu(st.cpuMsPerRun)} |`;
  const r = aroundRatios(floor, order);
  const said = (a: AroundRatio, unit: string) =>
    `${x(a.value)} (${num(a.numerator)} ${unit} ÷ ${num(a.denominator)} ${unit}); pair by pair ${a.pairs.map((p) => x(p)).join(', ')}`;
  const [stock1, stock2] = floor.stock;
  const [project1, project2] = floor.project;
  return [
    "## Temporal's floor, around the timer path",
    '',
    `The minimal workflow's open loop in mirror order around the timer path's sustained phase, and its storm before and after the timer path's storm, so that a drift of the machine weighs on both sides alike (bench/floor/around.ts). CPU per run counted (what the ratios divide): ${FLOOR_COMPONENTS.join(', ')}; PostgreSQL is Temporal's store with \`--temporal postgres\`, else the idle service's database. Every process adds the service's idle worker and API.`,
    '',
    '| segment | settings | offered; started, failed | update-with-start p50 / p99 | CPU per run, counted | CPU per run, every process |',
    '|---|---|---|---|---|---|',
    loop(stock1, 1),
    loop(project1, 2),
    `| | the timer path's sustained phase | | | ${order ? `${num(order.cpuMsPerOrder)} ms per order, service processes` : 'not run'} | |`,
    loop(project2, 3),
    loop(stock2, 4),
    '',
    "| storm on the project's settings | runs | started before the fire time | last / median close after the fire time | CPU per run, counted | CPU per run, every process |",
    '|---|---|---|---|---|---|',
    storm(floor.storms[0], 'before'),
    ...(order
      ? [
          `| the order storm | | | ${order.stormDrainS == null ? 'not all compensated' : `${num(order.stormDrainS)} s, all compensated`} | | |`,
        ]
      : []),
    storm(floor.storms[1], 'after'),
    '',
    ...(r.orderOverFloor && r.stormOverFloor
      ? [
          `- An order's CPU ÷ the floor's on the project's settings: ${said(r.orderOverFloor, 'ms')}.`,
          `- The order storm's drain ÷ the floor storms': ${said(r.stormOverFloor, 's')}.`,
        ]
      : []),
    `- What the project's tuning buys, the floor's CPU per run on its settings ÷ on the stock ones: ${said(r.projectOverStock, 'ms')}.`,
    '',
  ];
}

export function extraReport(extra: ExtraPhases): string {
  const out: string[] = [];
  if (extra.floor) out.push(...floorSection(extra.floor, extra.order));
  if (extra.peers?.sustained.length) {
    out.push(
      '## Peers, sustained: the same workload as the timer path, orders written by the service and handed to each peer',
      '',
      '| peer | offered, created | cancel lag p50 / p99 / max | compensated p99 | early | CPU per expired order over the phase: PostgreSQL (placement, payments and scheduling included), peer, Redis |',
      '|---|---|---|---|---|---|',
      ...extra.peers.sustained.map(
        (p) =>
          `| ${PEER_TITLES[p.kind]} | ${p.creation.offeredRate}/s, ${p.creation.completed}${p.settled ? '' : ' (not all settled)'} | ${ms(p.lagMs.p50)} / ${ms(p.lagMs.p99)} / ${ms(p.lagMs.max)} | ${ms(p.compensatedLagMs.p99)} | ${p.negative} | ${cpu(p.cpuMsPerCancel)} |`,
      ),
      '',
      ...(extra.order && !extra.peers.sustained.some((p) => p.kind === 'scan')
        ? [
            "The scan job's sustained phase and storm are the service phases' scan baseline above, the same code: its canceller runs in the bench's own process beside the load generator, so its CPU is PostgreSQL's and part of the bench's there.",
            '',
          ]
        : []),
    );
  }
  if (extra.peers?.skipped.length)
    out.push(
      `Peers not measured, in whole or in part: ${extra.peers.skipped.map((s) => `${PEER_TITLES[s.kind]} (${s.why})`).join('; ')}.`,
      '',
    );
  const crash = extra.timerCrash?.crash;
  if (extra.peers?.storms.length || crash) {
    const t = extra.timerCrash!;
    out.push(
      `## Peers: storms, and a storm of ${crashOrders(extra)} with the peer SIGKILLed a third of the way`,
      '',
      '| peer | crash | all done after | cancel lag p50 / p99 / max | early | CPU per cancellation: PostgreSQL (probes included), peer, Redis | checkout p99, failed (probes) | lost | uncompensated | run twice | paid but cancelled |',
      '|---|---|---|---|---|---|---|---|---|---|---|',
      ...(crash
        ? [
            `| durable timer (the service) | worker killed at +${num(crash.killedAtS)} s (${crash.cancelledAtKill} cancelled) | ${t.allCompensatedS === null ? 'not settled' : `${num(t.allCompensatedS)} s`} | ${ms(t.lagMs.p50)} / ${ms(t.lagMs.p99)} / ${ms(t.lagMs.max)} | ${t.negative} | – | ${ms(t.probes.placeMs.p99)}, ${t.probes.placeFailed} | ${crash.outcome.lost} | ${crash.outcome.uncompensated} | ${crash.outcome.runTwice} | – |`,
          ]
        : []),
      ...(extra.peers?.storms ?? []).map(
        (p) =>
          `| ${PEER_TITLES[p.kind]} | ${p.crash ? `killed at +${num(p.killedAtS)} s (${p.cancelledAtKill} cancelled)` : 'no'} | ${p.allDoneS === null ? 'not settled' : `${num(p.allDoneS)} s`} | ${ms(p.lagMs.p50)} / ${ms(p.lagMs.p99)} / ${ms(p.lagMs.max)} | ${p.negative} | ${cpu(p.cpuMsPerCancel)} | ${ms(p.probes.placeMs.p99)}, ${p.probes.placeFailed} | ${p.outcome.lost} | ${p.outcome.uncompensated} | ${p.outcome.runTwice} | ${p.outcome.paidButCancelled} of ${p.paid} |`,
      ),
      '',
      ...(crash
        ? [
            `After the durable timer's crash storm, the invariant checker over the whole database (stock, coupons, payments, one effect per idempotency key): ${crash.invariantViolations.length ? crash.invariantViolations.join('; ') : 'no violation'}.`,
          ]
        : []),
      '',
    );
  }
  if (extra.orderAlone) out.push(...orderAloneSection(extra.orderAlone));
  if (extra.leverAb) out.push(...leverAbSection(extra.leverAb));
  if (extra.floorAb) out.push(...floorAbSection(extra.floorAb));
  if (extra.floorSettingsAb) out.push(...floorSettingsAbSection(extra.floorSettingsAb));
  if (extra.cacheCheck) {
    const c = extra.cacheCheck;
    out.push(
      `## Workflow cache (limit: ${c.cacheLimit})`,
      '',
      `${c.run.creation.completed} orders placed, ${c.run.cancel.lagMs.count} cancelled, cancel lag p99 ${ms(c.run.cancel.lagMs.p99)}.`,
      '',
      '| worker metric | before | after |',
      '|---|---|---|',
      ...c.after.flatMap((after, i) =>
        Object.entries(after).map(([name, v]) => `| ${name} | ${c.before[i]?.[name] ?? '–'} | ${v} |`),
      ),
      '',
    );
  }
  return out.join('\n');
}

/** `--order`: the figures a lever's before and after compare, each process apart. */
function orderAloneSection({ sustained: s, storm: st }: NonNullable<ExtraPhases['orderAlone']>): string[] {
  const orders = Math.max(1, s.creation.completed);
  const perOrder = Object.fromEntries(Object.entries(s.resources.cpuS).map(([k, v]) => [k, (1000 * v) / orders]));
  return [
    `## The timer path alone: ${s.creation.offeredRate}/s, then a storm of ${st.orders}`,
    '',
    '| | |',
    '|---|---|',
    `| sustained: orders created, failed | ${s.creation.completed}, ${s.creation.failed} |`,
    `| sustained: CPU per order, service processes | ${cpu(Object.fromEntries(SERVICE_COMPONENTS.map((c) => [c, perOrder[c] ?? 0])))} |`,
    `| sustained: POST /orders p50 / p99 | ${ms(s.creation.latencyMs.p50)} / ${ms(s.creation.latencyMs.p99)} |`,
    `| sustained: cancel lag p50 / p99 / max, early | ${ms(s.cancel.lagMs.p50)} / ${ms(s.cancel.lagMs.p99)} / ${ms(s.cancel.lagMs.max)}, ${s.cancel.negative} |`,
    `| storm: all compensated after, cancel lag p99, early | ${num(st.allCompensatedS)} s, ${ms(st.lagMs.p99)}, ${st.negative} |`,
    `| storm: CPU per cancellation (probes out) | ${cpu(st.cpuMsPerCancel)} |`,
    `| storm: POST /orders probes p99, failed; webhook 202 p99 | ${ms(st.probes.placeMs.p99)}, ${st.probes.placeFailed}; ${ms(st.probes.webhookMs.p99)} |`,
    '',
  ];
}

/** The crash storms' size (30 % of a storm: bench/options.ts). */
function crashOrders(extra: ExtraPhases): number | string {
  return extra.timerCrash?.orders ?? extra.peers?.storms.find((p) => p.crash)?.orders ?? '–';
}
