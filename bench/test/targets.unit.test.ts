import { describe, expect, it } from 'vitest';
import { parseOptions } from '../options.js';
import type { RampStep } from '../ramp.js';
import type { ResourceUse } from '../resources.js';
import type { BenchMeasurements } from '../results.js';
import { summarize } from '../stats.js';
import type { StormResult } from '../storm.js';
import type { FloorResult, FloorStorm } from '../floor/floor.js';
import type { ProbeResult } from '../storm-probes.js';
import { ACTION_KINDS, noActions, type Actions } from '../cost/actions.js';
import type { PathCost } from '../cost/paths.js';
import type { SustainedResult } from '../sustained.js';
import { judgeTargets, rampHasEnough, sideBySideRate, type TargetVerdict } from '../targets.js';

/**
 * The bench judges the targets from its own figures. These runs are made up: each is a run
 * that meets every bound on 2 cores with a storm of 2,000, changed in one place.
 */
function resources(cpuS: Partial<Record<string, number>> = {}, wallS = 60): ResourceUse {
  return {
    wallS,
    cpuS: { postgres: 0.2, temporal: 0.6, worker: 0.6, api: 0.2, bench: 0.3, ...cpuS },
    peakRssMb: {},
    othersCpuS: 1,
    machineCores: 2,
  };
}

function step(rate: number, change: Partial<RampStep> = {}): RampStep {
  return {
    rate,
    held: true,
    why: '',
    achievedRate: rate,
    created: rate * 30,
    failed: 0,
    abandoned: 0,
    creationMs: summarize([80, 120, 400]),
    lagMs: summarize([40, 90, 200]),
    negative: 0,
    cpuMsPerOrder: {},
    underLoad: resources(),
    ...change,
  };
}

function probes(change: Partial<ProbeResult> = {}): ProbeResult {
  const placed = Array.from({ length: 100 }, (_, i) => 50 + i * 5);
  const paid = Array.from({ length: 100 }, () => 40);
  return {
    sent: 100,
    offeredRate: 2,
    placeLatenciesMs: placed,
    placeMs: summarize(placed),
    placeFailed: 0,
    webhookLatenciesMs: paid,
    webhookMs: summarize(paid),
    webhookFailed: 0,
    ...change,
  };
}

function storm(path: 'timer' | 'scan', allCompensatedS: number): StormResult {
  return {
    path,
    orders: 2_000,
    allCompensatedS,
    settled: true,
    lagMs: summarize([1]),
    compensatedLagMs: summarize([1]),
    lagsMs: [1],
    negative: 0,
    throughput: 2_000 / allCompensatedS,
    peakConnections: { peakTotal: 10, peakActive: 5 },
    probes: probes(),
    probeCost:
      path === 'timer'
        ? { probes: 10, statements: 20, cpuMs: { postgres: 5, temporal: 10, worker: 10, api: 5 } }
        : null,
    statementsPerCancel: 12,
    cpuMsPerCancel: path === 'timer' ? { postgres: 2, temporal: 8, worker: 8, api: 0 } : null,
    statementsNote: '',
    topStatements: [],
    notWaitingAtDeadline: 0,
    resources: resources({}, allCompensatedS),
  };
}

function sustained(completed: number, cpuS: Partial<Record<string, number>>): SustainedResult {
  return {
    path: 'timer',
    creation: {
      started: completed,
      completed,
      failed: 0,
      elapsedS: 60,
      achievedRate: completed / 60,
      behindMs: 0,
      abandoned: 0,
      offeredRate: completed / 60,
      latencyMs: summarize([100]),
    },
    cancel: {
      negative: 0,
      stillUnpaidPastDeadline: 0,
      firstExpiry: null,
      lastCompensated: null,
      lagMs: summarize([100]),
      compensatedLagMs: summarize([100]),
      settled: true,
    },
    lagsMs: [100],
    statements: { bench_service: { calls: completed * 25, rows: 0 } },
    storeGrowth: {
      before: { temporal: 0, service: 0 },
      after: { temporal: 0, service: 0 },
      temporalPerOrder: 0,
      servicePerOrder: 0,
    },
    resources: resources(cpuS),
    underLoad: resources(cpuS),
  };
}

