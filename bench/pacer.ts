import { setTimeout as sleep } from 'node:timers/promises';
/**
 * An open-loop load generator: task i is started at start + i / rate whatever the earlier ones
 * are doing (a slow system does not slow the offered load down), bounded in count and in
 * requests in flight. A task that would exceed the bound waits, and the lag behind schedule is
 * reported: the offered rate was not sustained.
 */
export interface PacedRun {
  started: number;
  completed: number;
  failed: number;
  elapsedS: number;
  /**
   * Completed tasks per second, from the first start until 99 % of them had completed: one
   * straggler (a task stalled for seconds after the rest) does not set it, a backlog does.
   */
  achievedRate: number;
  /** How far behind schedule the last task started (ms): > 0 means the rate was not sustained. */
  behindMs: number;
  /** Tasks never started because the run fell further behind than `giveUpBehindMs`. */
  abandoned: number;
}

export async function runPaced(options: {
  rate: number;
  count: number;
  maxInFlight: number;
  /** Stop starting tasks once this far behind schedule: the rate is not sustained, and piling on only grows a backlog. */
  giveUpBehindMs?: number;
  /** Stop starting tasks once this says so (the phase being measured is over); not counted as abandoned. */
  until?: () => boolean;
  task: (i: number) => Promise<void>;
  progress?: (line: string) => void;
}): Promise<PacedRun> {
  const start = Date.now();
  let inFlight = 0;
  let completed = 0;
  let failed = 0;
  let behindMs = 0;
  let lastDone = start;
  const completions: number[] = []; // in the order they happened
  let abandoned = 0;
  let started = 0;
  const pending = new Set<Promise<void>>();
  const ticker = setInterval(() => {
    const t = (Date.now() - start) / 1000;
    options.progress?.(
      `t=${t.toFixed(0)}s started ${completed + failed + inFlight}/${options.count} done ${completed} failed ${failed} in flight ${inFlight}`,
    );
  }, 2_000);
  try {
    for (let i = 0; i < options.count; i++) {
      const due = start + (i * 1000) / options.rate;
      const wait = due - Date.now();
      if (wait > 0) await sleep(wait);
      while (inFlight >= options.maxInFlight) await Promise.race(pending);
      if (options.until?.()) break;
      behindMs = Math.max(0, Date.now() - due);
      if (options.giveUpBehindMs !== undefined && behindMs > options.giveUpBehindMs) {
        abandoned = options.count - i;
        break;
      }
      inFlight++;
      started++;
      const p: Promise<void> = options
        .task(i)
        .then(
          () => {
            completed++;
            completions.push(Date.now());
          },
          () => void failed++,
        )
        .finally(() => {
          inFlight--;
          lastDone = Date.now();
          pending.delete(p);
        });
      pending.add(p);
    }
    await Promise.all(pending);
  } finally {
    clearInterval(ticker);
  }
  const elapsedS = (lastDone - start) / 1000;
  return { started, completed, failed, elapsedS, achievedRate: rateOfMost(start, completions), behindMs, abandoned };
}

/** Completions per second from `start` until 99 % of `completions` (ascending times) had happened. */
export function rateOfMost(start: number, completions: readonly number[]): number {
  const most = Math.ceil(0.99 * completions.length);
  if (most === 0) return 0;
  return most / (Math.max(1, completions[most - 1]! - start) / 1000);
}
