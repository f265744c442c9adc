import { join } from 'node:path';
import { mkdir, readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client, Connection } from '@temporalio/client';
import { chargeFakePayment } from '../dev/fakes/payment-provider.js';
import { startLocalStack } from '../dev/local-stack.js';
import { PROJECT_ROOT } from '../dev/paths.js';
import { freeServerPorts } from '../dev/temporal/server.js';
import { DEFAULT_DEPLOYMENT_NAME } from '../lib/config/temporal.js';
import { createDb } from '../lib/db.js';
import { buildIdOf, setCurrentVersion } from '../worker/deployment.js';
import { payOrder } from './api-client.js';
import { ensureCompiledService } from './compiled-service.js';
import { leverDynamicConfig } from './dynamic-config.js';
import type { BenchOptions } from './options.js';
import type { TemporalStore } from './store-size.js';
import { workerTuningEnv } from './worker-env.js';
import { prebuiltBundleName } from '../worker/workflow-bundle.js';

/**
 * The local stack of `npm start`, on the bench's own ports and in a temp directory: PostgreSQL
 * (with pg_stat_statements preloaded), Temporal (`--temporal`, with its Web UI as under `npm start`,
 * so it costs what it costs there), the worker(s) and the API as child processes, compiled (dist-dev/,
 * built first when stale: compiled-service.ts) as the image runs them. The service and
 * the baseline canceller log in as their own roles, so pg_stat_statements tells their statements
 * apart from each other and from the bench's sampling.
 */
export const ROLES = { service: 'bench_service', scan: 'bench_scan', seed: 'bench_seed', peer: 'bench_peer' } as const;
const DATABASE = 'order_lifecycle_bench';
const TASK_QUEUE = 'orders';
const NAMESPACE = 'default';

export interface BenchStack {
  /** Superuser URL of the bench database (the bench's own observations). */
  adminUrl: string;
  urlAs(role: string): string;
  temporalAddress: string;
  taskQueue: string;
  apiBase: string;
  /** Where Temporal keeps its state (store-size.ts measures it). */
  temporalStore: TemporalStore;
  /** The top processes of each component (one per worker under "worker"); resources.ts adds up their descendants. */
  readonly pids: Record<string, Array<number | undefined>>;
  /** SIGKILLs the first worker and starts it again on its ports with its settings, until it polls. */
  restartWorker(): Promise<void>;
  /**
   * Stops every worker and starts them again with a workflow cache of `cache` runs (undefined: the
   * SDK's default) and `env` added (a lever), from `root`'s compiled service (another checkout's
   * build: `--lever-build`; this one by default), until they poll and their build is current.
   */
  restartWorkers(cache: number | undefined, env?: Record<string, string>, root?: string): Promise<void>;
  /** Stops the API and starts it again from `root`'s compiled service (`--lever-build`; this one by default). */
  restartApi(root?: string): Promise<void>;
  /** Rewrites the server's dynamic config in place with `settings` added (`--lever-dynamic`); the server reads it within 10 s. */
  setDynamicConfig(settings: Record<string, string>): Promise<void>;
  /** Stops Temporal Server and starts it again on its store and ports, with `env` for its process (`--lever-server-env`). */
  restartTemporal(env: Record<string, string>): Promise<void>;
  /**
   * The customer pays an order: the local provider takes the money of the order's own payment, as
   * Stripe does, then its signed callback reaches the service. Answers the callback's latency.
   */
  pay(order: { id: string; totalCents: number }): Promise<number>;
  /** Each worker's GET /metrics (its business metrics and the Temporal SDK's, sticky cache included). */
  workerMetricsUrls: string[];
  /** What those /metrics take: the workers' scraper token. */
  workerMetricsHeaders: Record<string, string>;
  stop(): Promise<void>;
}

