import { expect, it } from 'vitest';
import { loadDatabaseUrl } from '../../lib/config/database.js';
import { ConfigError } from '../../lib/config/env.js';
import { loadConfig } from '../../lib/config/index.js';
import {
  DEV_ADMIN_TOKEN,
  DEV_CUSTOMER_JWT_SECRET,
  DEV_ORDER_ID_SECRET,
  devSecretsInUse,
} from '../../lib/config/secrets.js';
import { paymentAccount, requireThirdParties } from '../../lib/config/third-parties.js';

/** Secrets of a deployment's own, which every process outside the embedded stack must be given. */
const SECRETS = {
  PAYMENT_WEBHOOK_SECRET: 'w'.repeat(32),
  ADMIN_TOKEN: 'a'.repeat(32),
  CUSTOMER_JWT_SECRET: 'c'.repeat(32),
  ORDER_ID_SECRET: 'o'.repeat(32),
  PAYLOAD_ENCRYPTION_KEYS: `k1=${Buffer.alloc(32, 'k').toString('base64')}`,
};
const DEPLOYED = { ...SECRETS, DATABASE_URL: 'postgresql://db/orders', TEMPORAL_ADDRESS: 'temporal:7233' };

it('uses the documented defaults, with the fakes and fault injection on under the embedded stack', () => {
  expect(loadConfig({})).toMatchObject({
    port: 3000,
    databaseUrl: undefined,
    temporal: { address: undefined, namespace: 'default', taskQueue: 'orders' },
    paymentWindowMs: 30 * 60_000,
    adminToken: DEV_ADMIN_TOKEN,
    thirdParties: 'fake',
    faultsEnabled: true,
  });
});

it("listens on loopback only under npm start's stack, whose secrets are public, and everywhere elsewhere", () => {
  expect(loadConfig({}).listenAddress).toBe('127.0.0.1');
  expect(loadConfig({ EMBEDDED_STACK: 'true', DATABASE_URL: 'postgresql://127.0.0.1:5433/orders' }).listenAddress).toBe(
    '127.0.0.1',
  );
  expect(loadConfig(DEPLOYED).listenAddress).toBe('0.0.0.0');
  expect(loadConfig({ LISTEN_ADDRESS: '0.0.0.0' }).listenAddress).toBe('0.0.0.0');
  expect(loadConfig({ ...DEPLOYED, LISTEN_ADDRESS: '::' }).listenAddress).toBe('::');
  expect(() => loadConfig({ LISTEN_ADDRESS: 'everywhere' })).toThrow(/^LISTEN_ADDRESS: must be an IP address/);
});

it('treats a blank variable as unset', () => {
  expect(loadConfig({ PORT: '', PAYMENT_WINDOW: '' })).toMatchObject({ port: 3000, paymentWindowMs: 30 * 60_000 });
});

it('sends no payment reminder unless PAYMENT_REMINDER_BEFORE is set', () => {
  expect(loadConfig({}).paymentReminderBeforeMs).toBeNull();
  expect(loadConfig({ PAYMENT_REMINDER_BEFORE: '' }).paymentReminderBeforeMs).toBeNull();
  expect(loadConfig({ PAYMENT_REMINDER_BEFORE: '10m' }).paymentReminderBeforeMs).toBe(10 * 60_000);
});

it('turns the fakes and fault injection off by default once a real database or Temporal is configured', () => {
  expect(loadConfig({ ...SECRETS, DATABASE_URL: 'postgresql://db/orders' })).toMatchObject({
    thirdParties: undefined,
    faultsEnabled: false,
  });
  expect(loadConfig({ ...SECRETS, TEMPORAL_ADDRESS: 'temporal:7233' })).toMatchObject({
    thirdParties: undefined,
    faultsEnabled: false,
  });
  expect(loadConfig({ ...DEPLOYED, THIRD_PARTIES: 'fake' })).toMatchObject({
    thirdParties: 'fake',
    faultsEnabled: false,
  });
});

