import { expect, it } from 'vitest';
import { parseOptions } from '../../bench/options.js';
import { workerTuningEnv } from '../../bench/worker-env.js';

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
