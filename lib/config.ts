import { loadClientConnectConfig } from '@temporalio/envconfig';
import type { NativeConnectionOptions } from '@temporalio/worker';
import proxyAddr from 'proxy-addr';
import { z } from 'zod';
import { parseDuration } from './duration.js';
import type { PayloadKeys } from './payload-encryption.js';

/**
 * The only reader of process.env. Every process (API, worker, runner) calls loadConfig() once at
 * start-up; a bad value stops start-up with a ConfigError that names the variable.
 */

/**
 * Public development values, for npm start's embedded stack only (printed at start by the runner);
 * anywhere else a secret left at one of them stops start-up.
 */
export const DEV_WEBHOOK_SECRET = 'dev-webhook-secret';
export const DEV_ADMIN_TOKEN = 'dev-admin-token';
export const DEV_CUSTOMER_JWT_SECRET = 'dev-customer-jwt-secret-not-for-production';
export const DEV_ORDER_ID_SECRET = 'dev-order-id-secret-not-for-production';
/** One key, id `dev`: the 32 bytes of `dev-payload-key-not-for-prod-use`. */
export const DEV_PAYLOAD_ENCRYPTION_KEYS = 'dev=ZGV2LXBheWxvYWQta2V5LW5vdC1mb3ItcHJvZC11c2U=';

/**
 * The implementations of the third parties there are: the local fakes (dev/fakes), and Stripe as the
 * payment provider (adapters/stripe) with the fakes for the rest.
 */
export const THIRD_PARTY_KINDS = ['fake', 'stripe'] as const;
export type ThirdPartyKind = (typeof THIRD_PARTY_KINDS)[number];
/** The local payment provider's two kinds (dev/fakes/payment-provider.ts): one that cancels payments, one that only calls back. */
export const FAKE_PAYMENTS_MODES = ['cancellable', 'callback-only'] as const;
export type FakePaymentsMode = (typeof FAKE_PAYMENTS_MODES)[number];

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

const port = z.coerce.number().int().min(1).max(65_535);
const nonEmpty = z.string().trim().min(1);
/** HMAC keys: at least the 32 bytes of SHA-256's output (RFC 7518 §3.2 asks this of HS256 keys). */
const hmacKey = z.string().min(32, 'must be at least 32 characters (a 256-bit key)');
/** Bearer tokens and HMAC keys outside the embedded stack: what a guess would have to match. */
const MIN_SECRET_LENGTH = 32;
/** A limit where 0 means "off". */
const limit = z.coerce.number().int().min(0).max(1_000_000);

/**
 * The worker's Temporal tuning (worker/tuning.ts turns it into WorkerOptions); unset, each is the
 * SDK's default but the sticky timeout, the workflow threads and the stack trace limit. A schema of its own, so that the bench's floor worker reads exactly these
 * (loadWorkerTuning) without the rest of the service's configuration.
 */