it("the worker and API of npm start's embedded stack (EMBEDDED_STACK=true) get the fakes, fault injection and the dev defaults", () => {
  expect(
    loadConfig({ DATABASE_URL: 'postgresql://db/orders', TEMPORAL_ADDRESS: 't:7233', EMBEDDED_STACK: 'true' }),
  ).toMatchObject({
    thirdParties: 'fake',
    faultsEnabled: true,
    adminToken: DEV_ADMIN_TOKEN,
  });
  expect(loadConfig({ EMBEDDED_STACK: 'true', ADMIN_TOKEN: 'short' }).adminToken).toBe('short');
  expect(() => loadConfig({ EMBEDDED_STACK: 'yes' })).toThrow(/^EMBEDDED_STACK: /);
});

it('reads DATABASE_URL alone for the commands that only touch the database, with no secret required', () => {
  expect(loadDatabaseUrl({ DATABASE_URL: 'postgresql://db/orders', NODE_ENV: 'production' })).toBe(
    'postgresql://db/orders',
  );
  expect(loadDatabaseUrl({ DATABASE_URL: '' })).toBeUndefined();
  expect(loadDatabaseUrl({})).toBeUndefined();
  expect(() => loadDatabaseUrl({ DATABASE_URL: '  ' })).toThrow(ConfigError);
  expect(() => loadDatabaseUrl({ DATABASE_URL: '  ' })).toThrow(/^DATABASE_URL: /);
});

it.each([
  ['DATABASE_URL set', { DATABASE_URL: 'postgresql://db/orders' }],
  ['TEMPORAL_ADDRESS set', { TEMPORAL_ADDRESS: 'temporal:7233' }],
  ['NODE_ENV=production', { NODE_ENV: 'production' }],
  ['NODE_ENV=production beats EMBEDDED_STACK', { NODE_ENV: 'production', EMBEDDED_STACK: 'true' }],
])(
  'outside the embedded stack (%s) a missing, public or short secret stops start-up, naming it and not its value',
  (_, where) => {
    const cases: Array<[string, Record<string, string>, RegExp]> = [
      ['ADMIN_TOKEN', { ADMIN_TOKEN: '' }, /required/],
      ['ADMIN_TOKEN', { ADMIN_TOKEN: DEV_ADMIN_TOKEN }, /public development default/],
      ['ADMIN_TOKEN', { ADMIN_TOKEN: 'a'.repeat(31) }, /at least 32 characters/],
      ['PAYMENT_WEBHOOK_SECRET', { PAYMENT_WEBHOOK_SECRET: '' }, /required/],
      ['PAYMENT_WEBHOOK_SECRET', { PAYMENT_WEBHOOK_SECRET: 'dev-webhook-secret' }, /public development default/],
      ['CUSTOMER_JWT_SECRET', { CUSTOMER_JWT_SECRET: '' }, /required/],
      ['CUSTOMER_JWT_SECRET', { CUSTOMER_JWT_SECRET: DEV_CUSTOMER_JWT_SECRET }, /public development default/],
      ['ORDER_ID_SECRET', { ORDER_ID_SECRET: DEV_ORDER_ID_SECRET }, /public development default/],
      ['METRICS_TOKEN', { METRICS_TOKEN: 'm'.repeat(31) }, /at least 32 characters/],
      ['FAULTS_ENABLED', { THIRD_PARTIES: 'fake', FAULTS_ENABLED: 'true' }, /set FAULTS_ENABLED=false/],
    ];
    for (const [variable, override, why] of cases) {
      const load = () => loadConfig({ ...SECRETS, ...where, ...override });
      expect(load).toThrow(ConfigError);
      expect(load).toThrow(new RegExp(`^${variable}: .*outside npm start's embedded stack`));
      expect(load).toThrow(why);
      for (const value of Object.values(override)) if (value.length > 5) expect(load).not.toThrow(value);
    }
    // Production also wants TRUST_PROXY said (its own test below).
    expect(loadConfig({ ...SECRETS, TRUST_PROXY: 'none', ...where }).adminToken).toBe(SECRETS.ADMIN_TOKEN);
  },
);

it('takes a METRICS_TOKEN of its own, never the admin token', () => {
  expect(loadConfig({}).metricsToken).toBeUndefined();
  expect(loadConfig({ ...DEPLOYED, METRICS_TOKEN: 'm'.repeat(32) }).metricsToken).toBe('m'.repeat(32));
  expect(() => loadConfig({ ...DEPLOYED, METRICS_TOKEN: SECRETS.ADMIN_TOKEN })).toThrow(
    /^METRICS_TOKEN: must differ from ADMIN_TOKEN/,
  );
});

