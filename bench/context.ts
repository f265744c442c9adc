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
