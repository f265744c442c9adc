import { URL } from 'node:url';
import { isMainThread } from 'node:worker_threads';

/**
 * Preloaded into the bench's worker processes (`node --import <this file>?max=N`, bench/stack.ts)
 * to run them with a workflow cache of N runs (the SDK's `maxCachedWorkflows`), as production's
 * ratio of open runs to cache has it: with a 30-minute window a worker holds far more open runs
 * than its cache, so most timer firings and payments replay the run's history first. The service
 * has no setting for it; this sets the one option on every Worker.create of the process and
 * changes nothing else. Plain JavaScript: the compiled worker runs it without a TypeScript loader.
 */
if (isMainThread) {
  const max = Number(new URL(import.meta.url).searchParams.get('max'));
  if (!Number.isInteger(max) || max < 2) throw new Error(`worker-cache-limit: expected ?max=N (N ≥ 2), got ${max}`);
  const { Worker } = await import('@temporalio/worker');
  const create = Worker.create.bind(Worker);
  Worker.create = (options) => create({ ...options, maxCachedWorkflows: max });
}