it('has no third parties to offer a worker unless they are chosen, and says so in one line', () => {
  const none = () => requireThirdParties(loadConfig(DEPLOYED));
  expect(none).toThrow(ConfigError);
  expect(none).toThrow(
    /^THIRD_PARTIES: no payment provider is configured; set THIRD_PARTIES=stripe .*or THIRD_PARTIES=fake [^\n]*$/,
  );
  expect(requireThirdParties(loadConfig({}))).toBe('fake');
});

it.each([
  [{ PAYMENT_WINDOW: '30' }, /^PAYMENT_WINDOW: "30" is not a duration; use a whole number followed by ms, s, m or h/],
  [{ PAYMENT_WINDOW: '0m' }, /^PAYMENT_WINDOW: "0m" must be longer than zero$/],
  [{ PAYMENT_REMINDER_BEFORE: '5 minutes' }, /^PAYMENT_REMINDER_BEFORE: "5 minutes" is not a duration/],
  [
    { PAYMENT_WINDOW: '30m', PAYMENT_REMINDER_BEFORE: '30m' },
    /^PAYMENT_REMINDER_BEFORE: must be shorter than PAYMENT_WINDOW$/,
  ],
  [{ PORT: 'abc' }, /^PORT: /],
  [{ PORT: '70000' }, /^PORT: /],
  [{ FAULTS_ENABLED: 'yes' }, /^FAULTS_ENABLED: /],
  [
    { THIRD_PARTIES: 'stripe', FAULTS_ENABLED: 'true' },
    /^FAULTS_ENABLED: fault injection drives the local fakes only; it needs THIRD_PARTIES=fake$/,
  ],
  [{ THIRD_PARTIES: 'paypal' }, /^THIRD_PARTIES: /],
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
  expect(
    loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/', TEMPORAL_UI_URL: 'https://ui.example/' }),
  ).toMatchObject({
    otlpEndpoint: 'http://collector:4318',
    temporal: { uiUrl: 'https://ui.example' },
  });
  expect(() => loadConfig({ SHUTDOWN_GRACE: '10' })).toThrow(/^SHUTDOWN_GRACE: /);
  expect(() => loadConfig({ TEMPORAL_UI_URL: 'not a url' })).toThrow(/^TEMPORAL_UI_URL: /);
  expect(() => loadConfig({ WORKER_METRICS_PORT: '0' })).toThrow(/^WORKER_METRICS_PORT: /);
  expect(loadConfig({ DATABASE_POOL_SIZE: '4' }).databasePoolSize).toBe(4);
  expect(() => loadConfig({ DATABASE_POOL_SIZE: '0' })).toThrow(/^DATABASE_POOL_SIZE: /);
});

it("TRUST_TRACEPARENT: a caller's trace context is not continued unless it says so", () => {
  expect(loadConfig({}).trustTraceparent).toBe(false);
  expect(loadConfig({ TRUST_TRACEPARENT: 'false' }).trustTraceparent).toBe(false);
  expect(loadConfig({ TRUST_TRACEPARENT: 'true' }).trustTraceparent).toBe(true);
  expect(() => loadConfig({ TRUST_TRACEPARENT: 'yes' })).toThrow(/^TRUST_TRACEPARENT: /);
});

it('bounds the pools, and gives anonymous reads a small pool of their own', () => {
  expect(loadConfig({})).toMatchObject({
    databasePublicPoolSize: 2,
    databasePoolOptions: { acquireTimeoutMs: 5_000, statementTimeoutMs: 10_000 },
  });
  expect(
    loadConfig({ DATABASE_PUBLIC_POOL_SIZE: '3', DATABASE_ACQUIRE_TIMEOUT: '2s', DATABASE_STATEMENT_TIMEOUT: '30s' }),
  ).toMatchObject({
    databasePublicPoolSize: 3,
    databasePoolOptions: { acquireTimeoutMs: 2_000, statementTimeoutMs: 30_000 },
  });
  expect(() => loadConfig({ DATABASE_PUBLIC_POOL_SIZE: '0' })).toThrow(/^DATABASE_PUBLIC_POOL_SIZE: /);
  // 0 would mean "no timeout" to pg and PostgreSQL: a bound is always one.
  expect(() => loadConfig({ DATABASE_ACQUIRE_TIMEOUT: '0s' })).toThrow(/^DATABASE_ACQUIRE_TIMEOUT: /);
  expect(() => loadConfig({ DATABASE_STATEMENT_TIMEOUT: '10' })).toThrow(/^DATABASE_STATEMENT_TIMEOUT: /);
});

