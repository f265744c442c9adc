import { meanPerRun } from './floor/around.js';
import type { FloorResult } from './floor/floor.js';
import { ms, num } from './format.js';
import { BENCH_TEMPORALS } from './options.js';
import type { RampStep } from './ramp.js';
import { SERVICE_COMPONENTS, serviceCpuS, type ResourceUse, type ServiceComponent } from './resources.js';
import { ACTION_KINDS } from './cost/actions.js';
import type { BenchMeasurements } from './results.js';
import { ROLES } from './stack.js';

/**
 * What is behind a missed target, from the run's own figures: which process took the CPU and how
 * many cores, what cost per order (or per cancellation) the target would need, and what would lift it.
 */
export interface Bottleneck {
  measured: string[];
  lift: string;
}

/** What the targets ask, for the "needed" figures, and the ramp step where the rate target stopped holding. */
export interface Goals {
  rate: number;
  cpuPerOrderMs: number;
  stormDrainS: number;
  rateLimit: { step: RampStep; why: string } | undefined;
}

export function bottleneckBehind(
  kind: 'order-cost' | 'storm-drain' | 'storm-latency' | 'floor' | 'safety' | 'temporal-actions',
  r: BenchMeasurements,
  goals: Goals,
): Bottleneck {
  if (kind === 'temporal-actions') return temporalActions(r);
  if (kind === 'order-cost') return orderCost(r, goals);
  if (kind === 'storm-drain') return stormDrain(r, goals);
  if (kind === 'floor') return aboveFloor(r);
  if (kind === 'safety') return safety(r);
  return stormLatency(r);
}

/**
 * Where an order costs more than Temporal's floor, and the floor more than it would on stock
 * settings: the same processes side by side (the service's worker against the floor's, the API
 * against the bench as the floor's client).
 */
function aboveFloor(r: BenchMeasurements): Bottleneck {
  const t = r.sustained.timer;
  const order = perComponent(t.resources, t.creation.completed);
  const floor = (perRun: Record<string, number>) => ({
    postgres: perRun.postgres ?? 0,
    temporal: perRun.temporal ?? 0,
    worker: perRun['floor worker'] ?? 0,
    api: perRun.bench ?? 0,
  });
  const sides = (loops: FloorResult[]) => floor(meanPerRun(loops.map((l) => l.sustained.cpuMsPerRun)));
  const project = sides(r.floor.project);
  const stock = sides(r.floor.stock);
  const above = (a: Record<ServiceComponent, number>, b: Record<ServiceComponent, number>) =>
    SERVICE_COMPONENTS.map((c) => `${NAMES[c]} ${signed(a[c] - b[c])}`).join(', ');
  const st = r.storm.timer;
  const [before, after] = r.floor.storms;
  const stormCpu = floor(meanPerRun([before.cpuMsPerRun, after.cpuMsPerRun]));
  return {
    measured: [
      `An order at ${r.sideBySideRate}/s: ${list(order, (v) => `${num(v, 1)} ms`)}; the minimal workflow on the same server and settings: ${list(project, (v) => `${num(v, 1)} ms`)} (its worker as "the worker", the bench as its client as "the API"). The order above the floor: ${above(order, project)}.`,
      `The floor on the project's settings against the stock ones, per run: ${above(project, stock)} (stock: ${list(stock, (v) => `${num(v, 1)} ms`)}).`,
      `Storms of ${st.orders}: the orders all compensated after ${num(st.allCompensatedS)} s (${num(st.throughput)}/s), the minimal runs all closed after ${num(before.drainS)} s before it and ${num(after.drainS)} s after it (medians ${num(before.medianCloseS)} and ${num(after.medianCloseS)} s); CPU per cancellation ${cancelCpu(st)}, per minimal run ${num(sum(stormCpu), 1)} ms.`,
    ],
    lift: `Less of the order's own work, which is what is left above the floor: its activities' statements on PostgreSQL (${num((t.statements[ROLES.service]?.calls ?? 0) / Math.max(1, t.creation.completed), 0)} per order), the worker's activations and local activities, the API's HTTP and authentication; and the floor itself is Temporal's own persisted work per run, the same on its stock settings and the project's (docs/benchmark.md, "What Temporal does per run"). The levers tried on it, each measured before and after, are in docs/benchmark.md ("The levers, before and after").`,
  };
}

/** Early cancellations and what a crash lost or doubled: defects to look into, not costs. */
/** What each path's actions are made of, from its recorded history. */
function temporalActions(r: BenchMeasurements): Bottleneck {
  return {
    measured: r.cost.map(
      (c) =>
        `${c.path}: ${c.actions.total} actions (${ACTION_KINDS.filter((k) => c.actions[k] > 0)
          .map((k) => `${k} ${c.actions[k]}`)
          .join(', ')}), ${c.events} events, ${c.bytes.toLocaleString('en')} B.`,
    ),
    lift: 'A workflow change: fewer timers, upserts, activity attempts or workflow tasks recording local activities on the path (docs/benchmark.md, "Cost per order in Temporal actions").',
  };
}

