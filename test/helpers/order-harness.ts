import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { Client } from '@temporalio/client';
import { OpenTelemetryWorkflowClientInterceptor } from '@temporalio/interceptors-opentelemetry';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { Worker } from '@temporalio/worker';
import type { Activities, ActivityDeps } from '../../activities/index.js';
import type { ThirdParties } from '../../adapters/ports/index.js';
import { createApp } from '../../api/app.js';
import { createApiDatabases } from '../../api/databases.js';
import { signedHeaders } from '../../api/webhook-signature.js';
import { signCustomerToken } from '../../dev/customer-token.js';
import { createFakeThirdParties, fakeFaultInjection } from '../../dev/fakes/index.js';
import { countFakes } from '../../dev/fakes/recorder.js';
import { FAKE_PAYMENT_ACCOUNT } from '../../dev/fakes/payment-provider.js';
import type { FakePaymentsMode, PaymentAccount } from '../../lib/config/third-parties.js';
import type { Db } from '../../lib/db.js';
import { loadConfig } from '../../lib/config/index.js';
import { createLogger, type Logger } from '../../lib/logger.js';
import { encryptedDataConverter, PayloadEncryptionCodec } from '../../lib/payload-encryption.js';
import { createWorkerMetrics, type WorkerMetrics } from '../../worker/metrics.js';
import type { Tracing } from '../../lib/tracing.js';
import { createOrderWorker } from '../../worker/create-worker.js';
import { bundleWorkflows } from '../../worker/workflow-bundle.js';
import { createDb } from '../../lib/db.js';
import { findFreePort } from '../../dev/ports.js';
import { createTestDatabase } from './database.js';
import { PAYLOAD_KEYS } from './payload-keys.js';
import { quietBundlerLogger } from './quiet-bundler-logger.js';
import { startTcpProxy, type TcpProxy } from './tcp-proxy.js';
import { createLocalEnv, createTimeSkippingEnv } from './temporal.js';

export const ADMIN_TOKEN = 'test-admin-token';
export const WEBHOOK_SECRET = 'test-webhook-secret';
export const CUSTOMER_JWT_SECRET = 'test-customer-jwt-secret-0123456789';
export const ORDER_ID_SECRET = 'test-order-id-secret-0123456789abcdef';
export const PAYMENT_WINDOW_MS = 30 * 60_000;
export { PAYLOAD_KEYS } from './payload-keys.js';

export interface HttpResult {
  status: number;
  body: any;
  headers: Headers;
}

/**
 * The whole service on a Temporal test server and a fresh real database: the API (over real
 * HTTP), the worker with the real activities, and the local fakes. On the time-skipping server the
 * activities judge deadlines by that server's clock, the same clock as the workflow's timers.
 */