const WorkerTuningSchema = z.object({
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

/**
 * Where the service's database is. A schema of its own, so that the commands that only touch the
 * database (`npm run db:deploy`, `npm run db:fakes`, `npm run check`: compose's `migrate` runs the
 * first two) read it alone (loadDatabaseUrl), without the secrets the worker and the API require.
 */
const DatabaseSchema = z.object({ DATABASE_URL: nonEmpty.optional() });

/** The Worker Deployment the workers are builds of, unless TEMPORAL_DEPLOYMENT_NAME says otherwise. */
export const DEFAULT_DEPLOYMENT_NAME = 'order-lifecycle';

const EnvSchema = z.object({
  // Set by npm start's runner (dev/local-stack.ts) for the worker and API of its own embedded stack.
  EMBEDDED_STACK: z.literal('true', 'only `true`, set by npm start; unset otherwise').optional(),
  NODE_ENV: z.string().optional(),
  PORT: port.default(3000),
  // Addition: where the API and the worker's /metrics listen (unset: loopback under npm start's stack, else every interface).
  LISTEN_ADDRESS: z.union([z.ipv4(), z.ipv6()], 'must be an IP address, e.g. 127.0.0.1 or 0.0.0.0').optional(),
  ...DatabaseSchema.shape,
  TEMPORAL_ADDRESS: nonEmpty.optional(),
  TEMPORAL_NAMESPACE: nonEmpty.default('default'),
  TEMPORAL_TASK_QUEUE: nonEmpty.default('orders'),
  // Additions (docs/architecture.md, "Rolling out a workflow change"): Worker Versioning.
  TEMPORAL_DEPLOYMENT_NAME: nonEmpty.default(DEFAULT_DEPLOYMENT_NAME),
  TEMPORAL_SET_CURRENT_VERSION: z.enum(['true', 'false']).default('false'),
  PAYMENT_WINDOW: nonEmpty.default('30m'),
  PAYMENT_WEBHOOK_SECRET: nonEmpty.optional(),
  ADMIN_TOKEN: nonEmpty.optional(),
  // Additions (docs/api.md, "Who may call what"): Prometheus's own token, and failed-credential throttling.
  METRICS_TOKEN: nonEmpty.optional(),
  AUTH_FAILURES_PER_MINUTE_PER_ADDRESS: limit.default(20),
  TRUST_PROXY: nonEmpty.optional(),
  // Additions (docs/temporal.md, "Encrypted payloads"): the payload codec's keys, the operators' session
  // cookie (the orders page and the codec endpoints) and the one origin that may call the codec endpoints.
  PAYLOAD_ENCRYPTION_KEYS: nonEmpty.optional(),
  OPERATOR_SESSION_TTL: nonEmpty.default('8h'),
  CODEC_CORS_ORIGIN: z.url({ protocol: /^https?$/, error: 'must be an http or https origin' }).optional(),
  FAULTS_ENABLED: z.enum(['true', 'false']).optional(),
  // Addition (docs/operations.md, "Configuration"): which third parties the worker calls.
  THIRD_PARTIES: z.enum(THIRD_PARTY_KINDS).optional(),
  // Additions (docs/stripe.md, "At the deadline"): the local provider's kind, and the currency payments are created in.
  FAKE_PAYMENTS: z.enum(FAKE_PAYMENTS_MODES).default('cancellable'),
  CURRENCY: z
    .string()
    .regex(/^[a-z]{3}$/, 'must be an ISO 4217 code in lower case, e.g. eur')
    .default('eur'),
  // Additions (docs/stripe.md): Stripe, with THIRD_PARTIES=stripe. The messages never echo a value.
  STRIPE_SECRET_KEY: z
    .string()
    .regex(/^[sr]k_(test|live)_\w+$/, 'must be a Stripe secret or restricted key (sk_… or rk_…)')
    .optional(),
  STRIPE_WEBHOOK_SECRET: z
    .string()
    .regex(/^whsec_\w+$/, "must be a webhook endpoint's signing secret (whsec_…)")
    .optional(),
  STRIPE_API_BASE: z.url().optional(),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  RECONCILE_EVERY: nonEmpty.default('2m'),
  RECONCILE_GRACE: nonEmpty.default('1m'),
  // Additions to the contract (docs/operations.md, "Configuration"): operability.
  WORKER_METRICS_PORT: port.default(9464),
  TEMPORAL_SDK_METRICS_ADDRESS: z
    .string()
    .regex(/^[\w.-]+:\d{1,5}$/, 'must be host:port')
    .default('127.0.0.1:9465'),
  SHUTDOWN_GRACE: nonEmpty.default('10s'),
  DATABASE_POOL_SIZE: z.coerce.number().int().min(1).max(1_000).default(10),
  // Additions (docs/operations.md, "Configuration"): the database shielded from anonymous load.
  DATABASE_PUBLIC_POOL_SIZE: z.coerce.number().int().min(1).max(1_000).default(2),
  DATABASE_ACQUIRE_TIMEOUT: nonEmpty.default('5s'),
  DATABASE_STATEMENT_TIMEOUT: nonEmpty.default('10s'),
  TEMPORAL_UI_URL: z
    .url({ protocol: /^https?$/, error: 'must be an http or https URL' })
    .default('http://localhost:8233'),
  OTEL_EXPORTER_OTLP_ENDPOINT: z.url().optional(),
  // Addition (docs/operations.md, "Traces"): whether the API continues a caller's W3C traceparent.
  TRUST_TRACEPARENT: z.enum(['true', 'false']).default('false'),
  // Additions (docs/api.md, "Who may call what"): customer identity, order ids, anti-hoarding and per-customer call limits.
  CUSTOMER_JWT_SECRET: hmacKey.optional(),
  CUSTOMER_JWKS_URL: z.url().optional(),
  CUSTOMER_JWT_ISSUER: nonEmpty.optional(),
  CUSTOMER_JWT_AUDIENCE: nonEmpty.optional(),
  CUSTOMER_JWT_MAX_AGE: nonEmpty.default('1h'),
  ORDER_ID_SECRET: hmacKey.optional(),
  MAX_OPEN_ORDERS_PER_CUSTOMER: limit.default(3),
  MAX_UNPAID_UNITS_PER_PRODUCT: limit.default(10),
  ORDERS_PER_MINUTE_PER_CLIENT: limit.default(10),
  READS_PER_MINUTE_PER_CLIENT: limit.default(300),
  COUPON_REFUSALS_PER_HOUR_PER_CUSTOMER: limit.default(10),
  // Additions (docs/operations.md, "Configuration"): the worker's Temporal tuning, decided by the bench.
  ...WorkerTuningSchema.shape,
});

/** Every variable loadConfig() reads (the contract's and its additions, docs/operations.md). */
export const CONFIG_VARIABLES = Object.keys(EnvSchema.shape) as ReadonlyArray<keyof typeof EnvSchema.shape>;

export interface Config {
  port: number;
  /** Where the API and the worker's /metrics listen: loopback under the embedded stack, else 0.0.0.0 (LISTEN_ADDRESS). */
  listenAddress: string;
  /** Unset: the runner starts the embedded PostgreSQL and passes its URL on. */
  databaseUrl: string | undefined;
  temporal: {
    /** Unset: the runner starts the embedded Temporal Server 1.32 and passes its address on. */
    address: string | undefined;
    namespace: string;
    taskQueue: string;
    /** The Worker Deployment every worker is a build of; the build id comes from its workflow code. */
    deploymentName: string;
    /**
     * Whether the worker makes its own build the deployment's current version once it polls.
     * `npm start` and the local stacks, which run one build, say yes; a production deploy decides
     * when to switch as a step of its own, and an old worker restarting must not switch back.
     */
    setCurrentVersion: boolean;
    /**
     * TLS, API key and gRPC metadata for TEMPORAL_ADDRESS, from the SDK's environment configuration
     * (TEMPORAL_API_KEY, TEMPORAL_TLS*, TEMPORAL_PROFILE / TEMPORAL_CONFIG_FILE): Temporal Cloud.
     */
    connection: TemporalConnectionSecurity;
    /** Base URL of the Temporal Web UI, for links from the orders page. */
    uiUrl: string;
  };
  paymentWindowMs: number;
  /** PAYMENT_WEBHOOK_SECRET, the payment callback's key; undefined with Stripe, which has a webhook of its own. */
  webhookSecret: string | undefined;
  adminToken: string;
  /**
   * The third parties the worker calls. Unset (the default, except under the fully embedded stack):
   * none is configured and the worker refuses to start (requireThirdParties).
   */
  thirdParties: ThirdPartyKind | undefined;
  /** Set exactly when THIRD_PARTIES=stripe. */
  stripe: StripeSettings | undefined;
  /** The local payment provider's kind, with THIRD_PARTIES=fake. */
  fakePayments: FakePaymentsMode;
  /** ISO 4217, lower case: every payment is created in it. */
  currency: string;
  /** The fault-injection endpoints for the local fakes; only with THIRD_PARTIES=fake. */
  faultsEnabled: boolean;
  logLevel: z.infer<typeof EnvSchema>['LOG_LEVEL'];
  reconciliation: {
    /** How often the safety-net sweep runs. */
    everyMs: number;
    /** How far past its deadline an UNPAID order must be before the sweep considers it stranded. */
    graceMs: number;
  };
  /** The worker's Prometheus /metrics port, and where the SDK's own exporter binds (merged into it). */
  workerMetricsPort: number;
  sdkMetricsAddress: string;
  /** How long the worker lets in-flight activities finish, and the API in-flight requests, on SIGTERM. */
  shutdownGraceMs: number;
  /** OTLP/HTTP endpoint for traces; unset: tracing is off. */
  otlpEndpoint: string | undefined;
  /**
   * Whether the API continues the trace a request's `traceparent` names; false (the default): every
   * request starts a trace of its own, so a client can neither join our traces nor choose their ids.
   */
  trustTraceparent: boolean;
  /**
   * PostgreSQL connections each process (worker, API) may open. It bounds the database's load
   * whatever the number of concurrent activities: the rest wait for a connection in the process.
   */
  databasePoolSize: number;
  /**
   * The API's second, small pool, for what anyone may ask without a token (GET /products/:sku): a
   * crowd of them queues there, never in front of the payment webhook and checkout on the main pool.
   */
  databasePublicPoolSize: number;
  /** Every pool's bounds (lib/db.ts): the wait for a connection, and PostgreSQL's statement_timeout. */
  databaseTimeouts: { acquireTimeoutMs: number; statementTimeoutMs: number };
  /** How customers' bearer tokens (JWTs) are verified. */
  customerTokens: CustomerTokenSettings;
  /** HMAC key that turns (customer, Idempotency-Key) into an order id nobody else can compute. */
  orderIdSecret: string;
  /** Unpaid orders one customer may hold at once; 0: no limit. Read by the worker (placeOrder). */
  maxOpenOrdersPerCustomer: number;
  /** Units of one product one customer may hold in unpaid orders; 0: no limit. Read by the worker (placeOrder). */
  maxUnpaidUnitsPerProduct: number;
  /** `POST /orders` calls per customer per minute; 0: no limit. Read by the API. */
  ordersPerMinutePerClient: number;
  /** `GET /orders`, `GET /orders/:id` and `POST /orders/:id/cancel` calls per customer per minute, together; 0: no limit. Read by the API. */
  readsPerMinutePerClient: number;
  /**
   * Coupon codes one customer may have refused per hour before their placements that name a coupon
   * are refused (429) until the hour ends; 0: no limit. Read by the API.
   */
  couponRefusalsPerHourPerCustomer: number;
  /** Prometheus's bearer token for the API's /metrics, which it opens and nothing else; unset: only ADMIN_TOKEN opens it. */
  metricsToken: string | undefined;
  /** Guessed credentials one client address may send per minute before its further guesses are refused (429); 0: no limit. */
  authFailuresPerMinutePerAddress: number;
  /**
   * Which proxies in front of the API are believed about the client's address (X-Forwarded-For),
   * as Express's `trust proxy` takes it: false (none, the default outside production), a hop count,
   * or addresses and CIDRs. The guessed-token throttle counts per that address.
   */
  trustProxy: TrustProxy;
  /** The worker's Temporal tuning; read by the worker only. */
  workerTuning: WorkerTuning;
  /** The payload codec's AES-256 keys (PAYLOAD_ENCRYPTION_KEYS): the first seals, all open. */
  payloadKeys: PayloadKeys;
  /** The operators' session cookie, issued by `POST /operator/session` (api/operator-session.ts). */
  operatorSession: OperatorSessionSettings;
  /** The one origin whose pages may call the codec endpoints with credentials: the Temporal Web UI's. */
  codecCorsOrigin: string;
}

export interface OperatorSessionSettings {
  /** How long a session lasts from sign-in (OPERATOR_SESSION_TTL). */
  ttlMs: number;
  /** The cookie's `Secure`: off only on npm start's embedded stack, served over plain http on loopback. */
  secureCookie: boolean;
}

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

export type TrustProxy = false | number | string[];

/**
 * Either a shared secret (HS256), or an identity provider's public keys (RS256, from its JWKS URL),
 * never both: a deployment that trusts its provider must not also accept the public dev secret.
 */
export type CustomerTokenSettings = (
  | {
      algorithm: 'HS256';
      secret: string;
      /** Required `iss` and `aud` claims, when set. */
      issuer?: string | undefined;
      audience?: string | undefined;
    }
  | {
      algorithm: 'RS256';
      jwksUrl: string;
      /** Required: a provider issues tokens for other applications too, and those must be refused here. */
      issuer: string;
      audience: string;
    }
) & {
  /** How old (by `iat`, which it then requires) a token may be, whatever its `exp` says. */
  maxAgeSeconds: number;
};

export interface StripeSettings {
  /** The API key (secret or restricted): never logged. */
  secretKey: string;
  /** Verifies the signatures of the events Stripe posts (`Stripe-Signature`): never logged. */
  webhookSecret: string;
  /** Unset: Stripe's API. Otherwise an origin standing in for it: stripe-mock, the local fake. */
  apiBase: string | undefined;
}

export type TemporalConnectionSecurity = Pick<NativeConnectionOptions, 'tls' | 'apiKey' | 'metadata'>;

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const e = parseEnv(EnvSchema, env);
  const embedded = isEmbeddedStack(e);
  const adminToken = secret('ADMIN_TOKEN', e.ADMIN_TOKEN, DEV_ADMIN_TOKEN, embedded);
  const customerTokenSettings = customerTokens(e, embedded);
  const orderIdSecret = secret('ORDER_ID_SECRET', e.ORDER_ID_SECRET, DEV_ORDER_ID_SECRET, embedded);
  const metricsToken =
    e.METRICS_TOKEN === undefined ? undefined : secret('METRICS_TOKEN', e.METRICS_TOKEN, '', embedded);
  if (metricsToken === adminToken)
    throw new ConfigError("METRICS_TOKEN: must differ from ADMIN_TOKEN, or Prometheus holds the operators' power");
  const paymentWindowMs = duration('PAYMENT_WINDOW', e.PAYMENT_WINDOW);
  const payloadKeys = parsePayloadKeys(e.PAYLOAD_ENCRYPTION_KEYS, e.NODE_ENV === 'production');
  const operatorSessionTtlMs = duration('OPERATOR_SESSION_TTL', e.OPERATOR_SESSION_TTL);
  if (operatorSessionTtlMs < 60_000 || operatorSessionTtlMs > 7 * 24 * 3_600_000)
    throw new ConfigError('OPERATOR_SESSION_TTL: must be from 1m to 168h');
  const shutdownGraceMs = duration('SHUTDOWN_GRACE', e.SHUTDOWN_GRACE);
  const reconcileEveryMs = duration('RECONCILE_EVERY', e.RECONCILE_EVERY);
  const reconcileGraceMs = duration('RECONCILE_GRACE', e.RECONCILE_GRACE);
  // The fakes and their fault injection belong to the embedded stack, where nothing real is at
  // stake: on by default there, and fault injection refused anywhere else.
  const thirdParties = e.THIRD_PARTIES ?? (embedded ? 'fake' : undefined);
  // With Stripe the callback is not mounted (api/app.ts), so its key is neither needed nor kept.
  const webhookSecret =
    thirdParties === 'stripe'
      ? undefined
      : secret('PAYMENT_WEBHOOK_SECRET', e.PAYMENT_WEBHOOK_SECRET, DEV_WEBHOOK_SECRET, embedded);
  const faultsEnabled = e.FAULTS_ENABLED === undefined ? embedded : e.FAULTS_ENABLED === 'true';
  if (faultsEnabled && !embedded)
    throw new ConfigError(
      `FAULTS_ENABLED: fault injection is refused outside npm start's embedded stack (${NOT_EMBEDDED}); set FAULTS_ENABLED=false`,
    );
  if (faultsEnabled && thirdParties !== 'fake') {
    throw new ConfigError('FAULTS_ENABLED: fault injection drives the local fakes only; it needs THIRD_PARTIES=fake');
  }
  return {
    port: e.PORT,
    // npm start's stack runs on public development secrets: reachable from this machine only.
    listenAddress: e.LISTEN_ADDRESS ?? (embedded ? '127.0.0.1' : '0.0.0.0'),
    databaseUrl: e.DATABASE_URL,
    temporal: {
      address: e.TEMPORAL_ADDRESS,
      namespace: e.TEMPORAL_NAMESPACE,
      taskQueue: e.TEMPORAL_TASK_QUEUE,
      deploymentName: e.TEMPORAL_DEPLOYMENT_NAME,
      setCurrentVersion: e.TEMPORAL_SET_CURRENT_VERSION === 'true',
      connection: e.TEMPORAL_ADDRESS === undefined ? {} : temporalSecurity(env),
      uiUrl: e.TEMPORAL_UI_URL.replace(/\/+$/, ''),
    },
    paymentWindowMs,
    webhookSecret,
    adminToken,
    thirdParties,
    stripe: thirdParties === 'stripe' ? stripeSettings(e, embedded) : undefined,
    fakePayments: e.FAKE_PAYMENTS,
    currency: e.CURRENCY,
    faultsEnabled,
    logLevel: e.LOG_LEVEL,
    reconciliation: { everyMs: reconcileEveryMs, graceMs: reconcileGraceMs },
    workerMetricsPort: e.WORKER_METRICS_PORT,
    sdkMetricsAddress: e.TEMPORAL_SDK_METRICS_ADDRESS,
    shutdownGraceMs,
    otlpEndpoint: e.OTEL_EXPORTER_OTLP_ENDPOINT?.replace(/\/+$/, ''),
    trustTraceparent: e.TRUST_TRACEPARENT === 'true',
    databasePoolSize: e.DATABASE_POOL_SIZE,
    databasePublicPoolSize: e.DATABASE_PUBLIC_POOL_SIZE,
    databaseTimeouts: {
      acquireTimeoutMs: positiveDuration('DATABASE_ACQUIRE_TIMEOUT', e.DATABASE_ACQUIRE_TIMEOUT),
      statementTimeoutMs: positiveDuration('DATABASE_STATEMENT_TIMEOUT', e.DATABASE_STATEMENT_TIMEOUT),
    },
    customerTokens: customerTokenSettings,
    orderIdSecret,
    maxOpenOrdersPerCustomer: e.MAX_OPEN_ORDERS_PER_CUSTOMER,
    maxUnpaidUnitsPerProduct: e.MAX_UNPAID_UNITS_PER_PRODUCT,
    ordersPerMinutePerClient: e.ORDERS_PER_MINUTE_PER_CLIENT,
    readsPerMinutePerClient: e.READS_PER_MINUTE_PER_CLIENT,
    couponRefusalsPerHourPerCustomer: e.COUPON_REFUSALS_PER_HOUR_PER_CUSTOMER,
    metricsToken,
    authFailuresPerMinutePerAddress: e.AUTH_FAILURES_PER_MINUTE_PER_ADDRESS,
    trustProxy: trustProxy(e.TRUST_PROXY, e.NODE_ENV === 'production'),
    workerTuning: workerTuning(e),
    payloadKeys,
    operatorSession: { ttlMs: operatorSessionTtlMs, secureCookie: !embedded },
    // The Web UI the orders page links to is the one that calls the codec, unless said otherwise.
    codecCorsOrigin:
      e.CODEC_CORS_ORIGIN === undefined ? new URL(e.TEMPORAL_UI_URL).origin : corsOrigin(e.CODEC_CORS_ORIGIN),
  };
}

/**
 * The WORKER_* tuning variables alone, validated as loadConfig() does: for a worker that is not the
 * service's (the bench's floor worker) but must run with exactly its tuning.
 */
export function loadWorkerTuning(env: NodeJS.ProcessEnv = process.env): WorkerTuning {
  return workerTuning(parseEnv(WorkerTuningSchema, env));
}

/** The names of the variables loadWorkerTuning() reads. */
export const WORKER_TUNING_VARIABLES = Object.keys(WorkerTuningSchema.shape) as ReadonlyArray<
  keyof typeof WorkerTuningSchema.shape
>;

/** DATABASE_URL alone, validated as loadConfig() does; undefined when unset. */
export function loadDatabaseUrl(env: NodeJS.ProcessEnv = process.env): string | undefined {
  return parseEnv(DatabaseSchema, env).DATABASE_URL;
}

/**
 * The third parties the worker must call, or a ConfigError saying that none is configured: a
 * deployment chooses Stripe, or opts into the fakes knowingly.
 */
export function requireThirdParties(config: Config): ThirdPartyKind {
  if (config.thirdParties !== undefined) return config.thirdParties;
  throw new ConfigError(
    'THIRD_PARTIES: no payment provider is configured; set THIRD_PARTIES=stripe (with STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET), ' +
      'or THIRD_PARTIES=fake to run on the local fakes (development and demos only, nothing real is paid or sent)',
  );
}

/**
 * The worker's and the API's first connection to TEMPORAL_ADDRESS failed: one line naming the
 * variable and the cause, for start-up to stop with.
 */
export function temporalUnreachable(address: string, err: unknown): ConfigError {
  const cause = (err instanceof Error ? err.message : String(err)).split('\n')[0];
  return new ConfigError(
    `TEMPORAL_ADDRESS: cannot connect to Temporal at ${address} (${cause}); check that it runs and is reachable from here`,
  );
}

/** The secrets this configuration leaves at their public development defaults, as `[variable, value]`. */
export function devSecretsInUse(config: Config): Array<[string, string]> {
  const defaults: Array<[string, string, string | undefined]> = [
    ['PAYMENT_WEBHOOK_SECRET', DEV_WEBHOOK_SECRET, config.webhookSecret],
    ['ADMIN_TOKEN', DEV_ADMIN_TOKEN, config.adminToken],
    [
      'CUSTOMER_JWT_SECRET',
      DEV_CUSTOMER_JWT_SECRET,
      config.customerTokens.algorithm === 'HS256' ? config.customerTokens.secret : undefined,
    ],
    ['ORDER_ID_SECRET', DEV_ORDER_ID_SECRET, config.orderIdSecret],
    [
      'PAYLOAD_ENCRYPTION_KEYS',
      DEV_PAYLOAD_ENCRYPTION_KEYS,
      config.payloadKeys.some(isDevPayloadKey) ? DEV_PAYLOAD_ENCRYPTION_KEYS : undefined,
    ],
  ];
  return defaults.filter(([, dev, actual]) => actual === dev).map(([name, dev]) => [name, dev]);
}

function customerTokens(e: z.infer<typeof EnvSchema>, embedded: boolean): CustomerTokenSettings {
  const maxAgeSeconds = Math.floor(duration('CUSTOMER_JWT_MAX_AGE', e.CUSTOMER_JWT_MAX_AGE) / 1000);
  if (maxAgeSeconds < 1) throw new ConfigError('CUSTOMER_JWT_MAX_AGE: must be at least 1s');
  const { CUSTOMER_JWT_ISSUER: issuer, CUSTOMER_JWT_AUDIENCE: audience } = e;
  if (e.CUSTOMER_JWKS_URL === undefined) {
    const key = secret('CUSTOMER_JWT_SECRET', e.CUSTOMER_JWT_SECRET, DEV_CUSTOMER_JWT_SECRET, embedded);
    return { algorithm: 'HS256', secret: key, issuer, audience, maxAgeSeconds };
  }
  if (e.CUSTOMER_JWT_SECRET !== undefined)
    throw new ConfigError('CUSTOMER_JWT_SECRET: set either it (HS256) or CUSTOMER_JWKS_URL (RS256), not both');
  const url = new URL(e.CUSTOMER_JWKS_URL);
  // The keys decide who is a customer: fetched in clear, anyone on the path could substitute their own.
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && LOOPBACK_HOSTS.includes(url.hostname)))
    throw new ConfigError('CUSTOMER_JWKS_URL: must be https (plain http only to this machine, for tests)');
  if (issuer === undefined)
    throw new ConfigError("CUSTOMER_JWT_ISSUER: required with CUSTOMER_JWKS_URL (the provider's `iss`)");
  if (audience === undefined)
    throw new ConfigError(
      "CUSTOMER_JWT_AUDIENCE: required with CUSTOMER_JWKS_URL (this service's `aud` at the provider)",
    );
  return { algorithm: 'RS256', jwksUrl: e.CUSTOMER_JWKS_URL, issuer, audience, maxAgeSeconds };
}