function safety(r: BenchMeasurements): Bottleneck {
  const c = r.timerCrash.crash;
  return {
    measured: [
      `Early cancellations by phase: ramp ${r.ramp.steps.reduce((a, s) => a + s.negative, 0)}, sustained ${r.sustained.timer.cancel.negative} (warm ${r.warm.sustained.cancel.negative}), storm ${r.storm.timer.negative} (warm ${r.warm.storm.negative}), crash storm ${r.timerCrash.negative}.`,
      ...(c
        ? [
            `Crash storm (worker SIGKILLed at +${num(c.killedAtS)} s): ${c.outcome.lost} lost, ${c.outcome.uncompensated} uncompensated; invariant violations: ${c.invariantViolations.length ? c.invariantViolations.join('; ') : 'none'}.`,
          ]
        : []),
    ],
    lift: 'Not a cost: a defect. results.json holds every figure; `npm run check` over the bench database names each violating order.',
  };
}

const signed = (v: number) => `${v >= 0 ? '+' : '−'}${num(Math.abs(v), 1)} ms`;
const cancelCpu = (st: BenchMeasurements['storm']['timer']) =>
  st.cpuMsPerCancel ? `${num(sum(st.cpuMsPerCancel), 1)} ms` : '–';

const NAMES: Record<ServiceComponent, string> = {
  postgres: 'PostgreSQL',
  temporal: 'Temporal',
  worker: 'the worker',
  api: 'the API',
};

function orderCost(r: BenchMeasurements, goals: Goals): Bottleneck {
  const t = r.sustained.timer;
  const orders = Math.max(1, t.creation.completed);
  const per = perComponent(t.resources, orders);
  const total = sum(per);
  const top = largest(per);
  const cores = r.machine.cores;
  const benchMs = (1000 * (t.resources.cpuS.bench ?? 0)) / orders;
  const limit = goals.rateLimit ?? { step: r.ramp.steps.at(-1)!, why: 'the last step tried' };
  return {
    measured: [
      `One order costs ${num(total, 0)} ms of service CPU at ${r.sideBySideRate}/s (${list(per, (v) => `${num(v, 0)} ms`)}); the largest share is ${NAMES[top]}'s, ${num((100 * per[top]) / total, 0)} %.`,
      `At ${limit.step.rate}/s (${limit.why}), while the orders were offered: ${coresLine(limit.step.underLoad, r.options.workers)} — ${saturation(limit.step.underLoad, r.options.workers)}.`,
      `Needed: ${goals.rate}/s on ${cores} cores leaves ${num((cores * 1000) / goals.rate, 0)} ms of CPU per order for everything on the machine, the load generator's ${num(benchMs, 0)} ms included; the CPU target asks ≤ ${goals.cpuPerOrderMs} ms for the service, i.e. ${NAMES[top]} at ${num((per[top] * goals.cpuPerOrderMs) / total, 0)} ms instead of ${num(per[top], 0)} if the split stays. At today's cost, ${goals.rate}/s takes about ${num((total * goals.rate) / 1000, 1)} cores for the service alone.`,
    ],
    lift: `${levers(top, r)} More cores, or the components on machines of their own, lift the rate in proportion at this cost.`,
  };
}

