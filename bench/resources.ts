import { CLOCK_TICKS_PER_S, machineTicks, readProcStats, type ProcStat } from './proc.js';

/**
 * CPU seconds and peak resident memory of each component over a phase, from /proc: the process and
 * all its descendants count (PostgreSQL's backends call setsid(), so a process group would miss them;
 * ended backends are in the postmaster's reaped-children time).
 * Sampled every second; CPU is exact (cumulative counters), peak memory is the highest sample.
 */
export interface ResourceUse {
  wallS: number;
  cpuS: Record<string, number>;
  peakRssMb: Record<string, number>;
  /** CPU used by everything on the machine outside the bench's processes (other people's tests). */
  othersCpuS: number;
  machineCores: number;
}

/**
 * The service's own processes: what "CPU per order, end to end" adds up. The bench's process (the
 * load generator, and the scan baseline's canceller) is metered as "bench", outside it.
 */
export const SERVICE_COMPONENTS = ['postgres', 'temporal', 'worker', 'api'] as const;
export type ServiceComponent = (typeof SERVICE_COMPONENTS)[number];

/** CPU seconds of the service's processes together. */
export function serviceCpuS(r: ResourceUse): number {
  return SERVICE_COMPONENTS.reduce((sum, c) => sum + (r.cpuS[c] ?? 0), 0);
}

export class ResourceMeter {
  private readonly startTicks: Record<string, number>;
  private readonly peak: Record<string, number> = {};
  private readonly startMachine = machineTicks();
  private readonly startBench = process.cpuUsage();
  private readonly startedAt = Date.now();
  private readonly timer: NodeJS.Timeout;

  /** `roots`: the top processes of each component, by name (several for the workers). */
  constructor(private readonly roots: Record<string, ReadonlyArray<number | undefined>>) {
    this.startTicks = this.ticksByComponent();
    this.timer = setInterval(() => this.ticksByComponent(), 1_000);
  }

  finish(): ResourceUse {
    clearInterval(this.timer);
    return this.soFar();
  }

  /** What was used from the start until now, the meter still running (e.g. while the load was offered, before settling). */
  soFar(): ResourceUse {
    const end = this.ticksByComponent();
    const cpuS: Record<string, number> = {};
    for (const name of Object.keys(end)) cpuS[name] = (end[name]! - (this.startTicks[name] ?? 0)) / CLOCK_TICKS_PER_S;
    const bench = process.cpuUsage(this.startBench);
    cpuS.bench = (bench.user + bench.system) / 1e6;
    const machine = machineTicks();
    const machineBusyS = (machine.busy - this.startMachine.busy) / CLOCK_TICKS_PER_S;
    const ours = Object.values(cpuS).reduce((a, b) => a + b, 0);
    const wallS = (Date.now() - this.startedAt) / 1000;
    const cores = Math.round((machine.total - this.startMachine.total) / CLOCK_TICKS_PER_S / wallS) || 1;
    const peakRssMb = Object.fromEntries(Object.entries(this.peak).map(([k, v]) => [k, Math.round(v / 2 ** 20)]));
    return { wallS, cpuS, peakRssMb, othersCpuS: Math.max(0, machineBusyS - ours), machineCores: cores };
  }

  private ticksByComponent(): Record<string, number> {
    const stats = readProcStats();
    const ticks: Record<string, number> = {};
    for (const [name, roots] of Object.entries(this.roots)) {
      const members = descendants(
        stats,
        roots.filter((pid) => pid !== undefined),
      );
      if (members.length === 0) continue;
      ticks[name] = members.reduce((sum, s) => sum + s.ticks, 0);
      const rss = members.reduce((sum, s) => sum + s.rssBytes, 0);
      this.peak[name] = Math.max(this.peak[name] ?? 0, rss);
    }
    const self = stats.find((s) => s.pid === process.pid);
    if (self) this.peak.bench = Math.max(this.peak.bench ?? 0, self.rssBytes);
    return ticks;
  }
}

/** The roots and every process below them (by parent pid). */
function descendants(stats: readonly ProcStat[], roots: readonly number[]): ProcStat[] {
  const inTree = new Set(roots);
  for (let grew = true; grew;) {
    grew = false;
    for (const s of stats) {
      if (!inTree.has(s.pid) && inTree.has(s.ppid)) {
        inTree.add(s.pid);
        grew = true;
      }
    }
  }
  return stats.filter((s) => inTree.has(s.pid));
}