/**
 * npm start's own stack: its runner, when it is to start both PostgreSQL and Temporal itself, and
 * the worker and API it then starts (EMBEDDED_STACK=true). Never under NODE_ENV=production.
 */
function isEmbeddedStack(e: z.infer<typeof EnvSchema>): boolean {
  if (e.NODE_ENV === 'production') return false;
  return e.EMBEDDED_STACK === 'true' || (e.DATABASE_URL === undefined && e.TEMPORAL_ADDRESS === undefined);
}

const NOT_EMBEDDED = 'NODE_ENV=production, or DATABASE_URL or TEMPORAL_ADDRESS set by hand';

/**
 * A secret as configured. Only the embedded stack may leave it at its public development default
 * or make it short; anywhere else each of those stops start-up, naming the variable (never its value).
 */
function secret(name: string, value: string | undefined, devDefault: string, embedded: boolean): string {
  if (embedded) return value ?? devDefault;
  const why =
    value === undefined
      ? `required (${MIN_SECRET_LENGTH}+ random characters)`
      : value === devDefault
        ? 'is the public development default, not a secret,'
        : value.length < MIN_SECRET_LENGTH
          ? `must be at least ${MIN_SECRET_LENGTH} characters`
          : undefined;
  if (why !== undefined || value === undefined)
    throw new ConfigError(`${name}: ${why} outside npm start's embedded stack (${NOT_EMBEDDED})`);
  return value;
}