function stormDrain(r: BenchMeasurements, goals: Goals): Bottleneck {
  const st = r.storm.timer;
  const per = st.cpuMsPerCancel ?? perComponent(st.resources, st.orders);
  const total = sum(per);
  const top = largest(per);
  const cores = r.machine.cores;
  const scanS = r.storm.scan.allCompensatedS;
  const budget = (seconds: number) => (cores * seconds * 1000) / st.orders;
  return {
    measured: [
      `${st.orders} cancellations took ${st.settled ? `${num(st.allCompensatedS)} s (${num(st.throughput)}/s)` : 'longer than the 180-s bound'}; each cost ${num(total, 0)} ms of service CPU with its compensation (${list(per, (v) => `${num(v, 0)} ms`)}; the ${st.probes.sent} probes taken out).`,
      `During the storm: ${coresLine(st.resources, r.options.workers)} — ${saturation(st.resources, r.options.workers)}.`,
      `Needed: ${st.orders} in ${goals.stormDrainS} s on ${cores} cores leaves ${num(budget(goals.stormDrainS), 0)} ms of CPU per cancellation for everything${scanS ? ` (${num(budget(scanS), 0)} ms to match the scan baseline's ${num(scanS)} s)` : ''}; at ${num(total, 0)} ms, ${goals.stormDrainS} s takes about ${num((st.orders * total) / goals.stormDrainS / 1000, 1)} cores.`,
    ],
    lift: `${cpuBound(st.resources) ? '' : "The cores were not the limit here, so cheaper cancellations alone would not shorten it: what the rest waits for (the worker's task slots and pollers, Temporal's queues) is not measured by the bench. "}${levers(top, r)} The scan baseline drained its storm in ${num(r.storm.scan.allCompensatedS)} s with ${num(r.storm.scan.statementsPerCancel)} statements per cancellation: one loop, no workflow per order.`,
  };
}

function stormLatency(r: BenchMeasurements): Bottleneck {
  const { timer, scan } = r.storm;
  const probes = (p: typeof timer.probes) =>
    `${ms(p.placeMs.p50)} / ${ms(p.placeMs.p99)} (${p.placeFailed} of ${p.sent} failed)`;
  return {
    measured: [
      `POST /orders p50 / p99 in the timer storm ${probes(timer.probes)}, in the scan storm ${probes(scan.probes)} (the same API and workers, but Temporal has no storm to run); the webhook's 202 p99 ${ms(timer.probes.webhookMs.p99)} against ${ms(scan.probes.webhookMs.p99)}.`,
      `During the timer storm: ${coresLine(timer.resources, r.options.workers)} — ${saturation(timer.resources, r.options.workers)}.`,
      `POST /orders is answered once the order's first workflow task has placed it (update-with-start), and that task queues behind the tasks of the storm's ${timer.orders} workflows on the one task queue; the webhook answers once Temporal's history service, busy with the same storm, has taken the signal.`,
    ],
    lift: `New orders' workflows start at checkout priority (ORDER_PRIORITY), so their placement's workflow task goes ahead of the storm's; what they still share is Temporal's history service and its store (one shard here), which only more capacity there (a cluster, more shards) or a faster drain (the storm target) relieves.`,
  };
}

/** What lifts the cost of the component that takes the most CPU, with this run's own figures. */
function levers(top: ServiceComponent, r: BenchMeasurements): string {
  const t = r.sustained.timer;
  const statements = (t.statements[ROLES.service]?.calls ?? 0) / Math.max(1, t.creation.completed);
  switch (top) {
    case 'worker':
      return `More worker processes (\`--workers\`, ${r.options.workers} here) spread the worker's share over more cores, so they help only where cores are idle or one process is pegged; per order, fewer workflow activations, whose cost in the Temporal SDK is most of the worker's (docs/benchmark.md, "Where the worker's time goes").`;
    case 'temporal':
      return `Temporal on cores of its own, scaled out as a cluster on PostgreSQL with more history shards, and fewer workflow tasks and history events per order. This run's Temporal: ${BENCH_TEMPORALS[r.options.temporal]}.`;
    case 'postgres':
      return `Fewer statements per order (${num(statements, 0)} now) and PostgreSQL on cores of its own.`;
    case 'api':
      return 'More API processes: the API is stateless.';
  }
}

/** Each service process's CPU per unit of work (ms). */
function perComponent(u: ResourceUse, units: number): Record<ServiceComponent, number> {
  return Object.fromEntries(
    SERVICE_COMPONENTS.map((c) => [c, (1000 * (u.cpuS[c] ?? 0)) / Math.max(1, units)]),
  ) as Record<ServiceComponent, number>;
}

function coresLine(u: ResourceUse, workers: number): string {
  const cores = (s: number | undefined) => num((s ?? 0) / u.wallS, 2);
  const service = SERVICE_COMPONENTS.map(
    (c) => `${NAMES[c]} ${cores(u.cpuS[c])}${c === 'worker' && workers > 1 ? ` (${workers} processes)` : ''}`,
  );
  return `${service.join(', ')}, the bench's process ${cores(u.cpuS.bench)}, other people's processes ${cores(u.othersCpuS)} cores; idle ${num(100 * idleShare(u), 0)} % of ${u.machineCores}`;
}

/** Idle share of the machine below which the cores count as the limit (a shared machine is never quite at 0). */
const SATURATED_BELOW_IDLE = 0.25;

/** Whether the run was short of cores, or of one Node process's single JavaScript thread, or neither. */
function saturation(u: ResourceUse, workers: number): string {
  if (cpuBound(u)) return `the ${u.machineCores} cores were the limit`;
  const perProcess: Array<[string, number]> = [
    ['the worker', (u.cpuS.worker ?? 0) / u.wallS / workers],
    ['the API', (u.cpuS.api ?? 0) / u.wallS],
  ];
  const pegged = perProcess.filter(([, c]) => c >= 0.9).map(([name]) => name);
  if (pegged.length)
    return `${pegged.join(' and ')} ran at about one core per process (a Node process runs its JavaScript on one thread) with cores idle`;
  return `neither the cores nor a single process were saturated, so the wait is not for CPU alone`;
}

function cpuBound(u: ResourceUse): boolean {
  return idleShare(u) < SATURATED_BELOW_IDLE;
}

function idleShare(u: ResourceUse): number {
  const used = serviceCpuS(u) + (u.cpuS.bench ?? 0) + u.othersCpuS;
  return Math.max(0, 1 - used / (u.wallS * u.machineCores));
}

const sum = (per: Record<string, number>) => Object.values(per).reduce((a, b) => a + b, 0);
const largest = (per: Record<ServiceComponent, number>) =>
  SERVICE_COMPONENTS.reduce((a, b) => (per[b] > per[a] ? b : a));
const list = (per: Record<ServiceComponent, number>, f: (v: number) => string) =>
  SERVICE_COMPONENTS.map((c) => `${NAMES[c]} ${f(per[c])}`).join(', ');