export interface OrderHarness {
  env: TestWorkflowEnvironment;
  /** A client that, unlike env.client, never lets the time-skipping server skip while it waits. */
  clockStoppedClient: Client;
  db: Db;
  /** The API's main pool (api/databases.ts); its public pool is beside it, as in production. */
  apiDb: Db;
  http(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<HttpResult>;
  admin(method: string, path: string, body?: unknown): Promise<HttpResult>;
  /** A call with a valid bearer token of `customerId` (HS256, CUSTOMER_JWT_SECRET). */
  asCustomer(
    customerId: string,
    method: string,
    path: string,
    body?: unknown,
    headers?: Record<string, string>,
  ): Promise<HttpResult>;
  /** Posts a correctly signed payment callback. */
  pay(body: {
    paymentId: string;
    orderId: string;
    amountCents: number;
    paidAt?: string;
    currency?: string;
  }): Promise<HttpResult>;
  /** How many times a fake third party acted (`effects`) and was called (`calls`) for a key. */
  fakeCount(service: string, operation: string, key?: string): Promise<{ effects: number; calls: number }>;
  /** Swaps third-party behaviour for one test, e.g. a notifier that fails twice. */
  thirdParties: ThirdParties;
  databaseUrl: string;
  /** The API's base URL (the orders page is at `/`). */
  baseUrl: string;
  /** The Temporal Web UI, when started with `webUi: true`. */
  webUiUrl: string | undefined;
  /** The worker's business metrics (worker/metrics.ts). */
  workerMetrics: WorkerMetrics;
  /** With `workerDatabaseProxy`: cuts the worker's activities off from PostgreSQL (the API keeps its connection). */
  workerDatabase: TcpProxy | undefined;
  close(): Promise<void>;
}

export interface HarnessOptions {
  taskQueue?: string;
  /** `time-skipping` (default): the Java test server. `real`: Temporal Server as `npm start` runs it, in real time. */
  temporal?: 'time-skipping' | 'real';
  paymentWindowMs?: number;
  /** `real` only: also serve the Temporal Web UI (on a free port; `webUiUrl` says where). */
  webUi?: boolean;
  /** False: no worker in this process (a test runs worker/main.ts itself on this task queue). */
  inProcessWorker?: boolean;
  /** Tracing for the worker (its interceptors and sink) and the API's Temporal client. */
  tracing?: Tracing;
  /** The worker's activities reach PostgreSQL through a proxy the test can take down (`workerDatabase`). */
  workerDatabaseProxy?: boolean;
  /** Wraps the worker's real activities, e.g. to hold one back until the test lets it go. */
  wrapActivities?: (activities: Activities) => Activities;
  /**
   * MAX_OPEN_ORDERS_PER_CUSTOMER for the worker. Default 0 (off): suites place many unpaid orders
   * for one customer; the anti-hoarding tests set it.
   */
  maxOpenOrdersPerCustomer?: number;
  /** MAX_UNPAID_UNITS_PER_PRODUCT for the worker. Default 0 (off), for the same reason. */
  maxUnpaidUnitsPerProduct?: number;
  /** PAYMENT_REMINDER_BEFORE for the worker. Default: unset, no reminders. */
  paymentReminderBeforeMs?: number;
  /** The API's per-customer limit on POST /orders. Default off, for the same reason. */
  ordersRateLimit?: { limit: number; windowMs: number };
  /** The API's per-customer limit on reading and cancelling orders. Default off: suites read as one customer often. */
  readsRateLimit?: { limit: number; windowMs: number };
  /** The API's per-customer limit on refused coupon codes. Default off: suites try unknown codes as one customer. */
  couponRefusalLimit?: { limit: number; windowMs: number };
  /** The API's logger (default: silent). */
  logger?: Logger;
  /**
   * The local payment provider: `callback-only` (the default: payments judged by when their callback
   * arrived), or `cancellable`, closed first at the deadline (chargeFakePayment plays the customer).
   */
  payments?: FakePaymentsMode;
  /** Whose money pays an order, for the API and the worker alike; default: the local provider's (test mode, eur). */
  paymentAccount?: PaymentAccount;
  /** UNCLAIMED_REFUND_GRACE for the API; default 24 hours. */
  unclaimedRefundGraceMs?: number;
  /** Mounts Stripe's webhook, `POST /webhooks/stripe`, with this signing secret. */
  stripeWebhookSecret?: string;
  /**
   * The API reaches PostgreSQL through a proxy that holds every packet this long each way: a
   * database a network hop away, where a pool's connections, not the CPU, bound what it can do.
   */
  apiDatabaseDelayMs?: number;
}

export async function startOrderHarness(options: HarnessOptions = {}): Promise<OrderHarness> {
  const {
    taskQueue = 'orders-test',
    temporal = 'time-skipping',
    paymentWindowMs = PAYMENT_WINDOW_MS,
    tracing,
  } = options;
  const database = await createTestDatabase();
  const dataConverter = encryptedDataConverter(PAYLOAD_KEYS);
  // Chosen before the Web UI starts: it calls this API's codec endpoints, as npm start's does.
  const apiPort = await findFreePort();
  const local =
    temporal === 'real'
      ? await createLocalEnv({
          webUi: options.webUi,
          dataConverter,
          codecEndpoint: `http://127.0.0.1:${apiPort}/codec`,
        })
      : undefined;
  const env = local?.env ?? (await createTimeSkippingEnv({ dataConverter }));
  const webUiUrl = local?.webUiUrl;
  const workerMetrics = createWorkerMetrics();
  const db = database.prisma;
  // Tests swap a fake's behaviour (e.g. a notifier that fails twice) without restarting the worker.
  const thirdParties: ThirdParties = createFakeThirdParties(db, options.payments ?? 'callback-only');
  const forward = <K extends keyof ThirdParties>(name: K): ThirdParties[K] =>
    new Proxy({} as ThirdParties[K], {
      get: (_target, key) => {
        // Read at each use: a method calls today's fake, and a property (cancelsPayments) is its value.
        const value = (thirdParties[name] as any)[key];
        return typeof value === 'function' ? (...args: unknown[]) => (thirdParties[name] as any)[key](...args) : value;
      },
    });
  // On the real server the database's own clock judges deadlines, as in production.
  const clock = temporal === 'time-skipping' ? async () => new Date(await env.currentTimeMs()) : undefined;
  const workerDatabase = options.workerDatabaseProxy ? await startTcpProxy(hostAndPort(database.url)) : undefined;
  const workerDb = workerDatabase ? createDb(withPort(database.url, workerDatabase.port)) : db;
  const apiDatabase = options.apiDatabaseDelayMs
    ? await startTcpProxy(hostAndPort(database.url), { delayMs: options.apiDatabaseDelayMs })
    : undefined;
  // The API's pools as the API process makes them, with the configuration's default sizes and bounds.
  const api = createApiDatabases(apiDatabase ? withPort(database.url, apiDatabase.port) : database.url, loadConfig({}));
  const deps: ActivityDeps = {
    db: workerDb,
    paymentWindowMs,
    paymentAccount: options.paymentAccount ?? FAKE_PAYMENT_ACCOUNT,
    unclaimedRefundGraceMs: options.unclaimedRefundGraceMs ?? 24 * 3_600_000,
    maxOpenOrdersPerCustomer: options.maxOpenOrdersPerCustomer ?? 0,
    maxUnpaidUnitsPerProduct: options.maxUnpaidUnitsPerProduct ?? 0,
    paymentReminderBeforeMs: options.paymentReminderBeforeMs ?? null,
    paymentProvider: forward('paymentProvider'),
    notifier: forward('notifier'),
    invoices: forward('invoices'),
    loyalty: forward('loyalty'),
    ...(clock ? { clock } : {}),
  };
  const worker: Worker | undefined =
    options.inProcessWorker === false
      ? undefined
      : await createOrderWorker({
          connection: env.nativeConnection,
          namespace: env.namespace ?? 'default',
          taskQueue,
          deps,
          payloadKeys: PAYLOAD_KEYS,
          workflowBundle: await bundleWorkflows(tracing !== undefined, quietBundlerLogger),
          metrics: workerMetrics,
          ...(tracing ? { tracing } : {}),
          ...(options.wrapActivities ? { wrapActivities: options.wrapActivities } : {}),
        });
  const running = worker?.run();

  const app = createApp({
    ...api,
    temporal: tracing
      ? new Client({
          connection: env.connection,
          namespace: env.namespace ?? 'default',
          dataConverter,
          interceptors: { workflow: [new OpenTelemetryWorkflowClientInterceptor()] },
        })
      : env.client,
    taskQueue,
    adminToken: ADMIN_TOKEN,
    webhookSecret: WEBHOOK_SECRET,
    stripeWebhookSecret: options.stripeWebhookSecret,
    customerTokens: { algorithm: 'HS256', secret: CUSTOMER_JWT_SECRET, maxAgeSeconds: 3600 },
    orderIdSecret: ORDER_ID_SECRET,
    paymentWindowMs,
    ordersRateLimit: options.ordersRateLimit ?? { limit: 0, windowMs: 60_000 },
    readsRateLimit: options.readsRateLimit ?? { limit: 0, windowMs: 60_000 },
    couponRefusalLimit: options.couponRefusalLimit ?? { limit: 0, windowMs: 60 * 60_000 },
    // Off: suites send many refused tokens from one address; test/api/auth-throttle tests it.
    authFailureLimit: { limit: 0, windowMs: 60_000 },
    faultInjection: fakeFaultInjection(db),
    temporalUiUrl: webUiUrl ?? 'http://localhost:8233',
    // Plain http on loopback, as npm start's stack: the browser tests' cookie must travel without TLS.
    operatorSession: { ttlMs: 8 * 3_600_000, secureCookie: false },
    payloadCodec: new PayloadEncryptionCodec(PAYLOAD_KEYS),
    codecCorsOrigin: new URL(webUiUrl ?? 'http://localhost:8233').origin,
    logger: options.logger ?? createLogger('api-test', 'silent'),
    ...(clock ? { clock } : {}),
    paymentAccount: options.paymentAccount ?? FAKE_PAYMENT_ACCOUNT,
    unclaimedRefundGraceMs: options.unclaimedRefundGraceMs ?? 24 * 3_600_000,
  });
  const server: Server = await new Promise((resolve) => {
    const s = app.listen(apiPort, '127.0.0.1', () => resolve(s));
  });
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  async function http(
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<HttpResult> {
    const init: RequestInit = { method, headers: { ...headers } };
    if (body !== undefined) {
      init.body = typeof body === 'string' ? body : JSON.stringify(body);
      (init.headers as Record<string, string>)['content-type'] ??= 'application/json';
    }
    const res = await fetch(base + path, init);
    const text = await res.text();
    const json = res.headers.get('content-type')?.includes('application/json');
    return { status: res.status, body: json ? JSON.parse(text) : text || undefined, headers: res.headers };
  }

  return {
    env,
    clockStoppedClient: new Client({
      connection: env.connection,
      namespace: env.namespace ?? 'default',
      dataConverter,
    }),
    db,
    apiDb: api.db,
    http,
    admin: (method, path, body) => http(method, path, body, { authorization: `Bearer ${ADMIN_TOKEN}` }),
    asCustomer: async (customerId, method, path, body, headers = {}) =>
      http(method, path, body, {
        ...headers,
        authorization: `Bearer ${await signCustomerToken(CUSTOMER_JWT_SECRET, customerId)}`,
      }),
    pay: ({ paidAt = new Date().toISOString(), ...rest }) => {
      const raw = JSON.stringify({ ...rest, paidAt });
      return http('POST', '/payments/callback', raw, signedHeaders(WEBHOOK_SECRET, raw));
    },
    fakeCount: (service, operation, key) => countFakes(db, { service, operation, idempotencyKey: key }),
    thirdParties,
    databaseUrl: database.url,
    baseUrl: base,
    webUiUrl,
    workerMetrics,
    workerDatabase,
    async close() {
      await new Promise((resolve) => server.close(resolve));
      await Promise.all([api.db.$disconnect(), api.publicDb.$disconnect()]);
      await apiDatabase?.close();
      worker?.shutdown();
      await running;
      await (local ?? env).teardown();
      if (workerDatabase) {
        await workerDb.$disconnect();
        await workerDatabase.close();
      }
      await database.drop();
    },
  };
}

function hostAndPort(url: string): { host: string; port: number } {
  const { hostname, port } = new URL(url);
  return { host: hostname, port: Number(port) };
}

function withPort(url: string, port: number): string {
  const u = new URL(url);
  u.port = String(port);
  return u.toString();
}
