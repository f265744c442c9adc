import { z } from 'zod';
import { ConfigError, duration, limit, nonEmpty } from './env.js';

/**
 * The worker's Temporal tuning (worker/tuning.ts turns it into WorkerOptions); unset, each is the
 * SDK's default but the sticky timeout, the workflow threads and the stack trace limit.
 */
export const WorkerTuningSchema = z.object({
  WORKER_MAX_CACHED_WORKFLOWS: z.coerce
    .number()
    .int()
    .min(2, 'must be a whole number of at least 2 (0 would turn the cache off, every task replaying its whole run)')
    .optional(),
  // 30 s by default, not the SDK's 10: in a storm a cold-cache worker's own sticky backlog outlasts 10 s,
  // and every task timed out there is sent again on the normal queue, which 2 of the 10 pollers serve;
  // with 30 s a storm of 2,000 drained in 0.65× the time at 0.9× the CPU, every pair (docs/benchmark.md,
  // "The sticky queue's timeout"). The price: a SIGKILLed worker's queued runs wait up to 30 s.
  WORKER_STICKY_QUEUE_TIMEOUT: nonEmpty.default('30s'),
  WORKER_WORKFLOW_POLLERS: nonEmpty.optional(),
  // 2 by default, not the SDK's 1: a cold-cache storm's workflow tasks wait for each other on the one
  // workflow thread; with two, a storm of 2,000 drained in 0.92× the time, every pair, at the same CPU
  // per order (docs/benchmark.md, "The order's storm against the floor's").
  WORKER_WORKFLOW_THREADS: z.coerce.number().int().min(1).max(16).default(2),
  // 10 (V8's default) by default: the Web UI's Call Stack shows where each run waits, which operators
  // need for a stuck order. 0 turns it off and saved CPU in the bench's interleaved comparison
  // (docs/benchmark.md, "The levers, before and after": the worker's CPU per order 0.81×, the whole order's 0.89×).
  WORKER_STACK_TRACE_LIMIT: limit.default(10),
});

/** Each unset: the SDK's default (worker/tuning.ts passes no option for it). */
export interface WorkerTuning {
  /** Workflow runs the worker keeps in memory; a run outside it replays its history on its next task. */
  maxCachedWorkflows: number | undefined;
  /** How long a run's next task waits on this worker's sticky queue before any worker may take it (30 s unless set). */
  stickyQueueTimeoutMs: number;
  /** Workflow task pollers: `autoscaling` (activity pollers too), or a fixed maximum. */
  workflowPollers: 'autoscaling' | number | undefined;
  /** V8's Error.stackTraceLimit in the workflow sandboxes (10 unless set; 0: no stack traces). */
  stackTraceLimit: number;
  /** Threads that run workflow activations (workflowThreadPoolSize; 2 unless set, the SDK's is 1). */
  workflowThreads: number;
}

export function workerTuning(e: z.infer<typeof WorkerTuningSchema>): WorkerTuning {
  return {
    maxCachedWorkflows: e.WORKER_MAX_CACHED_WORKFLOWS,
    stickyQueueTimeoutMs: duration('WORKER_STICKY_QUEUE_TIMEOUT', e.WORKER_STICKY_QUEUE_TIMEOUT),
    workflowPollers: e.WORKER_WORKFLOW_POLLERS === undefined ? undefined : workflowPollers(e.WORKER_WORKFLOW_POLLERS),
    stackTraceLimit: e.WORKER_STACK_TRACE_LIMIT,
    workflowThreads: e.WORKER_WORKFLOW_THREADS,
  };
}

/** The SDK's maxConcurrentWorkflowTaskExecutions default, which the service does not change. */
const WORKFLOW_TASK_SLOTS = 40;

/**
 * WORKER_WORKFLOW_POLLERS: `autoscaling`, or a fixed maximum of 2 to 40. Temporal's Core refuses
 * fewer than 2 while the worker has a workflow cache (it always has one here); more than the 40
 * workflow task slots (the SDK's default, which the service keeps) would only wait for a slot.
 */
function workflowPollers(text: string): 'autoscaling' | number {
  if (text === 'autoscaling') return text;
  const n = /^\d+$/.test(text) ? Number(text) : NaN;
  if (!(n >= 2 && n <= WORKFLOW_TASK_SLOTS))
    throw new ConfigError(
      `WORKER_WORKFLOW_POLLERS: must be \`autoscaling\` or a whole number from 2 to ${WORKFLOW_TASK_SLOTS}, got "${text}"`,
    );
  return n;
}
