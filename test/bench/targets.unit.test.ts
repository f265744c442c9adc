import { describe, expect, it } from 'vitest';
import { parseOptions } from '../../bench/options.js';
import type { RampStep } from '../../bench/ramp.js';
import type { ResourceUse } from '../../bench/resources.js';
import type { BenchMeasurements } from '../../bench/results.js';
import { summarize } from '../../bench/stats.js';
import type { StormResult } from '../../bench/storm.js';
import type { ProbeResult } from '../../bench/storm-probes.js';
import type { SustainedResult } from '../../bench/sustained.js';
import { judgeTargets, type TargetVerdict } from '../../bench/targets.js';

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
    ceiling: [],
    clients: [],
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

  it('the CLI dev server or another core count leaves every target not judged', () => {
    for (const other of [
      run((r) => (r.options = parseOptions(['--temporal', 'cli']))),
      run((r) => (r.machine.cores = 4)),
    ]) {
      const verdicts = judgeTargets(other).map((t) => t.verdict);
      expect(verdicts.length).toBeGreaterThan(0);
      expect(new Set(verdicts)).toEqual(new Set(['not judged']));
    }
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
});
