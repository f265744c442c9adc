import { describe, expect, it } from 'vitest';
import { extraReport } from '../extra-report.js';
import type { FloorAround } from '../floor/around.js';
import { floorCpuMs, type FloorResult, type FloorStorm } from '../floor/floor.js';
import type { ResourceUse } from '../resources.js';
import { summarize } from '../stats.js';

const idle: ResourceUse = { wallS: 1, cpuS: {}, peakRssMb: {}, othersCpuS: 0, machineCores: 2 };

/** A made-up floor run: 40 ms per run on its own processes, 5 ms more on the idle service's. */
const floor: FloorResult = {
  settings: 'project',
  server: 'project',
  sustained: {
    creation: {
      started: 100,
      completed: 100,
      failed: 0,
      elapsedS: 10,
      achievedRate: 10,
      behindMs: 0,
      abandoned: 0,
      offeredRate: 10,
      latencyMs: summarize([40, 50]),
    },
    allClosed: true,
    resources: idle,
    cpuMsPerRun: { temporal: 25, 'floor worker': 12, bench: 3, worker: 4, api: 1 },
  },
};

/** The same on the stock settings: 50 ms per run on its own processes. */
const stock: FloorResult = {
  ...floor,
  settings: 'stock',
  server: 'stock',
  sustained: { ...floor.sustained, cpuMsPerRun: { temporal: 32, 'floor worker': 15, bench: 3 } },
};

/** A storm of 200 minimal runs, all closed `drainS` after the fire time. */
const storm = (drainS: number): FloorStorm => ({
  runs: 200,
  startedBeforeFire: 200,
  allClosed: true,
  drainS,
  medianCloseS: drainS / 2,
  resources: idle,
  cpuMsPerRun: { temporal: 10, 'floor worker': 4 },
});

/** The machine slower after the middle: each side's second segment 10 ms dearer per run. */
const slower = (f: FloorResult): FloorResult => ({
  ...f,
  sustained: {
    ...f.sustained,
    cpuMsPerRun: { ...f.sustained.cpuMsPerRun, temporal: f.sustained.cpuMsPerRun.temporal! + 10 },
  },
});
const around: FloorAround = {
  project: [floor, slower(floor)],
  stock: [stock, slower(stock)],
  storms: [storm(18), storm(22)],
};