function stripeSettings(e: z.infer<typeof EnvSchema>, embedded: boolean): StripeSettings {
  if (e.STRIPE_SECRET_KEY === undefined) throw new ConfigError('STRIPE_SECRET_KEY: required with THIRD_PARTIES=stripe');
  if (e.STRIPE_WEBHOOK_SECRET === undefined)
    throw new ConfigError('STRIPE_WEBHOOK_SECRET: required with THIRD_PARTIES=stripe');
  // It alone authenticates POST /webhooks/stripe, which pays orders: held to every other secret's rule.
  const webhookSecret = secret('STRIPE_WEBHOOK_SECRET', e.STRIPE_WEBHOOK_SECRET, '', embedded);
  if (e.STRIPE_API_BASE !== undefined) checkStripeApiBase(e.STRIPE_API_BASE, e.STRIPE_SECRET_KEY);
  return { secretKey: e.STRIPE_SECRET_KEY, webhookSecret, apiBase: e.STRIPE_API_BASE };
}

/**
 * The client takes a host, port and protocol only, so the base is an origin. The key travels with
 * every request: in clear only to this machine, and a live key only to Stripe itself.
 */
function checkStripeApiBase(base: string, secretKey: string): void {
  const url = new URL(base);
  const fail = (why: string) => {
    throw new ConfigError(`STRIPE_API_BASE: ${why}`);
  };
  if (url.protocol !== 'http:' && url.protocol !== 'https:') fail('must be an http or https URL');
  if (url.pathname !== '/' || url.search !== '' || url.hash !== '' || url.username !== '' || url.password !== '')
    fail('must be an origin such as http://127.0.0.1:12111, without a path, query or credentials');
  if (url.protocol === 'http:' && !LOOPBACK_HOSTS.includes(url.hostname))
    fail('plain http only to this machine (localhost, 127.0.0.1, [::1]); elsewhere https');
  if (/^[sr]k_live_/.test(secretKey)) fail('a live key goes to Stripe only: unset STRIPE_API_BASE, or use a test key');
}