/** The minimal workflow's open loop: `cpu` per run (Temporal, its worker, the bench as its client). */
function floor(settings: 'project' | 'stock', cpu: Record<string, number>): FloorResult {
  return {
    settings,
    server: settings,
    sustained: {
      creation: {
        started: 3_000,
        completed: 3_000,
        failed: 0,
        elapsedS: 60,
        achievedRate: 50,
        behindMs: 0,
        abandoned: 0,
        offeredRate: 50,
        latencyMs: summarize([20]),
      },
      allClosed: true,
      resources: resources(),
      cpuMsPerRun: cpu,
    },
  };
}

/** The minimal workflow's storm of 2,000, all closed `drainS` after the fire time. */
function floorStorm(drainS: number): FloorStorm {
  return {
    runs: 2_000,
    startedBeforeFire: 2_000,
    allClosed: true,
    drainS,
    medianCloseS: drainS / 2,
    resources: resources(),
    cpuMsPerRun: { temporal: 10, 'floor worker': 4 },
  };
}

function crashStorm(): StormResult {
  return {
    ...storm('timer', 25),
    crash: {
      killedAtS: 5,
      cancelledAtKill: 700,
      outcome: { lost: 0, uncompensated: 0, runTwice: 4, paidButCancelled: 0 },
      invariantViolations: [],
    },
  };
}

/** A recorded path's cost: its actions by kind, and its history's bytes. */
function pathCost(path: string, kinds: Partial<Omit<Actions, 'total'>>, bytes: number): PathCost {
  const actions = { ...noActions(), ...kinds };
  actions.total = ACTION_KINDS.reduce((sum, kind) => sum + actions[kind], 0);
  return { path, history: path, actions, events: 20, bytes, hours: 0, perHour: false };
}

const projectFloor = floor('project', { temporal: 20, 'floor worker': 8, bench: 3 });
const stockFloor = floor('stock', { temporal: 30, 'floor worker': 12, bench: 3 });

function run(change: (r: BenchMeasurements) => void = () => undefined): BenchMeasurements {
  const r: BenchMeasurements = {
    startedAt: '',
    finishedAt: '',
    machine: { cores: 2, memGiB: 24, loadBefore: '', loadAfter: '' },
    options: parseOptions([]),
    ramp: { steps: [5, 10, 15, 20, 30, 40, 50].map((rate) => step(rate)), maxSustained: 50 },
    sideBySideRate: 50,
    // 3,000 orders for 105 s of service CPU: 35 ms per order.
    sustained: {
      timer: sustained(3_000, { postgres: 15, temporal: 40, worker: 40, api: 10 }),
      scan: sustained(3_000, {}),
    },
    storm: { timer: storm('timer', 20), scan: storm('scan', 25) },
    warm: { sustained: sustained(3_000, {}), storm: storm('timer', 15) },
    // An order's 35 ms is 1.13× the floor's 31 ms, which is 0.69× the stock 45 ms; 20 s of storm is 1.18× 17 s.
    floor: {
      project: [projectFloor, projectFloor],
      stock: [stockFloor, stockFloor],
      storms: [floorStorm(17), floorStorm(17)],
    },
    timerCrash: crashStorm(),
    ceiling: [],
    clients: [],
    cost: [
      pathCost('an order that expires', { start: 1, update: 1, timer: 1, localActivityTasks: 2 }, 2_400),
      pathCost(
        'one paid and fulfilled',
        { start: 1, update: 1, signal: 1, timer: 1, activityAttempts: 3, localActivityTasks: 1 },
        5_000,
      ),
      // Each outage's hour adds 24 and 28 actions to the order without it.
      {
        ...pathCost(
          'an hour of provider outage at the deadline',
          { start: 1, timer: 13, localActivityTasks: 16 },
          9_000,
        ),
        added: 24,
      },
      {
        ...pathCost('an hour of database outage at the deadline', { start: 1, activityAttempts: 28, timer: 2 }, 8_000),
        added: 28,
      },
    ],
  };
  change(r);
  return r;
}

