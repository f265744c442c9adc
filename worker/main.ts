import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import { createThirdParties } from '../activities/third-party/index.js';
import { ConfigError, loadConfig } from '../lib/config.js';
import { createDb } from '../lib/db.js';
import { createLogger } from '../lib/logger.js';
import { createOrderWorker } from './create-worker.js';

const logger = createLogger('worker');
const SDK_LOG_LEVEL = { trace: 'TRACE', debug: 'DEBUG', info: 'INFO', warn: 'WARN', error: 'ERROR', fatal: 'ERROR', silent: 'ERROR' } as const;

async function main(): Promise<void> {
  const config = loadConfig();
  logger.level = config.logLevel;
  // The SDK's own logger (worker states, every activity's log lines) follows LOG_LEVEL too.
  Runtime.install({ logger: new DefaultLogger(SDK_LOG_LEVEL[config.logLevel]) });
  if (!config.databaseUrl || !config.temporal.address) {
    throw new ConfigError('the worker needs DATABASE_URL and TEMPORAL_ADDRESS (npm start sets both for the embedded stack)');
  }
  const db = createDb(config.databaseUrl);
  const connection = await NativeConnection.connect({ address: config.temporal.address });
  try {
    const worker = await createOrderWorker({
      connection,
      namespace: config.temporal.namespace,
      taskQueue: config.temporal.taskQueue,
      deps: { db, paymentWindowMs: config.paymentWindowMs, ...createThirdParties(db) },
    });
    logger.info({ taskQueue: config.temporal.taskQueue, namespace: config.temporal.namespace }, 'worker started');
    // Worker.run() returns after SIGINT/SIGTERM, once in-flight tasks have drained.
    await worker.run();
  } finally {
    await connection.close();
    await db.$disconnect();
  }
  logger.info('worker stopped');
}

main().catch((err: unknown) => {
  if (err instanceof ConfigError) logger.error(err.message);
  else logger.error({ err }, 'worker failed');
  process.exitCode = 1;
});