const LOOPBACK_HOSTS = ['localhost', '127.0.0.1', '[::1]'];

/**
 * PAYLOAD_ENCRYPTION_KEYS: `keyId=<base64 of 32 bytes>`, comma-separated; the first seals new
 * payloads, every one opens what it sealed (rotation: put the new key first, keep the old ones while
 * any history they sealed is kept). Required under NODE_ENV=production, where the public development
 * key may not be among them; elsewhere (npm start, tests, dev tools) that key stands in, so every
 * process of a local stack agrees without being told. Messages name key ids, never key material.
 */
function parsePayloadKeys(text: string | undefined, production: boolean): PayloadKeys {
  const fail = (why: string): never => {
    throw new ConfigError(`PAYLOAD_ENCRYPTION_KEYS: ${why}`);
  };
  if (text === undefined && production)
    fail('required with NODE_ENV=production (keyId=<base64 of 32 random bytes>, e.g. k1=$(openssl rand -base64 32))');
  const keys = (text ?? DEV_PAYLOAD_ENCRYPTION_KEYS).split(',').map((entry, i) => {
    const match = /^([A-Za-z0-9._-]{1,64})=([A-Za-z0-9+/]+={0,2})$/.exec(entry.trim());
    if (match === null) return fail(`entry ${i + 1} must be keyId=<base64 of 32 bytes> (id: letters, digits, . _ -)`);
    const key = Buffer.from(match[2]!, 'base64');
    if (key.length !== 32) return fail(`key "${match[1]}" must be 32 bytes (AES-256), base64-encoded`);
    return { id: match[1]!, key };
  });
  const ids = keys.map((k) => k.id);
  const repeated = ids.find((id, i) => ids.indexOf(id) !== i);
  if (repeated !== undefined) fail(`key id "${repeated}" is listed twice`);
  const dev = keys.find(isDevPayloadKey);
  if (production && dev !== undefined)
    fail(`key "${dev.id}" is the public development key, not a secret (NODE_ENV=production)`);
  return keys as unknown as PayloadKeys;
}

