import { expect, it } from 'vitest';
import { loadConfig } from '../../lib/config/index.js';
import { DEFAULT_WEBHOOK_SETTINGS } from '../../lib/config/webhooks.js';
import { SERVICE_SECRETS } from '../helpers/service-secrets.js';

/** A deployment's environment: not npm start's embedded stack. */
const deployed = { ...SERVICE_SECRETS, DATABASE_URL: 'postgres://db/orders', TEMPORAL_ADDRESS: 'temporal:7233' };

it('defaults to 21 attempts (about three days of backoff), https only, and the defaults the API falls back on', () => {
  expect(loadConfig(deployed).webhooks).toEqual(DEFAULT_WEBHOOK_SETTINGS);
  // npm start's stack lets a receiver on the same machine listen on plain http, unless told otherwise.
  expect(loadConfig({}).webhooks.allowHttpLoopback).toBe(true);
  expect(loadConfig({ WEBHOOK_ALLOW_HTTP_LOOPBACK: 'false' }).webhooks.allowHttpLoopback).toBe(false);
});

it('reads every WEBHOOK_* variable and the stale lock', () => {
  const env = {
    WEBHOOK_MAX_ATTEMPTS: '5',
    WEBHOOK_TIMEOUT: '2s',
    WEBHOOK_CONCURRENCY: '4',
    WEBHOOK_PARALLEL_PER_ENDPOINT: '1',
    WEBHOOK_POLL_INTERVAL: '500ms',
    WEBHOOK_SECRET_OVERLAP: '2h',
    WEBHOOK_ALLOW_HTTP_LOOPBACK: 'true',
    JOB_QUEUE_STALE_LOCK: '1m',
  };
  expect(loadConfig(env).webhooks).toEqual({
    maxAttempts: 5,
    timeoutMs: 2_000,
    concurrency: 4,
    parallelPerEndpoint: 1,
    pollIntervalMs: 500,
    secretOverlapMs: 7_200_000,
    allowHttpLoopback: true,
    staleLockMs: 60_000,
  });
});

it.each([
  [{ WEBHOOK_MAX_ATTEMPTS: '0' }, 'WEBHOOK_MAX_ATTEMPTS'],
  [{ WEBHOOK_TIMEOUT: '0s' }, 'WEBHOOK_TIMEOUT'],
  [{ WEBHOOK_SECRET_OVERLAP: '800h' }, 'WEBHOOK_SECRET_OVERLAP'],
  [{ WEBHOOK_TIMEOUT: '1m', JOB_QUEUE_STALE_LOCK: '2m' }, 'JOB_QUEUE_STALE_LOCK'],
  [{ JOB_QUEUE_STALE_LOCK: '30s' }, 'JOB_QUEUE_STALE_LOCK'],
])('%j stops start-up naming %s', (env, variable) => {
  expect(() => loadConfig(env)).toThrow(new RegExp(`^${variable}:`));
});