it('DATABASE_PREPARED_STATEMENTS: on unless a pooler cannot keep them', () => {
  expect(loadConfig({}).databasePoolOptions.preparedStatements).toBe(true);
  expect(loadConfig({ DATABASE_PREPARED_STATEMENTS: 'false' }).databasePoolOptions.preparedStatements).toBe(false);
  expect(() => loadConfig({ DATABASE_PREPARED_STATEMENTS: 'no' })).toThrow(/^DATABASE_PREPARED_STATEMENTS: /);
});

it('TRUST_PROXY: off by default, a hop count, or addresses and CIDRs; never everything', () => {
  expect(loadConfig({}).trustProxy).toBe(false);
  expect(loadConfig({ TRUST_PROXY: 'false' }).trustProxy).toBe(false);
  expect(loadConfig({ TRUST_PROXY: 'none' }).trustProxy).toBe(false);
  expect(loadConfig({ TRUST_PROXY: '2' }).trustProxy).toBe(2);
  expect(loadConfig({ TRUST_PROXY: '10.0.0.0/8, 192.0.2.10,2001:db8::/32, loopback' }).trustProxy).toEqual([
    '10.0.0.0/8',
    '192.0.2.10',
    '2001:db8::/32',
    'loopback',
  ]);
  for (const bad of ['true', '0', '11', 'balancer.internal', '10.0.0.0/33', '10.0.0.1,'])
    expect(() => loadConfig({ TRUST_PROXY: bad }), bad).toThrow(/^TRUST_PROXY: /);
});

it('TRUST_PROXY: under NODE_ENV=production start-up requires it said, `none` included', () => {
  const production = { ...DEPLOYED, NODE_ENV: 'production' };
  expect(() => loadConfig(production)).toThrow(ConfigError);
  expect(() => loadConfig(production)).toThrow(/^TRUST_PROXY: required under NODE_ENV=production/);
  expect(loadConfig({ ...production, TRUST_PROXY: 'none' }).trustProxy).toBe(false);
  expect(loadConfig({ ...production, TRUST_PROXY: '1' }).trustProxy).toBe(1);
  // Outside production, unset still means none: a developer's machine has no balancer.
  expect(loadConfig(DEPLOYED).trustProxy).toBe(false);
});

it('takes Temporal Cloud credentials from the SDK environment configuration (API key turns TLS on)', () => {
  const config = loadConfig({
    TEMPORAL_ADDRESS: 'ns.acct.tmprl.cloud:7233',
    TEMPORAL_NAMESPACE: 'ns.acct',
    TEMPORAL_API_KEY: 'key-1',
    ...SECRETS,
  });
  expect(config.temporal).toMatchObject({
    address: 'ns.acct.tmprl.cloud:7233',
    namespace: 'ns.acct',
    connection: { apiKey: 'key-1', tls: true },
  });
  expect(loadConfig(DEPLOYED).temporal.connection).toEqual({
    tls: undefined,
    apiKey: undefined,
    metadata: undefined,
  });
});

