import type { Server } from 'node:http';
import { Client } from '@temporalio/client';
import { NativeConnection, Runtime } from '@temporalio/worker';
import { ConfigError } from '../lib/config/env.js';
import { loadConfig } from '../lib/config/index.js';
import { temporalUnreachable } from '../lib/config/temporal.js';
import type { ThirdParties } from '../adapters/ports/index.js';
import type { Config } from '../lib/config/index.js';
import { paymentAccount } from '../lib/config/third-parties.js';
import { createDb, type Db } from '../lib/db.js';
import { startJobRunner, type JobRunner } from '../lib/job-queue.js';
import { createLogger, type Logger } from '../lib/logger.js';
import { encryptedDataConverter } from '../lib/payload-encryption.js';
import { createWorkerMetrics } from './metrics.js';
import { startTracing, type Tracing } from '../lib/tracing.js';
import { createOrderWorker } from './create-worker.js';
import { createJobTasks } from './job-tasks.js';
import { temporalLogger } from './temporal-logger.js';
import { startMetricsServer } from './metrics-server.js';
import { ensureProviderSweepSchedule } from './provider-sweep-schedule.js';
import { ensureReconciliationSchedule } from './reconciliation-schedule.js';
import { setCurrentVersion } from './deployment.js';
import { applyStackTraceLimit } from './tuning.js';
import { loadWorkflowBundle } from './workflow-bundle.js';

const logger = createLogger('worker');

export interface WorkerEntry {
  /**
   * The third parties its activities call, made once the configuration is read and the database
   * opened; a ConfigError here is the worker's one-line refusal to start. worker/main.ts makes the
   * production ones; the local stack's entry hands in its own.
   */
  thirdParties(config: Config, db: Db, logger: Logger): Promise<ThirdParties>;
}

/**
 * Runs the worker until SIGINT/SIGTERM, configured by the environment: the whole process of an
 * entry point. A failure is logged (a ConfigError as its one line) and sets the exit code.
 */
export function runWorker(entry: WorkerEntry): Promise<void> {
  return main(entry).catch((err: unknown) => {
    if (err instanceof ConfigError) logger.error(err.message);
    else if ((err as NodeJS.ErrnoException).code === 'EADDRINUSE')
      logger.error(`WORKER_METRICS_PORT ${(err as { port?: number }).port ?? ''} is already in use`);
    else logger.error({ err }, 'worker failed');
    process.exitCode = 1;
  });
}

