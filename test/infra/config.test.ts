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