describe("the report of Temporal's floor", () => {
  it("counts the floor's own processes only, not the idle service's", () => {
    expect(floorCpuMs(floor.sustained.cpuMsPerRun)).toBe(40);
  });

  it("divides an order's CPU and its storm's drain by the floor's segments around them, and each pair", () => {
    const report = extraReport({ floor: around, order: { cpuMsPerOrder: 60, stormDrainS: 34 } });
    expect(report).toContain(
      "An order's CPU ÷ the floor's on the project's settings: 1.33× (60 ms ÷ 45 ms); pair by pair 1.5×, 1.2×",
    );
    expect(report).toContain(
      "The order storm's drain ÷ the floor storms': 1.7× (34 s ÷ 20 s); pair by pair 1.89×, 1.55×",
    );
  });

  it('shows each segment with the CPU the ratios divide beside every process', () => {
    const report = extraReport({ floor: around });
    expect(report).toContain('| 2 | project worker, project server | 10/s; 100, 0 | 40 ms / 50 ms | 40 ms |');
  });

  it('names a peer that could not run, and why', () => {
    const report = extraReport({
      peers: { sustained: [], storms: [], skipped: [{ kind: 'redis', why: 'redis-server is missing' }] },
    });
    expect(report).toMatch(/Peers not measured, in whole or in part: Redis[^(]*\(redis-server is missing\)\./);
  });

  it('leaves the order ratios out when the service did not run', () => {
    const report = extraReport({ floor: around });
    expect(report).not.toContain("An order's CPU");
    expect(report).not.toContain('the order storm');
  });

  it("divides the floor on the project's settings by the floor on the stock ones", () => {
    expect(extraReport({ floor: around })).toContain(
      "the floor's CPU per run on its settings ÷ on the stock ones: 0.82× (45 ms ÷ 55 ms); pair by pair 0.8×, 0.83×",
    );
  });
});

describe("the order against Temporal's floor, interleaved", () => {
  it('divides the orders by the minimal runs over all segments and within each adjacent pair', () => {
    const sides = ['order', 'floor', 'floor', 'order', 'floor', 'order', 'order', 'floor'] as const;
    // The machine slows by a tenth of its first speed per segment; the order costs 1.5× the floor
    // throughout: each pair is off by the drift, the mean over ABBA BAAB is not.
    const segments = sides.map((side, i) => ({ side, runs: 300, cpuMs: (side === 'order' ? 60 : 40) * (1 + i / 10) }));
    const report = extraReport({ floorAb: { segmentKind: 'sustained', rate: 15, segmentS: 20, segments } });
    expect(report).toContain(
      'CPU per run, order ÷ floor over all segments: 1.5× (order 81 ms, floor 54 ms); pair by pair: 1.36×, 1.63×, 1.61×, 1.41×.',
    );
    expect(report).not.toContain("The storm's drain");
  });

  it('divides storms by their drain too, and leaves the order unknown when one of its storms did not settle', () => {
    const sides = ['order', 'floor', 'floor', 'order', 'floor', 'order', 'order', 'floor'] as const;
    // The order's storm drains in 1.25× the floor's time at 0.5× its CPU per run closed, on a steady machine.
    const segments = sides.map((side) => ({
      side,
      runs: 2000,
      cpuMs: side === 'order' ? 10 : 20,
      drainS: side === 'order' ? 25 : 20,
    }));
    const report = extraReport({ floorAb: { segmentKind: 'storm', rate: 15, segmentS: 20, segments } });
    expect(report).toContain('| 4 | order | 2000 | 10 | 25 s |');
    expect(report).toContain(
      "The storm's drain, order ÷ floor: 1.25× (order 25 s, floor 20 s); pair by pair: 1.25×, 1.25×, 1.25×, 1.25×.",
    );
    expect(report).toContain('CPU per run, order ÷ floor over all segments: 0.5×');

    const unsettled = segments.map((s, i) => (i === 3 ? { ...s, drainS: null } : s));
    const partial = extraReport({ floorAb: { segmentKind: 'storm', rate: 15, segmentS: 20, segments: unsettled } });
    expect(partial).toContain('| 4 | order | 2000 | 10 | not settled |');
    expect(partial).toMatch(
      /The storm's drain, order ÷ floor: – \(order –, floor 20 s\); pair by pair: 1\.25×, –, 1\.25×, 1\.25×/,
    );
  });
});

describe("the floor on the project's settings against the stock ones, interleaved", () => {
  it('divides project by stock over all segments, for Temporal alone too, and within each adjacent pair', () => {
    const sides = ['project', 'stock', 'stock', 'project', 'stock', 'project', 'project', 'stock'] as const;
    // The project's settings cost 0.9× the stock ones, Temporal's share the same on both, while the
    // machine slows by a tenth of its first speed per segment.
    const segments = sides.map((side, i) => ({
      side,
      runs: 600,
      cpuMs: (side === 'project' ? 36 : 40) * (1 + i / 10),
      temporalMs: 20 * (1 + i / 10),
    }));
    const report = extraReport({ floorSettingsAb: { rate: 30, segmentS: 20, segments } });
    expect(report).toContain('pair by pair: 0.82×, 0.98×, 0.96×, 0.85×.');
    expect(report).toMatch(/Project ÷ stock over all segments: 0\.9× \(project 48\.6 ms, stock 54 ms; Temporal 1×\)/);
  });
});

describe('a lever before and after, interleaved', () => {
  it('divides B by A over all segments and within each adjacent pair', () => {
    // B costs 0.9× A throughout while the machine slows by a tenth of its first speed per segment.
    const segments = (['A', 'B', 'B', 'A', 'B', 'A', 'A', 'B'] as const).map((side, i) => {
      const totalMs = (side === 'B' ? 90 : 100) * (1 + i / 10);
      return { side, orders: 300, cpuMsPerOrder: { worker: totalMs }, totalMs, lagP99Ms: 100 };
    });
    const report = extraReport({
      leverAb: { lever: 'X=1', restarted: 'the workers', segmentKind: 'sustained', rate: 15, segmentS: 20, segments },
    });
    expect(report).toContain('pair by pair: 0.99×, 0.83×, 0.84×, 0.96×.');
    expect(report).toMatch(/B ÷ A over all segments: 0\.9× per order \(A 135 ms, B 121\.5 ms; worker 0\.9×/);
    expect(report).not.toContain("The storm's drain");
  });

  it('divides storms by their drain too, and leaves a side unknown when one of its storms did not settle', () => {
    // B drains in 0.6× A's time at 0.8× the CPU per cancellation, on a steady machine.
    const storms = (['A', 'B', 'B', 'A', 'B', 'A', 'A', 'B'] as const).map((side) => ({
      side,
      orders: 2000,
      cpuMsPerOrder: { worker: side === 'B' ? 20 : 25 },
      totalMs: side === 'B' ? 20 : 25,
      lagP99Ms: 30_000,
      drainS: side === 'B' ? 27 : 45,
      probes: { placeP99Ms: 900, webhookP99Ms: 120, failed: 0 },
    }));
    const comparison = {
      lever: 'X=1',
      restarted: 'the workers and the API',
      segmentKind: 'storm' as const,
      rate: 15,
      segmentS: 20,
      segments: storms,
    };
    const report = extraReport({ leverAb: comparison });
    expect(report).toContain('in the order ABBA BAAB, the workers and the API restarted before each.');
    expect(report).toContain('| 2 | B | 2000 | – / – / 20 / – = 20 | 27 s | 30.0 s | 900 ms / 120 ms, 0 |');
    expect(report).toMatch(/B ÷ A over all segments: 0\.8× per cancellation/);
    expect(report).toContain("The storm's drain, B ÷ A: 0.6× (A 45 s, B 27 s); pair by pair: 0.6×, 0.6×, 0.6×, 0.6×.");

    const unsettled = storms.map((s, i) => (i === 1 ? { ...s, drainS: null } : s));
    const partial = extraReport({ leverAb: { ...comparison, segments: unsettled } });
    expect(partial).toContain('| 2 | B | 2000 | – / – / 20 / – = 20 | not settled | 30.0 s | 900 ms / 120 ms, 0 |');
    expect(partial).toContain("The storm's drain, B ÷ A: – (A 45 s, B –); pair by pair: –, 0.6×, 0.6×, 0.6×.");
  });
});
