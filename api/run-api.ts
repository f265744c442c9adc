import { once } from 'node:events';
import { Client, Connection } from '@temporalio/client';
import { OpenTelemetryWorkflowClientInterceptor } from '@temporalio/interceptors-opentelemetry';
import { ConfigError } from '../lib/config/env.js';
import { loadConfig } from '../lib/config/index.js';
import { temporalUnreachable } from '../lib/config/temporal.js';
import { paymentAccount } from '../lib/config/third-parties.js';
import type { Db } from '../lib/db.js';
import { createLogger } from '../lib/logger.js';
import { PayloadEncryptionCodec } from '../lib/payload-encryption.js';
import { startTracing } from '../lib/tracing.js';
import { createApp, type FaultInjection } from './app.js';
import { createApiDatabases } from './databases.js';
import { closeGracefully } from './graceful-close.js';
import { createHttpServer } from './http-server.js';

const logger = createLogger('api');

export interface ApiEntry {
  /**
   * FAULTS_ENABLED: the fault-injection endpoints to mount, made once the configuration is read and
   * the database opened. Only the local stack's entry has them; without, FAULTS_ENABLED=true is refused.
   */
  faultInjection?: (db: Db) => Promise<FaultInjection>;
}

/**
 * Runs the API until SIGINT/SIGTERM, configured by the environment: the whole process of an entry
 * point. A failure is logged (a ConfigError as its one line) and sets the exit code.
 */
export function runApi(entry: ApiEntry = {}): Promise<void> {
  return main(entry).catch((err: unknown) => {
    if (err instanceof ConfigError) logger.error(err.message);
    else if ((err as NodeJS.ErrnoException).code === 'EADDRINUSE')
      logger.error(`PORT ${(err as { port?: number }).port ?? ''} is already in use`);
    else logger.error({ err }, 'API failed');
    process.exitCode = 1;
  });
}

async function main(entry: ApiEntry): Promise<void> {
  const config = loadConfig();
  logger.level = config.logLevel;
  if (!config.databaseUrl || !config.temporal.address) {
    throw new ConfigError(
      'the API needs DATABASE_URL and TEMPORAL_ADDRESS (npm start sets both for the embedded stack)',
    );
  }
  const tracing = config.otlpEndpoint ? startTracing('order-api', { otlpEndpoint: config.otlpEndpoint }) : undefined;
  const { db, publicDb } = createApiDatabases(config.databaseUrl, config);
  // Set once opened: a later start step failing closes it with the rest, so the process exits with
  // its one-line error instead of waiting for the pool's idle connections to time out.
  let connection: Connection | undefined;
  let outcome: Awaited<ReturnType<typeof closeGracefully>>;
  try {
    const faultInjection = config.faultsEnabled ? await loadFaultInjection(entry, db) : undefined;
    const address = config.temporal.address;
    // One codec for the client and the codec endpoints: the Web UI reads exactly what the service wrote.
    const payloadCodec = new PayloadEncryptionCodec(config.payloadKeys);
    connection = await Connection.connect({ address, ...config.temporal.connection }).catch((err: unknown) => {
      throw temporalUnreachable(address, err);
    });
    const temporal = new Client({
      connection,
      namespace: config.temporal.namespace,
      dataConverter: { payloadCodecs: [payloadCodec] },
      // Carries the request's trace into the workflow start, update and signal headers.
      interceptors: tracing ? { workflow: [new OpenTelemetryWorkflowClientInterceptor()] } : {},
    });
    const app = createApp({
      db,
      publicDb,
      temporal,
      taskQueue: config.temporal.taskQueue,
      adminToken: config.adminToken,
      webhookSecret: config.webhookSecret,
      stripeWebhookSecret: config.stripe?.webhookSecret,
      customerTokens: config.customerTokens,
      orderIdSecret: config.orderIdSecret,
      paymentWindowMs: config.paymentWindowMs,
      ordersRateLimit: { limit: config.ordersPerMinutePerClient, windowMs: 60_000 },
      readsRateLimit: { limit: config.readsPerMinutePerClient, windowMs: 60_000 },
      couponRefusalLimit: { limit: config.couponRefusalsPerHourPerCustomer, windowMs: 60 * 60_000 },
      metricsToken: config.metricsToken,
      authFailureLimit: { limit: config.authFailuresPerMinutePerAddress, windowMs: 60_000 },
      trustProxy: config.trustProxy,
      trustTraceparent: config.trustTraceparent,
      faultInjection,
      temporalUiUrl: config.temporal.uiUrl,
      operatorSession: config.operatorSession,
      payloadCodec,
      codecCorsOrigin: config.codecCorsOrigin,
      logger,
      paymentAccount: paymentAccount(config),
      unclaimedRefundGraceMs: config.unclaimedRefundGraceMs,
      webhooks: config.webhooks,
    });

    const server = createHttpServer(app).listen(config.port, config.listenAddress);
    await once(server, 'listening');
    logger.info({ port: config.port, tracing: Boolean(tracing) }, 'API listening');

    const [signal] = await Promise.race([once(process, 'SIGTERM'), once(process, 'SIGINT')]);
    logger.info(
      { signal, graceMs: config.shutdownGraceMs },
      'API stopping: no new connections, finishing in-flight requests',
    );
    outcome = await closeGracefully(server, config.shutdownGraceMs);
  } finally {
    await connection?.close();
    await Promise.all([db.$disconnect(), publicDb.$disconnect()]);
    await tracing?.shutdown();
  }
  logger.info({ outcome }, 'API stopped');
}

function loadFaultInjection(entry: ApiEntry, db: Db): Promise<FaultInjection> {
  if (entry.faultInjection === undefined)
    throw new ConfigError(
      'FAULTS_ENABLED=true: the service has no fault injection; it drives the local fakes, which only the local stack (npm start) runs. Set FAULTS_ENABLED=false',
    );
  return entry.faultInjection(db);
}
