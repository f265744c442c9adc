import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { Worker as Thread } from 'node:worker_threads';
import { noopMetricMeter } from '@temporalio/common';
import { DefaultLogger } from '@temporalio/worker';
// The SDK's own defaulting of WorkerOptions: what Worker.create hands to Core.
import { compileWorkerOptions } from '@temporalio/worker/lib/worker-options.js';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../lib/config/index.js';
import type { WorkerTuning } from '../../lib/config/worker-tuning.js';
import { applyStackTraceLimit, workerTuning } from '../../worker/tuning.js';

/** No WORKER_* variable set: the service's defaults. */
const UNSET: WorkerTuning = loadConfig({}).workerTuning;

/** The options as the SDK completes them, for a worker given `tuning`. */
const compiled = (tuning: WorkerTuning | undefined) =>
  compileWorkerOptions({ taskQueue: 'tuning', ...workerTuning(tuning) }, new DefaultLogger('ERROR'), noopMetricMeter);

describe('workerTuning', () => {
  it('passes no option for an unset variable but the sticky timeout and the workflow threads, and none without tuning (tests)', () => {
    // The stack trace limit is applied apart (applyStackTraceLimit), never a worker option.
    expect(workerTuning(UNSET)).toEqual({ stickyQueueScheduleToStartTimeout: 30_000, workflowThreadPoolSize: 2 });
    expect(workerTuning(undefined)).toEqual({});
  });

  it('maps the cache, the sticky timeout and a fixed number of workflow pollers', () => {
    const tuning = { ...UNSET, maxCachedWorkflows: 50, stickyQueueTimeoutMs: 2_500, workflowPollers: 4 };
    expect(workerTuning(tuning)).toEqual({
      maxCachedWorkflows: 50,
      stickyQueueScheduleToStartTimeout: 2_500,
      workflowTaskPollerBehavior: { type: 'simple-maximum', maximum: 4 },
      workflowThreadPoolSize: 2,
    });
    const sdk = compiled(tuning);
    expect(sdk.maxCachedWorkflows).toBe(50);
    expect(sdk.stickyQueueScheduleToStartTimeoutMs).toBe(2_500);
    expect(sdk.workflowTaskPollerBehavior).toEqual({ type: 'simple-maximum', maximum: 4 });
    expect(sdk.activityTaskPollerBehavior).toEqual({ type: 'simple-maximum', maximum: 10 });
  });

  it("runs workflow activations on two threads unless told otherwise, where the SDK's default is one", () => {
    expect(compiled(UNSET).workflowThreadPoolSize).toBe(2);
    expect(compiled({ ...UNSET, workflowThreads: 1 }).workflowThreadPoolSize).toBe(1);
    expect(compiled(undefined).workflowThreadPoolSize).toBe(1);
  });

  it('autoscales the workflow and the activity pollers within the SDK bounds', () => {
    const sdk = compiled({ ...UNSET, workflowPollers: 'autoscaling' });
    const autoscaling = { type: 'autoscaling', minimum: 1, initial: 5, maximum: 100 };
    expect(sdk.workflowTaskPollerBehavior).toEqual(autoscaling);
    expect(sdk.activityTaskPollerBehavior).toEqual(autoscaling);
  });

  it("leaves the SDK's defaults when unset, 10 pollers each, but a 30-s sticky timeout where the SDK's is 10 s", () => {
    const sdk = compiled(UNSET);
    expect(sdk.stickyQueueScheduleToStartTimeoutMs).toBe(30_000);
    expect(sdk.workflowTaskPollerBehavior).toEqual({ type: 'simple-maximum', maximum: 10 });
    expect(sdk.maxCachedWorkflows).toBeGreaterThanOrEqual(10);
    expect(compiled(undefined).stickyQueueScheduleToStartTimeoutMs).toBe(10_000);
  });
});

describe('applyStackTraceLimit', () => {
  // A process-wide V8 flag: back to V8's default for whatever else this process runs.
  afterAll(() => setFlagsFromString('--stack-trace-limit=10'));

  it('reaches a VM context created afterwards, in this thread and in a new worker thread', async () => {
    applyStackTraceLimit(3);
    expect(runInNewContext('Error.stackTraceLimit')).toBe(3);
    // The SDK runs workflows in VM contexts on worker threads (reuseV8Context, workflowThreadPoolSize).
    expect(await inNewThread("require('node:vm').runInNewContext('Error.stackTraceLimit')")).toBe(3);
  });

  it('leaves the limit alone when unset', () => {
    applyStackTraceLimit(4);
    applyStackTraceLimit(undefined);
    expect(runInNewContext('Error.stackTraceLimit')).toBe(4);
  });
});

/** Evaluates `expression` in a new worker thread, as the SDK starts its workflow threads. */
function inNewThread(expression: string): Promise<unknown> {
  const thread = new Thread(`require('node:worker_threads').parentPort.postMessage(${expression})`, { eval: true });
  return new Promise<unknown>((resolve, reject) => {
    thread.once('message', resolve);
    thread.once('error', reject);
  }).finally(() => void thread.terminate());
}
