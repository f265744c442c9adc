import { expect, it } from 'vitest';
import { ConfigError, DEV_ADMIN_TOKEN, loadConfig } from '../../lib/config.js';

it('uses the documented defaults, with fault injection on under the embedded stack', () => {
  expect(loadConfig({})).toMatchObject({
    port: 3000,
    databaseUrl: undefined,
    temporal: { address: undefined, namespace: 'default', taskQueue: 'orders' },
    paymentWindowMs: 30 * 60_000,
    adminToken: DEV_ADMIN_TOKEN,
    faultsEnabled: true,
  });
});

it('treats a blank variable as unset', () => {
  expect(loadConfig({ PORT: '', PAYMENT_WINDOW: '' })).toMatchObject({ port: 3000, paymentWindowMs: 30 * 60_000 });
});

it('turns fault injection off by default once a real database or Temporal is configured', () => {
  expect(loadConfig({ DATABASE_URL: 'postgresql://db/orders' }).faultsEnabled).toBe(false);
  expect(loadConfig({ TEMPORAL_ADDRESS: 'temporal:7233', FAULTS_ENABLED: 'true' }).faultsEnabled).toBe(true);
});

it.each([
  [{ PAYMENT_WINDOW: '30' }, /^PAYMENT_WINDOW: "30" is not a duration; use a whole number followed by ms, s, m or h/],
  [{ PAYMENT_WINDOW: '0m' }, /^PAYMENT_WINDOW: "0m" must be longer than zero$/],
  [{ PORT: 'abc' }, /^PORT: /],
  [{ PORT: '70000' }, /^PORT: /],
  [{ FAULTS_ENABLED: 'yes' }, /^FAULTS_ENABLED: /],
  [{ LOG_LEVEL: 'verbose' }, /^LOG_LEVEL: /],
])('rejects %j with a ConfigError naming the variable', (env, message) => {
  const load = () => loadConfig(env);
  expect(load).toThrow(ConfigError);
  expect(load).toThrow(message);
});

it('reads the operability additions with their defaults', () => {
  expect(loadConfig({})).toMatchObject({
    workerMetricsPort: 9464,
    sdkMetricsAddress: '127.0.0.1:9465',
    shutdownGraceMs: 10_000,
    databasePoolSize: 10,
    otlpEndpoint: undefined,
    temporal: { uiUrl: 'http://localhost:8233', connection: {} },
  });
  expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/', TEMPORAL_UI_URL: 'https://ui.example/' })).toMatchObject({
    otlpEndpoint: 'http://collector:4318',
    temporal: { uiUrl: 'https://ui.example' },
  });
  expect(() => loadConfig({ SHUTDOWN_GRACE: '10' })).toThrow(/^SHUTDOWN_GRACE: /);
  expect(() => loadConfig({ TEMPORAL_UI_URL: 'not a url' })).toThrow(/^TEMPORAL_UI_URL: /);
  expect(() => loadConfig({ WORKER_METRICS_PORT: '0' })).toThrow(/^WORKER_METRICS_PORT: /);
  expect(loadConfig({ DATABASE_POOL_SIZE: '4' }).databasePoolSize).toBe(4);
  expect(() => loadConfig({ DATABASE_POOL_SIZE: '0' })).toThrow(/^DATABASE_POOL_SIZE: /);
});

it('takes Temporal Cloud credentials from the SDK environment configuration (API key turns TLS on)', () => {
  const config = loadConfig({ TEMPORAL_ADDRESS: 'ns.acct.tmprl.cloud:7233', TEMPORAL_NAMESPACE: 'ns.acct', TEMPORAL_API_KEY: 'key-1' });
  expect(config.temporal).toMatchObject({ address: 'ns.acct.tmprl.cloud:7233', namespace: 'ns.acct', connection: { apiKey: 'key-1', tls: true } });
  expect(loadConfig({ TEMPORAL_ADDRESS: 'temporal:7233' }).temporal.connection).toEqual({ tls: undefined, apiKey: undefined, metadata: undefined });
});
