import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { findFreePort } from '../ports.js';
import { startLocalStack, type LocalStack } from '../local-stack.js';
import { freeServerPorts } from '../temporal/server.js';

export const CHAOS_SECRETS = {
  webhookSecret: 'chaos-webhook-secret',
  adminToken: 'chaos-admin-token',
  customerJwtSecret: 'chaos-customer-jwt-secret-0123456789',
  orderIdSecret: 'chaos-order-id-secret-0123456789abcdef',
} as const;
export const CHAOS_TASK_QUEUE = 'orders-chaos';

export interface ChaosStackOptions {
  /** PAYMENT_WINDOW of the workers (the API does not use it). */
  paymentWindow: string;
  /** Temporal as one process per service with its store in the PostgreSQL, as `npm start -- --cluster` runs it. */
  cluster: boolean;
  /**
   * The local provider (FAKE_PAYMENTS). `callback-only` by default: the verdicts judge a payment by
   * when its callback arrived (on time, late), so the database decides the deadline.
   * `cancellable` holds each order's payment as Stripe does, so the deadline closes it there first
   * and a payment under way (a customer's action, money on its way) holds the order.
   */
  payments?: 'callback-only' | 'cancellable';
  /** More for the worker and the API, over chaos's own settings. */
  serviceEnv?: NodeJS.ProcessEnv;
  /** For Temporal Server's processes (METRICS_PORT). */
  temporalEnv?: Record<string, string>;
  /** The worker and the API log in as this role, and pg_stat_statements counts what they run. */
  countStatementsAs?: string;
}

/**
 * The local stack of `npm start` on loopback, in a temp directory, on free ports: a durable
 * PostgreSQL and Temporal Server (on its SQLite file, or as a cluster on the PostgreSQL; restartable
 * on its data), the worker(s) and the API as child processes. Only the ports, paths and secrets are
 * chaos's; the faults stop, kill and start its pieces.
 */
export async function startChaosStack(options: ChaosStackOptions): Promise<LocalStack> {
  return startLocalStack({
    postgres: {
      kind: 'embedded',
      port: await findFreePort(),
      database: 'chaos',
      ...(options.countStatementsAs === undefined
        ? {}
        : { statStatements: true, roles: [options.countStatementsAs], serviceRole: options.countStatementsAs }),
    },
    temporal: {
      kind: 'server',
      store: options.cluster ? 'postgres' : 'sqlite',
      cluster: options.cluster,
      ports: await freeServerPorts(),
      ...(options.temporalEnv === undefined ? {} : { processEnv: options.temporalEnv }),
    },
    namespace: 'default',
    apiPort: await findFreePort(),
    // As `npm start` runs them: two worker replicas beside a cluster, one otherwise.
    workers: options.cluster ? 2 : 1,
    serviceEnv: {
      TEMPORAL_TASK_QUEUE: CHAOS_TASK_QUEUE,
      PAYMENT_WINDOW: options.paymentWindow,
      PAYMENT_WEBHOOK_SECRET: CHAOS_SECRETS.webhookSecret,
      ADMIN_TOKEN: CHAOS_SECRETS.adminToken,
      CUSTOMER_JWT_SECRET: CHAOS_SECRETS.customerJwtSecret,
      ORDER_ID_SECRET: CHAOS_SECRETS.orderIdSecret,
      // The load's 20 customers (the storm's 50) each place many orders a minute and leave a quarter
      // unpaid: the anti-hoarding limits would refuse them, and they are not what chaos tests.
      MAX_OPEN_ORDERS_PER_CUSTOMER: '0',
      ORDERS_PER_MINUTE_PER_CLIENT: '0',
      THIRD_PARTIES: 'fake',
      FAKE_PAYMENTS: options.payments ?? 'callback-only',
      // Short beside 3-s windows; the run still asks about an action again no sooner than a minute.
      PAYMENT_ACTION_GRACE: '2s',
      FAULTS_ENABLED: 'true',
      // The chaos receiver listens on plain http on loopback. Retries that came due are picked up
      // within half a second; a SIGKILLed worker's locked jobs are taken over after a minute.
      WEBHOOK_ALLOW_HTTP_LOOPBACK: 'true',
      WEBHOOK_POLL_INTERVAL: '500ms',
      JOB_QUEUE_STALE_LOCK: '1m',
      TEMPORAL_SET_CURRENT_VERSION: 'true', // one build: the workers make it current
      LOG_LEVEL: 'warn',
      ...options.serviceEnv,
    },
    log: (line) => console.log(line),
  });
}

/** The last lines of every process's log: what a failed run shows where its temp directory is gone (CI). */
export async function logTails(logDir: string, lines = 15): Promise<string> {
  const logs = (await readdir(logDir)).filter((f) => f.endsWith('.log')).sort();
  const tails = await Promise.all(
    logs.map(async (file) => {
      const text = (await readFile(join(logDir, file), 'utf8')).trimEnd();
      if (text === '') return `--- ${file} (empty)`;
      const tail = text.split('\n').slice(-lines);
      return `--- ${file} (last ${tail.length} lines)\n${tail.join('\n')}`;
    }),
  );
  return tails.join('\n');
}
