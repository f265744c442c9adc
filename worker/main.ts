import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { createThirdParties } from '../activities/third-party/index.js';
import { ConfigError, loadConfig } from '../lib/config.js';
import { createDb } from '../lib/db.js';
import { createLogger } from '../lib/logger.js';
import { createOrderWorker } from './create-worker.js';
import { ensureReconciliationSchedule } from './reconciliation-schedule.js';

const logger = createLogger('worker');

async function main(): Promise<void> {
  const config = loadConfig();
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
    const schedule = await withClient(config.temporal.address, config.temporal.namespace, (client) =>
      ensureReconciliationSchedule(client, { taskQueue: config.temporal.taskQueue, ...config.reconciliation }),
    );
    logger.info({ taskQueue: config.temporal.taskQueue, namespace: config.temporal.namespace, reconciliationSchedule: schedule }, 'worker started');
    // Worker.run() returns after SIGINT/SIGTERM, once in-flight tasks have drained.
    await worker.run();
  } finally {
    await connection.close();
    await db.$disconnect();
  }
  logger.info('worker stopped');
}

async function withClient<T>(address: string, namespace: string, use: (client: Client) => Promise<T>): Promise<T> {
  const connection = await Connection.connect({ address });
  try {
    return await use(new Client({ connection, namespace }));
  } finally {
    await connection.close();
  }
}

main().catch((err: unknown) => {
  if (err instanceof ConfigError) logger.error(err.message);
  else logger.error({ err }, 'worker failed');
  process.exitCode = 1;
});
