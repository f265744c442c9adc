import { expect, it } from 'vitest';
import { parseOptions } from '../options.js';
import { loadWorkerTuning } from '../settings.js';
import { workerTuningEnv } from '../worker-env.js';
import { ConfigError } from '../../lib/config/env.js';
import { loadConfig } from '../../lib/config/index.js';

it("passes the service workers' WORKER_* tuning on, --cache as WORKER_MAX_CACHED_WORKFLOWS, and nothing else", () => {
  const options = parseOptions([
    '--cache',
    '20',
    '--env',
    'WORKER_WORKFLOW_POLLERS=autoscaling',
    '--env',
    'WORKER_METRICS_PORT=9999',
    '--env',
    'DATABASE_POOL_SIZE=4',
  ]);
  expect(workerTuningEnv(options.serviceEnv, options.workerCache)).toEqual({
    WORKER_WORKFLOW_POLLERS: 'autoscaling',
    WORKER_MAX_CACHED_WORKFLOWS: '20',
  });
  // The warm pair: the SDK's default cache.
  expect(workerTuningEnv(options.serviceEnv, undefined)).toEqual({ WORKER_WORKFLOW_POLLERS: 'autoscaling' });
  expect(workerTuningEnv({}, 10)).toEqual({ WORKER_MAX_CACHED_WORKFLOWS: '10' });
});

it("reads the tuning alone for the floor worker, by the service's rules, without the secrets the rest of the service needs", () => {
  // Not the embedded stack: loadConfig() would want ADMIN_TOKEN and the other secrets here.
  const env = { NODE_ENV: 'production', WORKER_MAX_CACHED_WORKFLOWS: '50', WORKER_WORKFLOW_POLLERS: 'autoscaling' };
  expect(() => loadConfig(env)).toThrow(ConfigError);
  expect(loadWorkerTuning(env)).toEqual({
    maxCachedWorkflows: 50,
    stickyQueueTimeoutMs: 30_000,
    workflowPollers: 'autoscaling',
    stackTraceLimit: 10,
    workflowThreads: 2,
  });
  expect(() => loadWorkerTuning({ WORKER_WORKFLOW_POLLERS: '41' })).toThrow(/^WORKER_WORKFLOW_POLLERS: .* got "41"$/);
});
