import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

/** What /proc says about each process: enough to add up CPU and memory per process tree. */
export interface ProcStat {
  pid: number;
  comm: string;
  ppid: number;
  /** utime + stime, in clock ticks. */
  ticks: number;
  rssBytes: number;
}

export const CLOCK_TICKS_PER_S = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
const PAGE_BYTES = Number(execFileSync('getconf', ['PAGESIZE'], { encoding: 'utf8' }).trim()) || 4096;

export function readProcStats(): ProcStat[] {
  const out: ProcStat[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let text: string;
    try {
      text = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue; // ended meanwhile
    }
    const close = text.lastIndexOf(')');
    const f = text.slice(close + 2).split(' ');
    out.push({
      pid: Number(entry),
      comm: text.slice(text.indexOf('(') + 1, close),
      ppid: Number(f[1]),
      // Own time plus reaped children's (PostgreSQL's ended backends land in the postmaster's).
      ticks: Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]),
      rssBytes: Number(f[21]) * PAGE_BYTES,
    });
  }
  return out;
}

/** Busy and total CPU ticks of the whole machine (/proc/stat), to see what everyone else used. */
export function machineTicks(): { busy: number; total: number } {
  const cpu = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  const total = cpu.reduce((a, b) => a + b, 0);
  const idle = (cpu[3] ?? 0) + (cpu[4] ?? 0);
  return { busy: total - idle, total };
}

export function loadAverage(): string {
  return readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
}