it('reads customer identity, order-id secret and the anti-hoarding limits, with public dev defaults for the secrets', () => {
  const config = loadConfig({});
  expect(config).toMatchObject({
    customerTokens: { algorithm: 'HS256', secret: DEV_CUSTOMER_JWT_SECRET },
    orderIdSecret: DEV_ORDER_ID_SECRET,
    maxOpenOrdersPerCustomer: 3,
    maxUnpaidUnitsPerProduct: 10,
    ordersPerMinutePerClient: 10,
    readsPerMinutePerClient: 300,
    couponRefusalsPerHourPerCustomer: 10,
  });
  expect(devSecretsInUse(config).map(([name]) => name)).toEqual([
    'PAYMENT_WEBHOOK_SECRET',
    'ADMIN_TOKEN',
    'CUSTOMER_JWT_SECRET',
    'ORDER_ID_SECRET',
    'PAYLOAD_ENCRYPTION_KEYS',
  ]);
  const secret = 'x'.repeat(32);
  const set = loadConfig({
    CUSTOMER_JWT_SECRET: secret,
    ORDER_ID_SECRET: secret,
    PAYLOAD_ENCRYPTION_KEYS: SECRETS.PAYLOAD_ENCRYPTION_KEYS,
    PAYMENT_WEBHOOK_SECRET: 'w',
    ADMIN_TOKEN: 'a',
  });
  expect(devSecretsInUse(set)).toEqual([]);
  expect(
    loadConfig({
      MAX_OPEN_ORDERS_PER_CUSTOMER: '0',
      MAX_UNPAID_UNITS_PER_PRODUCT: '0',
      ORDERS_PER_MINUTE_PER_CLIENT: '0',
      READS_PER_MINUTE_PER_CLIENT: '0',
      COUPON_REFUSALS_PER_HOUR_PER_CUSTOMER: '0',
    }),
  ).toMatchObject({
    maxOpenOrdersPerCustomer: 0,
    maxUnpaidUnitsPerProduct: 0,
    ordersPerMinutePerClient: 0,
    readsPerMinutePerClient: 0,
    couponRefusalsPerHourPerCustomer: 0,
  });
  expect(loadConfig({ ...JWKS, CUSTOMER_JWT_MAX_AGE: '15m' }).customerTokens).toEqual({
    algorithm: 'RS256',
    jwksUrl: 'https://id.example/.well-known/jwks.json',
    issuer: 'https://id.example',
    audience: 'orders',
    maxAgeSeconds: 900,
  });
  expect(loadConfig({}).customerTokens.maxAgeSeconds).toBe(3600);
  expect(loadConfig({ ...JWKS, CUSTOMER_JWKS_URL: 'http://127.0.0.1:8080/jwks' }).customerTokens).toMatchObject({
    jwksUrl: 'http://127.0.0.1:8080/jwks',
  });
});

const JWKS = {
  CUSTOMER_JWKS_URL: 'https://id.example/.well-known/jwks.json',
  CUSTOMER_JWT_ISSUER: 'https://id.example',
  CUSTOMER_JWT_AUDIENCE: 'orders',
};

it.each([
  [{ CUSTOMER_JWT_SECRET: 'too-short' }, /^CUSTOMER_JWT_SECRET: must be at least 32 characters/],
  [{ ORDER_ID_SECRET: 'too-short' }, /^ORDER_ID_SECRET: must be at least 32 characters/],
  [
    { CUSTOMER_JWKS_URL: 'https://id.example/jwks', CUSTOMER_JWT_SECRET: 'x'.repeat(32) },
    /^CUSTOMER_JWT_SECRET: set either it \(HS256\) or CUSTOMER_JWKS_URL/,
  ],
  [{ CUSTOMER_JWKS_URL: 'not a url' }, /^CUSTOMER_JWKS_URL: /],
  [{ ...JWKS, CUSTOMER_JWKS_URL: 'http://id.example/jwks' }, /^CUSTOMER_JWKS_URL: must be https/],
  [{ ...JWKS, CUSTOMER_JWT_ISSUER: '' }, /^CUSTOMER_JWT_ISSUER: required with CUSTOMER_JWKS_URL/],
  [{ ...JWKS, CUSTOMER_JWT_AUDIENCE: '' }, /^CUSTOMER_JWT_AUDIENCE: required with CUSTOMER_JWKS_URL/],
  [{ CUSTOMER_JWT_MAX_AGE: '500ms' }, /^CUSTOMER_JWT_MAX_AGE: must be at least 1s/],
  [{ TEMPORAL_UI_URL: 'javascript:alert(1)' }, /^TEMPORAL_UI_URL: must be an http or https URL/],
  [{ MAX_UNPAID_UNITS_PER_PRODUCT: '-1' }, /^MAX_UNPAID_UNITS_PER_PRODUCT: /],
  [{ MAX_OPEN_ORDERS_PER_CUSTOMER: '-1' }, /^MAX_OPEN_ORDERS_PER_CUSTOMER: /],
  [{ ORDERS_PER_MINUTE_PER_CLIENT: 'many' }, /^ORDERS_PER_MINUTE_PER_CLIENT: /],
  [{ READS_PER_MINUTE_PER_CLIENT: '-1' }, /^READS_PER_MINUTE_PER_CLIENT: /],
  [{ COUPON_REFUSALS_PER_HOUR_PER_CUSTOMER: 'ten' }, /^COUPON_REFUSALS_PER_HOUR_PER_CUSTOMER: /],
])('rejects %j with a ConfigError naming the variable', (env, message) => {
  expect(() => loadConfig(env)).toThrow(ConfigError);
  expect(() => loadConfig(env)).toThrow(message);
});