const DEV_PAYLOAD_KEY = Buffer.from(DEV_PAYLOAD_ENCRYPTION_KEYS.split('=').slice(1).join('='), 'base64');

function isDevPayloadKey({ key }: { key: Buffer }): boolean {
  return key.equals(DEV_PAYLOAD_KEY);
}

/** CODEC_CORS_ORIGIN: an origin (scheme, host, port) as a browser sends it in `Origin`, nothing more. */
function corsOrigin(text: string): string {
  const url = new URL(text);
  if (url.pathname !== '/' || url.search !== '' || url.hash !== '' || url.username !== '' || url.password !== '')
    throw new ConfigError('CODEC_CORS_ORIGIN: must be an origin such as http://localhost:8233, without a path');
  return url.origin;
}

function parseEnv<T extends z.ZodObject>(schema: T, env: NodeJS.ProcessEnv): z.infer<T> {
  const parsed = schema.safeParse(blankToUndefined(env));
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new ConfigError(`${String(issue.path[0])}: ${issue.message}`);
  }
  return parsed.data;
}

function workerTuning(e: z.infer<typeof WorkerTuningSchema>): WorkerTuning {
  return {
    maxCachedWorkflows: e.WORKER_MAX_CACHED_WORKFLOWS,
    stickyQueueTimeoutMs: duration('WORKER_STICKY_QUEUE_TIMEOUT', e.WORKER_STICKY_QUEUE_TIMEOUT),
    workflowPollers: e.WORKER_WORKFLOW_POLLERS === undefined ? undefined : workflowPollers(e.WORKER_WORKFLOW_POLLERS),
    stackTraceLimit: e.WORKER_STACK_TRACE_LIMIT,
    workflowThreads: e.WORKER_WORKFLOW_THREADS,
  };
}

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