export async function startBenchStack(options: BenchOptions, log: (line: string) => void): Promise<BenchStack> {
  const { ports } = options;
  await mkdir(join(options.outDir, 'logs'), { recursive: true });
  await ensureCompiledService(join(options.outDir, 'logs'), log);
  if (options.leverBuild !== undefined)
    await ensureCompiledService(join(options.outDir, 'logs'), log, options.leverBuild);
  // A file of the bench's own when a setting is added to the server's dynamic config, now or later.
  const writeDynamicConfig = (settings: Record<string, string>) =>
    leverDynamicConfig(options.stockTemporal ? 'stock' : 'project', settings, join(options.outDir, 'logs'));
  const dynamicConfigFile =
    Object.keys(options.dynamicConfig).length || Object.keys(options.leverDynamic).length
      ? await writeDynamicConfig(options.dynamicConfig)
      : undefined;
  const stack = await startLocalStack({
    // The logs outlive the run (the data directory does not): .bench/logs/.
    logDir: join(options.outDir, 'logs'),
    postgres: {
      kind: 'embedded',
      port: ports.postgres,
      database: DATABASE,
      statStatements: true,
      roles: Object.values(ROLES),
      serviceRole: ROLES.service,
    },
    temporal:
      options.temporal === 'cli'
        ? { kind: 'cli', port: ports.temporal, uiPort: ports.temporalUi, tuned: !options.untunedTemporal }
        : {
            kind: 'server',
            store: options.temporal,
            ports: await freeServerPorts(ports.temporal),
            uiPort: ports.temporalUi,
            ...(options.stockTemporal ? { dynamicConfig: 'stock' as const } : {}),
            ...(dynamicConfigFile === undefined ? {} : { dynamicConfigFile }),
          },
    namespace: NAMESPACE,
    apiPort: ports.api,
    // Started below, each with the WORKER_* tuning (worker-env.ts).
    workers: [],
    serviceCode: 'compiled',
    serviceEnv: {
      TEMPORAL_TASK_QUEUE: TASK_QUEUE,
      PAYMENT_WINDOW: `${options.windowS}s`,
      // The safety net must not touch the baseline's orders: give it a grace longer than the run.
      RECONCILE_GRACE: '1h',
      THIRD_PARTIES: 'fake',
      // As production's provider: the deadline closes the order's payment at the provider first.
      FAKE_PAYMENTS: 'cancellable',
      FAULTS_ENABLED: 'false',
      TEMPORAL_SET_CURRENT_VERSION: 'true', // one build: the workers make it current
      LOG_LEVEL: 'warn',
      // Tracing only when asked for (--env): the runner's shell may have it set, and makeCurrent
      // below must know which bundle, plain or traced, the workers run.
      OTEL_EXPORTER_OTLP_ENDPOINT: '',
      ...options.serviceEnv,
    },
    log,
  });
  let workerEnv = workerTuningEnv(options.serviceEnv, options.workerCache);
  const metricsUrls = ports.workers.map((w) => `http://127.0.0.1:${w.metrics}/metrics`);
  const metricsHeaders = stack.workerMetricsHeaders();
  const waitUntilPolling = (metricsUrl: string) => untilPolling(metricsUrl, metricsHeaders);
  const startWorkers = async (root?: string) => {
    for (const w of ports.workers)
      await stack.startWorker(
        workerEnv,
        { metricsPort: w.metrics, sdkMetricsAddress: `127.0.0.1:${w.sdkMetrics}` },
        root,
      );
    await Promise.all(metricsUrls.map(waitUntilPolling));
    log(
      `${ports.workers.length} worker(s) polling, each with a workflow cache of ${workerEnv.WORKER_MAX_CACHED_WORKFLOWS ?? "the SDK's default size"} runs`,
    );
  };
  try {
    await startWorkers();
  } catch (err) {
    // Nobody else holds the stack yet: stop it, or its processes outlive the failed bench.
    await stack.stop();
    throw err;
  }
  const sqliteFile = stack.temporalSqliteFile;
  // The provider's side of a payment, as the superuser: not the service's statements.
  const provider = createDb(stack.databaseUrl, { maxConnections: 4 });
  return {
    adminUrl: stack.databaseUrl,
    urlAs: (role) => stack.databaseUrlAs(role),
    temporalAddress: stack.temporalAddress,
    taskQueue: TASK_QUEUE,
    apiBase: stack.apiUrl,
    temporalStore: sqliteFile === undefined ? { kind: 'postgres' } : { kind: 'sqlite', file: sqliteFile },
    get pids() {
      return stack.pids;
    },
    async pay(order) {
      const charge = await chargeFakePayment(provider, { orderId: order.id, amountCents: order.totalCents });
      if (charge.outcome !== 'SUCCEEDED')
        throw new Error(`the provider refused to charge ${order.id}: ${charge.outcome}`);
      return payOrder(stack.apiUrl, {
        paymentId: charge.payment.paymentId,
        orderId: order.id,
        amountCents: order.totalCents,
      });
    },
    workerMetricsUrls: metricsUrls,
    workerMetricsHeaders: metricsHeaders,
    async restartWorker() {
      const [first] = stack.workers;
      if (first) await stack.killWorker(first);
      const w = ports.workers[0]!;
      await stack.startWorker(workerEnv, { metricsPort: w.metrics, sdkMetricsAddress: `127.0.0.1:${w.sdkMetrics}` });
      await waitUntilPolling(metricsUrls[0]!);
    },
    async restartWorkers(cache, env = {}, root) {
      for (const worker of [...stack.workers]) await stack.stopWorker(worker);
      workerEnv = { ...workerTuningEnv(options.serviceEnv, cache), ...env };
      await startWorkers(root);
      // The workers make their build current once they poll; new runs must not start on the last one's.
      await makeCurrent(
        stack.temporalAddress,
        options.serviceEnv.TEMPORAL_DEPLOYMENT_NAME ?? DEFAULT_DEPLOYMENT_NAME,
        Boolean(options.serviceEnv.OTEL_EXPORTER_OTLP_ENDPOINT),
        root,
      );
    },
    restartApi: (root) => stack.restartApi(root),
    async restartTemporal(env) {
      await stack.stopTemporal();
      await stack.startTemporal(env);
    },
    async setDynamicConfig(settings) {
      if (dynamicConfigFile === undefined) throw new Error('the server was started on a dynamic config of its own');
      await writeDynamicConfig({ ...options.dynamicConfig, ...settings });
    },
    async stop() {
      await provider.$disconnect();
      await stack.stop();
    },
  };
}

