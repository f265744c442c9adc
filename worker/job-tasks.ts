import type { TaskList } from 'graphile-worker';
import { createCustomerEmails, CUSTOMER_EMAIL_TASK } from '../activities/customer-emails.js';
import { createSmtpMailer } from '../adapters/smtp/mailer.js';
import type { Config } from '../lib/config/index.js';
import type { Db } from '../lib/db.js';
import type { Logger } from '../lib/logger.js';
import { createWebhookTasks } from '../webhooks/tasks.js';
import type { WorkerMetrics } from './metrics.js';

/**
 * What the worker's job queue (graphile-worker, beside Temporal) runs for the outbox: the order
 * events' webhooks, and the customers' emails. Without SMTP_URL no email is sent: an email job
 * still queued by an event ends at once, so the queue does not keep it.
 */
export function createJobTasks(deps: { config: Config; db: Db; logger: Logger; metrics: WorkerMetrics }): TaskList {
  const { config, db, logger, metrics } = deps;
  const emails = config.mail
    ? createCustomerEmails({ pool: db.pool, mailer: createSmtpMailer(config.mail), currency: config.currency })
    : undefined;
  return {
    ...createWebhookTasks({ settings: config.webhooks, logger, deadDeliveries: metrics.webhookDeliveriesDead }),
    [CUSTOMER_EMAIL_TASK]: emails
      ? (payload) => emails.customerEmailTask(payload)
      : async () => logger.debug('customer email not sent: SMTP_URL is not set'),
  };
}