/** The SDK's maxConcurrentWorkflowTaskExecutions default, which the service does not change. */
const WORKFLOW_TASK_SLOTS = 40;

function duration(name: string, text: string): number {
  try {
    return parseDuration(text);
  } catch (err) {
    throw new ConfigError(`${name}: ${(err as Error).message}`);
  }
}

/** A bound that 0 would turn off (pg reads 0 as "no timeout"): at least 1 ms. */
function positiveDuration(name: string, text: string): number {
  const ms = duration(name, text);
  if (ms < 1) throw new ConfigError(`${name}: must be more than 0`);
  return ms;
}

/**
 * TRUST_PROXY: `none` or `false` (the default outside production), a hop count, or a comma-separated
 * list of addresses, CIDRs and proxy-addr's names (loopback, linklocal, uniquelocal), each checked
 * with the library Express itself compiles it with. Never `true`: trusting every hop lets any client
 * write its own address. Under NODE_ENV=production it must be set: whether a load balancer stands in
 * front decides which address the API counts guesses and rate limits by, and only the deployment
 * knows.
 */
function trustProxy(text: string | undefined, production: boolean): TrustProxy {
  if (text === undefined && production)
    throw new ConfigError(
      "TRUST_PROXY: required under NODE_ENV=production: `none` when clients reach the API directly, else the balancers' hop count or addresses",
    );
  if (text === undefined || text === 'false' || text === 'none') return false;
  if (/^\d+$/.test(text)) {
    const hops = Number(text);
    if (hops < 1 || hops > 10) throw new ConfigError('TRUST_PROXY: a hop count must be 1 to 10 (or none)');
    return hops;
  }
  if (text === 'true')
    throw new ConfigError(
      "TRUST_PROXY: `true` would believe any X-Forwarded-For a client writes; give the hop count or the proxies' addresses",
    );
  const entries = text.split(',').map((entry) => entry.trim());
  try {
    proxyAddr.compile(entries);
  } catch (err) {
    throw new ConfigError(`TRUST_PROXY: ${(err as Error).message} (want none, a hop count, or addresses and CIDRs)`);
  }
  return entries;
}

/** The SDK's own loader, fed this environment (not process.env behind our back). */
function temporalSecurity(env: NodeJS.ProcessEnv): TemporalConnectionSecurity {
  try {
    const defined = Object.fromEntries(
      Object.entries(env).filter((kv): kv is [string, string] => kv[1] !== undefined && kv[1] !== ''),
    );
    const { tls, apiKey, metadata } = loadClientConnectConfig({ overrideEnvVars: defined }).connectionOptions;
    return { tls, apiKey, metadata };
  } catch (err) {
    throw new ConfigError(`TEMPORAL_* environment configuration: ${(err as Error).message}`);
  }
}

/** `FOO=` in a shell or compose file means "not set", not "set to the empty string". */
function blankToUndefined(env: NodeJS.ProcessEnv): Record<string, string | undefined> {
  return Object.fromEntries(Object.entries(env).map(([k, v]) => [k, v === '' ? undefined : v]));
}