const STRIPE_SIGNING_SECRET = `whsec_Secret${'0'.repeat(26)}`;
const STRIPE = {
  ...SECRETS,
  DATABASE_URL: 'postgresql://db/orders',
  THIRD_PARTIES: 'stripe',
  STRIPE_SECRET_KEY: 'sk_test_51Secret',
  STRIPE_WEBHOOK_SECRET: STRIPE_SIGNING_SECRET,
};

it('reads the Stripe settings with THIRD_PARTIES=stripe, and only then', () => {
  expect(loadConfig(STRIPE).stripe).toEqual({
    secretKey: 'sk_test_51Secret',
    webhookSecret: STRIPE_SIGNING_SECRET,
    apiBase: undefined,
    livemode: false,
    connectAccount: undefined,
  });
  expect(loadConfig({ ...STRIPE, STRIPE_API_BASE: 'http://127.0.0.1:12111' }).stripe?.apiBase).toBe(
    'http://127.0.0.1:12111',
  );
  expect(loadConfig({ ...STRIPE, STRIPE_SECRET_KEY: 'rk_live_51Restricted' }).stripe?.secretKey).toBe(
    'rk_live_51Restricted',
  );
  expect(loadConfig({ ...STRIPE, THIRD_PARTIES: 'fake' }).stripe).toBeUndefined();
  // The embedded stack, like its other secrets, may keep a short one.
  const { DATABASE_URL: _, ...embedded } = STRIPE;
  const short = { ...embedded, STRIPE_WEBHOOK_SECRET: 'whsec_Secret' };
  expect(loadConfig(short).stripe?.webhookSecret).toBe('whsec_Secret');
});

it("starts npm start's embedded stack on Stripe as docs/stripe.md sets it: fault injection simply off", () => {
  const { DATABASE_URL: _, ...embedded } = STRIPE;
  expect(loadConfig(embedded)).toMatchObject({ thirdParties: 'stripe', faultsEnabled: false });
  // On the local fakes the embedded stack injects faults by default, and may be told not to.
  expect(loadConfig({ ...embedded, THIRD_PARTIES: 'fake' })).toMatchObject({ faultsEnabled: true });
  expect(loadConfig({ ...embedded, THIRD_PARTIES: 'fake', FAULTS_ENABLED: 'false' }).faultsEnabled).toBe(false);
  // Asked for on Stripe, they are still refused: there is no local payment provider to fail.
  expect(() => loadConfig({ ...embedded, FAULTS_ENABLED: 'true' })).toThrow(/^FAULTS_ENABLED: .*THIRD_PARTIES=fake$/);
});

it("takes a payment only in the key's mode and on STRIPE_CONNECT_ACCOUNT, in CURRENCY", () => {
  expect(paymentAccount(loadConfig(STRIPE))).toEqual({ currency: 'eur', livemode: false, connectAccount: null });
  const live = {
    ...STRIPE,
    STRIPE_SECRET_KEY: 'sk_live_51Secret',
    STRIPE_CONNECT_ACCOUNT: 'acct_1Shop',
    CURRENCY: 'usd',
  };
  expect(paymentAccount(loadConfig(live))).toEqual({ currency: 'usd', livemode: true, connectAccount: 'acct_1Shop' });
  expect(() => loadConfig({ ...STRIPE, STRIPE_CONNECT_ACCOUNT: 'shop' })).toThrow(/^STRIPE_CONNECT_ACCOUNT: /);
  // The local fakes are a test-mode provider.
  expect(paymentAccount(loadConfig({}))).toEqual({ currency: 'eur', livemode: false, connectAccount: null });
});