/**
 * Makes the build of `root`'s compiled workers (this checkout's by default) the current one, as
 * the workers themselves do a moment after they poll: for a restart onto another build, so that
 * the next runs start on it.
 */
async function makeCurrent(
  address: string,
  deploymentName: string,
  traced: boolean,
  root = PROJECT_ROOT,
): Promise<void> {
  const bundle = await readFile(join(root, 'dist-dev', prebuiltBundleName(traced)), 'utf8');
  const connection = await Connection.connect({ address });
  try {
    const client = new Client({ connection, namespace: NAMESPACE });
    await setCurrentVersion(client, { deploymentName, buildId: buildIdOf(bundle) });
  } finally {
    await connection.close();
  }
}

/**
 * Until the worker's /metrics shows the SDK's pollers (its metrics server comes up first, the
 * Temporal worker last), so that no phase starts before the worker takes tasks.
 */
async function untilPolling(metricsUrl: string, headers: Record<string, string>): Promise<void> {
  const end = Date.now() + 120_000;
  while (Date.now() < end) {
    const text = await fetch(metricsUrl, { headers, signal: AbortSignal.timeout(5_000) })
      .then((r) => r.text())
      .catch(() => '');
    if (text.includes('temporal_num_pollers')) return;
    await sleep(500);
  }
  throw new Error(`the worker at ${metricsUrl} did not start polling within 120 s (see its log)`);
}
