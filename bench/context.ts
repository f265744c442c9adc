import type { DbObserver } from './db-stats.js';
import type { BenchOptions } from './options.js';
import type { BenchStack } from './stack.js';

/** What every phase gets: the options, the running stack, the observer, and a progress line. */
export interface PhaseContext {
  options: BenchOptions;
  stack: BenchStack;
  observer: DbObserver;
  progress(line: string): void;
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, Math.max(0, ms)));

/** Runs `task` over `items` with at most `limit` at once. */
export async function forEachLimited<T>(items: readonly T[], limit: number, task: (item: T, index: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        await task(items[i]!, i);
      }
    }),
  );
}
