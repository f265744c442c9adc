import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCustomerEmailNotifier } from '../../activities/customer-email-notifier.js';
import { createCustomerEmails, CUSTOMER_EMAIL_TASK } from '../../activities/customer-emails.js';
import { createSmtpMailer, type SmtpMailer } from '../../adapters/smtp/mailer.js';
import { orderWorkflowId } from '../../domain/messages.js';
import { mailSettings } from '../../lib/config/mail.js';
import { startJobRunner, type JobRunner } from '../../lib/job-queue.js';
import { createLogger } from '../../lib/logger.js';
import { placeOrder, seedCatalog } from '../helpers/catalog.js';
import { eventually } from '../helpers/eventually.js';
import { startTestMailpit, type TestMailpit } from '../helpers/mailpit.js';
import { startOrderHarness, type OrderHarness } from '../helpers/order-harness.js';

/**
 * The workflow's notices as the customers' emails, with the outbox's email job running beside them
 * as in the worker: the payment notice (the fulfilment step) and the cancel notice each race the job
 * for their event, and the customer gets one email per event. Real PostgreSQL, real Mailpit, the
 * time-skipping server.
 */
let h: OrderHarness;
let mailpit: TestMailpit;
let mailer: SmtpMailer;
let runner: JobRunner;

beforeAll(async () => {
  [h, mailpit] = await Promise.all([startOrderHarness({ taskQueue: 'orders-email-notices' }), startTestMailpit()]);
  mailer = createSmtpMailer(
    mailSettings({
      SMTP_URL: mailpit.smtpUrl,
      MAIL_FROM: 'Widget Shop <orders@shop.example>',
      MAIL_TIME_ZONE: 'UTC',
      SMTP_TIMEOUT: '5s',
    })!,
  );
  const deps = { pool: h.db.pool, mailer, currency: 'eur' };
  h.thirdParties.notifier = createCustomerEmailNotifier(deps);
  const emails = createCustomerEmails(deps);
  runner = await startJobRunner({
    connectionString: h.databaseUrl,
    concurrency: 4,
    pollIntervalMs: 100,
    staleLockMs: 60_000,
    taskList: { [CUSTOMER_EMAIL_TASK]: (payload) => emails.customerEmailTask(payload) },
    logger: createLogger('job-test', 'silent'),
  });
}, 10 * 60_000); // a fresh machine builds Mailpit first

afterAll(async () => {
  await runner?.stop();
  mailer?.close();
  await mailpit?.stop();
  await h?.close();
});

/** The Message-IDs Mailpit holds for this order's events, by event type. */
async function emailsOf(orderId: string): Promise<Record<string, number>> {
  const events = await h.db.orderEvent.findMany({ where: { orderId }, select: { id: true, type: true } });
  const received = (await mailpit.received()).map((m) => m.MessageID);
  const counts: Record<string, number> = {};
  for (const e of events) {
    const n = received.filter((id) => id === `${e.id}@shop.example`).length;
    if (n > 0) counts[e.type] = n;
  }
  return counts;
}

async function queuedEmailJobs(): Promise<number> {
  const [row] = await h.db.$queryRaw<{ n: number }[]>`
    SELECT count(*)::int AS n FROM graphile_worker.jobs WHERE task_identifier = ${CUSTOMER_EMAIL_TASK}`;
  return row!.n;
}

const workflow = (orderId: string) => h.env.client.workflow.getHandle(orderWorkflowId(orderId));

describe("the workflow's notices as the customer's email", () => {
  it('a paid order: one placed email and one payment email, the notification step DONE', async () => {
    const { sku } = await seedCatalog(h);
    const order = await placeOrder(h, { sku, email: 'ada@customers.example' });
    expect(
      (await h.pay({ paymentId: `pay-${order.id}`, orderId: order.id, amountCents: order.totalCents })).status,
    ).toBe(202);
    expect((await workflow(order.id).result()).fulfillment.notification).toBe('DONE');
    await eventually(async () => (await emailsOf(order.id))['order.placed'] === 1);
    // The job for order.paid has run too by now, or runs after: either way nothing more is sent.
    await eventually(async () => (await h.db.customerEmail.count({ where: { orderId: order.id } })) === 2);
    await eventually(async () => (await queuedEmailJobs()) === 0);
    expect(await emailsOf(order.id)).toEqual({ 'order.placed': 1, 'order.paid': 1 });
  });

  it('an order cancelled at its deadline: one cancel email', async () => {
    const { sku } = await seedCatalog(h);
    const order = await placeOrder(h, { sku, email: 'bob@customers.example' });
    expect((await workflow(order.id).result()).status).toBe('CANCELLED');
    await eventually(async () => (await emailsOf(order.id))['order.cancelled'] === 1);
    await eventually(async () => (await queuedEmailJobs()) === 0);
    expect(await emailsOf(order.id)).toEqual({ 'order.placed': 1, 'order.cancelled': 1 });
  });
});