it('refuses a Stripe test key under NODE_ENV=production, unless STRIPE_ALLOW_TEST_KEYS=true', () => {
  const production = { ...STRIPE, NODE_ENV: 'production', TRUST_PROXY: 'none' };
  expect(() => loadConfig(production)).toThrow(ConfigError);
  expect(() => loadConfig(production)).toThrow(
    /^STRIPE_SECRET_KEY: a test key under NODE_ENV=production takes no real money; .*STRIPE_ALLOW_TEST_KEYS=true/,
  );
  expect(() => loadConfig({ ...production, STRIPE_SECRET_KEY: 'rk_test_51Restricted' })).toThrow(
    /^STRIPE_SECRET_KEY: /,
  );
  expect(loadConfig({ ...production, STRIPE_ALLOW_TEST_KEYS: 'true' }).stripe?.livemode).toBe(false);
  expect(loadConfig({ ...production, STRIPE_SECRET_KEY: 'sk_live_51Secret' }).stripe?.livemode).toBe(true);
  // Outside production a test key is the normal case.
  expect(loadConfig(STRIPE).stripe?.livemode).toBe(false);
});

it('holds money for no order of ours UNCLAIMED_REFUND_GRACE before refunding it (24h by default)', () => {
  expect(loadConfig({}).unclaimedRefundGraceMs).toBe(24 * 3_600_000);
  expect(loadConfig({ UNCLAIMED_REFUND_GRACE: '2h' }).unclaimedRefundGraceMs).toBe(2 * 3_600_000);
  expect(() => loadConfig({ UNCLAIMED_REFUND_GRACE: 'soon' })).toThrow(/^UNCLAIMED_REFUND_GRACE: /);
});

it('keeps no payment callback key with Stripe, and requires one with the local fakes', () => {
  const { PAYMENT_WEBHOOK_SECRET: _, ...withoutCallbackKey } = STRIPE;
  expect(loadConfig(withoutCallbackKey).webhookSecret).toBeUndefined();
  // Set anyway (a compose file that asks for it whatever the provider): still not kept.
  expect(loadConfig(STRIPE).webhookSecret).toBeUndefined();
  expect(() => loadConfig({ ...withoutCallbackKey, THIRD_PARTIES: 'fake' })).toThrow(/^PAYMENT_WEBHOOK_SECRET: /);
});

it('runs the worker on Stripe when chosen, and on nothing by default outside the embedded stack', () => {
  expect(requireThirdParties(loadConfig(STRIPE))).toBe('stripe');
  expect(() => requireThirdParties(loadConfig({ ...STRIPE, THIRD_PARTIES: undefined }))).toThrow(
    /^THIRD_PARTIES: no payment provider is configured; set THIRD_PARTIES=stripe/,
  );
});

it('creates payments in CURRENCY, and runs the local provider as FAKE_PAYMENTS says', () => {
  expect(loadConfig(STRIPE)).toMatchObject({ currency: 'eur', fakePayments: 'cancellable' });
  expect(loadConfig({ ...STRIPE, CURRENCY: 'usd', FAKE_PAYMENTS: 'callback-only' })).toMatchObject({
    currency: 'usd',
    fakePayments: 'callback-only',
  });
  expect(() => loadConfig({ ...STRIPE, CURRENCY: 'EURO' })).toThrow(/^CURRENCY: must be an ISO 4217 code/);
  // Only a currency whose smallest charge the service knows: else a total under it could be placed unpayable.
  expect(() => loadConfig({ ...STRIPE, CURRENCY: 'jpy' })).toThrow(/^CURRENCY: .*supports: aud, cad, /);
  expect(() => loadConfig({ ...STRIPE, FAKE_PAYMENTS: 'sometimes' })).toThrow(/^FAKE_PAYMENTS: /);
});

