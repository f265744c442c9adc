import { expect, it } from 'vitest';
import { ConfigError } from '../../lib/config/env.js';
import { loadConfig } from '../../lib/config/index.js';

it('leaves the WORKER_* tuning to the SDK by default, a blank variable too, but the sticky timeout (30 s), the workflow threads (2) and the stack trace limit (10, stack traces on)', () => {
  const unset = {
    maxCachedWorkflows: undefined,
    stickyQueueTimeoutMs: 30_000,
    workflowPollers: undefined,
    workflowThreads: 2,
  };
  expect(loadConfig({}).workerTuning).toEqual({ ...unset, stackTraceLimit: 10 });
  expect(loadConfig({ WORKER_STICKY_QUEUE_TIMEOUT: '' }).workerTuning.stickyQueueTimeoutMs).toBe(30_000);
  expect(loadConfig({ WORKER_STACK_TRACE_LIMIT: '' }).workerTuning.stackTraceLimit).toBe(10);
  expect(loadConfig({ WORKER_STACK_TRACE_LIMIT: '0' }).workerTuning.stackTraceLimit).toBe(0);
  expect(
    loadConfig({ WORKER_MAX_CACHED_WORKFLOWS: '', WORKER_WORKFLOW_POLLERS: '', WORKER_WORKFLOW_THREADS: '' })
      .workerTuning,
  ).toMatchObject(unset);
});

it('reads the cache, the sticky timeout as a duration, the pollers, the stack trace limit and the workflow threads', () => {
  const env = {
    WORKER_MAX_CACHED_WORKFLOWS: '500',
    WORKER_STICKY_QUEUE_TIMEOUT: '2500ms',
    WORKER_WORKFLOW_POLLERS: '4',
    WORKER_STACK_TRACE_LIMIT: '0',
    WORKER_WORKFLOW_THREADS: '1',
  };
  expect(loadConfig(env).workerTuning).toEqual({
    maxCachedWorkflows: 500,
    stickyQueueTimeoutMs: 2_500,
    workflowPollers: 4,
    stackTraceLimit: 0,
    workflowThreads: 1,
  });
  expect(loadConfig({ WORKER_WORKFLOW_POLLERS: 'autoscaling' }).workerTuning.workflowPollers).toBe('autoscaling');
});

it.each([
  [
    { WORKER_MAX_CACHED_WORKFLOWS: '1' },
    /^WORKER_MAX_CACHED_WORKFLOWS: must be a whole number of at least 2 \(0 would/,
  ],
  [{ WORKER_MAX_CACHED_WORKFLOWS: '0' }, /^WORKER_MAX_CACHED_WORKFLOWS: must be a whole number of at least 2/],
  [{ WORKER_MAX_CACHED_WORKFLOWS: '10.5' }, /^WORKER_MAX_CACHED_WORKFLOWS: /],
  [{ WORKER_MAX_CACHED_WORKFLOWS: 'many' }, /^WORKER_MAX_CACHED_WORKFLOWS: /],
  [{ WORKER_STICKY_QUEUE_TIMEOUT: '10' }, /^WORKER_STICKY_QUEUE_TIMEOUT: "10" is not a duration; use a whole number/],
  [{ WORKER_STICKY_QUEUE_TIMEOUT: '0s' }, /^WORKER_STICKY_QUEUE_TIMEOUT: "0s" must be longer than zero$/],
  [
    { WORKER_WORKFLOW_POLLERS: '1' },
    /^WORKER_WORKFLOW_POLLERS: must be `autoscaling` or a whole number from 2 to 40, got "1"$/,
  ],
  [{ WORKER_WORKFLOW_POLLERS: '41' }, /^WORKER_WORKFLOW_POLLERS: .* got "41"$/],
  [{ WORKER_WORKFLOW_POLLERS: 'auto' }, /^WORKER_WORKFLOW_POLLERS: .* got "auto"$/],
  [{ WORKER_WORKFLOW_POLLERS: '4.5' }, /^WORKER_WORKFLOW_POLLERS: .* got "4.5"$/],
  [{ WORKER_STACK_TRACE_LIMIT: '-1' }, /^WORKER_STACK_TRACE_LIMIT: /],
  [{ WORKER_STACK_TRACE_LIMIT: 'ten' }, /^WORKER_STACK_TRACE_LIMIT: /],
  [{ WORKER_WORKFLOW_THREADS: '0' }, /^WORKER_WORKFLOW_THREADS: /],
  [{ WORKER_WORKFLOW_THREADS: '17' }, /^WORKER_WORKFLOW_THREADS: /],
  [{ WORKER_WORKFLOW_THREADS: 'two' }, /^WORKER_WORKFLOW_THREADS: /],
])('rejects %j with a ConfigError naming the variable', (env, message) => {
  expect(() => loadConfig(env)).toThrow(ConfigError);
  expect(() => loadConfig(env)).toThrow(message);
});