async function main(entry: WorkerEntry): Promise<void> {
  const config = loadConfig();
  logger.level = config.logLevel;
  // First: before the Worker creates the workflow threads and their contexts, which read it then.
  applyStackTraceLimit(config.workerTuning.stackTraceLimit);
  if (!config.databaseUrl || !config.temporal.address) {
    throw new ConfigError(
      'the worker needs DATABASE_URL and TEMPORAL_ADDRESS (npm start sets both for the embedded stack)',
    );
  }
  const db = createDb(config.databaseUrl, { maxConnections: config.databasePoolSize, ...config.databasePoolOptions });
  // Set as each start step opens them: a later step failing closes what the earlier ones opened,
  // so the process exits with its one-line error instead of hanging on an open handle.
  let metricsServer: Server | undefined;
  let tracing: Tracing | undefined;
  let connection: NativeConnection | undefined;
  let jobRunner: JobRunner | undefined;
  try {
    const thirdParties = await entry.thirdParties(config, db, logger);
    const metrics = createWorkerMetrics();
    // Before the SDK's Runtime: once installed it keeps the process alive until a connection made through it closes.
    metricsServer = await startMetricsServer({
      port: config.workerMetricsPort,
      host: config.listenAddress,
      registry: metrics.registry,
      sdkMetricsAddress: config.sdkMetricsAddress,
      adminToken: config.adminToken,
      metricsToken: config.metricsToken,
    });
    // One JSON stream: the SDK's own logs, Core's (forwarded), and workflow and activity logs go to pino.
    Runtime.install({
      logger: temporalLogger(logger),
      telemetryOptions: {
        logging: { filter: { core: 'WARN', other: 'ERROR' }, forward: {} },
        metrics: { prometheus: { bindAddress: config.sdkMetricsAddress } },
      },
    });
    tracing = config.otlpEndpoint ? startTracing('order-worker', { otlpEndpoint: config.otlpEndpoint }) : undefined;
    const address = config.temporal.address;
    connection = await NativeConnection.connect({ address, ...config.temporal.connection }).catch((err: unknown) => {
      throw temporalUnreachable(address, err);
    });
    // Before the worker: once created, it holds the connection until it has run, so a failure
    // here after it would leave the connection unclosable and the process hanging.
    const client = new Client({
      connection,
      namespace: config.temporal.namespace,
      dataConverter: encryptedDataConverter(config.payloadKeys),
    });
    const schedule = await ensureReconciliationSchedule(client, {
      taskQueue: config.temporal.taskQueue,
      ...config.reconciliation,
    });
    const providerSweepSchedule = await ensureProviderSweepSchedule(client, {
      taskQueue: config.temporal.taskQueue,
      everyMs: config.providerSweepEveryMs,
    });
    const workflowCode = await loadWorkflowBundle(tracing !== undefined);
    const worker = await createOrderWorker({
      connection,
      namespace: config.temporal.namespace,
      taskQueue: config.temporal.taskQueue,
      deps: {
        db,
        paymentWindowMs: config.paymentWindowMs,
        paymentAccount: paymentAccount(config),
        unclaimedRefundGraceMs: config.unclaimedRefundGraceMs,
        paymentHolds: config.paymentHolds,
        paymentReminderBeforeMs: config.paymentReminderBeforeMs,
        maxOpenOrdersPerCustomer: config.maxOpenOrdersPerCustomer,
        maxUnpaidUnitsPerProduct: config.maxUnpaidUnitsPerProduct,
        ...thirdParties,
      },
      payloadKeys: config.payloadKeys,
      metrics,
      shutdownGraceMs: config.shutdownGraceMs,
      tracing,
      workflowBundle: { code: workflowCode.code },
      deploymentName: config.temporal.deploymentName,
      tuning: config.workerTuning,
    });
    // The outbox's consumers, webhooks and emails (graphile-worker, beside Temporal): it installs its schema if missing.
    jobRunner = await startJobRunner({
      connectionString: config.databaseUrl,
      concurrency: config.webhooks.concurrency,
      pollIntervalMs: config.webhooks.pollIntervalMs,
      staleLockMs: config.webhooks.staleLockMs,
      taskList: createJobTasks({ config, db, logger, metrics }),
      logger,
    });
    const version = worker.options.workerDeploymentOptions!.version;
    logger.info(
      {
        taskQueue: config.temporal.taskQueue,
        namespace: config.temporal.namespace,
        metricsPort: config.workerMetricsPort,
        tracing: Boolean(tracing),
        reconciliationSchedule: schedule,
        providerSweepSchedule,
        workflowCode: workflowCode.prebuilt ? 'prebuilt bundle' : 'bundled at start',
        deployment: version.deploymentName,
        buildId: version.buildId,
      },
      'worker started',
    );
    // Worker.run() returns after SIGINT/SIGTERM (the Runtime's shutdown signals): it stops polling,
    // lets in-flight activities finish for up to SHUTDOWN_GRACE, then cancels what is left.
    const stopped = new AbortController();
    const running = worker.run().finally(() => stopped.abort());
    if (config.temporal.setCurrentVersion) {
      // While it polls: the server knows a version only once a worker of it has polled.
      const current = await setCurrentVersion(client, version, {
        identity: client.options.identity,
        signal: stopped.signal,
      }).catch(async (err: unknown) => {
        worker.shutdown();
        await running;
        throw err;
      });
      if (current)
        logger.info(
          { deployment: version.deploymentName, buildId: version.buildId, previousBuildId: current.previousBuildId },
          'build is current',
        );
    }
    await running;
  } finally {
    await jobRunner?.stop(); // lets the deliveries under way finish (each within WEBHOOK_TIMEOUT)
    metricsServer?.close();
    await tracing?.shutdown();
    await connection?.close();
    await db.$disconnect();
  }
  logger.info('worker stopped');
}