it.each([
  [{ STRIPE_SECRET_KEY: undefined }, /^STRIPE_SECRET_KEY: required with THIRD_PARTIES=stripe$/],
  [{ STRIPE_WEBHOOK_SECRET: undefined }, /^STRIPE_WEBHOOK_SECRET: required with THIRD_PARTIES=stripe$/],
  [{ STRIPE_SECRET_KEY: 'pk_test_51Publishable' }, /^STRIPE_SECRET_KEY: must be a Stripe secret or restricted key/],
  [{ STRIPE_WEBHOOK_SECRET: 'Secret' }, /^STRIPE_WEBHOOK_SECRET: must be a webhook endpoint's signing secret/],
  [{ STRIPE_WEBHOOK_SECRET: 'whsec_Secret' }, /^STRIPE_WEBHOOK_SECRET: must be at least 32 characters outside/],
  [{ STRIPE_API_BASE: 'not a url' }, /^STRIPE_API_BASE: /],
  [{ STRIPE_API_BASE: 'ftp://127.0.0.1:12111' }, /^STRIPE_API_BASE: must be an http or https URL$/],
  [{ STRIPE_API_BASE: 'http://127.0.0.1:12111/v1' }, /^STRIPE_API_BASE: must be an origin/],
  [{ STRIPE_API_BASE: 'http://stripe-mock:12111' }, /^STRIPE_API_BASE: plain http only to this machine/],
  [
    { STRIPE_API_BASE: 'https://stripe-mock.internal', STRIPE_SECRET_KEY: 'sk_live_51Secret' },
    /^STRIPE_API_BASE: a live key goes to Stripe only/,
  ],
])('refuses the Stripe settings %j, naming the variable and never echoing a secret', (override, message) => {
  const load = () => loadConfig({ ...STRIPE, ...override });
  expect(load).toThrow(ConfigError);
  expect(load).toThrow(message);
  expect(load).not.toThrow(/Secret|Publishable/);
});

it("reads the operator session's lifetime and the codec endpoints' one CORS origin", () => {
  expect(loadConfig({})).toMatchObject({
    operatorSession: { ttlMs: 8 * 3_600_000, secureCookie: false }, // npm start's plain-http loopback stack
    codecCorsOrigin: 'http://localhost:8233',
  });
  expect(loadConfig(DEPLOYED).operatorSession.secureCookie).toBe(true);
  expect(loadConfig({ OPERATOR_SESSION_TTL: '1h' }).operatorSession.ttlMs).toBe(3_600_000);
  expect(() => loadConfig({ OPERATOR_SESSION_TTL: '30s' })).toThrow(/^OPERATOR_SESSION_TTL: must be from 1m to 168h/);
  expect(loadConfig({ TEMPORAL_UI_URL: 'https://temporal.shop.example/ui' }).codecCorsOrigin).toBe(
    'https://temporal.shop.example',
  );
  expect(loadConfig({ CODEC_CORS_ORIGIN: 'https://ops.shop.example' }).codecCorsOrigin).toBe(
    'https://ops.shop.example',
  );
  expect(() => loadConfig({ CODEC_CORS_ORIGIN: 'https://ops.shop.example/ui' })).toThrow(
    /^CODEC_CORS_ORIGIN: must be an origin/,
  );
  expect(() => loadConfig({ CODEC_CORS_ORIGIN: 'ftp://ops' })).toThrow(/^CODEC_CORS_ORIGIN:/);
});

it('PROVIDER_SWEEP_EVERY: a minute by default, from 10 seconds to an hour', () => {
  expect(loadConfig({}).providerSweepEveryMs).toBe(60_000);
  expect(loadConfig({ PROVIDER_SWEEP_EVERY: '5m' }).providerSweepEveryMs).toBe(300_000);
  expect(() => loadConfig({ PROVIDER_SWEEP_EVERY: '5s' })).toThrow(/^PROVIDER_SWEEP_EVERY: must be from 10s to 1h/);
  expect(() => loadConfig({ PROVIDER_SWEEP_EVERY: '2h' })).toThrow(/^PROVIDER_SWEEP_EVERY: must be from 10s to 1h/);
});
