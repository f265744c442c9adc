import { setFlagsFromString } from 'node:v8';
import type { WorkerOptions } from '@temporalio/worker';
import type { WorkerTuning } from '../lib/config/worker-tuning.js';

/**
 * The worker's Temporal tuning (WORKER_* in lib/config/worker-tuning.ts) as WorkerOptions: the service's worker
 * and the bench's floor worker (`project` settings) both take it from here, so they run alike.
 * A setting left unset passes no option, and the SDK's default applies; the sticky timeout and the
 * workflow threads are always set (lib/config/worker-tuning.ts gives them defaults of their own).
 */
export type TuningOptions = Pick<
  WorkerOptions,
  | 'maxCachedWorkflows'
  | 'stickyQueueScheduleToStartTimeout'
  | 'workflowTaskPollerBehavior'
  | 'activityTaskPollerBehavior'
  | 'workflowThreadPoolSize'
>;

export function workerTuning(tuning: WorkerTuning | undefined): TuningOptions {
  if (tuning === undefined) return {};
  return {
    ...(tuning.maxCachedWorkflows === undefined ? {} : { maxCachedWorkflows: tuning.maxCachedWorkflows }),
    stickyQueueScheduleToStartTimeout: tuning.stickyQueueTimeoutMs,
    ...pollers(tuning.workflowPollers),
    workflowThreadPoolSize: tuning.workflowThreads,
  };
}

/** The SDK's bounds (1 to 100 pollers, 5 at first): the server's feedback scales within them. */
const AUTOSCALING = { type: 'autoscaling' } as const;

function pollers(setting: WorkerTuning['workflowPollers']): TuningOptions {
  if (setting === undefined) return {};
  if (setting === 'autoscaling')
    return { workflowTaskPollerBehavior: AUTOSCALING, activityTaskPollerBehavior: AUTOSCALING };
  // Not maxConcurrentWorkflowTaskPolls: SDK 1.24 documents it but never reads it (its
  // worker-options.js builds the poller behaviour from workflowTaskPollerBehavior alone).
  return { workflowTaskPollerBehavior: { type: 'simple-maximum', maximum: setting } };
}

/**
 * WORKER_STACK_TRACE_LIMIT, as V8's --stack-trace-limit for the whole process. SDK 1.24 captures a
 * stack for every promise a workflow creates (for the `__stack_trace` query, sdk-typescript#1587);
 * the limit bounds that cost. A flag rather than Error.stackTraceLimit: the workflows run in VM
 * contexts on worker threads, each with an Error constructor of its own, which read the flag when
 * they are created. So call it before the Worker is created; contexts that already exist (this
 * thread's own, where activities run) keep their limit. The service's default is V8's, 10, which the
 * Web UI's Call Stack needs (lib/config/worker-tuning.ts); undefined (the bench's stock floor worker) leaves
 * whatever the process was started with.
 */
export function applyStackTraceLimit(limit: number | undefined): void {
  if (limit !== undefined) setFlagsFromString(`--stack-trace-limit=${limit}`);
}