const verdict = (r: BenchMeasurements, id: string): TargetVerdict => judgeTargets(r).find((t) => t.id === id)!;

describe('the targets the bench judges', () => {
  it('a run within every bound meets every target, and no miss needs explaining', () => {
    const verdicts = judgeTargets(run());
    expect(verdicts.map((t) => [t.id, t.verdict])).toEqual([
      ['storm-post-orders-p99', 'met'],
      ['storm-post-orders-failed', 'met'],
      ['storm-webhook-p99', 'met'],
      ['storm-compensated', 'met'],
      ['storm-beats-scan', 'met'],
      ['cpu-per-order', 'met'],
      ['sustained-rate', 'met'],
      ['order-over-floor', 'met'],
      ['storm-over-floor', 'met'],
      ['floor-project-over-stock', 'met'],
      ['actions-expired', 'met'],
      ['actions-paid', 'met'],
      ['actions-outage-hour', 'met'],
      ['history-bytes-expired', 'met'],
      ['no-early-cancellation', 'met'],
      ['crash-nothing-lost-or-doubled', 'met'],
    ]);
    expect(verdicts.filter((t) => t.bottleneck)).toEqual([]);
    expect(verdict(run(), 'cpu-per-order').value).toBeCloseTo(35);
  });

  it('a storm smaller than 2,000 leaves the storm targets not judged, and says whether the figure was within', () => {
    const quick = run((r) => (r.options = parseOptions(['--quick'])));
    const compensated = verdict(quick, 'storm-compensated');
    expect(compensated).toMatchObject({ verdict: 'not judged', within: true });
    expect(compensated.notJudgedBecause).toContain('a storm of 300, not 2,000');
    expect(verdict(quick, 'cpu-per-order').verdict).toBe('met');
  });

  it('a ramp that is not let up to 40/s leaves the rate target not judged', () => {
    const short = run((r) => (r.options = parseOptions(['--rate', '20'])));
    expect(verdict(short, 'sustained-rate')).toMatchObject({
      verdict: 'not judged',
      notJudgedBecause: 'a ramp up to 20/s, not 40/s',
    });
  });

  it('the CLI dev server or another core count leaves every measured target not judged, not the histories', () => {
    for (const other of [
      run((r) => (r.options = parseOptions(['--temporal', 'cli']))),
      run((r) => (r.machine.cores = 4)),
    ]) {
      const judged = judgeTargets(other);
      const fromHistories = judged.filter((t) => t.kind === 'temporal-actions');
      expect(fromHistories.map((t) => t.verdict)).toEqual(['met', 'met', 'met', 'met']);
      const measured = judged.filter((t) => t.kind !== 'temporal-actions').map((t) => t.verdict);
      expect(measured.length).toBeGreaterThan(0);
      expect(new Set(measured)).toEqual(new Set(['not judged']));
    }
  });

  it("a path's actions over its bound, an outage's hour that adds more than 30, or a heavier history miss, with what they are made of", () => {
    const dearer = run((r) => {
      r.cost[0] = pathCost(
        'an order that expires',
        { start: 1, update: 1, timer: 1, upsert: 2, localActivityTasks: 2 },
        4_075,
      );
      r.cost[3] = { ...r.cost[3]!, added: 40 }; // the database's hour adds 40, the provider's 24
    });
    const expired = verdict(dearer, 'actions-expired');
    expect(expired).toMatchObject({ verdict: 'NOT met', value: 7 });
    expect(expired.measured).toBe('7 (start 1, update 1, timer 1, upsert 2, localActivityTasks 2)');
    expect(expired.bottleneck?.measured[0]).toContain('an order that expires: 7 actions');
    expect(verdict(dearer, 'actions-paid').verdict).toBe('met');
    const outage = verdict(dearer, 'actions-outage-hour');
    expect(outage).toMatchObject({ verdict: 'NOT met', value: 40 });
    expect(outage.measured).toBe(
      'an hour of provider outage at the deadline: 24; an hour of database outage at the deadline: 40',
    );
    expect(verdict(dearer, 'history-bytes-expired')).toMatchObject({ verdict: 'NOT met', value: 1 });
  });

  it('a failed or unanswered call counts as slower than any answer in the p99', () => {
    const oneFailed = run((r) => (r.storm.timer.probes = probes({ webhookFailed: 2 })));
    expect(verdict(oneFailed, 'storm-webhook-p99')).toMatchObject({ verdict: 'NOT met', value: null });
    const unanswered = run((r) => (r.storm.timer.probes = probes({ placeFailed: 1 })));
    expect(verdict(unanswered, 'storm-post-orders-failed').verdict).toBe('NOT met');
    expect(verdict(unanswered, 'storm-post-orders-p99').verdict).toBe('met'); // 1 of 101 is within the top 1 %
  });

  it('the rate target is the highest step within its latencies; a slower step that missed does not cap it', () => {
    const slowLag = run((r) => {
      r.ramp.steps[0] = step(5, { lagMs: summarize([100, 400]) });
      r.ramp.steps[6] = step(50, { lagMs: summarize([100, 300]) });
    });
    const rate = verdict(slowLag, 'sustained-rate');
    expect(rate).toMatchObject({ verdict: 'met', value: 40 });
    expect(rate.measured).toContain('missed at 5/s: cancel lag p99 400 ms; 50/s: cancel lag p99 300 ms');
  });

  it('the side-by-side phases run at the highest step within the rate conditions, not the highest held', () => {
    // 2026-12-02: the ramp held 50/s with POST /orders p99 1.3 s; 30 s of it measured a backlog.
    // The fixture's ramp held up to 50/s; its 50/s step missed POST /orders p99 ≤ 1 s.
    const queued = run((r) => (r.ramp.steps[6] = step(50, { creationMs: summarize([700, 1_300]) })));
    expect(sideBySideRate(queued.ramp)).toBe(40);
    const noneWithin = run((r) => {
      for (const s of r.ramp.steps) s.creationMs = summarize([100, 1_500]);
    });
    expect(sideBySideRate(noneWithin.ramp)).toBe(50);
    const noneHeld = run((r) => {
      r.ramp = { steps: [step(5, { held: false, why: 'cancel lag p99 3.0 s' })], maxSustained: null };
    });
    expect(sideBySideRate(noneHeld.ramp)).toBe(5);
  });

  it('the ramp goes on until a step at or above the target rate misses the rate conditions', () => {
    const slow = { creationMs: summarize([100, 1_500]) };
    const below = [step(10), step(15), step(20), step(30)];
    expect(rampHasEnough(below)).toBe(false);
    expect(rampHasEnough([...below, step(40)])).toBe(false);
    // A slower step that misses (an outlier on a shared machine) does not stop it.
    expect(rampHasEnough([step(10), step(15, slow)])).toBe(false);
    expect(rampHasEnough([step(10, slow)])).toBe(false);
    // 2026-12-04: 40/s held within 2 s but missed checkout's 1 s; the 50/s step after it took 67 s.
    expect(rampHasEnough([...below, step(40, { creationMs: summarize([1_750]) })])).toBe(true);
    expect(rampHasEnough([...below, step(40), step(50, slow)])).toBe(true);
  });

  it('a rate below the target is explained at the first step above it that missed', () => {
    const slow = run((r) => {
      for (const s of r.ramp.steps.filter((s) => s.rate >= 30)) s.creationMs = summarize([100, 1_500]);
    });
    const rate = verdict(slow, 'sustained-rate');
    expect(rate).toMatchObject({ verdict: 'NOT met', value: 20 });
    expect(rate.bottleneck?.measured.join(' ')).toContain('At 30/s (POST /orders p99 1500 ms)');
  });

  it('a miss is explained by the process that takes the most CPU', () => {
    const costly = run(
      (r) => (r.sustained.timer = sustained(1_000, { postgres: 10, temporal: 50, worker: 80, api: 10 })),
    );
    const cpu = verdict(costly, 'cpu-per-order');
    expect(cpu).toMatchObject({ verdict: 'NOT met', value: 150 });
    expect(cpu.bottleneck?.measured[0]).toContain("the largest share is the worker's");
  });

  it("an order far above Temporal's floor is explained process by process against the floor's", () => {
    // The floor's Temporal took 10 ms per run before the order and 20 ms after it: 15 on average.
    const heavy = run(
      (r) =>
        (r.floor.project = [
          floor('project', { temporal: 10, 'floor worker': 5, bench: 2 }),
          floor('project', { temporal: 20, 'floor worker': 5, bench: 2 }),
        ]),
    );
    const above = verdict(heavy, 'order-over-floor');
    expect(above).toMatchObject({ verdict: 'NOT met' });
    expect(above.value).toBeCloseTo(35 / 22);
    expect(above.bottleneck?.measured[0]).toContain(
      'The order above the floor: PostgreSQL +5 ms, Temporal −1.7 ms, the worker +8.3 ms',
    );
  });

  it("divides an order by the floor's segments before and after it, so that a steady drift cancels", () => {
    // The machine slows steadily: the floor's 31 ms before the order is 41 ms after it, the order
    // in between costs the mean of the two (36 ms) times 1.5; each pair alone says 1.74× or 1.32×.
    const drifting = run((r) => {
      r.floor.project = [projectFloor, floor('project', { temporal: 28, 'floor worker': 10, bench: 3 })];
      r.sustained.timer = sustained(3_000, { postgres: 20, temporal: 70, worker: 60, api: 12 });
    });
    const judged = verdict(drifting, 'order-over-floor');
    expect(judged).toMatchObject({ verdict: 'NOT met' });
    expect(judged.value).toBeCloseTo(1.5);
    expect(judged.measured).toContain('order 54 ms, floor 36 ms');
  });

  it("the project's settings must bring the floor to 0.9× the stock one", () => {
    const untuned = run(
      (r) => (r.floor.stock = [stockFloor, floor('stock', { temporal: 14, 'floor worker': 4, bench: 3 })]),
    );
    expect(verdict(untuned, 'floor-project-over-stock')).toMatchObject({ verdict: 'NOT met' });
    expect(verdict(untuned, 'order-over-floor').verdict).toBe('met');
    // The project's side is the mean of its two segments too: 31 and 53 ms against 45 is 0.93×.
    const drifting = run(
      (r) => (r.floor.project = [projectFloor, floor('project', { temporal: 38, 'floor worker': 12, bench: 3 })]),
    );
    expect(verdict(drifting, 'floor-project-over-stock')).toMatchObject({ verdict: 'NOT met' });
    expect(verdict(drifting, 'floor-project-over-stock').value).toBeCloseTo(42 / 45);
  });

  it('a floor storm that did not settle or start in time, or an order storm not yet on its timers, is not divided', () => {
    const unsettled = run(
      (r) => (r.floor.storms = [floorStorm(17), { ...floorStorm(17), allClosed: false, drainS: null }]),
    );
    expect(verdict(unsettled, 'storm-over-floor')).toMatchObject({
      verdict: 'not judged',
      value: null,
      notJudgedBecause: 'a floor storm not all closed',
    });
    const late = run((r) => (r.floor.storms = [{ ...floorStorm(17), startedBeforeFire: 1_500 }, floorStorm(17)]));
    expect(verdict(late, 'storm-over-floor').notJudgedBecause).toBe('a floor storm still starting at its fire time');
    const adopting = run((r) => (r.storm.timer.notWaitingAtDeadline = 40));
    expect(verdict(adopting, 'storm-over-floor').notJudgedBecause).toBe(
      '40 order storm runs not yet on their timer at the deadline',
    );
  });

  it('the storm against the minimal storm, and a cache too large for a cold figure', () => {
    const slow = run((r) => (r.floor.storms = [floorStorm(8), floorStorm(12)]));
    expect(verdict(slow, 'storm-over-floor')).toMatchObject({ verdict: 'NOT met', value: 2 });
    expect(verdict(slow, 'storm-over-floor').measured).toContain('pair by pair 2.5×, 1.67×');
    // 50/s × 20 s, of which 10 % paid and closed early: 900 open runs, 9× a cache of 100.
    const warmish = run((r) => (r.options = parseOptions(['--cache', '100'])));
    const measured = judgeTargets(warmish).filter((t) => t.kind !== 'temporal-actions');
    expect(measured.map((t) => t.verdict)).toEqual(measured.map(() => 'not judged'));
    expect(verdict(warmish, 'order-over-floor').notJudgedBecause).toBe(
      'open runs only 9× the workflows cached (1 × 100), not 20×',
    );
    // Each worker caches its own: two workers with 30 each hold 60 of the 900.
    expect(judgeTargets(run((r) => (r.options = parseOptions(['--cache', '30'])))).map((t) => t.verdict)).toContain(
      'met',
    );
    const twoWorkers = run((r) => (r.options = parseOptions(['--cache', '30', '--workers', '2'])));
    expect(verdict(twoWorkers, 'no-early-cancellation').notJudgedBecause).toBe(
      'open runs only 15× the workflows cached (2 × 30), not 20×',
    );
  });

  it('the project ÷ stock ratio is judged only when settings are all its sides differ in, on loops that ran whole', () => {
    expect(verdict(run(), 'floor-project-over-stock').verdict).toBe('met');
    const stockBoth = run((r) => (r.options = parseOptions(['--stock-temporal'])));
    expect(verdict(stockBoth, 'floor-project-over-stock').notJudgedBecause).toContain('--stock-temporal');
    const onPostgres = run((r) => (r.options = parseOptions(['--temporal', 'postgres'])));
    expect(verdict(onPostgres, 'floor-project-over-stock').notJudgedBecause).toContain('the stock side on SQLite');
    expect(verdict(onPostgres, 'order-over-floor').verdict).toBe('met');
    const open = run(
      (r) =>
        (r.floor.stock = [stockFloor, { ...stockFloor, sustained: { ...stockFloor.sustained, allClosed: false } }]),
    );
    for (const id of ['floor-project-over-stock', 'order-over-floor'])
      expect(verdict(open, id).notJudgedBecause).toBe('a floor loop not all closed');
  });

  it('an early cancellation in any timer phase, the warm storm included, misses', () => {
    const early = run((r) => (r.warm.storm.negative = 1));
    expect(verdict(early, 'no-early-cancellation')).toMatchObject({ verdict: 'NOT met', value: 1 });
    expect(verdict(early, 'no-early-cancellation').bottleneck?.measured[0]).toContain('storm 0 (warm 1)');
  });

  it('a crash that loses an expiry or leaves an invariant broken misses; a notice asked twice does not', () => {
    expect(verdict(run(), 'crash-nothing-lost-or-doubled').measured).toContain(
      'notices asked twice 4, acted on once each',
    );
    const broken = run((r) => {
      r.timerCrash.crash!.outcome.lost = 1;
      r.timerCrash.crash!.invariantViolations = ['stock-adds-up: product TEA'];
    });
    const crash = verdict(broken, 'crash-nothing-lost-or-doubled');
    expect(crash).toMatchObject({ verdict: 'NOT met', value: 2 });
    expect(crash.measured).toContain('stock-adds-up: product TEA');
  });
});
