import { once } from 'node:events';
import { Client, Connection } from '@temporalio/client';
import { ConfigError, DEV_ADMIN_TOKEN, DEV_WEBHOOK_SECRET, loadConfig } from '../lib/config.js';
import { createDb } from '../lib/db.js';
import { createLogger } from '../lib/logger.js';
import { createApp } from './app.js';

const logger = createLogger('api');

async function main(): Promise<void> {
  const config = loadConfig();
  logger.level = config.logLevel;
  if (!config.databaseUrl || !config.temporal.address) {
    throw new ConfigError('the API needs DATABASE_URL and TEMPORAL_ADDRESS (npm start sets both for the embedded stack)');
  }
  if (config.webhookSecret === DEV_WEBHOOK_SECRET || config.adminToken === DEV_ADMIN_TOKEN) {
    logger.warn('PAYMENT_WEBHOOK_SECRET or ADMIN_TOKEN is the public development default; set both in production');
  }
  const db = createDb(config.databaseUrl);
  const connection = await Connection.connect({ address: config.temporal.address });
  const temporal = new Client({ connection, namespace: config.temporal.namespace });
  const app = createApp({
    db,
    temporal,
    taskQueue: config.temporal.taskQueue,
    adminToken: config.adminToken,
    webhookSecret: config.webhookSecret,
    faultsEnabled: config.faultsEnabled,
    logger,
  });

  const server = app.listen(config.port, '0.0.0.0');
  await once(server, 'listening');
  logger.info({ port: config.port }, 'API listening');

  const stop = async (signal: string) => {
    logger.info({ signal }, 'API stopping: no new connections, finishing in-flight requests');
    server.close();
    server.closeIdleConnections();
    await once(server, 'close');
    await connection.close();
    await db.$disconnect();
    logger.info('API stopped');
  };
  const [signal] = await Promise.race([once(process, 'SIGTERM'), once(process, 'SIGINT')]);
  await stop(String(signal));
}

main().catch((err: unknown) => {
  if (err instanceof ConfigError) logger.error(err.message);
  else if ((err as NodeJS.ErrnoException).code === 'EADDRINUSE') logger.error(`PORT ${(err as { port?: number }).port ?? ''} is already in use`);
  else logger.error({ err }, 'API failed');
  process.exitCode = 1;
});
